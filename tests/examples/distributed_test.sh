#!/usr/bin/env bash
# run_qa under mpirun.
#   equivalence: the ranks train one model together: k steps with 2 ranks of batch b (and 4 ranks of b/2, and 2
#     ranks of b/4 with 2 accumulation steps) log the same losses and grad norms and end with the same weights as
#     one process with batch 2b (fp32, no dropout; relative difference <= 1e-5); evaluation split between the
#     ranks gives the same predictions; rank 0 reports every rank's layout. With --ddp_communication_dtype bf16,
#     2 ranks send half the gradient bytes per step, and 2 and 4 ranks stay within the stated tolerance of the single process:
#     losses and grad norms within 1e-3 relative, weights within 3e-3 (measured here: 3e-4 and 8e-4).
#   failure: a rank that cannot go on (rank 0 refusing a non-empty output_dir) ends the whole job at once, with
#     its message and exit code 2.
#   kill: a rank killed with SIGKILL mid-training makes the job end, non-zero, well within 60 s; so does rank 1
#     killed while rank 0 writes a checkpoint (of 37 MB, one every step), and every complete checkpoint left
#     behind is loadable (one process resumes from it).
#   elastic: a job of 4 ranks stopped at a checkpoint, rerun with 2 ranks (twice the batch each) into the same
#     output_dir, resumes at the same step and sample and ends where one process never stopped ends.
#   sigterm: SIGTERM to mpirun makes rank 0 write a checkpoint of the step the ranks agree on, and the rerun
#     resumes from it.
#   sigterm-again: as in Kubernetes, SIGTERM to the ranks and to mpirun at once, then a third to the ranks while
#     they stop (mpirun passes its own on later): every extra one is reported, the checkpoint is still written and
#     the rerun resumes from it.
#   distributed_test.sh <case> <run_qa> <cputrain-make-demo-data> <mpiexec> [mpiexec flags...]
set -u
CASE=$1
RUN_QA=$2
MAKE_DEMO=$3
shift 3
MPIEXEC=("$@")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/distributed_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# job_ends LAUNCHER_PID OUTPUT_DIR WHAT: the job must end within 60 s of WHAT, non-zero, with no rank left
# (OUTPUT_DIR finds the ranks); sets rc and ended_ms.
job_ends() {
  local launcher=$1 dir=$2 what=$3 start
  start=$(date +%s%N)
  for _ in $(seq 600); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$launcher" 2>/dev/null; then
    pkill -9 -f -- "--output_dir $dir"
    fail "the job still runs 60 s after $what"
  fi
  wait "$launcher"
  rc=$?
  ended_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$rc" -ne 0 ] || fail "the job exited 0 after $what"
  pgrep -f -- "--output_dir $dir" > /dev/null && fail "a rank outlived the job after $what"
  return 0
}

"$MAKE_DEMO" --output_dir "$WORK/demo" --train_paragraphs 400 --eval_paragraphs 40 --version_2_with_negative \
  > /dev/null || fail "cputrain-make-demo-data failed"
# The demo model has no dropout. Windows padded to max_seq_length, so every batch has the same shape.
COMMON=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" --train_file "$WORK/demo/train.json"
        --validation_file "$WORK/demo/dev.json" --version_2_with_negative --do_train --do_eval
        --learning_rate 2e-3 --max_steps 24 --max_seq_length 128 --doc_stride 32 --logging_steps 4
        --save_strategy no --disable_tqdm --per_device_eval_batch_size 16)

case $CASE in
  failure)
    mkdir -p "$WORK/full" && touch "$WORK/full/notes.txt"
    now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
    # "At once" is measured against a yardstick taken now, under the same load, not in seconds: the same launch in
    # which every rank stops by itself at the same point (a usage error each finds in its own arguments), so no
    # rank has to be ended from outside. Measured here: both about 1.3 s.
    start=$(now_ms)
    timeout 60 "${MPIEXEC[@]}" -n 2 "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size 0 \
      --output_dir "$WORK/yardstick" > "$WORK/yardstick.log" 2>&1
    rc=$?
    yardstick_ms=$(( $(now_ms) - start ))
    [ "$rc" -eq 2 ] || fail "the yardstick (every rank refusing --per_device_train_batch_size 0) exited $rc, not 2:" \
      "$(tail -5 "$WORK/yardstick.log")"
    start=$(now_ms)
    timeout 60 "${MPIEXEC[@]}" -n 2 "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size 8 \
      --output_dir "$WORK/full" > "$WORK/log" 2>&1
    rc=$?
    took_ms=$(( $(now_ms) - start ))
    [ "$rc" -eq 2 ] || fail "exit $rc, not 2: $(cat "$WORK/log")"
    grep -q "run_qa (rank 0 of 2): --output_dir $WORK/full: already exists and is not empty" "$WORK/log" ||
      fail "no message from the failing rank: $(cat "$WORK/log")"
    [ "$took_ms" -le $(( 3 * yardstick_ms )) ] ||
      fail "the job took ${took_ms} ms to end, more than 3x the ${yardstick_ms} ms of one whose ranks all stop by themselves"
    echo "the failing rank ended the job with its message in ${took_ms} ms (every rank stopping by itself: ${yardstick_ms} ms)"
    exit 0;;
  kill)
    "${MPIEXEC[@]}" -n 2 "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size 8 --max_steps 100000 \
      --output_dir "$WORK/killed" > "$WORK/log" 2>&1 &
    launcher=$!
    # Wait for training to start (the first log line comes at step 4), then kill rank 1.
    for _ in $(seq 600); do grep -q '"step":4}' "$WORK/log" && break; sleep 0.1; done
    grep -q '"step":4}' "$WORK/log" || { kill -9 $launcher; fail "training did not start: $(cat "$WORK/log")"; }
    victim=$(pgrep -f -- "--output_dir $WORK/killed" | grep -v "^$launcher\$" | tail -1)
    [ -n "$victim" ] || fail "no rank process found"
    kill -9 "$victim"
    job_ends $launcher "$WORK/killed" "one rank was killed"
    echo "the job ended ${ended_ms} ms after a rank was killed, exit $rc"
    # Rank 1 killed while rank 0 writes a checkpoint. 100,000 x 32 word embeddings make each checkpoint 37 MB
    # (weights and AdamW's moments) and its write most of a step, saved at every step.
    mkdir -p "$WORK/big" && cp "$WORK/demo/model/"* "$WORK/big/" || fail "no demo model"
    python3 - "$WORK/big/config.json" <<'PY' || fail "cannot write the big model's config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c.update(vocab_size=100000, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
json.dump(c, open(sys.argv[1], "w"))
PY
    SAVING=(--config_name "$WORK/big" --tokenizer_name "$WORK/big" --train_file "$WORK/demo/train.json" --do_train
            --learning_rate 2e-3 --max_seq_length 64 --doc_stride 16 --logging_steps 4 --disable_tqdm
            --save_steps 1 --save_total_limit 2)
    "${MPIEXEC[@]}" -n 2 "$RUN_QA" "${SAVING[@]}" --per_device_train_batch_size 4 --max_steps 100000 \
      --output_dir "$WORK/saving" > "$WORK/saving.log" 2>&1 &
    launcher=$!
    for _ in $(seq 600); do compgen -G "$WORK/saving/checkpoint-*" > /dev/null && break; sleep 0.1; done
    compgen -G "$WORK/saving/checkpoint-*" > /dev/null ||
      { kill -9 $launcher; fail "no checkpoint written: $(tail -5 "$WORK/saving.log")"; }
    victim=
    for p in $(pgrep -f -- "--output_dir $WORK/saving" | grep -v "^$launcher\$"); do
      tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qxE "(OMPI_COMM_WORLD_RANK|PMI_RANK)=1" && victim=$p
    done
    [ -n "$victim" ] || { kill -9 $launcher; fail "rank 1's process not found"; }
    # The moment rank 0 has a tmp-checkpoint-* directory (a write has begun), rank 1 dies.
    for _ in $(seq 5000); do compgen -G "$WORK/saving/tmp-checkpoint-*" > /dev/null && break; sleep 0.002; done
    kill -9 "$victim"
    during=$(compgen -G "$WORK/saving/tmp-checkpoint-*")
    job_ends $launcher "$WORK/saving" "rank 1 was killed during a checkpoint write"
    complete=$(cd "$WORK/saving" && for c in checkpoint-*; do [ -f "$c/trainer_state.json" ] && echo "$c"; done)
    [ -n "$complete" ] || fail "no complete checkpoint left: $(ls "$WORK/saving")"
    for c in $complete; do
      step=${c#checkpoint-}
      timeout 120 "$RUN_QA" "${SAVING[@]}" --per_device_train_batch_size 8 --threads 2 --max_steps $((step + 2)) \
        --save_strategy no --resume_from_checkpoint "$WORK/saving/$c" --output_dir "$WORK/from-$c" \
        > "$WORK/from-$c.log" 2>&1 || fail "resuming from $c failed: $(tail -5 "$WORK/from-$c.log")"
      grep -q "Resuming from $WORK/saving/$c" "$WORK/from-$c.log" || fail "the run from $c did not resume"
    done
    echo "rank 1 killed while rank 0 wrote ${during##*/} (left: $(ls "$WORK/saving" | grep -c '^tmp-checkpoint-')):" \
      "the job ended ${ended_ms} ms later, exit $rc; loadable: $(echo $complete)"
    exit 0;;
  elastic)
    CONSTANT=(--lr_scheduler_type constant --per_device_eval_batch_size 16)
    "$RUN_QA" "${COMMON[@]}" "${CONSTANT[@]}" --per_device_train_batch_size 16 --threads 2 --max_steps 24 \
      --output_dir "$WORK/one" > "$WORK/one.log" 2>&1 || fail "the reference run failed: $(tail -5 "$WORK/one.log")"
    timeout 120 "${MPIEXEC[@]}" -n 4 "$RUN_QA" "${COMMON[@]}" "${CONSTANT[@]}" --per_device_train_batch_size 4 \
      --max_steps 12 --save_strategy steps --save_steps 12 --output_dir "$WORK/elastic" > "$WORK/four.log" 2>&1 ||
      fail "the 4-rank run failed: $(tail -5 "$WORK/four.log")"
    [ -f "$WORK/elastic/checkpoint-12/trainer_state.json" ] || fail "no checkpoint-12 after the 4-rank run"
    # The same command with 2 ranks: the output_dir holds a checkpoint, so it resumes from it.
    timeout 120 "${MPIEXEC[@]}" -n 2 "$RUN_QA" "${COMMON[@]}" "${CONSTANT[@]}" --per_device_train_batch_size 8 \
      --max_steps 24 --save_strategy steps --save_steps 12 --output_dir "$WORK/elastic" > "$WORK/two.log" 2>&1 ||
      fail "the 2-rank rerun failed: $(tail -5 "$WORK/two.log")"
    grep -q "Resuming from $WORK/elastic/checkpoint-12" "$WORK/two.log" || fail "the rerun did not resume: $(head -20 "$WORK/two.log")"
    # The elastic run's log holds the 4-rank steps (from the checkpoint) and the 2-rank ones.
    python3 "$(dirname "$0")/compare_runs.py" "$WORK" 6 elastic --no-predictions ||
      fail "the resumed 2-rank run differs from one process that never stopped"
    echo "the 2-rank rerun resumed the 4-rank job exactly"
    exit 0;;
  sigterm|sigterm-again)
    "${MPIEXEC[@]}" -n 2 "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size 8 --max_steps 100000 \
      --save_strategy steps --save_steps 100000 --output_dir "$WORK/term" > "$WORK/log" 2>&1 &
    launcher=$!
    for _ in $(seq 600); do grep -q '"step":8}' "$WORK/log" && break; sleep 0.1; done
    grep -q '"step":8}' "$WORK/log" || { kill -9 $launcher; fail "training did not start: $(cat "$WORK/log")"; }
    if [ "$CASE" = sigterm ]; then
      kill -TERM $launcher
    else
      ranks=$(pgrep -f -- "--output_dir $WORK/term" | grep -vx "$launcher")
      [ "$(echo "$ranks" | wc -w)" -eq 2 ] || fail "not 2 ranks: $ranks"
      kill -TERM $ranks $launcher
      sleep 0.05
      kill -TERM $ranks
    fi
    for _ in $(seq 600); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
    kill -0 $launcher 2>/dev/null && { pkill -9 -f -- "--output_dir $WORK/term"; fail "still running 60 s after SIGTERM"; }
    wait $launcher
    step=$(sed -n 's/.*training stopped by SIGTERM after step \([0-9]*\); checkpoint-\1 is written.*/\1/p' "$WORK/log")
    [ -n "$step" ] || fail "no checkpoint message after SIGTERM: $(tail -5 "$WORK/log")"
    [ -f "$WORK/term/checkpoint-$step/trainer_state.json" ] || fail "checkpoint-$step is not complete"
    timeout 120 "${MPIEXEC[@]}" -n 2 "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size 8 \
      --max_steps $((step + 4)) --save_strategy no --output_dir "$WORK/term" > "$WORK/rerun.log" 2>&1 ||
      fail "the rerun failed: $(tail -5 "$WORK/rerun.log")"
    grep -q "Resuming from $WORK/term/checkpoint-$step" "$WORK/rerun.log" || fail "the rerun did not resume from checkpoint-$step"
    if [ "$CASE" = sigterm-again ]; then
      grep -qF "run_qa: SIGTERM again (2): still stopping" "$WORK/log" ||
        fail "no report of the second SIGTERM: $(tail -5 "$WORK/log")"
    fi
    echo "SIGTERM: checkpoint-$step written and resumed"
    exit 0;;
  equivalence) ;;
  *) fail "unknown case $CASE";;
esac

run() {  # run NAME LAUNCH... -- run_qa flags
  local name=$1; shift
  local launch=()
  while [ "$1" != "--" ]; do launch+=("$1"); shift; done
  shift
  "${launch[@]}" "$RUN_QA" "${COMMON[@]}" --output_dir "$WORK/$name" "$@" > "$WORK/$name.log" 2>&1 ||
    fail "$name: run_qa failed: $(tail -20 "$WORK/$name.log")"
}
run one -- --per_device_train_batch_size 16 --threads 2
run two "${MPIEXEC[@]}" -n 2 -- --per_device_train_batch_size 8
run four "${MPIEXEC[@]}" -n 4 -- --per_device_train_batch_size 4
run two_accumulating "${MPIEXEC[@]}" -n 2 -- --per_device_train_batch_size 4 --gradient_accumulation_steps 2
run two_bf16 "${MPIEXEC[@]}" -n 2 -- --per_device_train_batch_size 8 --ddp_communication_dtype bf16
run four_bf16 "${MPIEXEC[@]}" -n 4 -- --per_device_train_batch_size 4 --ddp_communication_dtype bf16

# Intel MPI / MPICH launcher variables in the environment of a process started alone do not make it a rank:
# the world comes from MPI, never from PMI_RANK and friends. PMI_FD is left out for a run_qa built with MPICH (run
# under Hydra here): it is MPICH's own channel to its launcher, which MPI_Init then rightly tries to use.
PMI_FD=(PMI_FD=99)
"${MPIEXEC[0]}" --version 2>/dev/null | grep -q HYDRA && PMI_FD=()
env PMI_RANK=1 PMI_SIZE=2 "${PMI_FD[@]}" PMIX_RANK=1 I_MPI_HYDRA_HOST_FILE=/nonexistent timeout 120 "$RUN_QA" \
  "${COMMON[@]}" --per_device_train_batch_size 8 --max_steps 2 --output_dir "$WORK/pmi" > "$WORK/pmi.log" 2>&1 ||
  fail "run_qa alone with PMI_RANK set failed: $(tail -5 "$WORK/pmi.log")"
grep -q "^threads: " "$WORK/pmi.log" && ! grep -q "^layout:" "$WORK/pmi.log" ||
  fail "run_qa alone with PMI_RANK set did not run as a world of one: $(head -5 "$WORK/pmi.log")"

grep -q "^layout: 2 ranks on 1 host" "$WORK/two.log" || fail "no layout line: $(head -5 "$WORK/two.log")"
grep -q "^rank 1/2 (local 1/2) on " "$WORK/two.log" || fail "rank 1 missing from the layout: $(head -8 "$WORK/two.log")"
grep -q "^rank 3/4 " "$WORK/four.log" || fail "rank 3 missing from the layout: $(head -12 "$WORK/four.log")"
[ "$(grep -c '"loss"' "$WORK/two.log")" = 6 ] || fail "the log entries are not printed once (by rank 0 alone)"
grep -q "Total batch size = 16 (8 per process x 2 processes x 1 accumulation steps)" "$WORK/two.log" ||
  fail "no total batch size line: $(grep -i batch "$WORK/two.log")"

python3 "$(dirname "$0")/compare_runs.py" "$WORK" 6 two four two_accumulating ||
  fail "the distributed runs differ from the single process (see above)"
# bf16 communication: not exact, within the stated tolerance, and half the bytes (each bucket's last shard is padded
# to the world size, so a few bytes more than half).
python3 "$(dirname "$0")/compare_runs.py" "$WORK" 6 two_bf16 four_bf16 --no-predictions --tolerance 1e-3 \
  --weights-tolerance 3e-3 || fail "the 2-rank run with bf16 communication is beyond its tolerance (see above)"
python3 - "$WORK" <<'PY' || fail "bf16 communication did not halve the gradient bytes per step"
import json, sys
fp32, bf16 = (json.load(open(f"{sys.argv[1]}/{run}/train_results.json")) for run in ("two", "two_bf16"))
sent, half = bf16["train_gradient_bytes_per_step"], fp32["train_gradient_bytes_per_step"]
print(f"gradient bytes per step: fp32 {half}, bf16 {sent} ({sent / half:.4f}x)")
sys.exit(0 if bf16["train_communication_dtype"] == "bf16" and fp32["train_communication_dtype"] == "fp32"
         and half > 0 and half <= 2 * sent <= half * 1.001 else 1)
PY
for f in model.safetensors config.json vocab.txt trainer_state.json eval_results.json all_results.json; do
  [ -s "$WORK/two/$f" ] || fail "the 2-rank output_dir has no $f"
done
echo "distributed runs match the single process"
