#!/usr/bin/env bash
# The compile time of each layer's umbrella header alone (docs/build.md, "What a header costs"): one translation
# unit that includes only that header, compiled to an object as the Release build compiles the project's code
# (-O3 -march=native), best of N runs, wall seconds. Run it on a quiet machine; compare two trees side by side:
#   scripts/header_compile_times.sh [--runs N] [--compiler g++] [--include DIR]...
# Without --include it times this checkout's include/.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
cxx=g++
includes=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --compiler) cxx=$2; shift 2 ;;
    --include) includes+=("$2"); shift 2 ;;
    *) echo "usage: $0 [--runs N] [--compiler CXX] [--include DIR]..." >&2; exit 2 ;;
  esac
done
[[ ${#includes[@]} -eq 0 ]] && includes=("$PWD/include")

mpi_flags=$(pkg-config --cflags ompi-cxx 2>/dev/null || pkg-config --cflags ompi 2>/dev/null || true)
common=(-std=c++20 -O3 -DNDEBUG -march=native -DEIGEN_DONT_PARALLELIZE -DCPUTRAIN_HAVE_ONEDNN=1
        -DCPUTRAIN_HAVE_HWLOC=1 -isystem /usr/include/eigen3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

headers=(core machine policy kernels optim nn io text data distributed train mpi cli cputrain)
printf '| header |'; for dir in "${includes[@]}"; do printf ' %s |' "$dir"; done; printf '\n'
printf '|---|'; for _ in "${includes[@]}"; do printf -- '---|'; done; printf '\n'
for h in "${headers[@]}"; do
  printf '| `<cputrain/%s.hpp>` |' "$h"
  for dir in "${includes[@]}"; do
    echo "#include <cputrain/$h.hpp>" >"$work/tu.cpp"
    best=
    for ((r = 0; r < runs; ++r)); do
      TIMEFORMAT=%R
      # shellcheck disable=SC2086  # mpi_flags is a list of flags
      t=$({ time "$cxx" "${common[@]}" -I"$dir" $mpi_flags -c "$work/tu.cpp" -o "$work/tu.o"; } 2>&1)
      best=$(awk -v t="$t" -v b="$best" 'BEGIN { print (b == "" || t < b) ? t : b }')
    done
    printf ' %.2f |' "$best"
  done
  printf '\n'
done
