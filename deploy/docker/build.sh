#!/usr/bin/env bash
# The container image's build stage, also run by CI on a Debian 12 host (tests/deploy/docker): builds run_qa and
# cputrain-machine once per instruction-set level and installs them, with the library's headers and CMake package,
# under one prefix.
#   deploy/docker/build.sh <prefix> [level...]
# Levels (default: all four): x86-64-v2 (SSE4.2), x86-64-v3 (AVX2+FMA: Haswell, Zen 1-3), x86-64-v4 (AVX-512:
# Skylake-SP, Ice Lake), x86-64-v4-bf16 (AVX-512 with AVX512-BF16: Cooper Lake, Sapphire Rapids, Zen 4 and 5), and
# `native` (this build machine's -march=native; for images built where they run, e.g. on arm64).
#
# Why several builds: the kernels choose their instruction set at compile time, so one -march=native binary dies
# of SIGILL on an older CPU of the fleet, and a baseline binary leaves AVX2/AVX-512 unused. bin/run_qa is a small
# launcher (deploy/docker/launcher.sh) that runs the newest level the CPU supports.
#
# Needs what scripts/install-deps.sh installs. Uses $CPUTRAIN_BUILD_DIR (default /tmp/cputrain-image-build) for the
# build trees and $CPUTRAIN_BUILD_JOBS (default: nproc) parallel jobs. With $CPUTRAIN_PREBUILT_DIR, a configured
# build tree whose four programs are already built (the test suite's own, tests/deploy/docker), it compiles
# nothing: the programs of that tree are installed as the one level given, which must be `native`.
set -euo pipefail
usage() { echo "usage: $0 <prefix> [x86-64-v2|x86-64-v3|x86-64-v4|x86-64-v4-bf16|native ...]" >&2; exit 2; }
[[ $# -ge 1 && $1 != -* ]] || usage
prefix=$1
shift
levels=("$@")
[[ ${#levels[@]} -gt 0 ]] || levels=(x86-64-v2 x86-64-v3 x86-64-v4 x86-64-v4-bf16)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=${CPUTRAIN_BUILD_DIR:-/tmp/cputrain-image-build}
jobs=${CPUTRAIN_BUILD_JOBS:-$(nproc)}

arch_flags() {
  case "$1" in
    x86-64-v2|x86-64-v3|x86-64-v4) echo "-march=$1 -mtune=generic" ;;
    x86-64-v4-bf16) echo "-march=x86-64-v4 -mavx512bf16 -mtune=generic" ;;
    native) echo "-march=native" ;;
    *) echo "build.sh: unknown level '$1'" >&2; usage ;;
  esac
}
for level in "${levels[@]}"; do arch_flags "$level" >/dev/null; done

configure() {  # <build dir> <arch flags>
  cmake -S "$source_dir" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCPUTRAIN_BUILD_TESTS=OFF \
    -DCPUTRAIN_BUILD_BENCHMARKS=OFF -DCPUTRAIN_BUILD_EXAMPLES=ON "-DCPUTRAIN_ARCH_FLAGS=$2" >/dev/null
}

# The library (headers, CMake package) and the programs whose speed does not matter, built once for the first level.
first="$work/${levels[0]}"
if [[ -n ${CPUTRAIN_PREBUILT_DIR:-} ]]; then
  [[ ${levels[*]} == native ]] || { echo "build.sh: CPUTRAIN_PREBUILT_DIR needs the one level native" >&2; exit 2; }
  first=$CPUTRAIN_PREBUILT_DIR
  for program in run_qa cputrain-machine cputrain-make-demo-data cputrain-tokenize; do
    [[ -x $first/examples/$program ]] || { echo "build.sh: $first/examples/$program is not built" >&2; exit 1; }
  done
else
  configure "$first" "$(arch_flags "${levels[0]}")"
  cmake --build "$first" -j "$jobs" --target cputrain-make-demo-data cputrain-tokenize
fi
cmake --install "$first" --prefix "$prefix" >/dev/null
install -D -m 755 "$first/examples/cputrain-make-demo-data" "$prefix/bin/cputrain-make-demo-data"
install -D -m 755 "$first/examples/cputrain-tokenize" "$prefix/bin/cputrain-tokenize"

# The programs that train and measure, once per level; bin/ gets the launcher under their names.
for level in "${levels[@]}"; do
  dir="$work/$level"
  [[ -n ${CPUTRAIN_PREBUILT_DIR:-} ]] && dir=$first
  [[ $dir == "$first" ]] || configure "$dir" "$(arch_flags "$level")"
  [[ -n ${CPUTRAIN_PREBUILT_DIR:-} ]] || cmake --build "$dir" -j "$jobs" --target run_qa cputrain-machine
  for program in run_qa cputrain-machine; do
    install -D -m 755 "$dir/examples/$program" "$prefix/libexec/cputrain/$level/$program"
  done
done
for program in run_qa cputrain-machine; do
  install -D -m 755 "$source_dir/deploy/docker/launcher.sh" "$prefix/bin/$program"
done
echo "build.sh: installed into $prefix (levels: ${levels[*]})"
