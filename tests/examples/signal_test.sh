#!/usr/bin/env bash
# run_qa and repeated signals, on the demo data (self-contained: nothing downloaded).
#   sigterm-during-save: SIGTERM to a run whose checkpoint takes a noticeable time (a 300,000-word vocabulary:
#     about 115 MB), then two more SIGTERMs while that checkpoint is written: it is still written, the run exits
#     143 after reporting them on stderr, and the rerun resumes from it.
#   sigint-thrice: three SIGINTs 5 ms apart (Ctrl-C pressed thrice, quickly) end a run saving every 5 steps at
#     once, by SIGINT (no "training stopped" message), after the line for the second; the checkpoints written
#     before are complete and the rerun resumes from the newest.
#   signal_test.sh <case> <run_qa> <cputrain-make-demo-data>
set -u
CASE=$1
RUN_QA=$(readlink -f "$2")
MAKE_DEMO=$(readlink -f "$3")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/signal_test.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$WORK"' EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/demo_model.sh"  # make_model
cd "$WORK" || fail "cannot enter $WORK"

"$MAKE_DEMO" --output_dir "$WORK/demo" --train_paragraphs 40 --eval_paragraphs 10 --version_2_with_negative \
  > /dev/null || fail "cputrain-make-demo-data failed"
# wait_for SECONDS WHAT TEST...: poll every 10 ms until TEST succeeds; fail naming WHAT after SECONDS.
wait_for() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds * 100; i++)); do
    "$@" && return 0
    kill -0 "$pid" 2>/dev/null || fail "run_qa ended before $what: $(tail -5 "$WORK/log")"
    sleep 0.01
  done
  fail "no $what after $seconds s: $(tail -5 "$WORK/log")"
}
logged_step() { grep -q "\"step\":$1}" "$WORK/log"; }
COMMON=(--train_file "$WORK/demo/train.json" --do_train --max_seq_length 64 --doc_stride 16
        --per_device_train_batch_size 2 --learning_rate 1e-3 --logging_steps 2 --threads 2 --disable_tqdm)

case $CASE in
  sigterm-during-save)
    # 300,000 x 32 word embeddings: 9.6 M parameters, a checkpoint of about 115 MB (weights and AdamW's moments).
    make_model "$WORK/big" '{"vocab_size": 300000, "hidden_size": 32, "num_hidden_layers": 1,
      "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 128}'
    CMD=(--config_name "$WORK/big" --tokenizer_name "$WORK/big" "${COMMON[@]}" --output_dir "$WORK/o")
    # No periodic checkpoint: the only save is the one SIGTERM asks for.
    "$RUN_QA" "${CMD[@]}" --max_steps 100000 --save_steps 100000 > "$WORK/log" 2>&1 &
    pid=$!
    wait_for 120 "logged step 4" logged_step 4
    kill -TERM "$pid"
    saving() { compgen -G "$WORK/o/tmp-checkpoint-*" > /dev/null; }
    wait_for 60 "checkpoint being written after SIGTERM" saving
    # 50 ms apart. The kernel keeps one signal of a kind pending, not a count: while the rank is inside one long
    # write or fsync, the second waits there and the third merges with it, so one line is required, not two.
    kill -TERM "$pid"
    sleep 0.05
    kill -TERM "$pid"
    saving && landed="while the checkpoint was written" || landed="after the checkpoint was written"
    wait "$pid"
    rc=$?
    pid=
    [ "$rc" -eq 143 ] || fail "exit $rc after three SIGTERMs, not 143: $(tail -5 "$WORK/log")"
    step=$(sed -n 's/.*training stopped by SIGTERM after step \([0-9]*\); checkpoint-\1 is written.*/\1/p' "$WORK/log")
    [ -n "$step" ] || fail "no checkpoint message after SIGTERM: $(tail -5 "$WORK/log")"
    reports=$(grep -c "^run_qa: SIGTERM again ([23]): still stopping: the checkpoint of this step is written first" \
      "$WORK/log")
    [ "$reports" -ge 1 ] || fail "no report of the later SIGTERMs: $(tail -5 "$WORK/log")"
    grep -q "SIGTERM again (1)\|SIGTERM again ([4-9])" "$WORK/log" && fail "a SIGTERM miscounted: $(tail -5 "$WORK/log")"
    [ -f "$WORK/o/checkpoint-$step/trainer_state.json" ] || fail "checkpoint-$step is not complete"
    "$RUN_QA" "${CMD[@]}" --max_steps $((step + 1)) --save_strategy no > "$WORK/rerun.log" 2>&1 ||
      fail "the rerun failed: $(tail -5 "$WORK/rerun.log")"
    grep -qF "Resuming from $WORK/o/checkpoint-$step" "$WORK/rerun.log" ||
      fail "the rerun did not resume from checkpoint-$step: $(head -8 "$WORK/rerun.log")"
    echo "two more SIGTERMs $landed, $reports reported; checkpoint-$step written (exit 143) and resumed"
    ;;
  sigint-thrice)
    # The demo model with batches of 16 windows of 128 tokens: a step takes about 80 ms of computing, so the
    # three signals, sent just after checkpoint-10 is written, land in one step.
    CMD=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" --train_file "$WORK/demo/train.json"
         --do_train --max_seq_length 128 --doc_stride 32 --per_device_train_batch_size 16 --learning_rate 1e-3
         --logging_steps 2 --threads 2 --disable_tqdm --save_steps 5 --save_total_limit 3 --output_dir "$WORK/o")
    # Started by Python, which tells a death by SIGINT (-2) from an exit with 130 (run_qa's stop on one SIGINT).
    python3 - "$WORK/pid" "$RUN_QA" "${CMD[@]}" --max_steps 1000000 > "$WORK/log" 2>&1 <<'PY' &
import subprocess, sys
p = subprocess.Popen(sys.argv[2:])
open(sys.argv[1] + ".tmp", "w").write(str(p.pid))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
print(f"[returncode {p.wait()}]", flush=True)
PY
    pid=$!
    has_pid() { [ -s "$WORK/pid" ]; }
    wait_for 30 "run_qa started" has_pid
    qa=$(cat "$WORK/pid")
    has_checkpoint() { [ -f "$WORK/o/checkpoint-10/trainer_state.json" ]; }
    wait_for 120 "checkpoint-10" has_checkpoint
    start=$(date +%s%N)
    kill -INT "$qa"; sleep 0.005; kill -INT "$qa"; sleep 0.005; kill -INT "$qa"
    wait "$pid"
    pid=
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    grep -qF "[returncode -2]" "$WORK/log" || fail "not ended by SIGINT ($ms ms): $(tail -5 "$WORK/log")"
    grep -q "training stopped by SIGINT" "$WORK/log" && fail "it stopped as for one SIGINT, not at once"
    grep -qF "run_qa: SIGINT again (2): still stopping" "$WORK/log" && grep -qF "press Ctrl-C once more" "$WORK/log" ||
      fail "no report of the second SIGINT: $(tail -5 "$WORK/log")"
    grep -qF "run_qa: SIGINT a third time: stopping at once, without a checkpoint" "$WORK/log" ||
      fail "no line for the third SIGINT: $(tail -5 "$WORK/log")"
    newest=-1
    for d in "$WORK"/o/checkpoint-*; do
      n=${d##*-}
      python3 -c "import json, sys; assert json.load(open(sys.argv[1]))['global_step'] == int(sys.argv[2])" \
        "$d/trainer_state.json" "$n" 2>/dev/null || fail "${d##*/} is not complete after the third SIGINT"
      [ "$n" -gt "$newest" ] && newest=$n
    done
    [ "$newest" -ge 10 ] || fail "checkpoint-10 is gone"
    "$RUN_QA" "${CMD[@]}" --max_steps $((newest + 1)) > "$WORK/rerun.log" 2>&1 ||
      fail "the rerun failed: $(tail -5 "$WORK/rerun.log")"
    grep -qF "Resuming from $WORK/o/checkpoint-$newest" "$WORK/rerun.log" ||
      fail "the rerun did not resume from checkpoint-$newest: $(head -8 "$WORK/rerun.log")"
    echo "three SIGINTs ended run_qa by SIGINT in $ms ms; checkpoint-$newest intact and resumed"
    ;;
  *) fail "unknown case" ;;
esac
echo "ok ($CASE)"
