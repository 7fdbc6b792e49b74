#!/usr/bin/env bash
# run_glue, run_ner and run_mlm under mpiexec train one model together, evaluating during training: 2 ranks of
# batch 8, 2 ranks of batch 4 with 2 accumulation steps, and one process of batch 8 with 2, log the same losses and
# grad norms and end with the same weights as one process with batch 16 (fp32, no dropout; relative difference
# <= 1e-5, compare_runs.py). run_ner's and run_mlm's losses average labelled tokens, which differ between the
# ranks' and micro-batches' shares: the step still averages over all of them, as one process does. Every
# evaluation during training, split between the ranks and gathered, reports the same metrics (the masked-LM
# evaluation masks the same tokens); the final eval_results.json and the predictions file are the same.
#   program_distributed_test.sh <glue|ner|mlm> <run_program> <cputrain-make-demo-data> <mpiexec> [mpiexec flags...]
set -u
PROGRAM=$1
RUN=$2
MAKE_DEMO=$3
shift 3
MPIEXEC=("$@")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/program_distributed_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL (run_$PROGRAM): $*"; exit 1; }

D=$WORK/demo
"$MAKE_DEMO" --task "$PROGRAM" --output_dir "$D" --train_examples 400 --eval_examples 100 > /dev/null ||
  fail "cputrain-make-demo-data --task $PROGRAM failed"
# The demo model has no dropout. Every batch padded to max_seq_length, so the ranks' batches have one shape.
COMMON=(--config_name "$D/model" --tokenizer_name "$D/model" --do_train --do_eval --learning_rate 2e-3
        --max_steps 24 --max_seq_length 64 --pad_to_max_length true --logging_steps 4 --eval_strategy steps
        --eval_steps 8 --save_strategy no --disable_tqdm --per_device_eval_batch_size 16)
case $PROGRAM in
  glue) COMMON+=(--task_name mrpc --train_file "$D/train.csv" --validation_file "$D/dev.csv"
                 --test_file "$D/test.csv" --do_predict)
        PREDICTIONS=predict_results_mrpc.txt ;;
  ner)  COMMON+=(--train_file "$D/train.json" --validation_file "$D/dev.json" --test_file "$D/test.json" --do_predict)
        PREDICTIONS=predictions.txt ;;
  mlm)  COMMON+=(--train_file "$D/train.txt" --validation_file "$D/dev.txt")
        PREDICTIONS= ;;
  *) fail "unknown program $PROGRAM" ;;
esac

run() {  # run NAME LAUNCH... -- flags
  local name=$1; shift
  local launch=()
  while [ "$1" != "--" ]; do launch+=("$1"); shift; done
  shift
  "${launch[@]}" "$RUN" "${COMMON[@]}" --output_dir "$WORK/$name" "$@" > "$WORK/$name.log" 2>&1 ||
    fail "$name: run_$PROGRAM failed: $(tail -20 "$WORK/$name.log")"
}
run one -- --per_device_train_batch_size 16 --threads 2
run one_accumulating -- --per_device_train_batch_size 8 --gradient_accumulation_steps 2 --threads 2
run two "${MPIEXEC[@]}" -n 2 -- --per_device_train_batch_size 8
run two_accumulating "${MPIEXEC[@]}" -n 2 -- --per_device_train_batch_size 4 --gradient_accumulation_steps 2

grep -q "^layout: 2 ranks on 1 host" "$WORK/two.log" || fail "no layout line: $(head -5 "$WORK/two.log")"
python3 "$(dirname "$0")/compare_runs.py" "$WORK" 6 one_accumulating two two_accumulating --no-predictions ||
  fail "the distributed runs differ from the single process (see above)"

python3 - "$WORK" one_accumulating two two_accumulating <<'PY' || fail "the distributed evaluations differ from the single process's"
import json, sys
work, runs = sys.argv[1], sys.argv[2:]
def evaluations(run):
    state = json.load(open(f"{work}/{run}/trainer_state.json"))
    return [e for e in state["log_history"] if "eval_loss" in e]
def same(a, b, where):
    timing = ("runtime", "per_second")
    keys = sorted(k for k in a if not any(t in k for t in timing))
    if keys != sorted(k for k in b if not any(t in k for t in timing)):
        sys.exit(f"{where}: metrics {sorted(b)} vs {sorted(a)}")
    for k in keys:
        x, y = a[k], b[k]
        if isinstance(x, (int, float)) and abs(x - y) > 1e-5 * max(1.0, abs(x)):
            sys.exit(f"{where}: {k} {y} vs {x}")
one = evaluations("one")
if [e["step"] for e in one] != [8, 16, 24]:
    sys.exit(f"one: evaluations at steps {[e['step'] for e in one]}, not 8, 16, 24")
for run in runs:
    other = evaluations(run)
    if [e["step"] for e in other] != [e["step"] for e in one]:
        sys.exit(f"{run}: evaluations at steps {[e['step'] for e in other]}")
    for a, b in zip(one, other):
        same(a, b, f"{run}: evaluation at step {a['step']}")
    same(json.load(open(f"{work}/one/eval_results.json")), json.load(open(f"{work}/{run}/eval_results.json")),
         f"{run}: eval_results.json")
    # Each example counted once: as many evaluated as one process evaluates.
    if json.load(open(f"{work}/{run}/eval_results.json"))["eval_samples"] != \
            json.load(open(f"{work}/one/eval_results.json"))["eval_samples"]:
        sys.exit(f"{run}: eval_samples differ")
print("evaluations equal:", ", ".join(runs))
PY
if [ -n "$PREDICTIONS" ]; then
  for run in one_accumulating two two_accumulating; do
    [ -s "$WORK/one/$PREDICTIONS" ] || fail "one: no $PREDICTIONS"
    cmp -s "$WORK/one/$PREDICTIONS" "$WORK/$run/$PREDICTIONS" || fail "$run: $PREDICTIONS differs from one process's"
  done
fi
echo "run_$PROGRAM: 2 ranks (and 2 ranks accumulating) train and evaluate as one process does"
