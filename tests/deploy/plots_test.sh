#!/usr/bin/env bash
# The committed benchmark figures are up to date: scripts/plot_benchmarks.sh redraws docs/images/*.svg from
# benchmarks/results/*.json into a temporary folder, and every figure must equal the committed one byte for byte
# (and every gnuplot figure committed must still have its JSON).
#   tests/deploy/plots_test.sh [source dir]
# Exits 77 (skipped, saying why) without gnuplot, or with a gnuplot other than the one that drew the committed
# figures (each SVG names it; other versions write other bytes).
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
images=$src/docs/images
skip() { echo "skipped: $*"; exit 77; }
command -v gnuplot >/dev/null || skip "gnuplot is not installed (Debian: gnuplot-nox)"
have=$(gnuplot --version | sed -n 's/^gnuplot \([0-9.]* patchlevel [0-9]*\).*/\1/p')
drawn=$(sed -n 's/.*<desc>Produced by GNUPLOT \([0-9.]* patchlevel [0-9]*\).*/\1/p' "$images"/*.svg 2>/dev/null |
        sort -u)
[[ -n $drawn ]] || { echo "FAIL: no gnuplot figure in $images"; exit 1; }
[[ $drawn == "$have" ]] || skip "the figures were drawn by gnuplot $drawn, this is gnuplot $have"

work=$(mktemp -d "${TMPDIR:-/tmp}/plots_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$src/scripts/plot_benchmarks.sh" "$src/benchmarks/results" "$work" > "$work.names" 2> "$work.err" || {
  cat "$work.err"; echo "FAIL: scripts/plot_benchmarks.sh failed"; rm -f "$work.names" "$work.err"; exit 1; }
rm -f "$work.names" "$work.err"

failed=0
checked=0
for new in "$work"/*.svg; do
  name=$(basename "$new")
  checked=$((checked + 1))
  if [[ ! -f $images/$name ]]; then
    echo "FAIL: docs/images/$name is missing: run scripts/plot_benchmarks.sh and commit it"; failed=1
  elif ! cmp -s "$new" "$images/$name"; then
    echo "FAIL: docs/images/$name is stale (benchmarks/results/${name%.svg}.json or benchmarks/plots/ changed):" \
         "run scripts/plot_benchmarks.sh and commit it"; failed=1
  else
    echo "ok: docs/images/$name"
  fi
done
for old in "$images"/*.svg; do
  name=$(basename "$old")
  if grep -q '<desc>Produced by GNUPLOT' "$old" && [[ ! -f $work/$name ]]; then
    echo "FAIL: docs/images/$name has no benchmarks/results/${name%.svg}.json to be drawn from any more"; failed=1
  fi
done
((checked > 0)) || { echo "FAIL: scripts/plot_benchmarks.sh drew nothing from benchmarks/results"; exit 1; }
((failed == 0)) && echo "all $checked figures up to date"
exit $failed
