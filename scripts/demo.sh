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
# Extra arguments go to run_qa and override the ones below (try --bf16, --max_steps 1000 or --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Its own build tree (the release preset's settings): build/release stays as its user configures it, with tests.
cmake --preset release -B build/demo -DCPUTRAIN_BUILD_TESTS=OFF -DCPUTRAIN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/demo --target run_qa cputrain-make-demo-data

demo=build/demo-qa
build/demo/examples/cputrain-make-demo-data --output_dir "$demo" --train_paragraphs 12000 \
  --version_2_with_negative

# One process on this machine: all its cores compute (run_qa's default keeps one core free for a rank's
# communication, which a single process does not have).
threads=()
[[ " $* " == *" --threads "* || " $* " == *" --threads="* ]] || threads=(--threads "$(nproc)")

# The settings: a learning rate far above fine-tuning's (the model starts from nothing), batches of windows of
# similar length padded to their longest (--group_by_length, --pad_to_max_length false), no checkpoints.
exec build/demo/examples/run_qa \
  --config_name "$demo/model" --tokenizer_name "$demo/model" \
  --train_file "$demo/train.json" --validation_file "$demo/dev.json" --version_2_with_negative \
  --do_train --do_eval --output_dir "$demo/output" --overwrite_output_dir \
  --per_device_train_batch_size 32 --learning_rate 2e-3 --weight_decay 0.01 --warmup_ratio 0.06 \
  --max_steps 4500 --max_seq_length 128 --doc_stride 32 --pad_to_max_length false --group_by_length \
  --logging_steps 500 --save_strategy no "${threads[@]}" "$@"
