#!/usr/bin/env bash
# Measures what the figures of docs/benchmarks.md are drawn from and writes benchmarks/results/<name>.json:
# {"name", "title", "command" (this script's command line), "runs" (the commands it ran, from the repository
# root), "date", "machine" (CPU, cores, memory, OS, the build's compiler, the 1-minute load at the start and at
# the end), "result" (the benchmark's own JSON)}. scripts/plot_benchmarks.sh then draws docs/images/<name>.svg from it.
#   benchmarks/plots/collect.sh [--build DIR] [--max-load L] NAME...
# NAME (or "all"), with its time on the 2-core machine of docs/benchmarks.md:
#   demo_loss        the demo (scripts/demo.sh's data and run_qa command) twice, fp32 and --bf16, logging every
#                    100 steps; the loss curves come from each run's output_dir/trainer_state.json (log_history).
#                    ~5 min. Data and outputs in build/plots-demo/.
#   step_pytorch     benchmarks/compare_pytorch.py, the command of "Whole training step against PyTorch". ~3 min.
#   allreduce        cputrain-bench-allreduce under mpirun -n 2, more buffer sizes than the section's table. ~1 min.
#   distributed      benchmarks/distributed_throughput.sh, 2 rounds. ~2 min.
#   group_by_length  run_qa on the demo data, plain shuffling and --group_by_length alternated twice. ~1.5 min.
# --build: the build holding the benchmark programs and run_qa (default build/release; needs the targets run_qa,
#   cputrain-make-demo-data, cputrain-bench-step and cputrain-bench-allreduce). --max-load: before each figure,
#   wait (at most 10 minutes) for the 1-minute load average to drop below L (under a lock, wait before taking it:
#   this waits holding it).
# Timed work: on a shared machine run it under the lock the other benchmarks take, so that no two run at once.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3  # Debian's python3: compare_pytorch.py needs its python3-torch
BUILD=build/release
MAX_LOAD=
SELF="benchmarks/plots/collect.sh $*"
while [[ ${1:-} == --* ]]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --max-load) MAX_LOAD=$2; shift 2 ;;
    *) echo "collect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
names=("$@")
[[ ${names[*]} == all ]] && names=(demo_loss step_pytorch allreduce distributed group_by_length)

RESULTS=benchmarks/results
mkdir -p "$RESULTS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collect.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MPI_FLAGS=()
version=$(mpiexec --version 2>&1 || true)
if [[ $version == *"Open MPI"* || $version == *OpenRTE* ]]; then MPI_FLAGS=(--allow-run-as-root); fi

load() { cut -d' ' -f1 /proc/loadavg; }
quiet() {
  [[ -n $MAX_LOAD ]] || return 0
  local waited=0
  while awk -v l="$(load)" -v m="$MAX_LOAD" 'BEGIN { exit !(l >= m) }' && ((waited < 600)); do
    sleep 10; waited=$((waited + 10))
  done
  ((waited < 600)) || echo "collect.sh: load still $(load) after 10 minutes; measuring anyway" >&2
}
# run: prints the command as it runs it, and keeps it for the JSON's "runs".
runs=()
run() {
  local c="" a q
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then q=$a; else printf -v q '%q' "$a"; fi
    c+="${c:+ }$q"
  done
  runs+=("$c"); echo "+ $c" >&2; "$@"
}
# save NAME TITLE: wraps $WORK/result.json into benchmarks/results/NAME.json.
save() {
  local args=()
  for r in "${runs[@]}"; do args+=(--run "$r"); done
  "$PY" benchmarks/plots/results.py wrap --name "$1" --title "$2" --command "$SELF" "${args[@]}" \
    --result "$WORK/result.json" --output "$RESULTS/$1.json" --build "$3" --started "$STARTED" --load "$LOAD" \
    --load-end "$(load)"
  echo "wrote $RESULTS/$1.json" >&2
}

for name in "${names[@]}"; do
  quiet
  runs=()
  STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  LOAD=$(load)
  case $name in
    demo_loss)
      # scripts/demo.sh's data and run_qa command (kept in step with it by hand), with the build of --build, as
      # demo.sh builds and rebuilds build/release, which other benchmarks may be using; the run is deterministic,
      # so the same build flags give demo.sh's figures.
      out=build/plots-demo
      mkdir -p "$out"
      run "$BUILD/examples/cputrain-make-demo-data" --output_dir "$out/data" --train_paragraphs 12000 \
        --version_2_with_negative > /dev/null
      for precision in fp32 bf16; do
        extra=()
        [[ $precision == bf16 ]] && extra=(--bf16)
        run "$BUILD/examples/run_qa" --config_name "$out/data/model" --tokenizer_name "$out/data/model" \
          --train_file "$out/data/train.json" --validation_file "$out/data/dev.json" --version_2_with_negative \
          --do_train --do_eval --output_dir "$out/$precision" --overwrite_output_dir \
          --per_device_train_batch_size 32 --learning_rate 2e-3 --weight_decay 0.01 --warmup_ratio 0.06 \
          --max_steps 4500 --max_seq_length 128 --doc_stride 32 --pad_to_max_length false --group_by_length \
          --logging_steps 500 --save_strategy no --threads "$(nproc)" --logging_steps 100 "${extra[@]}" \
          > "$out/$precision.log" 2>&1 || { tail -20 "$out/$precision.log"; exit 1; }
      done
      "$PY" - "$out" > "$WORK/result.json" <<'PY'
import json, sys
out = sys.argv[1]
r = {}
for p in ("fp32", "bf16"):
    state = json.load(open(f"{out}/{p}/trainer_state.json"))
    results = json.load(open(f"{out}/{p}/all_results.json"))
    r[p] = {"output_dir": f"{out}/{p}", "global_step": state["global_step"],
            "log_history": state["log_history"], "all_results": results}
json.dump(r, sys.stdout, indent=1)
PY
      save demo_loss "The demo (scripts/demo.sh): training loss of a small BERT from scratch" "$BUILD"
      ;;
    step_pytorch)
      run "$PY" benchmarks/compare_pytorch.py --bench "$BUILD/benchmarks/cputrain-bench-step" --threads 2 \
        --rounds 3 --steps 3 --json "$WORK/result.json"
      save step_pytorch "One training step of BertForQuestionAnswering: cputrain against PyTorch" "$BUILD"
      ;;
    allreduce)
      run mpirun "${MPI_FLAGS[@]}" -n 2 "$BUILD/benchmarks/cputrain-bench-allreduce" \
        --sizes 1,4,10,25,50,100,200,bert --repeats 7 --json "$WORK/result.json"
      save allreduce "Averaging the gradients of 2 ranks (tail of BERT-base's gradient buffer)" "$BUILD"
      ;;
    distributed)
      run benchmarks/distributed_throughput.sh --json "$WORK/result.json" "$BUILD" 2
      save distributed "run_qa under mpirun: 2 ranks x 1 thread against 1 process x 2 threads" "$BUILD"
      ;;
    group_by_length)
      demo=$WORK/demo
      "$BUILD/examples/cputrain-make-demo-data" --output_dir "$demo" --train_paragraphs 12000 \
        --version_2_with_negative > /dev/null
      common=(--config_name "$demo/model" --tokenizer_name "$demo/model" --train_file "$demo/train.json" --do_train
              --output_dir "$WORK/gb_out" --overwrite_output_dir --per_device_train_batch_size 32 --learning_rate 2e-3
              --max_steps 400 --max_seq_length 128 --doc_stride 32 --pad_to_max_length false --save_strategy no
              --logging_steps 400 --threads 2 --disable_tqdm)
      entries=()
      for round in 1 2; do
        for order in shuffled group_by_length; do
          flag=()
          [[ $order == group_by_length ]] && flag=(--group_by_length)
          run "$BUILD/examples/run_qa" "${common[@]}" "${flag[@]}" > "$WORK/log" 2>&1 || { tail "$WORK/log"; exit 1; }
          sps=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["train_steps_per_second"])' \
                "$WORK/gb_out/train_results.json")
          loss=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["train_loss"])' \
                 "$WORK/gb_out/train_results.json")
          echo "round $round $order: $sps steps/s" >&2
          entries+=("{\"round\": $round, \"order\": \"$order\", \"steps_per_second\": $sps, \"train_loss\": $loss}")
        done
      done
      { printf '{"data": "cputrain-make-demo-data --train_paragraphs 12000 --version_2_with_negative", '
        printf '"batch": 32, "steps": 400, "threads": 2, "runs": [\n'
        for i in "${!entries[@]}"; do
          sep=,
          ((i < ${#entries[@]} - 1)) || sep=
          printf '  %s%s\n' "${entries[$i]}" "$sep"
        done
        printf ']}\n'; } > "$WORK/result.json"
      save group_by_length "run_qa on the demo data: batches grouped by length against plain shuffling" "$BUILD"
      ;;
    *) echo "collect.sh: unknown figure $name" >&2; exit 2 ;;
  esac
done
