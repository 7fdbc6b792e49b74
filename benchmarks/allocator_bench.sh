#!/usr/bin/env bash
# Side by side on one machine: run_qa with glibc's malloc and with each allocator the container image could
# preload (jemalloc, tcmalloc, oneTBB's tbbmalloc proxy): the whole process's wall time and peak resident memory,
# the training steps per second, and the time outside training (reading, tokenizing, features, evaluation,
# writing). The allocators alternate within each round so that all see the same machine load.
#   benchmarks/allocator_bench.sh [build dir] [rounds] [steps] [extra run_qa flags...]
# Environment:
#   MODEL=demo (default)  the demo's small model on PARAGRAPHS (default 3000) training paragraphs, batch 32 of 128
#                         tokens, with evaluation; PARAGRAPHS=12000 with 1 step measures the data preparation
#   MODEL=base2           BERT-base's shapes with 2 layers (benchmarks/base2_demo_data.sh), a global batch of 4 of
#                         384 tokens, no evaluation: a 100 MB gradient for the ranks to reduce
#   RANKS=2               run under mpiexec with that many ranks (--bind-to none; the allocator goes to every rank
#                         with -x LD_PRELOAD); peak memory is then not measured
# Needs libjemalloc2 and libtcmalloc-minimal4 (Debian); an allocator whose library is missing is left out.
set -euo pipefail
BUILD=${1:-build/release}
ROUNDS=${2:-3}
STEPS=${3:-300}
shift $(( $# < 3 ? $# : 3 ))
MODEL=${MODEL:-demo}
RANKS=${RANKS:-1}
RUN_QA=$BUILD/examples/run_qa
WORK=$(mktemp -d "${TMPDIR:-/tmp}/allocator_bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A preload=([glibc]="" [jemalloc]=$lib/libjemalloc.so.2 [tcmalloc]=$lib/libtcmalloc_minimal.so.4
                    [tbbmalloc]=$lib/libtbbmalloc_proxy.so.2)
names=()
for name in glibc jemalloc tcmalloc tbbmalloc; do
  if [[ -z ${preload[$name]} || -e ${preload[$name]} ]]; then names+=("$name"); else echo "($name: ${preload[$name]} missing, left out)"; fi
done

case "$MODEL" in
  demo)
    "$BUILD/examples/cputrain-make-demo-data" --output_dir "$WORK/demo" --train_paragraphs "${PARAGRAPHS:-3000}" \
      --eval_paragraphs 300 --version_2_with_negative >/dev/null
    ARGS=(--validation_file "$WORK/demo/dev.json" --version_2_with_negative --do_eval
          --per_device_train_batch_size $((32 / RANKS)) --learning_rate 2e-3 --max_seq_length 128 --doc_stride 32
          --pad_to_max_length false --group_by_length) ;;
  base2)
    "$(dirname "$0")/base2_demo_data.sh" "$BUILD" "$WORK/demo"
    ARGS=(--per_device_train_batch_size $((4 / RANKS)) --max_seq_length 384 --doc_stride 128) ;;
  *) echo "MODEL must be demo or base2, not $MODEL" >&2; exit 2 ;;
esac
ARGS+=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" --train_file "$WORK/demo/train.json"
       --do_train --max_steps "$STEPS" --save_strategy no --disable_tqdm --logging_steps "$STEPS"
       --overwrite_output_dir --output_dir "$WORK/out" --threads $(($(nproc) / RANKS)) "$@")
MPI=()
if [[ $RANKS -gt 1 ]]; then
  MPI=(mpiexec -n "$RANKS" --bind-to none)
  version=$(mpiexec --version 2>&1 || true)
  if [[ $version == *"Open MPI"* || $version == *OpenRTE* ]]; then MPI+=(--oversubscribe --allow-run-as-root); fi
fi

echo "model $MODEL, $RANKS rank(s), $STEPS steps"
printf "%-5s %-10s %9s %9s %12s %10s %8s\n" round allocator "wall s" "train s" "train st/s" "other s" "peak MiB"
for round in $(seq "$ROUNDS"); do
  for name in "${names[@]}"; do
    p=${preload[$name]}
    if [[ $RANKS -gt 1 ]]; then
      command=("${MPI[@]}" ${p:+-x LD_PRELOAD=$p} "$RUN_QA")
    else
      command=(env ${p:+LD_PRELOAD=$p} "$RUN_QA")
    fi
    /usr/bin/time -f "%e %M" -o "$WORK/time" "${command[@]}" "${ARGS[@]}" > "$WORK/log" 2>&1 ||
      { tail -5 "$WORK/log"; exit 1; }
    read -r wall rss_kib < "$WORK/time"
    train=$(sed -n 's/^  train_runtime *= *//p' "$WORK/log")
    sps=$(sed -n 's/^  train_steps_per_second *= *//p' "$WORK/log")
    peak=$((rss_kib / 1024))
    [[ $RANKS -gt 1 ]] && peak=-
    printf "%-5s %-10s %9.2f %9.2f %12.2f %10.2f %8s\n" "$round" "$name" "$wall" "$train" "$sps" \
      "$(echo "$wall - $train" | bc -l)" "$peak"
  done
done
