#!/usr/bin/env bash
# The README's second command: installs what is missing, then builds and runs the whole test suite with GCC
# (warnings are errors) and with Clang under AddressSanitizer + UBSan (warnings are errors; its threading tests
# once more under ThreadSanitizer, and the fuzz targets).
#   scripts/test.sh                 both
#   scripts/test.sh ci-gcc ...      only the named presets (ci-gcc, ci-clang)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test

# The conformance data (the project's shared folder beside the checkout), when it is there.
if [[ -z "${CPUTRAIN_TEST_DATA_DIR:-}" && -d ../shared/data ]]; then
  export CPUTRAIN_TEST_DATA_DIR="$(cd ../shared/data && pwd)"
fi
echo "test data: ${CPUTRAIN_TEST_DATA_DIR:-none (tests that need it will say they skipped)}"

presets=("$@")
[[ ${#presets[@]} -eq 0 ]] && presets=(ci-gcc ci-clang)
jobs=$(nproc)
for preset in "${presets[@]}"; do
  echo "=== ${preset}: configure, build, test"
  start=$SECONDS
  cmake --preset "$preset" -DCPUTRAIN_TEST_DATA_DIR="${CPUTRAIN_TEST_DATA_DIR:-}" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
  echo "=== ${preset}: passed in $((SECONDS - start)) s"
done
