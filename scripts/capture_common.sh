# Sourced by scripts/capture_{glue,ner,mlm}_output.sh, which re-capture the runs docs/user-guide.md shows.
#   capture_start PROGRAM DEFAULT_WORK [BUILD_DIR] [WORK_DIR]
#     sets build (BUILD_DIR, else build/user where it holds examples/PROGRAM, else build/release), work (WORK_DIR,
#     else DEFAULT_WORK; emptied) and threads (THREADS in the environment, default 2); prints the machine and date.
#   capture_run COMMAND...   prints the command as the guide shows it, then runs it, its errors on stdout.
#   capture_best             prints the checkpoints left in $work/out and trainer_state.json's best.
capture_start() {
  local program=$1 default_work=$2
  build=${3:-}
  if [[ -z $build ]]; then
    build=build/user
    [[ -x $build/examples/$program ]] || build=build/release
  fi
  work=${4:-$default_work}
  threads=${THREADS:-2}
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  rm -rf "$work"
}

capture_run() {
  echo "\$ $*"
  "$@" 2>&1
}

capture_best() {
  echo
  echo "checkpoints left: $(cd "$work/out" && ls -d checkpoint-* | tr '\n' ' ')"
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print("best_metric:", s["best_metric"], " best_global_step:", s["best_global_step"],
      " best_model_checkpoint:", s["best_model_checkpoint"])' "$work/out/trainer_state.json"
}
