#!/usr/bin/env bash
# How long the user guide's example (examples/guide) takes to compile against the installed package, header-only
# (GUIDE_PREBUILT=OFF) and over the compiled component cputrain::instances (ON, the default), side by side
# (docs/build.md, "The compiled component"): train_qa.cpp's object on a cold build with one job (ninja's log), the
# whole cold build (configured, then built with one job: compile and link), and the rebuild after an edit of
# train_qa.cpp (best of N). Needs the `user` preset's dependencies and Ninja. Run it on a quiet machine:
#   scripts/guide_compile_times.sh [--runs N] [--prefix INSTALLED_PREFIX]
# Without --prefix it builds this checkout with the `user` preset and installs it into a scratch prefix first (the
# component is built there: minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
prefix=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--prefix INSTALLED_PREFIX]" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z $prefix ]]; then
  cmake --preset user -B "$work/user" >/dev/null
  cmake --build "$work/user" --target cputrain_instances >/dev/null
  cmake --install "$work/user" --prefix "$work/prefix" >/dev/null
  prefix=$work/prefix
fi

# Seconds ninja's log gives the last build of the object whose path ends in $2.
object_seconds() {
  awk -v obj="$2" '!/^#/ && index($4, obj) == length($4) - length(obj) + 1 { t = ($2 - $1) / 1000 } END { printf "%.1f", t }' \
    "$1/.ninja_log"
}

printf '| guide example | train_qa.cpp | cold build, 1 job | edit train_qa.cpp, rebuild |\n'
printf '|---|---|---|---|\n'
for mode in OFF ON; do
  dir=$work/guide-$mode
  cmake -S examples/guide -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DGUIDE_PREBUILT=$mode >/dev/null
  TIMEFORMAT=%R
  cold=$({ time cmake --build "$dir" -j 1 >/dev/null; } 2>&1)
  main=$(object_seconds "$dir" train_qa.cpp.o)
  best=
  for ((r = 0; r < runs; ++r)); do
    touch examples/guide/train_qa.cpp
    t=$({ time cmake --build "$dir" -j 1 >/dev/null; } 2>&1)
    if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  label=header-only
  [[ $mode == ON ]] && label='cputrain::instances'
  printf '| %s | %s s | %s s | %s s |\n' "$label" "$main" "$cold" "$best"
done
