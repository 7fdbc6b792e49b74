#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the demo in Release and runs it.
# Arguments are passed to the demo (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release -DCPUTRAIN_BUILD_TESTS=OFF -DCPUTRAIN_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build --preset release --target cputrain-demo
exec build/release/examples/cputrain-demo "$@"
