#!/usr/bin/env bash
# End-to-end checks of run_qa against what can go wrong with its output directory: a disk that fills up during a
# checkpoint, a read-only disk, an output_dir below a regular file, checkpoints left half-written by a crash, a
# checkpoint whose files are cut short, and two runs started on the same directory.
#   disk_test.sh <path to run_qa> <conformance data dir> <case>
# A failing run must exit neither 0 nor with a signal (>= 128), leave no core file, name the path and the
# problem, and leave every file saved before it byte for byte as it was (sha256 before and after).
# Exits 77 (CTest: skipped) without the conformance data, and, for full-disk and read-only, where a private mount
# namespace with a tmpfs cannot be made (not root, or a container without CAP_SYS_ADMIN): root ignores
# permission bits, so a real read-only or full file system is the only honest test.
set -u
RUN_QA=$(realpath "$1")  # the failing runs start in a directory of their own, to catch core files
DATA=${2:-}
CASE=$3
# shellcheck source=tests/examples/conformance_data.sh
. "$(dirname "$0")/conformance_data.sh"
case $CASE in
  full-disk|read-only)
    if [ -z "${CPUTRAIN_DISK_TEST_NAMESPACE:-}" ]; then
      # Mounts made in a private namespace vanish with it: nothing is left mounted whatever happens to the test.
      probe=$(unshare --mount --propagation private sh -c \
        'd=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs "$d" && umount "$d"; rc=$?; rmdir "$d"; exit $rc' 2>&1) || {
        echo "skipped: cannot mount a tmpfs in a private mount namespace (needs root or CAP_SYS_ADMIN): $probe"
        exit 77
      }
      CPUTRAIN_DISK_TEST_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "$@"
    fi
    ;;
esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/disk_test.XXXXXX")
MNT=$WORK/mnt
FIRST=  # the concurrent case's first run: never left stopped or running when the test ends early
cleanup() {
  if [ -n "$FIRST" ]; then kill -CONT "$FIRST" 2>/dev/null; kill "$FIRST" 2>/dev/null; wait "$FIRST" 2>/dev/null; fi
  umount "$MNT" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }
# A crash must be visible as a file, where the kernel's core_pattern writes one into the working directory.
ulimit -c unlimited 2>/dev/null
mkdir -p "$WORK/cwd"

# The tiny BERT of run_qa_test.sh over bert-base-uncased's vocabulary, with dropout, trained 30 steps with a
# checkpoint every 10: a checkpoint is about 25 MB (model 8 MB, AdamW's moments 16 MB), a run about a second.
mkdir -p "$WORK/m"
cp "$VOCAB" "$WORK/m/vocab.txt"
cat > "$WORK/m/config.json" <<JSON
{"architectures": ["BertForQuestionAnswering"], "model_type": "bert", "vocab_size": 30522, "hidden_size": 64,
 "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128, "max_position_embeddings": 256,
 "type_vocab_size": 2, "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "layer_norm_eps": 1e-12,
 "initializer_range": 0.02, "pad_token_id": 0, "hidden_act": "gelu", "position_embedding_type": "absolute"}
JSON
TRAIN=(--config_name "$WORK/m" --tokenizer_name "$WORK/m" --train_file "$SAMPLE" --version_2_with_negative
       --max_seq_length 128 --doc_stride 32 --per_device_train_batch_size 4 --threads 2 --disable_tqdm --do_train
       --learning_rate 1e-3 --max_steps 30 --warmup_steps 5 --save_steps 10 --logging_steps 5)

# The same training, alone in a directory of its own: what every other run must end with.
reference() {
  "$RUN_QA" "${TRAIN[@]}" "$@" --output_dir "$WORK/ref" > "$WORK/ref.log" 2>&1 || fail "reference run: $(tail -5 "$WORK/ref.log")"
}
run_ok() {  # run_ok LOG args...: a run that must succeed
  local log=$1; shift
  (cd "$WORK/cwd" && "$RUN_QA" "$@") > "$log" 2>&1 || fail "run failed: $* -- $(tail -5 "$log")"
  no_core
}
no_core() {
  local cores
  cores=$(find "$WORK" -name 'core*' -type f 2>/dev/null)
  [ -z "$cores" ] || fail "a core file appeared: $cores"
}
# expect_failure PATTERN... -- command...: exit 1..127 (an error, not a signal), no core, every PATTERN (fixed
# strings) in the output; the output stays in $WORK/failed.log.
expect_failure() {
  local patterns=() rc
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  (cd "$WORK/cwd" && "$@") > "$WORK/failed.log" 2>&1; rc=$?
  [ "$rc" -ne 0 ] || fail "exit 0 from: $* -- output: $(tail -5 "$WORK/failed.log")"
  [ "$rc" -lt 128 ] || fail "killed by a signal (exit $rc) running: $* -- output: $(tail -5 "$WORK/failed.log")"
  no_core
  for p in "${patterns[@]}"; do
    grep -qF -- "$p" "$WORK/failed.log" || fail "no \"$p\" in the output of: $* -- output: $(cat "$WORK/failed.log")"
  done
  echo "  exit $rc: $(grep -m1 'run_qa:' "$WORK/failed.log")"
}
# Every file and directory under $1 with its checksum (the lock file aside: flock never writes it).
snapshot() {
  (cd "$1" && find . ! -name .cputrain.lock \( -type d -printf 'dir %p\n' -o -type f -printf '%p ' -exec sha256sum {} \; \) | sort)
}
unchanged() {  # unchanged BEFORE_FILE DIR WHAT
  snapshot "$2" > "$WORK/after.txt"
  diff "$1" "$WORK/after.txt" > "$WORK/diff.txt" || fail "$3 changed what was saved before: $(cat "$WORK/diff.txt")"
}
same_file() { cmp -s "$1" "$2" || fail "$1 differs from $2"; }

case $CASE in
  full-disk)
    # A disk that holds the first checkpoint but fills up while the second is written: the run stops with the
    # path and "No space left on device", checkpoint-10 stays whole, no checkpoint-20 (complete or tmp-) is left,
    # and the same command on a larger disk resumes from checkpoint-10 and ends where a run never stopped ends.
    reference
    size=$(du -sb "$WORK/ref/checkpoint-10" | cut -f1)
    mkdir -p "$MNT"
    mount -t tmpfs -o size=$((size * 3 / 2)) tmpfs "$MNT" || fail "mount tmpfs"
    expect_failure "No space left on device" "$MNT/out/checkpoint-20 was not saved" "$MNT/out/tmp-checkpoint-20/" -- \
      "$RUN_QA" "${TRAIN[@]}" --output_dir "$MNT/out"
    [ -f "$MNT/out/checkpoint-10/trainer_state.json" ] || fail "no complete checkpoint-10: $(ls -a "$MNT/out")"
    for f in model.safetensors optimizer.safetensors scheduler.json trainer_state.json; do
      same_file "$MNT/out/checkpoint-10/$f" "$WORK/ref/checkpoint-10/$f"
    done
    leftovers=$(cd "$MNT/out" && ls -d checkpoint-20 tmp-checkpoint-* .*.tmp.* checkpoint-10/.*.tmp.* 2>/dev/null)
    [ -z "$leftovers" ] || fail "a half checkpoint was left: $leftovers"
    [ ! -e "$MNT/out/model.safetensors" ] || fail "a final model was written although training failed"
    snapshot "$MNT/out/checkpoint-10" > "$WORK/before.txt"
    mount -o remount,size=$((size * 8)) "$MNT" || fail "remount tmpfs larger"
    run_ok "$WORK/rerun.log" "${TRAIN[@]}" --output_dir "$MNT/out"
    grep -q "Resuming from $MNT/out/checkpoint-10\$" "$WORK/rerun.log" || fail "the rerun did not resume from checkpoint-10"
    same_file "$MNT/out/model.safetensors" "$WORK/ref/model.safetensors"
    unchanged "$WORK/before.txt" "$MNT/out/checkpoint-10" "the rerun"
    ;;
  read-only)
    # output_dir on a read-only file system, holding a checkpoint of an earlier run: refused at once naming the
    # directory, the checkpoint untouched; a new output_dir below a read-only mount likewise.
    reference
    mkdir -p "$MNT"
    mount -t tmpfs -o size=64m tmpfs "$MNT" || fail "mount tmpfs"
    mkdir -p "$MNT/out"
    cp -a "$WORK/ref/checkpoint-10" "$WORK/ref/.cputrain.lock" "$MNT/out/"
    snapshot "$MNT/out" > "$WORK/before.txt"
    mount -o remount,ro "$MNT" || fail "remount read-only"
    expect_failure "--output_dir $MNT/out" "Read-only file system" -- "$RUN_QA" "${TRAIN[@]}" --output_dir "$MNT/out"
    unchanged "$WORK/before.txt" "$MNT/out" "a run on a read-only output_dir"
    expect_failure "--output_dir $MNT/out" "Read-only file system" -- \
      "$RUN_QA" "${TRAIN[@]}" --output_dir "$MNT/out" --overwrite_output_dir
    expect_failure "--output_dir $MNT/new/out" "Read-only file system" -- "$RUN_QA" "${TRAIN[@]}" --output_dir "$MNT/new/out"
    unchanged "$WORK/before.txt" "$MNT/out" "a run below a read-only mount"
    ;;
  output-is-file)
    # A regular file where output_dir or one of its parents should be: refused naming it, the file untouched.
    echo keep > "$WORK/notes.txt"
    expect_failure "--output_dir $WORK/notes.txt" "not a directory" -- "$RUN_QA" "${TRAIN[@]}" --output_dir "$WORK/notes.txt"
    expect_failure "--output_dir $WORK/notes.txt/out" "$WORK/notes.txt is a file" -- \
      "$RUN_QA" "${TRAIN[@]}" --output_dir "$WORK/notes.txt/out"
    [ "$(cat "$WORK/notes.txt")" = keep ] || fail "the file was changed"
    ;;
  crash-leftovers)
    # What a crash (or an interrupted copy) leaves: a tmp-checkpoint-N, complete-looking inside, and a
    # checkpoint-N without trainer_state.json. Neither is resumed from; the newest complete checkpoint is, the
    # next save removes the tmp- directory, and the run ends as one that never stopped.
    reference
    mkdir -p "$WORK/out"
    cp -a "$WORK/ref/checkpoint-10" "$WORK/out/"
    cp -a "$WORK/ref/checkpoint-20" "$WORK/out/tmp-checkpoint-25"
    cp -a "$WORK/ref/checkpoint-20" "$WORK/out/checkpoint-20"
    rm "$WORK/out/checkpoint-20/trainer_state.json"
    snapshot "$WORK/out/checkpoint-10" > "$WORK/before.txt"
    run_ok "$WORK/run.log" "${TRAIN[@]}" --output_dir "$WORK/out"
    grep -q "Resuming from $WORK/out/checkpoint-10\$" "$WORK/run.log" || fail "did not resume from checkpoint-10: $(grep Resuming "$WORK/run.log")"
    [ ! -e "$WORK/out/tmp-checkpoint-25" ] || fail "the leftover tmp-checkpoint-25 was not removed by the next save"
    [ -f "$WORK/out/checkpoint-20/trainer_state.json" ] || fail "the incomplete checkpoint-20 was not replaced by a complete one"
    same_file "$WORK/out/model.safetensors" "$WORK/ref/model.safetensors"
    unchanged "$WORK/before.txt" "$WORK/out/checkpoint-10" "resuming"
    # Only an incomplete checkpoint: nothing to resume from, and a non-empty directory is not overwritten.
    mkdir -p "$WORK/only"
    cp -a "$WORK/ref/checkpoint-20" "$WORK/only/checkpoint-20"
    rm "$WORK/only/checkpoint-20/trainer_state.json"
    snapshot "$WORK/only" > "$WORK/before.txt"
    expect_failure "--output_dir $WORK/only" "checkpoint-20 has no trainer_state.json" -- \
      "$RUN_QA" "${TRAIN[@]}" --output_dir "$WORK/only"
    unchanged "$WORK/before.txt" "$WORK/only" "a refused run"
    ;;
  corrupt-checkpoint)
    # A complete-looking checkpoint whose model, optimizer state or trainer state is cut short or overwritten:
    # resuming stops naming that file, and deletes nothing (not the checkpoint, not the others).
    reference
    for bad in model.safetensors optimizer.safetensors trainer_state.json; do
      for how in truncate garble; do
        out=$WORK/out-$bad-$how
        mkdir -p "$out"
        cp -a "$WORK/ref/checkpoint-10" "$WORK/ref/checkpoint-20" "$out/"
        file=$out/checkpoint-20/$bad
        if [ $how = truncate ]; then
          truncate -s $(($(stat -c %s "$file") / 2)) "$file"
        else
          # Over the start of the safetensors header / of the JSON text, where no field can survive it.
          printf 'garbage' | dd of="$file" bs=1 seek=$([ "${bad##*.}" = json ] && echo 0 || echo 8) conv=notrunc status=none
        fi
        snapshot "$out" > "$WORK/before.txt"
        # ... and points at the intact checkpoint beside it.
        expect_failure "$file" "the newest intact checkpoint is $out/checkpoint-10" -- \
          "$RUN_QA" "${TRAIN[@]}" --output_dir "$out"
        unchanged "$WORK/before.txt" "$out" "resuming from a corrupt $bad"
      done
    done
    ;;
  concurrent)
    # Two real runs on one output_dir: the second stops at once (exit 2) naming the directory while the first
    # trains, and the first ends exactly as a run alone does. The first is held stopped (SIGSTOP keeps its lock)
    # while the second runs, so the overlap does not depend on the machine's speed.
    reference
    "$RUN_QA" "${TRAIN[@]}" --output_dir "$WORK/out" > "$WORK/first.log" 2>&1 &
    first=$!
    FIRST=$first
    for _ in $(seq 600); do grep -q "Running training" "$WORK/first.log" && break; sleep 0.05; done
    grep -q "Running training" "$WORK/first.log" || fail "the first run did not start training: $(cat "$WORK/first.log")"
    kill -STOP "$first"
    started=$(date +%s%N)
    (cd "$WORK/cwd" && "$RUN_QA" "${TRAIN[@]}" --output_dir "$WORK/out") > "$WORK/second.log" 2>&1; rc=$?
    took=$((($(date +%s%N) - started) / 1000000))
    kill -CONT "$first"
    [ "$rc" -eq 2 ] || fail "the second run exited $rc, not 2: $(cat "$WORK/second.log")"
    grep -qF -- "--output_dir $WORK/out: another run is using this directory" "$WORK/second.log" ||
      fail "the second run did not name the directory: $(cat "$WORK/second.log")"
    grep -q "Running training" "$WORK/second.log" && fail "the second run started training"
    echo "  second run: exit 2 after ${took} ms"
    wait "$first" || { FIRST=; fail "the first run failed: $(tail -5 "$WORK/first.log")"; }
    FIRST=
    no_core
    same_file "$WORK/out/model.safetensors" "$WORK/ref/model.safetensors"
    for step in 10 20 30; do same_file "$WORK/out/checkpoint-$step/model.safetensors" "$WORK/ref/checkpoint-$step/model.safetensors"; done
    ;;
  *) fail "unknown case" ;;
esac
echo "ok ($CASE)"
