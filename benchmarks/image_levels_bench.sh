#!/usr/bin/env bash
# Side by side on one machine: the demo's training with each instruction-set build the container image carries
# (deploy/docker/build.sh installs them under <prefix>/libexec/cputrain/<level>/) and, for reference, a
# -march=native build, in fp32 and bf16. Steps per second; the levels alternate within each round.
#   benchmarks/image_levels_bench.sh <image prefix> [native build dir] [rounds] [steps]
# e.g. deploy/docker/build.sh /tmp/image x86-64-v2 x86-64-v3 x86-64-v4-bf16 && \
#      benchmarks/image_levels_bench.sh /tmp/image build/release 3 300
set -euo pipefail
PREFIX=$1
NATIVE=${2:-build/release}
ROUNDS=${3:-3}
STEPS=${4:-300}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/image_levels_bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$NATIVE/examples/cputrain-make-demo-data" --output_dir "$WORK/demo" --train_paragraphs 3000 --version_2_with_negative >/dev/null
ARGS=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" --train_file "$WORK/demo/train.json"
      --do_train --per_device_train_batch_size 32 --learning_rate 2e-3 --max_steps "$STEPS" --max_seq_length 128
      --doc_stride 32 --pad_to_max_length false --group_by_length --save_strategy no --disable_tqdm
      --logging_steps "$STEPS" --overwrite_output_dir --output_dir "$WORK/out" --threads "$(nproc)")
declare -A binary=([native]=$NATIVE/examples/run_qa)
levels=()
for dir in "$PREFIX"/libexec/cputrain/*/; do
  level=$(basename "$dir"); binary[$level]=$dir/run_qa; levels+=("$level")
done
levels+=(native)
printf "%-5s %-9s %-16s %12s\n" round precision build "train st/s"
for round in $(seq "$ROUNDS"); do
  for precision in fp32 bf16; do
    extra=(); [[ $precision == bf16 ]] && extra=(--bf16)
    for level in "${levels[@]}"; do
      "${binary[$level]}" "${ARGS[@]}" "${extra[@]}" > "$WORK/log" 2>&1 || { tail -5 "$WORK/log"; exit 1; }
      printf "%-5s %-9s %-16s %12.2f\n" "$round" "$precision" "$level" \
        "$(sed -n 's/^  train_steps_per_second *= *//p' "$WORK/log")"
    done
  done
done
