#!/usr/bin/env bash
# Failure drills and a long-run memory check of run_qa, on the demo data (self-contained: nothing downloaded).
#   kill-during-save: run_qa saving a checkpoint of about 19 MB at every step (so saving is most of its time) is
#     killed with SIGKILL at seeded random moments after it begins to save, CPUTRAIN_FAULT_KILLS (24) times; after
#     every kill (exit 137) each checkpoint-* directory is complete and loadable, the newest step never goes
#     backwards, and the same command run again resumes from the newest checkpoint (or, killed in its first save,
#     starts afresh). At least half the kills must land in a save (a tmp-checkpoint-* or tmp-deleting-checkpoint-*
#     directory of that run's left behind), a third in a write. The last run, left alone, ends with a
#     model.safetensors byte-identical to an uninterrupted run of the same command and leaves no tmp-* directory.
#     CPUTRAIN_FAULT_SEED=<seed> replays the same delays (the seed is printed).
#   long-run: a tiny model trained for 30,000 steps (a checkpoint every 500, a log entry every 100), sampled from
#     outside every 0.15 s: VmRSS must not grow by more than 1 MiB after warm-up, nor the open descriptors at all.
#   fault_test.sh <case> <run_qa> <cputrain-make-demo-data>
set -u
CASE=$1
RUN_QA=$(readlink -f "$2")
MAKE_DEMO=$(readlink -f "$3")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fault_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/demo_model.sh"  # make_model
cd "$WORK" || fail "cannot enter $WORK"


case $CASE in
  kill-during-save)
    "$MAKE_DEMO" --output_dir "$WORK/demo" --train_paragraphs 40 --eval_paragraphs 10 --version_2_with_negative \
      > /dev/null || fail "cputrain-make-demo-data failed"
    # 50,000 x 32 word embeddings: 1.6 M parameters, a checkpoint of 19 MB (weights 6.5 MB, AdamW's moments 13 MB)
    # written and synced at every step, while a step takes about 1.5 ms: on this project's machine (Zen 5, GCC) a
    # save takes about 45 ms of every 47, most of it the syncs (docs/build.md). Dropout on, so exact resume must
    # replay the masks too.
    make_model "$WORK/big" '{"vocab_size": 50000, "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
      "intermediate_size": 64, "max_position_embeddings": 128, "hidden_dropout_prob": 0.1,
      "attention_probs_dropout_prob": 0.1}'
    STEPS=80
    KILLS=${CPUTRAIN_FAULT_KILLS:-24}
    CMD=(--config_name "$WORK/big" --tokenizer_name "$WORK/big" --train_file "$WORK/demo/train.json" --do_train
         --max_seq_length 64 --doc_stride 16 --per_device_train_batch_size 2 --learning_rate 1e-3 --warmup_steps 10
         --max_steps $STEPS --save_steps 1 --save_total_limit 2 --logging_steps 10 --threads 2 --disable_tqdm)
    cat > "$WORK/check.py" <<'PY'
"""check.py OUTPUT_DIR: every checkpoint-* directory is complete and loadable; prints the newest step (-1: none)."""
import json, os, struct, sys
out = sys.argv[1]
def safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    end = 0
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, stop = t["data_offsets"]
        count = 1
        for d in t["shape"]:
            count *= d
        assert t["dtype"] == "F32" and stop - begin == 4 * count, (path, name, t)
        end = max(end, stop)
    assert len(raw) == 8 + n + end, (path, "size", len(raw), 8 + n + end)
    return header
steps = []
for name in os.listdir(out):
    if not name.startswith("checkpoint-"):
        continue
    step = int(name[len("checkpoint-"):])
    d = os.path.join(out, name)
    try:
        state = json.load(open(os.path.join(d, "trainer_state.json")))
        assert state["global_step"] == step, ("global_step", state["global_step"])
        for f in ("config.json", "scheduler.json", "training_args.json", "tokenizer_config.json"):
            json.load(open(os.path.join(d, f)))
        assert os.path.getsize(os.path.join(d, "vocab.txt")) > 0, "empty vocab.txt"
        safetensors(os.path.join(d, "model.safetensors"))
        meta = safetensors(os.path.join(d, "optimizer.safetensors"))["__metadata__"]
        assert meta["step"] == str(step), ("optimizer step", meta)
    except Exception as e:
        sys.exit(f"{d} is not a complete checkpoint: {e!r}")
    steps.append(step)
print(max(steps, default=-1))
PY
    "$RUN_QA" "${CMD[@]}" --output_dir "$WORK/ref" > "$WORK/ref.log" 2>&1 ||
      fail "the uninterrupted run failed: $(tail -5 "$WORK/ref.log")"
    # Delays up to the uninterrupted run's training time / (2 KILLS): each run gets a step or two past its first
    # save (the kills got through 8-21 of the 80 steps), whatever the build's speed (ASan, a slower disk; 3 times
    # faster still leaves steps), and the last run does the rest.
    max_delay_ms=$(python3 -c "import json, sys
print(max(50, int(500 * json.load(open(sys.argv[1]))['train_runtime'] / $KILLS)))" "$WORK/ref/train_results.json") ||
      fail "no train_runtime in the uninterrupted run's results"
    seed=${CPUTRAIN_FAULT_SEED:-$RANDOM}
    RANDOM=$seed
    echo "seed $seed (CPUTRAIN_FAULT_SEED=$seed replays these delays);" \
      "delays 0-$max_delay_ms ms after each run begins to save"
    kills=0 in_write=0 in_rotation=0 newest=-1 run=0 start=$SECONDS
    while [ "$kills" -lt "$KILLS" ]; do
      run=$((run + 1))
      # A leftover of the previous kill gets a marker: if it is still there after this kill, this kill did not
      # interrupt a write of its own (the next save removes the leftover, marker and all).
      for t in "$WORK"/o/tmp-*checkpoint-*; do [ -d "$t" ] && : > "$t/.left-by-earlier-kill"; done
      # The clock starts when the run begins its first save (tmp-checkpoint-<next> made afresh, or already renamed):
      # the kills land in the saving loop, not in start-up, so that most of them hit a write.
      next=$((newest < 0 ? 1 : newest + 1))
      "$RUN_QA" "${CMD[@]}" --output_dir "$WORK/o" > "$WORK/run$run.log" 2>&1 &
      pid=$!
      saving=no
      for _ in $(seq 6000); do
        if [ -d "$WORK/o/tmp-checkpoint-$next" ] && [ ! -e "$WORK/o/tmp-checkpoint-$next/.left-by-earlier-kill" ] ||
           [ -d "$WORK/o/checkpoint-$next" ]; then saving=yes; break; fi
        kill -0 $pid 2>/dev/null || break
        sleep 0.01
      done
      if [ $saving = no ]; then
        kill -9 $pid 2>/dev/null; { wait $pid; } 2>/dev/null
        fail "run $run did not begin to save checkpoint-$next: $(tail -5 "$WORK/run$run.log")"
      fi
      delay_ms=$((RANDOM % (max_delay_ms + 1)))
      sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
      kill -9 $pid 2>/dev/null
      { wait $pid; } 2>/dev/null  # (without bash's "Killed" line)
      rc=$?
      if [ "$rc" -eq 0 ]; then
        echo "run $run finished training before its kill ($delay_ms ms)"
        break
      fi
      [ "$rc" -eq 137 ] || fail "run $run exited $rc before its kill, not 137 (killed): $(tail -5 "$WORK/run$run.log")"
      [ "$newest" -lt 0 ] || grep -qF "Resuming from $WORK/o/checkpoint-$newest" "$WORK/run$run.log" ||
        fail "run $run did not resume from checkpoint-$newest: $(head -8 "$WORK/run$run.log")"
      kills=$((kills + 1))
      # Where it landed: in a write (a tmp-checkpoint-* of this run's), in rotation (a tmp-deleting-checkpoint-*
      # of this run's: an old checkpoint renamed, not yet removed) or elsewhere (loading, a step, a sync).
      landed=elsewhere
      for t in "$WORK"/o/tmp-*checkpoint-*; do
        [ -d "$t" ] && [ ! -e "$t/.left-by-earlier-kill" ] || continue
        case ${t##*/} in
          tmp-checkpoint-*) landed="in a write (${t##*/})"; in_write=$((in_write + 1)) ;;
          tmp-deleting-*) landed="in rotation (${t##*/})"; in_rotation=$((in_rotation + 1)) ;;
        esac
      done
      now=$(python3 "$WORK/check.py" "$WORK/o") || fail "after kill $kills ($delay_ms ms): $now"
      [ "$now" -ge "$newest" ] || fail "after kill $kills the newest checkpoint went back from step $newest to $now"
      newest=$now
      echo "kill $kills: $delay_ms ms after its first save began, $landed; newest: $([ "$newest" -ge 0 ] &&
        echo "checkpoint-$newest" || echo none)"
    done
    echo "$kills kills in $((SECONDS - start)) s: $in_write in a checkpoint write, $in_rotation in rotation"
    [ "$kills" -ge "$KILLS" ] || fail "only $kills kills before training finished (raise STEPS)"
    # The save is the write (tmp-checkpoint-N), the rename and syncs, and the rotation; most kills must land in it.
    # Measured here (6 runs, GCC Release and ASan): 16-20 of 24 in a write, 3-5 in rotation, 1-3 elsewhere. Half
    # in the save and a third in a write keep the chance of a false failure near 2e-4 at those rates.
    [ $((2 * (in_write + in_rotation))) -ge "$kills" ] ||
      fail "only $((in_write + in_rotation)) of $kills kills landed while a checkpoint was written or rotated"
    [ $((3 * in_write)) -ge "$kills" ] || fail "only $in_write of $kills kills landed inside a checkpoint write"
    # The same command, left alone: it resumes from the newest checkpoint and ends where the uninterrupted run did.
    if [ "$rc" -ne 0 ]; then
      "$RUN_QA" "${CMD[@]}" --output_dir "$WORK/o" > "$WORK/final.log" 2>&1 ||
        fail "the last run failed: $(tail -5 "$WORK/final.log")"
      grep -qF "Resuming from $WORK/o/checkpoint-$newest" "$WORK/final.log" ||
        fail "the last run did not resume from checkpoint-$newest: $(head -8 "$WORK/final.log")"
    fi
    cmp -s "$WORK/ref/model.safetensors" "$WORK/o/model.safetensors" ||
      fail "the killed and resumed run ended with other weights than the uninterrupted run"
    python3 "$WORK/check.py" "$WORK/o" > /dev/null || fail "the finished run left a broken checkpoint"
    leftovers=$(cd "$WORK/o" && ls -d tmp-* 2>/dev/null)
    [ -z "$leftovers" ] || fail "the finished run left temporary directories behind: $leftovers"
    cores=$(find "$WORK" -maxdepth 2 -name 'core*' -type f)
    [ -z "$cores" ] || fail "core files: $cores"
    echo "resumed after $kills kills to the same weights as the uninterrupted run"
    ;;
  long-run)
    "$MAKE_DEMO" --output_dir "$WORK/demo" --train_paragraphs 400 --eval_paragraphs 20 --version_2_with_negative \
      > /dev/null || fail "cputrain-make-demo-data failed"
    make_model "$WORK/tiny" '{"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
      "intermediate_size": 64, "max_position_embeddings": 64, "hidden_dropout_prob": 0.1,
      "attention_probs_dropout_prob": 0.1}'
    # A step takes about 0.2 ms here: 30,000 of them (11 epochs of the demo's 2,610 windows) run about 7 s.
    STEPS=${CPUTRAIN_LONG_RUN_STEPS:-30000}
    "$RUN_QA" --config_name "$WORK/tiny" --tokenizer_name "$WORK/tiny" --train_file "$WORK/demo/train.json" \
      --validation_file "$WORK/demo/dev.json" --version_2_with_negative --do_train --do_eval --max_seq_length 64 \
      --doc_stride 16 --per_device_train_batch_size 2 --learning_rate 1e-3 --max_steps "$STEPS" --save_steps 500 \
      --save_total_limit 2 --logging_steps 100 --threads 2 --disable_tqdm --output_dir "$WORK/o" > "$WORK/log" 2>&1 &
    pid=$!
    # One line per sample: seconds, the last logged step, VmRSS (kB), open descriptors, a checkpoint exists (0/1),
    # training has ended (0/1). Read without starting a process where possible, to disturb the run little.
    : > "$WORK/samples"
    while kill -0 $pid 2>/dev/null; do
      rss=0
      while read -r key value _; do [ "$key" = VmRSS: ] && rss=$value; done < /proc/$pid/status 2>/dev/null
      fds=(/proc/$pid/fd/*)
      step=$(grep -o '"step":[0-9]*' "$WORK/log" | tail -1); step=${step#*:}
      ckpt=0; for c in "$WORK"/o/checkpoint-*; do [ -d "$c" ] && ckpt=1; done
      ended=0; grep -q "train metrics" "$WORK/log" && ended=1
      [ "$rss" -gt 0 ] && echo "$SECONDS ${step:-0} $rss ${#fds[@]} $ckpt $ended" >> "$WORK/samples"
      sleep 0.15
    done
    wait $pid || fail "run_qa failed: $(tail -5 "$WORK/log")"
    grep -q "eval metrics" "$WORK/log" || fail "no evaluation at the end"
    # Measured on this project's 2-core machine (GCC Release, 5 runs of 60,000 steps, 12-25 s each): 52-145
    # samples after warm-up, VmRSS 22.9 MB, growth after warm-up 8-32 kB, 21-22 descriptors outside saves (22 under
    # ctest). The bound, 1 MiB, is 32 times the largest growth, and the 24,000 steps after warm-up of a 30,000-step
    # run still fail a leak of 44 bytes a step (as 60,000 steps against 2 MiB did). Injected into a copy of run_qa
    # (on_step_end / on_save callbacks), a leak of 64 bytes a step grew 3,568 kB over 60,000 steps and failed,
    # 2 KiB a step 95,864 kB, one descriptor per checkpoint took the descriptors from 45 to 138.
    python3 - "$WORK/samples" "$STEPS" <<'PY' || fail "memory or descriptors grew during training (samples above)"
import sys
steps = int(sys.argv[2])
rows = [tuple(int(x) for x in line.split()) for line in open(sys.argv[1])]  # seconds step rss fds ckpt ended
training = [r for r in rows if not r[5]]
# Warm-up: a checkpoint has been written (and rotated files opened and closed) and 20% of the steps are done.
warm = next((i for i, r in enumerate(training) if r[4] and r[1] >= steps // 5), None)
if warm is None or len(training) - warm < 10:
    sys.exit(f"too few samples after warm-up ({len(training)} in training, warm-up at {warm})")
after = training[warm:]
rss0 = after[0][2]
growth = max(r[2] for r in after) - rss0
# Descriptors: a save holds a file or two open for a moment; the least of 5 samples filters that out.
fd0 = min(r[3] for r in after[:5])
fd1 = min(r[3] for r in after[-5:])
print(f"{len(rows)} samples, {len(after)} in training after warm-up (step {after[0][1]} to {after[-1][1]}); "
      f"VmRSS {rss0} kB at warm-up, max {rss0 + growth} kB, growth {growth} kB (bound 1024 kB); "
      f"open descriptors {fd0} at warm-up, {fd1} at the end of training")
bad = []
if growth > 1024:
    bad.append(f"VmRSS grew {growth} kB after warm-up")
if fd1 != fd0:
    bad.append(f"open descriptors went from {fd0} to {fd1}")
if bad:
    for r in rows:
        print(*r)
    sys.exit("; ".join(bad))
PY
    ;;
  *) fail "unknown case" ;;
esac
echo "ok ($CASE)"
