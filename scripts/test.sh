#!/usr/bin/env bash
# The README's second command: installs what is missing, then builds and runs the whole test suite with GCC
# (warnings are errors) and with Clang under AddressSanitizer + UBSan (warnings are errors; its threading tests
# once more under ThreadSanitizer, and the fuzz targets).
#   scripts/test.sh                 both
#   scripts/test.sh ci-gcc ...      only the named presets (ci-gcc, ci-clang)
#   scripts/test.sh --quick         the editing loop: the `quick` preset (test programs only, the `unit` tests),
#                                   incremental (ccache when installed), no dependency installation
# At the end it prints how long each phase (install, each preset's configure, build and tests) took.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --quick ]]; then
  shift
  start=$SECONDS
  cmake --preset quick >/dev/null
  configured=$SECONDS
  cmake --build --preset quick
  built=$SECONDS
  ctest --preset quick -j "$(nproc)" "$@"
  echo "=== quick: configure $((configured - start)) s, build $((built - configured)) s, tests $((SECONDS - built)) s"
  exit 0
fi

# The conformance data: CPUTRAIN_TEST_DATA_DIR when it names a folder, else the project's shared folder beside the
# checkout (../shared/data) when it is there. Without it the tests that need it are reported skipped, saying what
# is missing. CI (CI=true, or CPUTRAIN_TEST_DATA_REQUIRED=1 as .ci/run sets) must test against it: there a missing
# folder or file stops here, before the build, and CPUTRAIN_TEST_DATA_REQUIRED=1 reaches the tests, which then fail
# instead of reporting themselves skipped.
if [[ ${CI:-} == true ]]; then
  export CPUTRAIN_TEST_DATA_REQUIRED=1
fi
if [[ -n "${CPUTRAIN_TEST_DATA_DIR:-}" && ! -d "$CPUTRAIN_TEST_DATA_DIR" ]]; then
  echo "test data: CPUTRAIN_TEST_DATA_DIR=$CPUTRAIN_TEST_DATA_DIR is not a directory; looking for ../shared/data" >&2
  unset CPUTRAIN_TEST_DATA_DIR
fi
if [[ -z "${CPUTRAIN_TEST_DATA_DIR:-}" && -d ../shared/data ]]; then
  export CPUTRAIN_TEST_DATA_DIR="$(cd ../shared/data && pwd)"
fi
if [[ ${CPUTRAIN_TEST_DATA_REQUIRED:-} == 1 ]]; then
  data_files=(bert-base-uncased/vocab.txt squad/sample.json squad/dev-v2.0.json)
  if [[ -z "${CPUTRAIN_TEST_DATA_DIR:-}" ]]; then
    echo "error: CI needs the conformance data (${data_files[*]}): neither does CPUTRAIN_TEST_DATA_DIR name a" \
         "directory nor does $(cd .. && pwd)/shared/data exist" >&2
    exit 1
  fi
  for f in "${data_files[@]}"; do
    [[ -f "$CPUTRAIN_TEST_DATA_DIR/$f" ]] || { echo "error: CI needs $CPUTRAIN_TEST_DATA_DIR/$f (conformance data)" >&2; exit 1; }
  done
fi
echo "test data: ${CPUTRAIN_TEST_DATA_DIR:-none (tests that need it will be reported skipped)}"

phases=()
report_phases() {
  echo "=== time per phase"
  for phase in "${phases[@]}"; do echo "  $phase"; done
  echo "  total: ${SECONDS} s"
}
trap report_phases EXIT

phase_start=$SECONDS
scripts/install-deps.sh --test
phases+=("install-deps: $((SECONDS - phase_start)) s")

presets=("$@")
[[ ${#presets[@]} -eq 0 ]] && presets=(ci-gcc ci-clang)
jobs=$(nproc)
# CI's figures are for a cold build: no compiler cache there, even where ccache is installed.
configure_flags=()
[[ ${CI:-} == true ]] && configure_flags+=(-DCPUTRAIN_CCACHE=OFF)
for preset in "${presets[@]}"; do
  echo "=== ${preset}: configure, build, test"
  start=$SECONDS
  cmake --preset "$preset" -DCPUTRAIN_TEST_DATA_DIR="${CPUTRAIN_TEST_DATA_DIR:-}" "${configure_flags[@]}" >/dev/null
  configured=$SECONDS
  phases+=("${preset} configure: $((configured - start)) s")
  cmake --build --preset "$preset" -j "$jobs"
  built=$SECONDS
  phases+=("${preset} build: $((built - configured)) s")
  test_rc=0
  ctest --preset "$preset" -j "$jobs" || test_rc=$?
  verdict=""
  [[ $test_rc -eq 0 ]] || verdict=" (FAILED)"
  phases+=("${preset} tests: $((SECONDS - built)) s${verdict}")
  [[ $test_rc -eq 0 ]] || exit "$test_rc"
  echo "=== ${preset}: passed in $((SECONDS - start)) s"
done
