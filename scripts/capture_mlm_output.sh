#!/usr/bin/env bash
# Re-captures the run_mlm output shown in docs/user-guide.md ("Masked language modelling: run_mlm"): writes the
# demo's text (one paragraph a line) and a small BERT config, trains that BERT from scratch for 200 steps on blocks
# of 128 tokens with an evaluation every 50 steps, keeps the checkpoint with the lowest eval_loss and evaluates it.
# Prints the machine line, the date, each command and its output, then the checkpoints left, the best metric, the
# perplexity of each evaluation, and the vocabulary's size (the perplexity of a uniform guess).
#
#   scripts/capture_mlm_output.sh [BUILD_DIR] [WORK_DIR]
#
# BUILD_DIR holds examples/run_mlm and examples/cputrain-make-demo-data (default:
# build/user, the user preset's tree, else build/release); WORK_DIR receives the data and the run (default
# /tmp/mlmdoc; emptied first). THREADS in the environment sets --threads (default 2). About 20 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/capture_common.sh
capture_start run_mlm /tmp/mlmdoc "$@"
capture_run "$build/examples/cputrain-make-demo-data" --task mlm --output_dir "$work" --train_examples 2000 --eval_examples 200

cmd=("$build/examples/run_mlm" --config_name "$work/model" --tokenizer_name "$work/model"
     --train_file "$work/train.txt" --validation_file "$work/dev.txt" --do_train --do_eval
     --max_seq_length 128 --per_device_train_batch_size 16 --learning_rate 1e-3 --warmup_ratio 0.06
     --max_steps 200 --logging_steps 50 --eval_strategy steps --eval_steps 50 --save_steps 50
     --save_total_limit 1 --load_best_model_at_end --metric_for_best_model loss
     --threads "$threads" --disable_tqdm --output_dir "$work/out")

capture_run "${cmd[@]}"
capture_best
python3 - "$work" <<'PY'
import json, math, os, sys
work = sys.argv[1]
state = json.load(open(os.path.join(work, "out", "trainer_state.json")))
print("eval perplexity by step:", ", ".join(f"{e['step']}: {math.exp(e['eval_loss']):.1f}"
                                            for e in state["log_history"] if "eval_loss" in e))
vocab = json.load(open(os.path.join(work, "model", "config.json")))["vocab_size"]
print(f"vocabulary: {vocab} tokens (a uniform guess has perplexity {vocab})")
PY
