#!/usr/bin/env bash
# End-to-end checks of the run_glue program on the demo's paraphrase data (cputrain-make-demo-data --task glue):
# learning with evaluation during training, the labels as run_glue.py builds them, exact resume, and refusals.
#   run_glue_test.sh <path to run_glue> <path to cputrain-make-demo-data> <case>
set -u
RUN_GLUE=$1
MAKE_DATA=$2
CASE=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/run_glue_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }
json_value() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
expect_exit() {  # expect_exit CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq "$code" ] || fail "exit $rc, not $code, from: $* -- output: $out"
  echo "$out" | grep -q -- "$pattern" || fail "no \"$pattern\" in the output of: $* -- output: $out"
}

"$MAKE_DATA" --task glue --output_dir "$WORK/data" --train_examples 3000 --eval_examples 400 > /dev/null ||
  fail "cputrain-make-demo-data --task glue failed"
D=$WORK/data
COMMON=(--config_name "$D/model" --tokenizer_name "$D/model" --max_seq_length 64 --per_device_train_batch_size 16
        --pad_to_max_length false --threads 2 --disable_tqdm)

case $CASE in
  learn)
    # 256 paraphrase pairs learnt by heart (accuracy >= 0.9 on them), with MRPC's metrics, the best of the
    # evaluations kept, and predictions in run_glue.py's file.
    head -257 "$D/train.csv" > "$WORK/small.csv"
    "$RUN_GLUE" "${COMMON[@]}" --task_name mrpc --train_file "$WORK/small.csv" --validation_file "$WORK/small.csv" \
      --test_file "$D/test.csv" --do_train --do_eval --do_predict --learning_rate 1e-3 --warmup_ratio 0.06 \
      --max_steps 480 --logging_steps 80 --eval_strategy steps --eval_steps 160 --save_steps 160 \
      --save_total_limit 1 --load_best_model_at_end --metric_for_best_model accuracy --output_dir "$WORK/out" \
      > "$WORK/log" 2>&1 || fail "run_glue failed: $(tail -5 "$WORK/log")"
    python3 - "$WORK/out" "$D" "$WORK/small.csv" <<'PY' || fail "the results are not what run_glue.py writes"
import csv, json, os, sys
out, data = sys.argv[1], sys.argv[2]
ev = json.load(open(os.path.join(out, "eval_results.json")))
for key in ("eval_accuracy", "eval_f1", "eval_combined_score", "eval_loss", "eval_runtime", "eval_samples"):
    assert key in ev, (key, ev)
assert abs(ev["eval_combined_score"] - (ev["eval_accuracy"] + ev["eval_f1"]) / 2) < 1e-12, ev
dev = list(csv.DictReader(open(sys.argv[3])))
assert ev["eval_samples"] == len(dev) == 256, ev
assert ev["eval_accuracy"] >= 0.9, ("not learnt", ev["eval_accuracy"])
config = json.load(open(os.path.join(out, "config.json")))
assert config["id2label"] == {"0": "not_equivalent", "1": "equivalent"}, config.get("id2label")
assert config["architectures"] == ["BertForSequenceClassification"], config["architectures"]
state = json.load(open(os.path.join(out, "trainer_state.json")))
evals = [e for e in state["log_history"] if "eval_accuracy" in e]
assert [e["step"] for e in evals] == [160, 320, 480], evals
assert state["best_metric"] == max(e["eval_accuracy"] for e in evals), state["best_metric"]
lines = open(os.path.join(out, "predict_results_mrpc.txt")).read().splitlines()
test = list(csv.DictReader(open(os.path.join(data, "test.csv"))))
assert lines[0] == "index\tprediction" and len(lines) == len(test) + 1, lines[:3]
assert all(l.split("\t")[1] in ("equivalent", "not_equivalent") for l in lines[1:]), lines[1:4]
PY
    ;;
  labels)
    # Without --task_name: the columns and labels as run_glue.py infers them from the training file.
    python3 - "$D" "$WORK" <<'PY'
import csv, json, os, sys
data, work = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(os.path.join(data, "train.csv"))))[:200]
names = {"0": "different", "1": "same"}
with open(os.path.join(work, "strings.jsonl"), "w") as f:  # string labels, other column names, JSON Lines
    for r in rows:
        f.write(json.dumps({"a": r["sentence1"], "b": r["sentence2"], "label": names[r["label"]]}) + "\n")
with open(os.path.join(work, "scores.json"), "w") as f:  # float labels: regression; one JSON array
    json.dump([{"sentence1": r["sentence1"], "sentence2": r["sentence2"], "label": float(r["label"]) * 4.5}
               for r in rows], f)
with open(os.path.join(work, "multi.jsonl"), "w") as f:  # lists of labels: multi-label (run_classification)
    for i, r in enumerate(rows):
        f.write(json.dumps({"text": r["sentence1"], "label": ["same"] + (["odd"] if i % 2 else [])
                            if r["label"] == "1" else ["odd"] if i % 2 else []}) + "\n")
PY
    for f in strings.jsonl scores.json multi.jsonl; do
      "$RUN_GLUE" "${COMMON[@]}" --train_file "$WORK/$f" --validation_file "$WORK/$f" --do_train --do_eval \
        --do_predict --test_file "$WORK/$f" --max_steps 4 --output_dir "$WORK/out-$f" > "$WORK/log-$f" 2>&1 ||
        fail "run_glue on $f failed: $(tail -5 "$WORK/log-$f")"
    done
    python3 - "$WORK" <<'PY' || fail "the labels are not run_glue.py's"
import json, os, sys
work = sys.argv[1]
c = json.load(open(os.path.join(work, "out-strings.jsonl", "config.json")))
assert c["id2label"] == {"0": "different", "1": "same"} and c["label2id"] == {"different": 0, "same": 1}, c
e = json.load(open(os.path.join(work, "out-strings.jsonl", "eval_results.json")))
assert "eval_accuracy" in e and "eval_loss" in e, e
assert open(os.path.join(work, "out-strings.jsonl", "predict_results_None.txt")).readline() == "index\tprediction\n"
c = json.load(open(os.path.join(work, "out-scores.json", "config.json")))
assert c["problem_type"] == "regression" and c["id2label"] == {"0": "LABEL_0"}, c  # num_labels 1, as transformers writes it
e = json.load(open(os.path.join(work, "out-scores.json", "eval_results.json")))
assert "eval_mse" in e and "eval_accuracy" not in e, e
second = open(os.path.join(work, "out-scores.json", "predict_results_None.txt")).read().splitlines()[1]
assert second.startswith("0\t") and len(second.split("\t")[1].split(".")[1]) == 3, second
c = json.load(open(os.path.join(work, "out-multi.jsonl", "config.json")))
assert c["problem_type"] == "multi_label_classification" and c["id2label"] == {"0": "odd", "1": "same"}, c
e = json.load(open(os.path.join(work, "out-multi.jsonl", "eval_results.json")))
assert "eval_f1" in e, e
PY
    ;;
  resume)
    # Stopped at a checkpoint and resumed: bit-identical weights to a run that never stopped.
    common=("${COMMON[@]}" --task_name mrpc --train_file "$D/train.csv" --do_train --learning_rate 1e-3
            --max_steps 20 --logging_steps 5 --save_steps 10)
    "$RUN_GLUE" "${common[@]}" --output_dir "$WORK/a" > "$WORK/a.log" 2>&1 || fail "run a failed: $(tail -3 "$WORK/a.log")"
    "$RUN_GLUE" "${common[@]}" --output_dir "$WORK/b" --resume_from_checkpoint "$WORK/a/checkpoint-10" \
      > "$WORK/b.log" 2>&1 || fail "run b failed: $(tail -3 "$WORK/b.log")"
    cmp -s "$WORK/a/model.safetensors" "$WORK/b/model.safetensors" || fail "resumed weights differ from uninterrupted ones"
    ;;
  bad-input)
    # Refusals naming the flag, or the file, the line and the column.
    expect_exit 2 "doc_stride is run_qa's flag; run_glue does not take it" -- "$RUN_GLUE" "${COMMON[@]}" \
      --train_file "$D/train.csv" --do_train --doc_stride 16 --output_dir "$WORK/x"
    expect_exit 2 "--task_name squad: GLUE's tasks are" -- "$RUN_GLUE" "${COMMON[@]}" --task_name squad \
      --train_file "$D/train.csv" --do_train --output_dir "$WORK/x"
    head -3 "$D/dev.csv" > "$WORK/dev-bad.csv"
    echo 'One sentence.,Another sentence.,maybe,3' >> "$WORK/dev-bad.csv"
    expect_exit 1 "dev-bad.csv: line 4: column 'label': the label \"maybe\" is not among the labels (not_equivalent, equivalent)" \
      -- "$RUN_GLUE" "${COMMON[@]}" --task_name mrpc --train_file "$D/train.csv" --validation_file "$WORK/dev-bad.csv" \
      --do_eval --do_train --max_steps 1 --output_dir "$WORK/x1"
    printf 'sentence1,sentence2,label\nA sentence.,,1\n' > "$WORK/empty.csv"
    expect_exit 1 "empty.csv: line 2: column 'sentence2': no text" -- "$RUN_GLUE" "${COMMON[@]}" --task_name mrpc \
      --train_file "$WORK/empty.csv" --do_train --output_dir "$WORK/x2"
    printf 'text,label\nA sentence.,1\n' > "$WORK/columns.csv"
    expect_exit 1 "columns.csv: no column 'sentence1'; the columns are 'text', 'label'" -- "$RUN_GLUE" "${COMMON[@]}" \
      --task_name mrpc --train_file "$WORK/columns.csv" --do_train --output_dir "$WORK/x3"
    # A model with one token type: refused for sentence pairs (their second part is typed 1 in BERT's layout),
    # trained on single sentences, which never use type 1.
    mkdir -p "$WORK/one-type" && cp "$D/model/"* "$WORK/one-type/"
    sed -i 's/"type_vocab_size": 2/"type_vocab_size": 1/' "$WORK/one-type/config.json"
    grep -q '"type_vocab_size": 1' "$WORK/one-type/config.json" || fail "could not make a one-type model"
    expect_exit 2 "one-type/config.json: type_vocab_size = 1, but the inputs are sentence pairs" -- "$RUN_GLUE" \
      "${COMMON[@]}" --config_name "$WORK/one-type" --task_name mrpc --train_file "$D/train.csv" --do_train \
      --max_steps 1 --output_dir "$WORK/x5"
    python3 - "$D/train.csv" "$WORK/single.csv" <<'PY' || fail "cannot write single.csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))[:64]
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["sentence", "label"])
    w.writerows([r["sentence1"], r["label"]] for r in rows)
PY
    "$RUN_GLUE" "${COMMON[@]}" --config_name "$WORK/one-type" --train_file "$WORK/single.csv" --do_train --max_steps 2 \
      --output_dir "$WORK/single" > "$WORK/single.log" 2>&1 ||
      fail "single sentences on a one-type model: $(tail -3 "$WORK/single.log")"
    [ "$(json_value "$WORK/single/config.json" type_vocab_size)" = 1 ] || fail "the model's type_vocab_size changed"
    printf 'text,label\nA sentence.,1\nAnother.,1\n' > "$WORK/one.csv"
    expect_exit 1 "one.csv: one label (1): classification needs at least two" -- "$RUN_GLUE" "${COMMON[@]}" \
      --train_file "$WORK/one.csv" --do_train --output_dir "$WORK/x4"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS ($CASE)"
