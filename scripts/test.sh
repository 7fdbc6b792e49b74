#!/usr/bin/env bash
# The README's second command: installs what is missing, then builds and runs the whole test suite with GCC
# (warnings are errors) and with Clang under AddressSanitizer + UBSan (warnings are errors; its threading tests
# once more under ThreadSanitizer, and the fuzz targets).
#   scripts/test.sh                 both
#   scripts/test.sh ci-gcc ...      only the named presets (ci-gcc, ci-clang)
#   scripts/test.sh --quick         the editing loop: the `quick` preset (test programs only, the `unit` tests),
#                                   incremental (ccache when installed), no dependency installation
# Each preset's tests run while the next preset builds at nice 19 (below). At the end it prints how long each phase
# (install, each preset's configure, build and tests, what was built alongside the tests) took.
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
build_pid=""
on_exit() {
  # A build still running in the background (the tests before it failed) stops with the script.
  if [[ -n $build_pid ]] && kill -0 "$build_pid" 2>/dev/null; then
    kill -TERM -- "-$build_pid" 2>/dev/null || true
    wait "$build_pid" 2>/dev/null || true
  fi
  report_phases
}
trap on_exit EXIT

phase_start=$SECONDS
scripts/install-deps.sh --test
phases+=("install-deps: $((SECONDS - phase_start)) s")

presets=("$@")
[[ ${#presets[@]} -eq 0 ]] && presets=(ci-gcc ci-clang)
jobs=$(nproc)
# CI's figures are for a cold build: no compiler cache there, even where ccache is installed.
configure_flags=()
[[ ${CI:-} == true ]] && configure_flags+=(-DCPUTRAIN_CCACHE=OFF)

configure() {  # configure <preset>
  local start=$SECONDS
  cmake --preset "$1" -DCPUTRAIN_TEST_DATA_DIR="${CPUTRAIN_TEST_DATA_DIR:-}" "${configure_flags[@]}" >/dev/null
  phases+=("$1 configure: $((SECONDS - start)) s")
}

run_tests() {  # run_tests <preset>: exits with the tests' status after recording the phase
  local start=$SECONDS rc=0 verdict=""
  ctest --preset "$1" -j "$jobs" || rc=$?
  [[ $rc -eq 0 ]] || verdict=" (FAILED)"
  phases+=("$1 tests: $((SECONDS - start)) s${verdict}")
  [[ $rc -eq 0 ]] || exit "$rc"
}

# The presets in turn, except that what no running test needs is built at the lowest CPU priority (nice 19) while
# a preset's tests run: the next preset, and the benchmarks (target cputrain_benchmarks) of the preset before,
# whose tests are done (some tests build targets in their own build tree, and two builds must not share one). The
# tests leave CPU time idle (the examples wait on one another for the cores, processes start and stop, files are
# written); the build takes only that, so the tests run about as fast as alone. Its output goes to
# build/<preset>/background-build.log, printed if it fails. The last preset's benchmarks are built at the end.
background_build() {  # background_build <preset whose benchmarks to build, or ""> <preset to build, or "">
  set -e
  # setsid put this job in a session of its own, and where the kernel groups each session's processes for the
  # scheduler (autogroup, on by default) nice 19 only ranks them within that group: the group as a whole still got
  # an equal share with the tests (two CPU-bound test processes ran 1.8x slower beside a nice 19 build, 1.1x once
  # the group itself is at nice 19). So the group is set to nice 19 too.
  [[ ! -w /proc/self/autogroup ]] || echo 19 > /proc/self/autogroup || true
  local start
  if [[ -n $2 ]]; then
    start=$SECONDS
    cmake --build --preset "$2" -j "$jobs"
    echo "=== $2 build: $((SECONDS - start)) s"
  fi
  if [[ -n $1 ]]; then
    start=$SECONDS
    cmake --build --preset "$1" -j "$jobs" --target cputrain_benchmarks
    echo "=== $1 benchmarks: $((SECONDS - start)) s"
  fi
}
export -f background_build

for i in "${!presets[@]}"; do
  preset=${presets[$i]}
  next=${presets[$((i + 1))]:-}
  before=""
  [[ $i -eq 0 ]] || before=${presets[$((i - 1))]}
  if [[ $i -eq 0 ]]; then
    echo "=== ${preset}: configure, build"
    configure "$preset"
    start=$SECONDS
    cmake --build --preset "$preset" -j "$jobs"
    phases+=("${preset} build: $((SECONDS - start)) s")
  fi
  [[ -z $next ]] || configure "$next"
  if [[ -n $next$before ]]; then
    log="build/${preset}/background-build.log"
    echo "=== ${preset}: tests; meanwhile at nice 19 (${log}):${next:+ the ${next} build}${before:+ the benchmarks of ${before}}"
    background_start=$SECONDS
    # Its own process group (setsid), so that on_exit can stop all of it.
    jobs=$jobs setsid nice -n 19 bash -c 'background_build "$@"' background_build "$before" "$next" >"$log" 2>&1 &
    build_pid=$!
  fi
  run_tests "$preset"
  if [[ -n $next$before ]]; then
    tests_done=$SECONDS
    build_rc=0
    wait "$build_pid" || build_rc=$?
    build_pid=""
    verdict=""
    [[ $build_rc -eq 0 ]] || verdict=" (FAILED)"
    phases+=("built alongside ${preset}'s tests: $((SECONDS - background_start)) s, of which $((SECONDS - tests_done)) s after them${verdict}")
    while IFS= read -r line; do phases+=("  ${line#=== }"); done < <(grep '^=== ' "$log" || true)
    if [[ $build_rc -ne 0 ]]; then
      tail -n 200 "$log"
      echo "error: the build alongside ${preset}'s tests failed (all of its output: ${log})" >&2
      exit "$build_rc"
    fi
  fi
done
last=${presets[-1]}
start=$SECONDS
cmake --build --preset "$last" -j "$jobs" --target cputrain_benchmarks
phases+=("${last} benchmarks: $((SECONDS - start)) s")
