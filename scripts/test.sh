#!/usr/bin/env bash
# The README's second command: installs what is missing, then builds and runs the whole test suite with GCC
# (warnings are errors) and with Clang under AddressSanitizer + UBSan (warnings are errors; its threading tests
# once more under ThreadSanitizer, and the fuzz targets).
#   scripts/test.sh                 both
#   scripts/test.sh ci-gcc ...      only the named presets (ci-gcc, ci-clang)
set -euo pipefail
cd "$(dirname "$0")/.."

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

scripts/install-deps.sh --test

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
  cmake --build --preset "$preset" -j "$jobs"
  built=$SECONDS
  ctest --preset "$preset" -j "$jobs"
  echo "=== ${preset}: passed in $((SECONDS - start)) s (configure and build $((built - start)) s," \
       "tests $((SECONDS - built)) s)"
done
