#!/usr/bin/env bash
# Re-captures the run_ner output shown in docs/user-guide.md ("Token classification: run_ner"): writes the demo's
# IOB2-tagged sentences (PER, LOC, ORG, MISC) and a small BERT config, trains that BERT from scratch for 200 steps
# with an evaluation every 50 steps, keeps the checkpoint with the best seqeval F1, evaluates it and tags the test
# file. Prints the machine line, the date, each command and its output, then the checkpoints left, the best metric,
# the first lines of predictions.txt beside their sentences, and the dev file's share of O tags (the accuracy of
# tagging every word O, whose F1 is 0).
#
#   scripts/capture_ner_output.sh [BUILD_DIR] [WORK_DIR]
#
# BUILD_DIR holds examples/run_ner and examples/cputrain-make-demo-data (default:
# build/user, the user preset's tree, else build/release); WORK_DIR receives the data and the run (default
# /tmp/nerdoc; emptied first). THREADS in the environment sets --threads (default 2). About 5 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/capture_common.sh
capture_start run_ner /tmp/nerdoc "$@"
capture_run "$build/examples/cputrain-make-demo-data" --task ner --output_dir "$work" --train_examples 2000 --eval_examples 300  --test_examples 200

cmd=("$build/examples/run_ner" --config_name "$work/model" --tokenizer_name "$work/model"
     --train_file "$work/train.json" --validation_file "$work/dev.json" --test_file "$work/test.json"
     --do_train --do_eval --do_predict --max_seq_length 64 --pad_to_max_length false
     --per_device_train_batch_size 16 --learning_rate 1e-3 --warmup_ratio 0.06 --max_steps 200 --logging_steps 50
     --eval_strategy steps --eval_steps 50 --save_steps 50 --save_total_limit 1 --load_best_model_at_end
     --metric_for_best_model f1 --threads "$threads" --disable_tqdm --output_dir "$work/out")

capture_run "${cmd[@]}"
capture_best
python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
test = [json.loads(l) for l in open(os.path.join(work, "test.json")) if l.strip()]
predicted = open(os.path.join(work, "out", "predictions.txt")).read().splitlines()
print(f"predictions.txt: {len(predicted)} lines; the first three, each under its test sentence and gold tags:")
for row, line in list(zip(test, predicted))[:3]:
    print("  words:    ", " ".join(row["tokens"]))
    print("  gold:     ", " ".join(row["ner_tags"]))
    print("  predicted:", line)
tags = [t for l in open(os.path.join(work, "dev.json")) if l.strip() for t in json.loads(l)["ner_tags"]]
o = sum(1 for t in tags if t == "O")
print(f"dev.json: {len(tags)} words, {o} tagged O (share {o / len(tags):.3f})")
PY
