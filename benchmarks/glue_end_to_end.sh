#!/usr/bin/env bash
# run_glue end to end against the step benchmark, side by side: for each encoder cut (DistilBERT and RoBERTa at
# base width, 2 layers), GLUE's shape (sequence 128, batch 32, every batch padded to 128), fp32 and bf16,
# alternating the two programs ROUNDS times. Prints, per round, cputrain-bench-step's samples/s, run_glue's
# train_samples_per_second (tokenisation, batching, the optimizer and the schedule included; its first step, which
# the step benchmark leaves out as warm-up, too) and eval_samples_per_second, then the medians and the ratios
# run_glue / step benchmark and evaluation / training.
#
#   benchmarks/glue_end_to_end.sh BUILD_DIR VOCAB [ROUNDS] [STEPS]
#
# The step benchmark reports its median step; run_glue's figure is its samples over its whole train_runtime.
#
# BUILD_DIR holds examples/run_glue, examples/cputrain-make-demo-data and benchmarks/cputrain-bench-step (the
# release preset's tree); VOCAB is a WordPiece vocab.txt of 30,522 tokens (bert-base-uncased's, the shared data's),
# which both cuts use: the speed does not depend on the tokenizer's kind (the RoBERTa cut has type_vocab_size 2,
# as a WordPiece pair's second sentence has type 1: one more embedding row, the same step). ROUNDS (default 1) and
# STEPS (default 10; run_glue trains STEPS steps, the benchmark times STEPS after one warm-up step). In the
# environment: THREADS (default 2), MODELS (default "distilbert roberta"), PRECISIONS (default "fp32 bf16").
set -euo pipefail
build=$1
vocab=$2
rounds=${3:-1}
steps=${4:-10}
threads=${THREADS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/glue_end_to_end.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; date: $(date -u '+%Y-%m-%d %H:%M UTC')"
"$build/examples/cputrain-make-demo-data" --task glue --output_dir "$work/data" --train_examples 2000 \
  --eval_examples 320 > /dev/null

write_model() {  # write_model DIR MODEL_TYPE
  mkdir -p "$1"
  cp "$vocab" "$1/vocab.txt"
  echo '{"do_lower_case": true}' > "$1/tokenizer_config.json"
  case $2 in
    distilbert) echo '{"model_type": "distilbert", "dim": 768, "n_layers": 2, "n_heads": 12, "hidden_dim": 3072,
      "vocab_size": 30522, "max_position_embeddings": 512, "dropout": 0.1, "attention_dropout": 0.1,
      "seq_classif_dropout": 0.2, "pad_token_id": 0, "activation": "gelu", "initializer_range": 0.02}' ;;
    roberta) echo '{"model_type": "roberta", "hidden_size": 768, "num_hidden_layers": 2, "num_attention_heads": 12,
      "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 514, "type_vocab_size": 2,
      "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "pad_token_id": 0, "bos_token_id": 101,
      "eos_token_id": 102, "hidden_act": "gelu", "initializer_range": 0.02, "layer_norm_eps": 1e-05}' ;;
  esac > "$1/config.json"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

for model in ${MODELS:-distilbert roberta}; do
  write_model "$work/$model" "$model"
  for precision in ${PRECISIONS:-fp32 bf16}; do
    bf16=(); [[ $precision == bf16 ]] && bf16=(--bf16)
    : > "$work/bench" ; : > "$work/train" ; : > "$work/eval"
    for round in $(seq "$rounds"); do
      "$build/benchmarks/cputrain-bench-step" --model_type "$model" --head sequence_classification --layers 2 \
        --seq 128 --batch 32 --precision "$precision" --threads "$threads" --steps "$steps" --warmup 1 \
        > "$work/bench.json" 2> "$work/bench.log" || { cat "$work/bench.log"; exit 1; }
      b=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['samples_per_s'])" "$work/bench.json")
      rm -rf "$work/out"
      "$build/examples/run_glue" --config_name "$work/$model" --tokenizer_name "$work/$model" --task_name mrpc \
        --train_file "$work/data/train.csv" --validation_file "$work/data/dev.csv" --do_train --do_eval \
        --max_seq_length 128 --pad_to_max_length true --per_device_train_batch_size 32 \
        --per_device_eval_batch_size 32 --max_steps "$steps" --save_strategy no --logging_steps 1000 \
        --threads "$threads" --disable_tqdm "${bf16[@]}" --output_dir "$work/out" > "$work/glue.log" 2>&1 ||
        { tail -20 "$work/glue.log"; exit 1; }
      t=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['train_samples_per_second'])" "$work/out/train_results.json")
      e=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['eval_samples_per_second'])" "$work/out/eval_results.json")
      echo "$b" >> "$work/bench"; echo "$t" >> "$work/train"; echo "$e" >> "$work/eval"
      printf '%-10s %s round %d: step bench %8.2f samples/s, run_glue train %8.2f, eval %8.2f\n' \
        "$model" "$precision" "$round" "$b" "$t" "$e"
    done
    b=$(median < "$work/bench"); t=$(median < "$work/train"); e=$(median < "$work/eval")
    printf '%-10s %s medians: step bench %.2f, run_glue train %.2f (%.2fx the bench), eval %.2f (%.2fx train)\n' \
      "$model" "$precision" "$b" "$t" "$(echo "$t / $b" | bc -l)" "$e" "$(echo "$e / $t" | bc -l)"
  done
done
