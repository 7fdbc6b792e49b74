#!/usr/bin/env bash
# Re-captures the run_glue output shown in docs/user-guide.md ("Text classification: run_glue"): writes the demo's
# paraphrase pairs (MRPC's columns) and a small BERT config, trains that BERT from scratch with scripts/demo.sh
# glue's settings (6,000 steps of 32 pairs at learning rate 5e-4) with an evaluation every 1,000 steps, keeps the
# checkpoint with the best accuracy and evaluates it. Prints the machine line,
# the date, each command and its output, then the checkpoints left, the best metric and the dev file's majority
# share (the accuracy of always answering the commoner label).
#
#   scripts/capture_glue_output.sh [BUILD_DIR] [WORK_DIR]
#
# BUILD_DIR holds examples/run_glue and examples/cputrain-make-demo-data (default: build/user, the user preset's
# tree, else build/release); WORK_DIR receives the data and the run (default /tmp/gluedoc; emptied first). THREADS
# in the environment sets --threads (default 2). About 4 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/capture_common.sh
capture_start run_glue /tmp/gluedoc "$@"
capture_run "$build/examples/cputrain-make-demo-data" --task glue --output_dir "$work"

cmd=("$build/examples/run_glue" --config_name "$work/model" --tokenizer_name "$work/model" --task_name mrpc
     --train_file "$work/train.csv" --validation_file "$work/dev.csv" --do_train --do_eval
     --max_seq_length 64 --pad_to_max_length false --per_device_train_batch_size 32 --learning_rate 5e-4
     --warmup_ratio 0.06 --max_steps 6000 --logging_steps 1000 --eval_strategy steps --eval_steps 1000 --save_steps 1000
     --save_total_limit 1 --load_best_model_at_end --metric_for_best_model accuracy
     --threads "$threads" --disable_tqdm --output_dir "$work/out")

capture_run "${cmd[@]}"
capture_best
python3 - "$work" <<'PY'
import csv, json, os, sys
work = sys.argv[1]
labels = [r["label"] for r in csv.DictReader(open(os.path.join(work, "dev.csv")))]
ones = sum(1 for l in labels if l == "1")
print(f"dev.csv: {len(labels)} pairs, {ones} labelled 1 (majority share {max(ones, len(labels) - ones) / len(labels):.3f})")
PY
