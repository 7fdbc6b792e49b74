#!/usr/bin/env bash
# Draws the benchmark figures: docs/images/<figure>.svg from benchmarks/results/<figure>.json, with gnuplot (Debian:
# gnuplot-nox) and Debian's python3 (benchmarks/plots/results.py turns the JSON into gnuplot data; one
# benchmarks/plots/<figure>.gp per figure). Measures nothing: benchmarks/plots/collect.sh writes the JSON.
#   scripts/plot_benchmarks.sh [results dir] [images dir]
# Same JSON and gnuplot version, same SVG bytes: tests/deploy/plots_test.sh redraws into a temporary folder and
# compares with docs/images.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
results=$(cd "${1:-$root/benchmarks/results}" && pwd)
images=${2:-$root/docs/images}
command -v gnuplot >/dev/null || {
  echo "plot_benchmarks.sh: gnuplot is missing (Debian: apt-get install gnuplot-nox)" >&2; exit 1; }
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
mkdir -p "$images"
images=$(cd "$images" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/plot_benchmarks.XXXXXX")
trap 'rm -rf "$work"' EXIT
export LC_ALL=C.UTF-8  # decimal points whatever the caller's locale; UTF-8 for gnuplot's encoding

"$PY" "$root/benchmarks/plots/results.py" dat "$results" "$work/data" > "$work/names"
cp "$root"/benchmarks/plots/*.gp "$work/"  # the figure scripts load common.gp from the working folder
cd "$work"
while read -r name; do
  # Relative data paths: nothing of this machine's folders can end up in the SVG.
  gnuplot -e "datadir = 'data'; outfile = 'out.svg'" "$name.gp"
  mv out.svg "$images/$name.svg"
  echo "$images/$name.svg"
done < names
# The scaling model's prediction: a table benchmarks/scaling_model.py writes as gnuplot data, not a JSON of results.
if [[ -f $results/scaling_table.dat ]]; then
  cp "$results/scaling_table.dat" data/
  gnuplot -e "datafile = 'data/scaling_table.dat'; outfile = 'out.svg'" scaling.gp
  mv out.svg "$images/scaling.svg"
  echo "$images/scaling.svg"
fi
