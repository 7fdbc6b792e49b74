#!/usr/bin/env bash
# Re-captures the demo output shown in docs/user-guide.md ("The demo"): runs scripts/demo.sh (extra arguments go to
# it) without the progress bar and prints the machine line, the date, the wall time, then the run's output as the
# guide shows it: the first two and the last log entries, the memory line cut after its first terms, and the eval
# metrics without the per-kind and best-threshold lines. About 5 minutes on 2 cores after the build.
#
#   scripts/capture_demo_output.sh [demo.sh arguments...]
#   scripts/capture_demo_output.sh --trim < LOG     only the trimming, of a log written by demo.sh's run_qa
set -euo pipefail
cd "$(dirname "$0")/.."

trim() {
  awk '
    /^\{"loss"/ { n++; if (n <= 2) print; else { if (n == 3) print "..."; last = $0 } next }
    last != "" && !/^\{"loss"/ { print last; last = "" }
    /^memory: / { sub(/ \+ .*/, " + ..."); print; next }
    /eval_(HasAns_total|NoAns_exact|NoAns_total|best_|runtime|samples_per_second|steps_per_second)/ {
      if (!skipped) print "  ..."; skipped = 1; next }
    { print }
  '
}

if [[ ${1:-} == --trim ]]; then
  trim
  exit 0
fi
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
scripts/demo.sh --disable_tqdm "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }
echo "wall time of the run (build included): $((SECONDS - start)) s"
# The build's lines come before the demo data's.
sed -n '/^cputrain-make-demo-data: /,$p' "$log" | trim
