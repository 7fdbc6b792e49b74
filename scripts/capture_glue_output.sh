#!/usr/bin/env bash
# Re-captures the run_glue output shown in docs/user-guide.md ("Text classification: run_glue"): writes the demo's
# paraphrase pairs (MRPC's columns) and a small BERT config, trains that BERT from scratch for 200 steps with an
# evaluation every 50 steps, keeps the checkpoint with the best accuracy and evaluates it. Prints the machine line,
# the date, each command and its output, then the checkpoints left, the best metric and the dev file's majority
# share (the accuracy of always answering the commoner label).
#
#   scripts/capture_glue_output.sh [BUILD_DIR] [WORK_DIR]
#
# BUILD_DIR holds examples/run_glue and examples/cputrain-make-demo-data (default: build/user, the user preset's
# tree, else build/release); WORK_DIR receives the data and the run (default /tmp/gluedoc; emptied first). THREADS
# in the environment sets --threads (default 2). About 15 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
if [[ -z $build ]]; then
  build=build/user
  [[ -x $build/examples/run_glue ]] || build=build/release
fi
work=${2:-/tmp/gluedoc}
threads=${THREADS:-2}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
rm -rf "$work"
echo "\$ $build/examples/cputrain-make-demo-data --task glue --output_dir $work --train_examples 2000 --eval_examples 300"
"$build/examples/cputrain-make-demo-data" --task glue --output_dir "$work" --train_examples 2000 --eval_examples 300

cmd=("$build/examples/run_glue" --config_name "$work/model" --tokenizer_name "$work/model" --task_name mrpc
     --train_file "$work/train.csv" --validation_file "$work/dev.csv" --do_train --do_eval
     --max_seq_length 64 --pad_to_max_length false --per_device_train_batch_size 16 --learning_rate 1e-3
     --warmup_ratio 0.06 --max_steps 200 --logging_steps 50 --eval_strategy steps --eval_steps 50 --save_steps 50
     --save_total_limit 1 --load_best_model_at_end --metric_for_best_model accuracy
     --threads "$threads" --disable_tqdm --output_dir "$work/out")

echo "\$ ${cmd[*]}"
"${cmd[@]}" 2>&1
echo
echo "checkpoints left: $(cd "$work/out" && ls -d checkpoint-* | tr '\n' ' ')"
python3 - "$work" <<'PY'
import csv, json, os, sys
work = sys.argv[1]
state = json.load(open(os.path.join(work, "out", "trainer_state.json")))
print("best_metric:", state["best_metric"], " best_global_step:", state["best_global_step"],
      " best_model_checkpoint:", state["best_model_checkpoint"])
labels = [r["label"] for r in csv.DictReader(open(os.path.join(work, "dev.csv")))]
ones = sum(1 for l in labels if l == "1")
print(f"dev.csv: {len(labels)} pairs, {ones} labelled 1 (majority share {max(ones, len(labels) - ones) / len(labels):.3f})")
PY
