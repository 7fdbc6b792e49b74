#!/usr/bin/env bash
# Side by side on one machine: run_qa training steps per second of one process with T threads against R ranks of
# T/R threads each (mpirun), the same global batch, plus how much of the ranks' gradient communication backward
# hid (train_communication_hidden) with the word-embedding rows sent sparsely and densely. The runs alternate for
# a few rounds so that all see the same machine load.
#   benchmarks/distributed_throughput.sh [--json FILE] [build dir] [rounds] [ranks] [threads]
# --json FILE also writes every run's figures to FILE as JSON, for the plots (benchmarks/plots/collect.sh).
# Model: base-2 (BERT-base's shapes, 2 layers, the 30,522-row vocabulary table), sequences of 384 tokens, a global
# batch of 4, dropout 0.1, fp32; data: the demo's SQuAD files (every window padded to 384).
set -euo pipefail
JSON=
if [[ ${1:-} == --json ]]; then JSON=$2; shift 2; fi
BUILD=${1:-build/release}
ROUNDS=${2:-2}
RANKS=${3:-2}
THREADS=${4:-2}
RUN_QA=$BUILD/examples/run_qa
WORK=$(mktemp -d "${TMPDIR:-/tmp}/distributed_throughput.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MPI_FLAGS=()
version=$(mpiexec --version 2>&1 || true)
if [[ $version == *"Open MPI"* || $version == *OpenRTE* ]]; then MPI_FLAGS=(--allow-run-as-root --oversubscribe); fi

"$(dirname "$0")/base2_demo_data.sh" "$BUILD" "$WORK/demo"
BATCH=4
COMMON=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" --train_file "$WORK/demo/train.json"
        --do_train --max_steps 12 --max_seq_length 384 --doc_stride 128 --save_strategy no --disable_tqdm
        --logging_steps 12 --overwrite_output_dir --output_dir "$WORK/out")
value() { sed -n "s/^  $1 *= *//p" "$WORK/log"; }
runs=()
record() {  # round, ranks, threads per rank, sparse (true/false/null), steps/s, hidden (null for one process)
  local run="{\"round\": $1, \"ranks\": $2, \"threads_per_rank\": $3, \"sparse_embedding_gradients\": $4"
  runs+=("$run, \"steps_per_second\": $5, \"communication_hidden\": $6}")
}
printf "%-5s %-34s %12s %14s\n" round run "steps/s" "comm. hidden"
for round in $(seq "$ROUNDS"); do
  "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size $BATCH --threads "$THREADS" > "$WORK/log" 2>&1
  printf "%-5s %-34s %12.3f %14s\n" "$round" "1 process x $THREADS threads" "$(value train_steps_per_second)" "-"
  record "$round" 1 "$THREADS" null "$(value train_steps_per_second)" null
  for sparse in true false; do
    mpiexec "${MPI_FLAGS[@]}" -n "$RANKS" "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size $((BATCH / RANKS)) \
      --threads $((THREADS / RANKS)) --sparse_embedding_gradients $sparse > "$WORK/log" 2>&1 || { tail -5 "$WORK/log"; exit 1; }
    printf "%-5s %-34s %12.3f %14.2f\n" "$round" "$RANKS ranks x $((THREADS / RANKS)) (sparse embeddings $sparse)" \
      "$(value train_steps_per_second)" "$(value train_communication_hidden)"
    record "$round" "$RANKS" $((THREADS / RANKS)) $sparse "$(value train_steps_per_second)" \
      "$(value train_communication_hidden)"
  done
done
if [[ -n $JSON ]]; then
  { printf '{"model": "base-2", "seq": 384, "global_batch": %d, "steps": 12, "runs": [\n' $BATCH
    for i in "${!runs[@]}"; do
      sep=,
      ((i < ${#runs[@]} - 1)) || sep=
      printf '  %s%s\n' "${runs[$i]}" "$sep"
    done
    printf ']}\n'; } > "$JSON"
fi
