#!/usr/bin/env bash
# End-to-end checks of the run_qa program: learning, exact resume, output layout and the refusals of bad input.
#   run_qa_test.sh <path to run_qa> <conformance data dir> <case>
# Exits 77 (CTest: skipped) without the conformance data (the SQuAD sample and bert-base-uncased's vocab.txt).
set -u
RUN_QA=$1
DATA=${2:-}
CASE=$3
# shellcheck source=tests/examples/conformance_data.sh
. "$(dirname "$0")/conformance_data.sh"
# shellcheck source=tests/examples/demo_model.sh
. "$(dirname "$0")/demo_model.sh"  # tiny_roberta
WORK=$(mktemp -d "${TMPDIR:-/tmp}/run_qa_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }

# A tiny BERT over bert-base-uncased's vocabulary; dropout on, so resume must replay the masks too.
make_model() {  # make_model DIR DROPOUT
  mkdir -p "$1"
  cp "$VOCAB" "$1/vocab.txt"
  cat > "$1/config.json" <<JSON
{"architectures": ["BertForQuestionAnswering"], "model_type": "bert", "vocab_size": 30522, "hidden_size": 64,
 "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128, "max_position_embeddings": 256,
 "type_vocab_size": 2, "hidden_dropout_prob": $2, "attention_probs_dropout_prob": $2, "layer_norm_eps": 1e-12,
 "initializer_range": 0.02, "pad_token_id": 0, "hidden_act": "gelu", "position_embedding_type": "absolute"}
JSON
}
json_value() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
expect_exit() {  # expect_exit CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" -eq "$code" ] || fail "exit $rc, not $code, from: $* -- output: $out"
  echo "$out" | grep -q -- "$pattern" || fail "no \"$pattern\" in the output of: $* -- output: $out"
}

TRAIN=(--train_file "$SAMPLE" --validation_file "$SAMPLE" --version_2_with_negative --max_seq_length 128
       --doc_stride 32 --per_device_train_batch_size 4 --threads 2 --disable_tqdm)

case $CASE in
  eval-during-training)
    # --eval_strategy steps with the best model kept: eval entries in the log history, the best checkpoint named in
    # trainer_state.json, kept by --save_total_limit 1 beside the last, and its weights the ones saved at the end.
    make_model "$WORK/m" 0.0
    "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --learning_rate 1e-3 \
      --max_steps 60 --logging_steps 10 --eval_strategy steps --eval_steps 10 --save_steps 10 --save_total_limit 1 \
      --load_best_model_at_end --metric_for_best_model f1 --output_dir "$WORK/out" > "$WORK/log" 2>&1 ||
      fail "run_qa failed: $(tail -5 "$WORK/log")"
    grep -q "Loading best model from" "$WORK/log" || fail "no 'Loading best model' line: $(tail -5 "$WORK/log")"
    python3 - "$WORK/out" <<'PY' || fail "the best model is not kept as Hugging Face keeps it"
import json, os, sys, hashlib
out = sys.argv[1]
state = json.load(open(os.path.join(out, "trainer_state.json")))
evals = [e for e in state["log_history"] if "eval_f1" in e]
assert [e["step"] for e in evals] == [10, 20, 30, 40, 50, 60], evals
for e in evals:
    assert {"eval_exact", "eval_f1", "eval_runtime", "eval_samples_per_second", "epoch"} <= set(e), e
best = max(evals, key=lambda e: (e["eval_f1"], -e["step"]))  # the first of equal scores stays best
assert state["best_metric"] == best["eval_f1"], (state["best_metric"], best)
assert state["best_model_checkpoint"] == os.path.join(out, "checkpoint-%d" % best["step"]), state
kept = sorted(d for d in os.listdir(out) if d.startswith("checkpoint-"))
want = sorted({"checkpoint-%d" % best["step"], "checkpoint-60"})
assert kept == want, (kept, want)
digest = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
# The final model is the best checkpoint's weights (saved again by save_pretrained in the same layout).
import struct
def tensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n]); header.pop("__metadata__", None)
    return {k: data[8 + n + v["data_offsets"][0]: 8 + n + v["data_offsets"][1]] for k, v in header.items()}
assert tensors(os.path.join(out, "model.safetensors")) == tensors(os.path.join(state["best_model_checkpoint"], "model.safetensors"))
PY
    # A metric the evaluation does not report is refused at the first evaluation, naming those it has.
    expect_exit 2 'no number "eval_accuracy"; it reports eval_HasAns_exact, eval_HasAns_f1' -- "$RUN_QA" --config_name "$WORK/m" \
      --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --max_steps 4 --eval_strategy steps --eval_steps 2 \
      --save_steps 2 --load_best_model_at_end --metric_for_best_model accuracy --output_dir "$WORK/out2"
    ;;
  memorize)
    # Hugging Face's own run_qa test file, learnt by heart by a new tiny model: F1 >= 90 on the same file.
    make_model "$WORK/m" 0.0
    "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --do_eval \
      --do_predict --test_file "$SAMPLE" --learning_rate 1e-3 --num_train_epochs 150 --warmup_ratio 0.1 --logging_steps 100 --save_steps 100000 \
      --output_dir "$WORK/out" > "$WORK/log" 2>&1 || fail "run_qa failed: $(tail -5 "$WORK/log")"
    f1=$(json_value "$WORK/out/eval_results.json" eval_f1)
    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 90 else 1)" "$f1" || fail "eval_f1 $f1 < 90"
    for f in model.safetensors config.json vocab.txt tokenizer_config.json special_tokens_map.json \
             trainer_state.json train_results.json eval_results.json all_results.json training_args.json \
             eval_predictions.json eval_nbest_predictions.json eval_null_odds.json predict_results.json \
             predict_predictions.json predict_nbest_predictions.json; do
      [ -s "$WORK/out/$f" ] || fail "output_dir has no $f"
    done
    [ "$(json_value "$WORK/out/eval_results.json" eval_total)" = 14 ] || fail "eval_total is not 14"
    # HF's total_flos: 6 x tokens (128 per window, padded) x 67,202 parameters outside the embeddings, every epoch.
    python3 - "$WORK/out/train_results.json" <<'PY' || fail "total_flos is not 6 x tokens x non-embedding parameters"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["total_flos"] == 6 * 128 * r["train_samples"] * 150 * 67202, r
PY
    python3 "$(dirname "$0")/../../scripts/check_hf_layout.py" "$WORK/out" || fail "output_dir is not a transformers model directory"
    cmp -s "$WORK/out/eval_predictions.json" "$WORK/out/predict_predictions.json" || fail "predicting the same file gave other answers"
    [ "$(json_value "$WORK/out/all_results.json" predict_f1)" = "$f1" ] || fail "all_results.json does not hold predict_f1 = eval_f1"
    grep -q '"loss"' "$WORK/log" || fail "no log entries printed"
    echo "eval_f1 = $f1"
    ;;
  roberta)
    # RoBERTa's layout end to end: a tiny RoBERTa over the byte-level cut's tokenizer.json (<s> q </s></s> c </s>,
    # type ids 0, one token type, positions after the padding id) learns the same file by heart (F1 >= 90), and the
    # saved directory holds a tokenizer.json that reads back the same.
    tiny_roberta "$WORK/r" RobertaForQuestionAnswering
    "$RUN_QA" --config_name "$WORK/r" --tokenizer_name "$WORK/r" "${TRAIN[@]}" --do_train --do_eval \
      --learning_rate 1e-3 --num_train_epochs 150 --warmup_ratio 0.1 --logging_steps 100 --save_steps 100000 \
      --output_dir "$WORK/out" > "$WORK/log" 2>&1 || fail "run_qa failed: $(tail -5 "$WORK/log")"
    f1=$(json_value "$WORK/out/eval_results.json" eval_f1)
    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 90 else 1)" "$f1" || fail "eval_f1 $f1 < 90"
    for f in model.safetensors config.json tokenizer.json tokenizer_config.json special_tokens_map.json; do
      [ -s "$WORK/out/$f" ] || fail "output_dir has no $f"
    done
    [ "$(json_value "$WORK/out/tokenizer_config.json" tokenizer_class)" = RobertaTokenizer ] || fail "not RobertaTokenizer"
    [ "$(json_value "$WORK/out/config.json" model_type)" = roberta ] || fail "config.json is not RoBERTa's"
    # A tokenizer whose padding id is not the config's is refused: RoBERTa's positions count from it.
    sed 's/"pad_token_id": 3257/"pad_token_id": 1/' "$WORK/r/config.json" > "$WORK/r/bad.json"
    mkdir -p "$WORK/bad" && cp "$WORK/r/bad.json" "$WORK/bad/config.json"
    expect_exit 2 "pad_token_id = 1, but the tokenizer pads with 3257" -- "$RUN_QA" --config_name "$WORK/bad" \
      --tokenizer_name "$WORK/r" "${TRAIN[@]}" --do_train --max_steps 1 --output_dir "$WORK/o"
    echo "eval_f1 = $f1"
    ;;
  xlmr)
    # XLM-R's layout end to end: a tiny XLM-RoBERTa over the Unigram cut's tokenizer.json (SentencePiece pieces,
    # <s> q </s></s> c </s>, type ids 0, one token type, positions after the padding id 1) learns the same file by
    # heart (F1 >= 90); the saved directory holds a Unigram tokenizer.json whose model section is the input's, and
    # evaluating the saved directory alone (its tokenizer read back by load_tokenizer) gives the same F1.
    cut="$(dirname "$0")/../text/data/xlmr_cut"
    mkdir -p "$WORK/x" && cp "$cut/tokenizer.json" "$cut/tokenizer_config.json" "$WORK/x/"
    cat > "$WORK/x/config.json" <<JSON
{"architectures": ["XLMRobertaForQuestionAnswering"], "model_type": "xlm-roberta", "vocab_size": 2002,
 "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128,
 "max_position_embeddings": 514, "type_vocab_size": 1, "hidden_dropout_prob": 0.0,
 "attention_probs_dropout_prob": 0.0, "layer_norm_eps": 1e-5, "initializer_range": 0.02, "pad_token_id": 1,
 "bos_token_id": 0, "eos_token_id": 2, "hidden_act": "gelu"}
JSON
    "$RUN_QA" --config_name "$WORK/x" --tokenizer_name "$WORK/x" "${TRAIN[@]}" --do_train --do_eval \
      --learning_rate 1e-3 --num_train_epochs 150 --warmup_ratio 0.1 --logging_steps 100 --save_steps 100000 \
      --output_dir "$WORK/out" > "$WORK/log" 2>&1 || fail "run_qa failed: $(tail -5 "$WORK/log")"
    f1=$(json_value "$WORK/out/eval_results.json" eval_f1)
    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 90 else 1)" "$f1" || fail "eval_f1 $f1 < 90"
    for f in model.safetensors config.json tokenizer.json tokenizer_config.json special_tokens_map.json; do
      [ -s "$WORK/out/$f" ] || fail "output_dir has no $f"
    done
    [ "$(json_value "$WORK/out/tokenizer_config.json" tokenizer_class)" = XLMRobertaTokenizer ] \
      || fail "not XLMRobertaTokenizer"
    [ "$(json_value "$WORK/out/config.json" model_type)" = xlm-roberta ] || fail "config.json is not XLM-R's"
    python3 - "$cut/tokenizer.json" "$WORK/out/tokenizer.json" <<'PY' || fail "the saved tokenizer.json's model is not the input's"
import json, sys
given, saved = (json.load(open(p, encoding="utf-8"))["model"] for p in sys.argv[1:])
assert saved["type"] == "Unigram", saved["type"]
assert saved == given, [k for k in set(given) | set(saved) if given.get(k) != saved.get(k)]
PY
    "$RUN_QA" --model_name_or_path "$WORK/out" --validation_file "$SAMPLE" --version_2_with_negative \
      --max_seq_length 128 --doc_stride 32 --threads 2 --disable_tqdm --do_eval --output_dir "$WORK/again" \
      > "$WORK/again.log" 2>&1 || fail "evaluating the saved model failed: $(tail -5 "$WORK/again.log")"
    [ "$(json_value "$WORK/again/eval_results.json" eval_f1)" = "$f1" ] \
      || fail "the saved model evaluates to eval_f1 $(json_value "$WORK/again/eval_results.json" eval_f1), not $f1"
    # A tokenizer whose padding id is not the config's is refused: XLM-R's positions count from it.
    sed 's/"pad_token_id": 1,/"pad_token_id": 0,/' "$WORK/x/config.json" > "$WORK/x/bad.json"
    mkdir -p "$WORK/bad" && cp "$WORK/x/bad.json" "$WORK/bad/config.json"
    expect_exit 2 "pad_token_id = 0, but the tokenizer pads with 1" -- "$RUN_QA" --config_name "$WORK/bad" \
      --tokenizer_name "$WORK/x" "${TRAIN[@]}" --do_train --max_steps 1 --output_dir "$WORK/o"
    echo "eval_f1 = $f1"
    ;;
  resume|resume-bf16)
    # A run resumed from its step-10 checkpoint (named, or found in output_dir) ends bit-identical to one that
    # never stopped; older checkpoints beyond save_total_limit are gone. resume-bf16: the same with bf16 products.
    make_model "$WORK/m" 0.1
    precision=()
    [ "$CASE" = resume-bf16 ] && precision=(--bf16)
    common=(--config_name "$WORK/m" --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --learning_rate 1e-3
            --max_steps 30 --warmup_steps 5 --save_steps 10 --logging_steps 5 --gradient_accumulation_steps 2
            "${precision[@]}")
    "$RUN_QA" "${common[@]}" --output_dir "$WORK/a" > "$WORK/a.log" 2>&1 || fail "run a: $(tail -5 "$WORK/a.log")"
    "$RUN_QA" "${common[@]}" --output_dir "$WORK/b" --resume_from_checkpoint "$WORK/a/checkpoint-10" > "$WORK/b.log" 2>&1 \
      || fail "run b: $(tail -5 "$WORK/b.log")"
    cmp -s "$WORK/a/model.safetensors" "$WORK/b/model.safetensors" || fail "resumed weights differ from uninterrupted ones"
    mkdir -p "$WORK/c" && cp -r "$WORK/a/checkpoint-20" "$WORK/c/"
    "$RUN_QA" "${common[@]}" --output_dir "$WORK/c" --save_total_limit 1 > "$WORK/c.log" 2>&1 || fail "run c: $(tail -5 "$WORK/c.log")"
    grep -q "Resuming from .*checkpoint-20" "$WORK/c.log" || fail "run c did not resume from checkpoint-20"
    cmp -s "$WORK/a/model.safetensors" "$WORK/c/model.safetensors" || fail "auto-resumed weights differ"
    python3 - "$WORK/a/trainer_state.json" "$WORK/c/trainer_state.json" <<'PY' || fail "log histories differ"
import json, sys
a, c = (json.load(open(p))["log_history"] for p in sys.argv[1:])
strip = lambda h: [{k: v for k, v in e.items() if not k.startswith("train_")} for e in h]
sys.exit(0 if strip(a) == strip(c) else 1)
PY
    [ ! -d "$WORK/c/checkpoint-20" ] && [ -d "$WORK/c/checkpoint-30" ] || fail "save_total_limit 1 kept the wrong checkpoints: $(ls "$WORK/c")"
    ;;
  output-dir)
    make_model "$WORK/m" 0.0
    mkdir -p "$WORK/full" && echo keep > "$WORK/full/notes.txt"
    expect_exit 2 "already exists and is not empty" -- "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" \
      "${TRAIN[@]}" --do_train --max_steps 2 --output_dir "$WORK/full"
    [ "$(cat "$WORK/full/notes.txt")" = keep ] || fail "the refused run touched the directory"
    "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --max_steps 2 \
      --output_dir "$WORK/full" --overwrite_output_dir > "$WORK/log" 2>&1 || fail "--overwrite_output_dir run failed"
    [ -s "$WORK/full/model.safetensors" ] || fail "--overwrite_output_dir wrote no model"
    # Another process holding the directory's lock: the run stops at once instead of writing alongside it.
    mkdir -p "$WORK/busy"
    flock "$WORK/busy/.cputrain.lock" sleep 30 > /dev/null 2>&1 &
    holder=$!
    for _ in $(seq 50); do flock -n "$WORK/busy/.cputrain.lock" true || break; sleep 0.1; done
    expect_exit 2 "another run is using this directory" -- "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" \
      "${TRAIN[@]}" --do_train --max_steps 2 --output_dir "$WORK/busy"
    pkill -P "$holder" sleep 2>/dev/null; kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
    ;;
  bad-input)
    make_model "$WORK/m" 0.0
    base=(--config_name "$WORK/m" --tokenizer_name "$WORK/m" --do_train --train_file "$SAMPLE" --output_dir "$WORK/o")
    expect_exit 2 "no_such_flag" -- "$RUN_QA" "${base[@]}" --no_such_flag 1
    expect_exit 2 "doc_stride" -- "$RUN_QA" "${base[@]}" --max_seq_length 128 --doc_stride 128
    expect_exit 2 "per_device_train_batch_size" -- "$RUN_QA" "${base[@]}" --per_device_train_batch_size 0
    expect_exit 2 "learning_rate" -- "$RUN_QA" "${base[@]}" --learning_rate -1
    expect_exit 2 "CPUTRAIN_GEMM_BACKEND: unknown GEMM backend 'mkl'" -- env CPUTRAIN_GEMM_BACKEND=mkl "$RUN_QA" \
      "${base[@]}" --output_dir "$WORK/gemm"
    [ ! -e "$WORK/gemm" ] || fail "a bad CPUTRAIN_GEMM_BACKEND was refused only after output_dir was made"
    expect_exit 2 "nope.json" -- "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" --do_train \
      --train_file "$WORK/nope.json" --output_dir "$WORK/o"
    expect_exit 2 "train_file" -- "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" --dataset_name squad \
      --do_train --output_dir "$WORK/o"
    mkdir -p "$WORK/pickle" && cp "$WORK/m/config.json" "$WORK/m/vocab.txt" "$WORK/pickle/" && : > "$WORK/pickle/pytorch_model.bin"
    expect_exit 2 "safetensors" -- "$RUN_QA" --model_name_or_path "$WORK/pickle" --do_train --train_file "$SAMPLE" \
      --output_dir "$WORK/o"
    expect_exit 2 "version_2_with_negative" -- "$RUN_QA" "${base[@]}" --do_eval --validation_file "$SAMPLE"
    printf '{"data": [{"id": "x", "question": "q", "context": "abc", "answers": {"text": ["zz"], "answer_start": [0]}}]}' > "$WORK/bad.json"
    expect_exit 1 "bad.json" -- "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" --do_train \
      --train_file "$WORK/bad.json" --output_dir "$WORK/o2"
    [ ! -e "$WORK/o/model.safetensors" ] || fail "a refused run wrote a model"
    ;;
  diverge)
    # A learning rate that blows the weights up: training stops at the step whose loss is not finite, with the
    # step in the message, and writes no final model.
    make_model "$WORK/m" 0.0
    expect_exit 1 "training stopped at step" -- "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" \
      "${TRAIN[@]}" --do_train --learning_rate 1e30 --max_grad_norm 0 --max_steps 20 --output_dir "$WORK/o"
    [ ! -e "$WORK/o/model.safetensors" ] || fail "a diverged run wrote a final model"
    ;;
  bf16)
    make_model "$WORK/m" 0.1
    "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --do_eval --bf16 --use_cpu \
      --do_predict --test_file "$SAMPLE" \
      --learning_rate 1e-3 --max_steps 20 --logging_steps 10 --output_dir "$WORK/o" > "$WORK/log" 2>&1 \
      || fail "bf16 run failed: $(tail -5 "$WORK/log")"
    grep -q "precision = bf16" "$WORK/log" || fail "the run did not say it trains in bf16"
    grep -q "^matrix products (bf16): " "$WORK/log" || fail "the run did not say where its bf16 products run"
    [ -s "$WORK/o/eval_results.json" ] || fail "no eval_results.json"
    # Predicting the evaluation file again gives the same answers (and runs the predict path in every preset).
    cmp -s "$WORK/o/eval_predictions.json" "$WORK/o/predict_predictions.json" || fail "predicting the same file gave other answers"
    ;;
  threads)
    # One thread or two give the same weights bit for bit, in fp32 and in bf16 (products split in fixed blocks,
    # attention heads one per task, every reduction in a fixed order).
    make_model "$WORK/m" 0.1
    for precision in fp32 bf16; do
      flags=()
      [ "$precision" = bf16 ] && flags=(--bf16)
      for t in 1 2; do
        args=("${TRAIN[@]}")
        args[${#args[@]}-2]=$t  # --threads N
        "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" "${args[@]}" --do_train --learning_rate 1e-3 \
          --max_steps 8 --logging_steps 4 --save_steps 1000 "${flags[@]}" --output_dir "$WORK/$precision-$t" \
          > "$WORK/$precision-$t.log" 2>&1 || fail "$precision with $t threads: $(tail -5 "$WORK/$precision-$t.log")"
        grep -q "^threads: $t " "$WORK/$precision-$t.log" || fail "the run did not use $t threads"
      done
      cmp -s "$WORK/$precision-1/model.safetensors" "$WORK/$precision-2/model.safetensors" \
        || fail "$precision: 1 and 2 threads trained different weights"
    done
    ;;
  bad-files)
    # A model directory whose weights are cut short, or whose config.json does not fit its vocab.txt or a QA
    # sentence pair, and a SQuAD file without questions: refused with the file(s) named, nothing written.
    make_model "$WORK/m" 0.0
    "$RUN_QA" --config_name "$WORK/m" --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --max_steps 1 \
      --output_dir "$WORK/trained" > "$WORK/log" 2>&1 || fail "making a model: $(tail -5 "$WORK/log")"
    mkdir -p "$WORK/cut" && cp "$WORK/trained/config.json" "$WORK/trained/vocab.txt" "$WORK/cut/"
    head -c $(($(stat -c %s "$WORK/trained/model.safetensors") / 2)) "$WORK/trained/model.safetensors" > "$WORK/cut/model.safetensors"
    expect_exit 1 "$WORK/cut/model.safetensors: .*the file is truncated" -- "$RUN_QA" --model_name_or_path "$WORK/cut" \
      "${TRAIN[@]}" --do_train --max_steps 1 --output_dir "$WORK/o1"
    [ ! -e "$WORK/o1/model.safetensors" ] || fail "a run from cut-short weights wrote a model"
    mkdir -p "$WORK/small" && cp "$WORK/m/vocab.txt" "$WORK/small/"
    sed 's/"vocab_size": 30522/"vocab_size": 1000/' "$WORK/m/config.json" > "$WORK/small/config.json"
    expect_exit 2 "$WORK/small/vocab.txt has 30522 tokens, more than vocab_size 1000 in $WORK/small/config.json" -- \
      "$RUN_QA" --config_name "$WORK/small" --tokenizer_name "$WORK/small" "${TRAIN[@]}" --do_train --output_dir "$WORK/o2"
    sed 's/"type_vocab_size": 2/"type_vocab_size": 1/' "$WORK/m/config.json" > "$WORK/small/config.json"
    expect_exit 2 "$WORK/small/config.json: type_vocab_size = 1" -- \
      "$RUN_QA" --config_name "$WORK/small" --tokenizer_name "$WORK/small" "${TRAIN[@]}" --do_train --output_dir "$WORK/o2"
    sed 's/"num_attention_heads": 2/"num_attention_heads": 0/' "$WORK/m/config.json" > "$WORK/small/config.json"
    expect_exit 1 "$WORK/small/config.json.*num_attention_heads = 0" -- \
      "$RUN_QA" --config_name "$WORK/small" --tokenizer_name "$WORK/small" "${TRAIN[@]}" --do_train --output_dir "$WORK/o2"
    [ ! -e "$WORK/o2" ] || fail "a refused model created its output_dir"
    printf '{"version": "v2.0", "data": []}' > "$WORK/empty.json"
    expect_exit 1 "--train_file $WORK/empty.json: holds no questions" -- "$RUN_QA" --config_name "$WORK/m" \
      --tokenizer_name "$WORK/m" "${TRAIN[@]/$SAMPLE/$WORK/empty.json}" --do_train --output_dir "$WORK/o3"
    expect_exit 1 "--validation_file $WORK/empty.json: holds no questions" -- "$RUN_QA" --model_name_or_path \
      "$WORK/trained" --do_eval --validation_file "$WORK/empty.json" --version_2_with_negative --output_dir "$WORK/o4"
    [ ! -e "$WORK/o3/model.safetensors" ] && [ ! -e "$WORK/o4/eval_predictions.json" ] || fail "a run without data wrote results"
    ;;
  damaged-checkpoint)
    # A byte flipped inside one tensor of the newest checkpoint's weights: the same command, which resumes from the
    # newest checkpoint, exits 1 naming the file and the tensor and pointing at the intact checkpoint before it;
    # nothing in output_dir changes. Fine-tuning from damaged weights is refused the same way.
    make_model "$WORK/m" 0.0
    common=(--config_name "$WORK/m" --tokenizer_name "$WORK/m" "${TRAIN[@]}" --do_train --learning_rate 1e-3
            --save_steps 2 --logging_steps 2)
    "$RUN_QA" "${common[@]}" --max_steps 4 --output_dir "$WORK/out" > "$WORK/log" 2>&1 || fail "run: $(tail -5 "$WORK/log")"
    flip() {  # flip FILE TENSOR: one bit in the middle of TENSOR's data
      python3 - "$1" "$2" <<'PY'
import json, struct, sys
path, name = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
n = struct.unpack("<Q", data[:8])[0]
begin, end = json.loads(data[8:8 + n])[name]["data_offsets"]
data[8 + n + (begin + end) // 2] ^= 0x04
open(path, "wb").write(data)
PY
    }
    flip "$WORK/out/checkpoint-4/model.safetensors" qa_outputs.bias
    before=$(cd "$WORK/out" && find . -type f ! -name .cputrain.lock -exec sha256sum {} + | sort)
    expect_exit 1 "$WORK/out/checkpoint-4/model.safetensors: tensor \"qa_outputs.bias\": the data does not match" -- \
      "$RUN_QA" "${common[@]}" --max_steps 6 --output_dir "$WORK/out"
    expect_exit 1 "the newest intact checkpoint is $WORK/out/checkpoint-2: name it with --resume_from_checkpoint" -- \
      "$RUN_QA" "${common[@]}" --max_steps 6 --output_dir "$WORK/out"
    [ "$(cd "$WORK/out" && find . -type f ! -name .cputrain.lock -exec sha256sum {} + | sort)" = "$before" ] ||
      fail "a refused resume changed output_dir"
    "$RUN_QA" "${common[@]}" --max_steps 6 --output_dir "$WORK/out" --resume_from_checkpoint "$WORK/out/checkpoint-2" \
      > "$WORK/log2" 2>&1 || fail "resuming from the intact checkpoint: $(tail -5 "$WORK/log2")"
    flip "$WORK/out/model.safetensors" bert.embeddings.LayerNorm.bias
    expect_exit 1 "$WORK/out/model.safetensors: tensor \"bert.embeddings.LayerNorm.bias\": the data does not match" -- \
      "$RUN_QA" --model_name_or_path "$WORK/out" "${TRAIN[@]}" --do_train --max_steps 1 --output_dir "$WORK/o1"
    ;;
  *) fail "unknown case" ;;
esac
echo "ok ($CASE)"
