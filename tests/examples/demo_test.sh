#!/usr/bin/env bash
# The README's demo, shortened: cputrain-make-demo-data's files train a new model through run_qa with the demo's
# settings (scripts/demo.sh), and the model must have learnt to read — eval F1 on questions about people and
# places it never saw, a fifth of them unanswerable, far above what copying the first name or always answering
# "no answer" gives (about 20) — and the output directory must be a complete Hugging Face model directory.
#   demo_test.sh <path to run_qa> <path to cputrain-make-demo-data>
set -u
RUN_QA=$1
MAKE_DEMO=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/demo_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
json_value() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

"$MAKE_DEMO" --output_dir "$WORK/demo" --train_paragraphs 3000 --version_2_with_negative > "$WORK/make.log" 2>&1 ||
  fail "cputrain-make-demo-data failed: $(cat "$WORK/make.log")"
"$RUN_QA" --config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" \
  --train_file "$WORK/demo/train.json" --validation_file "$WORK/demo/dev.json" --version_2_with_negative \
  --do_train --do_eval --output_dir "$WORK/out" --per_device_train_batch_size 32 --learning_rate 2e-3 \
  --weight_decay 0.01 --warmup_ratio 0.06 --max_steps 800 --max_seq_length 128 --doc_stride 32 \
  --pad_to_max_length false --group_by_length --logging_steps 200 --save_strategy no --threads 2 --disable_tqdm \
  > "$WORK/log" 2>&1 || fail "run_qa failed: $(tail -5 "$WORK/log")"
cat "$WORK/log"

f1=$(json_value "$WORK/out/eval_results.json" eval_f1)
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 60 else 1)" "$f1" || fail "eval_f1 $f1 < 60"
for f in model.safetensors config.json vocab.txt tokenizer_config.json special_tokens_map.json trainer_state.json \
         train_results.json eval_results.json all_results.json eval_predictions.json eval_nbest_predictions.json \
         eval_null_odds.json; do
  [ -s "$WORK/out/$f" ] || fail "output_dir has no $f"
done
ls "$WORK/out" | grep -q '^checkpoint-' && fail "--save_strategy no wrote a checkpoint"
# The loss, logged every 200 steps, fell to well under half of its first value.
python3 - "$WORK/out/trainer_state.json" <<'PY' || fail "trainer_state.json: the loss did not fall"
import json, sys
history = [e for e in json.load(open(sys.argv[1]))["log_history"] if "loss" in e]
assert len(history) == 4, history
assert history[-1]["loss"] < 0.5 * history[0]["loss"] < 4, history
PY
echo "eval_f1 $f1"
