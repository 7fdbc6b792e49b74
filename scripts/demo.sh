#!/usr/bin/env bash
# The README's first command: installs what is missing, builds run_qa in Release (in build/demo), writes the demo data and trains
# a small BERT on it from scratch, then evaluates it — nothing is downloaded.
#
# The data (cputrain-make-demo-data, examples/demo/) is SQuAD v2.0 of made-up facts: train
# questions about 12,000 paragraphs, and dev questions about people, towns, companies and rivers that train never
# names, a fifth of them unanswerable; some paragraphs need several 128-token windows. The model, the data and
# the run all land in build/demo-qa/; output/ is a Hugging Face model directory (model.safetensors, config.json,
# tokenizer files) with the metrics and predictions next to it.
#
# `scripts/demo.sh glue|ner|mlm` runs the other programs' demos the same way, each in build/demo-<mode>/:
# run_glue on paraphrase pairs (MRPC's columns and metrics), run_ner on IOB2-tagged sentences (seqeval's F1),
# run_mlm on the demo's text (perplexity); each evaluates during training and keeps the best checkpoint.
#
# Extra arguments go to the program and override the ones below (try --bf16, --max_steps 1000 or --help).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=qa
case "${1:-}" in qa | glue | ner | mlm) mode=$1; shift ;; esac
scripts/install-deps.sh
# Its own build tree (the release preset's settings): build/release stays as its user configures it, with tests.
cmake --preset release -B build/demo -DCPUTRAIN_BUILD_TESTS=OFF -DCPUTRAIN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/demo --target "run_$mode" cputrain-make-demo-data

# One process on this machine: all its cores compute (the programs' default keeps one core free for a rank's
# communication, which a single process does not have).
threads=()
[[ " $* " == *" --threads "* || " $* " == *" --threads="* ]] || threads=(--threads "$(nproc)")
examples=build/demo/examples
demo=build/demo-$mode
# The other demos: a small BERT from scratch, evaluated as it trains, the best checkpoint kept and loaded. The GLUE
# pairs take a gentler learning rate and more steps: at 5e-4 the model starts comparing the two sentences' years
# after about 1,500 steps (docs/training.md, "The other demos").
lr=1e-3 every=250
[[ $mode == glue ]] && lr=5e-4 every=500
best=(--do_train --do_eval --output_dir "$demo/output" --overwrite_output_dir --per_device_train_batch_size 32
      --learning_rate "$lr" --warmup_ratio 0.06 --logging_steps "$every" --eval_strategy steps --eval_steps "$every"
      --save_steps "$every" --save_total_limit 1 --load_best_model_at_end --pad_to_max_length false)
case $mode in
  glue)
    "$examples/cputrain-make-demo-data" --task glue --output_dir "$demo"
    exec "$examples/run_glue" --config_name "$demo/model" --tokenizer_name "$demo/model" --task_name mrpc \
      --train_file "$demo/train.csv" --validation_file "$demo/dev.csv" --test_file "$demo/test.csv" --do_predict \
      --max_seq_length 64 --max_steps 6000 --metric_for_best_model accuracy "${best[@]}" "${threads[@]}" "$@" ;;
  ner)
    "$examples/cputrain-make-demo-data" --task ner --output_dir "$demo"
    exec "$examples/run_ner" --config_name "$demo/model" --tokenizer_name "$demo/model" \
      --train_file "$demo/train.json" --validation_file "$demo/dev.json" --test_file "$demo/test.json" --do_predict \
      --max_seq_length 128 --max_steps 1500 --metric_for_best_model f1 "${best[@]}" "${threads[@]}" "$@" ;;
  mlm)
    "$examples/cputrain-make-demo-data" --task mlm --output_dir "$demo"
    exec "$examples/run_mlm" --config_name "$demo/model" --tokenizer_name "$demo/model" \
      --train_file "$demo/train.txt" --validation_file "$demo/dev.txt" --max_seq_length 128 --max_steps 2000 \
      "${best[@]}" "${threads[@]}" "$@" ;;
esac

"$examples/cputrain-make-demo-data" --output_dir "$demo" --train_paragraphs 12000 \
  --version_2_with_negative

# The settings: a learning rate far above fine-tuning's (the model starts from nothing), batches of windows of
# similar length padded to their longest (--group_by_length, --pad_to_max_length false), no checkpoints.
exec "$examples/run_qa" \
  --config_name "$demo/model" --tokenizer_name "$demo/model" \
  --train_file "$demo/train.json" --validation_file "$demo/dev.json" --version_2_with_negative \
  --do_train --do_eval --output_dir "$demo/output" --overwrite_output_dir \
  --per_device_train_batch_size 32 --learning_rate 2e-3 --weight_decay 0.01 --warmup_ratio 0.06 \
  --max_steps 4500 --max_seq_length 128 --doc_stride 32 --pad_to_max_length false --group_by_length \
  --logging_steps 500 --save_strategy no "${threads[@]}" "$@"
