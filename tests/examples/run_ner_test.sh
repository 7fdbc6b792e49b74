#!/usr/bin/env bash
# End-to-end checks of the run_ner program on the demo's NER sentences (cputrain-make-demo-data --task ner): a small
# set learnt by heart with evaluation during training, the labels and metrics as run_ner.py builds them, exact
# resume, and refusals.
#   run_ner_test.sh <path to run_ner> <path to cputrain-make-demo-data> <case>
set -u
RUN_NER=$1
MAKE_DATA=$2
CASE=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/run_ner_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }
# shellcheck source=tests/examples/demo_model.sh
. "$(dirname "$0")/demo_model.sh"  # tiny_roberta
expect_exit() {  # expect_exit CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq "$code" ] || fail "exit $rc, not $code, from: $* -- output: $out"
  echo "$out" | grep -qF -- "$pattern" || fail "no \"$pattern\" in the output of: $* -- output: $out"
}

"$MAKE_DATA" --task ner --output_dir "$WORK/data" --train_examples 600 --eval_examples 100 --test_examples 50 \
  > /dev/null || fail "cputrain-make-demo-data --task ner failed"
D=$WORK/data
COMMON=(--config_name "$D/model" --tokenizer_name "$D/model" --per_device_train_batch_size 16 --threads 2
        --disable_tqdm)

case $CASE in
  learn)
    # 200 sentences learnt by heart (seqeval F1 >= 0.9 on them), evaluated during training with the best
    # evaluation kept, and predictions.txt as run_ner.py writes it.
    head -200 "$D/train.json" > "$WORK/small.jsonl"
    "$RUN_NER" "${COMMON[@]}" --train_file "$WORK/small.jsonl" --validation_file "$WORK/small.jsonl" \
      --test_file "$D/test.json" --do_train --do_eval --do_predict --learning_rate 1e-3 --warmup_ratio 0.06 \
      --max_steps 300 --logging_steps 50 --eval_strategy steps --eval_steps 100 --save_steps 100 \
      --save_total_limit 1 --load_best_model_at_end --metric_for_best_model f1 --output_dir "$WORK/out" \
      > "$WORK/log" 2>&1 || fail "run_ner failed: $(tail -5 "$WORK/log")"
    python3 - "$WORK/out" "$D/test.json" <<'PY' || fail "the results are not what run_ner.py writes"
import json, os, sys
out, test = sys.argv[1], sys.argv[2]
ev = json.load(open(os.path.join(out, "eval_results.json")))
for key in ("eval_precision", "eval_recall", "eval_f1", "eval_accuracy", "eval_loss", "eval_runtime",
            "eval_samples_per_second", "eval_samples", "epoch"):
    assert key in ev, (key, ev)
assert ev["eval_samples"] == 200, ev
assert ev["eval_f1"] >= 0.9, ("not learnt", ev)
p, r = ev["eval_precision"], ev["eval_recall"]
assert abs(ev["eval_f1"] - 2 * p * r / (p + r)) < 1e-12, ev
config = json.load(open(os.path.join(out, "config.json")))
assert config["architectures"] == ["BertForTokenClassification"], config["architectures"]
state = json.load(open(os.path.join(out, "trainer_state.json")))
evals = [e for e in state["log_history"] if "eval_f1" in e]
assert [e["step"] for e in evals] == [100, 200, 300], evals
assert state["best_metric"] == max(e["eval_f1"] for e in evals), state["best_metric"]
rows = [json.loads(l) for l in open(test) if l.strip()]
lines = open(os.path.join(out, "predictions.txt")).read().split("\n")
assert lines[-1] == "" and len(lines) - 1 == len(rows), (len(lines), len(rows))
labels = set(config["label2id"])
for line, row in zip(lines, rows):
    tags = line.split(" ")
    assert len(tags) == len(row["tokens"]) and set(tags) <= labels, (line, row)
pr = json.load(open(os.path.join(out, "predict_results.json")))
assert "predict_f1" in pr and "predict_loss" in pr and "predict_runtime" in pr, pr
PY
    ;;
  labels)
    # The columns and labels as run_ner.py finds them: other column names (the first two), string tags (the sorted
    # distinct tags), per-type metrics, integer tags (ids), label_all_tokens, a test file without tags, and a
    # fine-tuned model evaluated without its training file (its own labels).
    python3 - "$D" "$WORK" <<'PY'
import json, os, sys
data, work = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(os.path.join(data, "train.json"))][:100]
names = sorted({t for r in rows for t in r["ner_tags"]})
with open(os.path.join(work, "strings.jsonl"), "w") as f:
    for r in rows:
        f.write(json.dumps({"words": r["tokens"], "tags": r["ner_tags"], "id": r["id"]}) + "\n")
with open(os.path.join(work, "ids.json"), "w") as f:  # one JSON array, integer tags
    json.dump([{"tokens": r["tokens"], "ner_tags": [names.index(t) for t in r["ner_tags"]]} for r in rows], f)
with open(os.path.join(work, "untagged.jsonl"), "w") as f:
    for r in rows[:30]:
        f.write(json.dumps({"words": r["tokens"]}) + "\n")
PY
    run() {  # run NAME FLAGS...: a short run into out-NAME
      local name=$1; shift
      "$RUN_NER" "${COMMON[@]}" "$@" --max_steps 4 --output_dir "$WORK/out-$name" > "$WORK/log-$name" 2>&1 ||
        fail "run_ner ($name) failed: $(tail -5 "$WORK/log-$name")"
    }
    run strings --train_file "$WORK/strings.jsonl" --validation_file "$WORK/strings.jsonl" --do_train --do_eval \
      --do_predict --test_file "$WORK/untagged.jsonl" --return_entity_level_metrics
    run ids --train_file "$WORK/ids.json" --validation_file "$WORK/ids.json" --do_train --do_eval
    run all-tokens --train_file "$WORK/strings.jsonl" --validation_file "$WORK/strings.jsonl" --do_train --do_eval \
      --label_all_tokens
    "$RUN_NER" --model_name_or_path "$WORK/out-strings" --validation_file "$WORK/strings.jsonl" --do_eval \
      --threads 2 --output_dir "$WORK/out-again" > "$WORK/log-again" 2>&1 ||
      fail "run_ner on the fine-tuned model failed: $(tail -5 "$WORK/log-again")"
    python3 - "$WORK" <<'PY' || fail "the labels are not run_ner.py's"
import json, os, sys
work = sys.argv[1]
load = lambda *p: json.load(open(os.path.join(work, *p)))
rows = [json.loads(l) for l in open(os.path.join(work, "strings.jsonl"))]
names = sorted({t for r in rows for t in r["tags"]})
c = load("out-strings", "config.json")
assert c["id2label"] == {str(i): n for i, n in enumerate(names)}, c["id2label"]
assert c["label2id"] == {n: i for i, n in enumerate(names)}, c["label2id"]
e = load("out-strings", "eval_results.json")
types = sorted({n[2:] for n in names if n != "O"})
for t in types:
    for k in ("precision", "recall", "f1", "number"):
        assert f"eval_{t}_{k}" in e, (t, k, e)
    assert e[f"eval_{t}_number"] == sum(tag == "B-" + t for r in rows for tag in r["tags"]), (t, e)
for k in ("overall_precision", "overall_recall", "overall_f1", "overall_accuracy", "loss"):
    assert "eval_" + k in e, (k, e)
assert "eval_f1" not in e, e  # run_ner.py's entity-level results keep seqeval's overall_ names
p = load("out-strings", "predict_results.json")
assert "predict_runtime" in p and "predict_f1" not in p and "predict_overall_f1" not in p, p
lines = open(os.path.join(work, "out-strings", "predictions.txt")).read().splitlines()
untagged = [json.loads(l) for l in open(os.path.join(work, "untagged.jsonl"))]
assert len(lines) == len(untagged), len(lines)
assert all(len(l.split(" ")) == len(r["words"]) and set(l.split(" ")) <= set(names) for l, r in zip(lines, untagged))
c = load("out-ids", "config.json")
assert c["id2label"] == {str(i): str(i) for i in range(len(names))}, c["id2label"]
assert "eval_f1" in load("out-ids", "eval_results.json")
assert "eval_f1" in load("out-all-tokens", "eval_results.json")
e = load("out-again", "eval_results.json")
assert e["eval_samples"] == len(rows) and "eval_f1" in e and "epoch" not in e, e
PY
    ;;
  roberta)
    # A RoBERTa checkpoint whose tokenizer.json has add_prefix_space false, as roberta-base's has: run_ner.py loads
    # it with add_prefix_space=True for words given already split, and so must run_ner, with no setting from the
    # user. A tiny RoBERTa over the byte-level cut learns the 200 sentences by heart, and the directory it saves
    # holds the tokenizer with the prefix space on, as save_pretrained writes it.
    tiny_roberta "$WORK/r" RobertaForTokenClassification
    head -200 "$D/train.json" > "$WORK/small.jsonl"
    R=(--config_name "$WORK/r" --tokenizer_name "$WORK/r" --per_device_train_batch_size 16 --threads 2 --disable_tqdm)
    "$RUN_NER" "${R[@]}" --train_file "$WORK/small.jsonl" --validation_file "$WORK/small.jsonl" --do_train --do_eval \
      --learning_rate 1e-3 --warmup_ratio 0.06 --max_steps 300 --logging_steps 100 --save_strategy no \
      --output_dir "$WORK/out" > "$WORK/log" 2>&1 || fail "run_ner failed: $(tail -5 "$WORK/log")"
    python3 - "$WORK/out" <<'PY' || fail "the RoBERTa run's results are not what run_ner.py gives"
import json, os, sys
out = sys.argv[1]
ev = json.load(open(os.path.join(out, "eval_results.json")))
assert ev["eval_samples"] == 200 and ev["eval_f1"] >= 0.9, ("not learnt", ev)
config = json.load(open(os.path.join(out, "config.json")))
assert config["model_type"] == "roberta", config["model_type"]
assert config["architectures"] == ["RobertaForTokenClassification"], config["architectures"]
tok = json.load(open(os.path.join(out, "tokenizer.json")))
assert tok["pre_tokenizer"]["add_prefix_space"] is True, tok["pre_tokenizer"]
assert tok["post_processor"]["add_prefix_space"] is True, tok["post_processor"]
assert json.load(open(os.path.join(out, "tokenizer_config.json")))["add_prefix_space"] is True
PY
    # The saved model evaluates again from its own directory, to the same F1.
    "$RUN_NER" --model_name_or_path "$WORK/out" --per_device_eval_batch_size 16 --threads 2 --disable_tqdm \
      --validation_file "$WORK/small.jsonl" --do_eval --output_dir "$WORK/again" > "$WORK/log-again" 2>&1 ||
      fail "run_ner on the saved RoBERTa failed: $(tail -5 "$WORK/log-again")"
    python3 - "$WORK/out/eval_results.json" "$WORK/again/eval_results.json" <<'PY' || fail "the saved model differs"
import json, sys
a, b = (json.load(open(f))["eval_f1"] for f in sys.argv[1:])
assert a == b, (a, b)
PY
    ;;
  resume)
    # Stopped at a checkpoint and resumed: bit-identical weights to a run that never stopped.
    common=("${COMMON[@]}" --train_file "$D/train.json" --do_train --learning_rate 1e-3 --max_steps 20
            --logging_steps 5 --save_steps 10)
    "$RUN_NER" "${common[@]}" --output_dir "$WORK/a" > "$WORK/a.log" 2>&1 || fail "run a failed: $(tail -3 "$WORK/a.log")"
    "$RUN_NER" "${common[@]}" --output_dir "$WORK/b" --resume_from_checkpoint "$WORK/a/checkpoint-10" \
      > "$WORK/b.log" 2>&1 || fail "run b failed: $(tail -3 "$WORK/b.log")"
    cmp -s "$WORK/a/model.safetensors" "$WORK/b/model.safetensors" || fail "resumed weights differ from uninterrupted ones"
    ;;
  bad-input)
    # Refusals naming the flag, or the file, the line and the column.
    expect_exit 2 "--task_name is run_glue's flag; run_ner does not take it" -- "$RUN_NER" "${COMMON[@]}" \
      --task_name mrpc --train_file "$D/train.json" --do_train --output_dir "$WORK/x"
    bad() {  # bad NAME LINE: the first two training rows, then LINE, as NAME
      head -2 "$D/train.json" > "$WORK/$1"
      echo "$2" >> "$WORK/$1"
    }
    bad ragged.jsonl '{"tokens": ["Ann", "Smith", "left"], "ner_tags": ["B-PER", "I-PER"]}'
    expect_exit 1 "ragged.jsonl: line 3: column 'ner_tags': 2 tags for the 3 words of column 'tokens'" -- \
      "$RUN_NER" "${COMMON[@]}" --train_file "$WORK/ragged.jsonl" --do_train --output_dir "$WORK/x1"
    bad empty.jsonl '{"tokens": [], "ner_tags": []}'
    expect_exit 1 "empty.jsonl: line 3: column 'tokens': an empty list: no words" -- \
      "$RUN_NER" "${COMMON[@]}" --train_file "$WORK/empty.jsonl" --do_train --output_dir "$WORK/x2"
    bad unknown.jsonl '{"tokens": ["Ann", "Smith", "left"], "ner_tags": ["B-PER", "I-XYZ", "O"]}'
    expect_exit 1 "unknown.jsonl: line 3: column 'ner_tags': word 1 (\"Smith\") has the tag \"I-XYZ\", which is not among the labels (B-" \
      -- "$RUN_NER" "${COMMON[@]}" --train_file "$D/train.json" --validation_file "$WORK/unknown.jsonl" --do_train \
      --do_eval --max_steps 1 --output_dir "$WORK/x3"
    printf 'tokens,ner_tags\n"Ann Smith","B-PER I-PER"\n' > "$WORK/flat.csv"
    expect_exit 1 "flat.csv: line 2: column 'tokens': \"Ann Smith\" is not a list of words" -- \
      "$RUN_NER" "${COMMON[@]}" --train_file "$WORK/flat.csv" --do_train --output_dir "$WORK/x4"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS ($CASE)"
