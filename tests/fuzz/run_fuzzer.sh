#!/usr/bin/env bash
# The fuzz/<name> CTest test: fuzzes for a fixed time with libFuzzer (tests/fuzz/CMakeLists.txt).
#   run_fuzzer.sh <fuzzer> <work dir> <seconds> <replay binary> -- [libFuzzer flags...] <seed dirs...>
# The working corpus (<work dir>/corpus, kept between runs, so each run starts where the last one stopped) comes
# first, so new inputs go there; the seed directories are read only. Crashes, leaks, timeouts and out-of-memory
# inputs are written to <work dir>/artifacts/, and this script names them at the end.
set -uo pipefail
fuzzer=$1 work=$2 seconds=$3 replay=$4
shift 4
[[ ${1:-} == -- ]] && shift
flags=() seeds=()
for arg in "$@"; do
  if [[ $arg == -* ]]; then flags+=("$arg"); elif [[ -d $arg ]]; then seeds+=("$arg"); fi
done
mkdir -p "$work/corpus" "$work/artifacts"
# -timeout: one input running longer is a hang; -rss_limit_mb / -malloc_limit_mb: a size read from the file
# that allocates without bound is a finding, not an out-of-memory of the CI machine.
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -artifact_prefix="$work/artifacts/" "${flags[@]}" "$work/corpus" "${seeds[@]}"
status=$?
if [[ $status -ne 0 ]]; then
  echo "FUZZ FINDING ($(basename "$fuzzer"), exit $status). The input that triggered it:"
  ls -t "$work/artifacts" | head -5 | sed "s|^|  $work/artifacts/|"
  echo "Reproduce: $replay <that file>   (or $fuzzer <that file>); once fixed, commit it (small) under"
  echo "tests/fuzz/regressions/$(basename "$fuzzer" _fuzz)/ with a unit test in the parser's test file."
fi
exit $status
