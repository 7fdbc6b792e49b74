#!/usr/bin/env bash
# End-to-end checks of the run_mlm program on the demo's small BERT and text (cputrain-make-demo-data --task mlm;
# where that task does not exist, the QA demo's model and text written here from its vocabulary): learning, rows as
# run_mlm.py reads them (line_by_line, blank lines, the validation split, CSV and JSON columns), exact resume (the
# masks drawn again), and refusals.
#   run_mlm_test.sh <path to run_mlm> <path to cputrain-make-demo-data> <case>
set -u
RUN_MLM=$1
MAKE_DATA=$2
CASE=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/run_mlm_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }
expect_exit() {  # expect_exit CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq "$code" ] || fail "exit $rc, not $code, from: $* -- output: $out"
  echo "$out" | grep -q -- "$pattern" || fail "no \"$pattern\" in the output of: $* -- output: $out"
}

D=$WORK/data
if "$MAKE_DATA" --help 2>&1 | grep -q 'mlm'; then
  "$MAKE_DATA" --task mlm --output_dir "$D" --train_examples 200 --eval_examples 40 > /dev/null ||
    fail "cputrain-make-demo-data --task mlm failed"
else
  # Sentences of the vocabulary's whole words in a few fixed orders: a masked word is guessable from its neighbours.
  "$MAKE_DATA" --task qa --output_dir "$D" --train_paragraphs 10 > /dev/null || fail "cputrain-make-demo-data failed"
  python3 - "$D" <<'PY' || fail "could not write the text"
import os, random, sys
d = sys.argv[1]
words = [w for w in open(os.path.join(d, "model", "vocab.txt")).read().split("\n")
         if w.isalpha() and w.islower() and len(w) > 2][:60]
def lines(n, seed):
    rng = random.Random(seed)
    return [" ".join(words[(start + k * step) % len(words)] for k in range(12)) + "."
            for start, step in ((rng.randrange(len(words)), rng.choice((1, 7, 11))) for _ in range(n))]
open(os.path.join(d, "train.txt"), "w").write("\n".join(lines(1200, 1)) + "\n")
open(os.path.join(d, "dev.txt"), "w").write("\n".join(lines(120, 2)) + "\n")
PY
fi
COMMON=(--config_name "$D/model" --tokenizer_name "$D/model" --per_device_train_batch_size 16 --threads 2
        --disable_tqdm)

case $CASE in
  learn)
    # A new model from the config learns 120 lines by heart, evaluated on them with other masks (as run_glue's
    # learn case): the eval perplexity falls below half its first evaluation's (about a fifth: 194 to 41 on the
    # demo's text). The files are run_mlm.py's (eval_loss, perplexity = exp(eval_loss), eval_samples, BertForMaskedLM).
    head -120 "$D/train.txt" > "$WORK/small.txt"
    "$RUN_MLM" "${COMMON[@]}" --train_file "$WORK/small.txt" --validation_file "$WORK/small.txt" --do_train --do_eval \
      --max_seq_length 64 --learning_rate 2e-3 --warmup_ratio 0.05 --max_steps 400 --logging_steps 50 \
      --eval_strategy steps --eval_steps 25 --save_strategy no --output_dir "$WORK/out" > "$WORK/log" 2>&1 ||
      fail "run_mlm failed: $(tail -5 "$WORK/log")"
    python3 - "$WORK/out" <<'PY' || fail "not learnt, or not run_mlm.py's files: $(grep perplexity "$WORK/log")"
import json, math, os, sys
out = sys.argv[1]
ev = json.load(open(os.path.join(out, "eval_results.json")))
for key in ("eval_loss", "perplexity", "eval_samples", "eval_runtime", "eval_samples_per_second", "epoch"):
    assert key in ev, (key, ev)
assert abs(ev["perplexity"] - math.exp(ev["eval_loss"])) <= 1e-9 * ev["perplexity"], ev
state = json.load(open(os.path.join(out, "trainer_state.json")))
evals = [e for e in state["log_history"] if "eval_loss" in e]
assert [e["step"] for e in evals] == list(range(25, 401, 25)), evals
first = math.exp(evals[0]["eval_loss"])
print(f"eval perplexity: {first:.1f} at step 25, {ev['perplexity']:.1f} at the end")
assert ev["perplexity"] < first / 2, ("not learnt", first, ev["perplexity"])
assert abs(evals[-1]["eval_loss"] - ev["eval_loss"]) < 1e-9, "the last evaluation differs from the final one"
tr = json.load(open(os.path.join(out, "train_results.json")))
assert tr["train_samples"] > 0 and "train_loss" in tr and "train_samples_per_second" in tr, tr
allr = json.load(open(os.path.join(out, "all_results.json")))
assert "perplexity" in allr and "train_loss" in allr, allr
config = json.load(open(os.path.join(out, "config.json")))
assert config["architectures"] == ["BertForMaskedLM"], config["architectures"]
PY
    ;;
  line-by-line)
    # Blank and whitespace-only lines (CRLF too) are rows that line_by_line drops: eval_samples counts the others.
    printf 'the first line here\n\n   \nsecond line\r\n\t\r\nthird and last line\n\n' > "$WORK/blank.txt"
    "$RUN_MLM" "${COMMON[@]}" --train_file "$WORK/blank.txt" --validation_file "$WORK/blank.txt" --do_train \
      --do_eval --line_by_line --max_steps 2 --output_dir "$WORK/a" > "$WORK/a.log" 2>&1 ||
      fail "run_mlm --line_by_line failed: $(tail -5 "$WORK/a.log")"
    # Without --validation_file the first 10% of the rows (4 of 40, rounded as datasets does) are not trained on.
    python3 - "$WORK" <<'PY'
import json, os, sys
w = sys.argv[1]
rows = [("" if i % 5 == 4 else f"line number {i} of the text") for i in range(40)]
open(os.path.join(w, "split.txt"), "w").write("\n".join(rows) + "\n")
with open(os.path.join(w, "rows.jsonl"), "w") as f:  # "text" is not the first column: run_mlm.py takes it anyway
    for i, r in enumerate(rows[:12]):
        f.write(json.dumps({"id": i, "text": r}) + "\n")
with open(os.path.join(w, "first.csv"), "w") as f:  # no "text" column: the first one
    f.write("sentence,n\n" + "".join(f"a sentence {i},{i}\n" for i in range(9)))
PY
    "$RUN_MLM" "${COMMON[@]}" --train_file "$WORK/split.txt" --validation_split_percentage 10 --do_train \
      --line_by_line --max_steps 1 --output_dir "$WORK/b" > "$WORK/b.log" 2>&1 ||
      fail "run_mlm with the validation split failed: $(tail -5 "$WORK/b.log")"
    "$RUN_MLM" "${COMMON[@]}" --train_file "$WORK/rows.jsonl" --validation_file "$WORK/rows.jsonl" --do_train \
      --do_eval --line_by_line --max_steps 1 --output_dir "$WORK/c" > "$WORK/c.log" 2>&1 ||
      fail "run_mlm on JSON Lines failed: $(tail -5 "$WORK/c.log")"
    "$RUN_MLM" "${COMMON[@]}" --validation_file "$WORK/first.csv" --do_eval --line_by_line --output_dir "$WORK/d" \
      > "$WORK/d.log" 2>&1 || fail "run_mlm on CSV failed: $(tail -5 "$WORK/d.log")"
    python3 - "$WORK" <<'PY' || fail "the rows are not run_mlm.py's"
import json, os, sys
w = sys.argv[1]
ev = json.load(open(os.path.join(w, "a", "eval_results.json")))
assert ev["eval_samples"] == 3, ev  # of 7 rows, 3 are not blank
tr = json.load(open(os.path.join(w, "b", "train_results.json")))
assert tr["train_samples"] == 36 - 8, tr  # rows 4..39, of which 8 are blank (4, 9, ..., 39)
ev = json.load(open(os.path.join(w, "c", "eval_results.json")))
assert ev["eval_samples"] == 10, ev  # of 12 rows, 2 are blank
ev = json.load(open(os.path.join(w, "d", "eval_results.json")))
assert ev["eval_samples"] == 9, ev
PY
    grep -q "split.txt (train\[10%:\], no --validation_file): 36 texts, 28 sequences" "$WORK/b.log" ||
      fail "no summary of the training split: $(cat "$WORK/b.log")"
    ;;
  resume)
    # Stopped at a checkpoint and resumed: bit-identical weights to a run that never stopped, so every batch drew
    # the same masks; and the same evaluation.
    common=("${COMMON[@]}" --train_file "$D/train.txt" --validation_file "$D/dev.txt" --do_train --do_eval
            --max_seq_length 64 --learning_rate 1e-3 --max_steps 20 --logging_steps 5 --save_steps 10)
    "$RUN_MLM" "${common[@]}" --output_dir "$WORK/a" > "$WORK/a.log" 2>&1 || fail "run a failed: $(tail -3 "$WORK/a.log")"
    "$RUN_MLM" "${common[@]}" --output_dir "$WORK/b" --resume_from_checkpoint "$WORK/a/checkpoint-10" \
      > "$WORK/b.log" 2>&1 || fail "run b failed: $(tail -3 "$WORK/b.log")"
    cmp -s "$WORK/a/model.safetensors" "$WORK/b/model.safetensors" || fail "resumed weights differ from uninterrupted ones"
    python3 - "$WORK" <<'PY' || fail "the resumed run's evaluation differs"
import json, os, sys
w = sys.argv[1]
a, b = (json.load(open(os.path.join(w, x, "eval_results.json"))) for x in "ab")
assert a["eval_loss"] == b["eval_loss"], (a["eval_loss"], b["eval_loss"])
PY
    ;;
  bad-input)
    # Refusals naming the flag, or the file and the line.
    expect_exit 2 "task_name is run_glue's flag; run_mlm does not take it" -- "$RUN_MLM" "${COMMON[@]}" \
      --train_file "$D/train.txt" --do_train --task_name mrpc --output_dir "$WORK/x"
    expect_exit 2 "mlm_probability 1.5: must lie in (0, 1)" -- "$RUN_MLM" "${COMMON[@]}" \
      --train_file "$D/train.txt" --do_train --mlm_probability 1.5 --output_dir "$WORK/x"
    expect_exit 2 "train_file $WORK/missing.txt: no such file" -- "$RUN_MLM" "${COMMON[@]}" \
      --train_file "$WORK/missing.txt" --do_train --output_dir "$WORK/x"
    printf 'a\tb\n' > "$WORK/rows.tsv"
    expect_exit 2 "rows.tsv: extension '.tsv'; run_mlm reads a .txt, .csv, .json or .jsonl file" -- "$RUN_MLM" \
      "${COMMON[@]}" --train_file "$WORK/rows.tsv" --do_train --output_dir "$WORK/x"
    printf 'good line\nbad \377 line\n' > "$WORK/bad.txt"
    expect_exit 1 "bad.txt: line 2, byte 5: invalid UTF-8" -- "$RUN_MLM" "${COMMON[@]}" \
      --train_file "$WORK/bad.txt" --do_train --output_dir "$WORK/x1"
    printf '{"text": "a text"}\n' > "$WORK/train.jsonl"
    printf '{"body": "a text"}\n' > "$WORK/dev.jsonl"
    expect_exit 1 "dev.jsonl: no column 'text'; the columns are 'body'" -- "$RUN_MLM" "${COMMON[@]}" \
      --train_file "$WORK/train.jsonl" --validation_file "$WORK/dev.jsonl" --do_train --do_eval --output_dir "$WORK/x2"
    printf 'text,n\na text,1\n,2\n' > "$WORK/null.csv"
    expect_exit 1 "null.csv: line 3: column 'text': is null" -- "$RUN_MLM" "${COMMON[@]}" \
      --train_file "$WORK/null.csv" --do_train --output_dir "$WORK/x3"
    printf 'short\n' > "$WORK/short.txt"
    expect_exit 1 "short.txt (train\[5%:\], no --validation_file): 1 text, no block of 256 tokens" -- \
      "$RUN_MLM" "${COMMON[@]}" --train_file "$WORK/short.txt" --do_train --output_dir "$WORK/x4"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS ($CASE)"
