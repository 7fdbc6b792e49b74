#!/usr/bin/env bash
# Where one training step's time goes, per kernel: samples the step benchmark with `perf record` (a software
# clock, so it works where hardware counters are not exposed, e.g. under KVM) after its set-up, and sorts the
# samples into kernels by symbol (benchmarks/support/profile_categories.py). oneDNN's kernels are generated at
# run time and have no symbols: their samples are counted as "GEMM (oneDNN JIT)".
#   benchmarks/profile_step.sh BENCH_BINARY [step bench flags...]
# e.g. benchmarks/profile_step.sh build/release/benchmarks/cputrain-bench-step --precision bf16 --threads 2
# Needs perf (Debian: linux-perf). Prints a table of kernels with their share of the sampled time.
set -euo pipefail
bench=${1:?usage: $0 BENCH_BINARY [step bench flags...]}
shift
command -v perf >/dev/null || { echo "profile_step: needs perf (apt-get install linux-perf)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Time the set-up (model initialisation and the warm-up step) once, then start sampling after it.
start=$(date +%s%N)
"$bench" "$@" --steps 1 --warmup 0 > "$work/probe.log"
setup_ms=$(( ($(date +%s%N) - start) / 1000000 ))
perf record -q -e cpu-clock -F 4000 -D "$setup_ms" -o "$work/perf.data" -- "$bench" "$@" --steps 8 --warmup 1 \
  > "$work/run.log" 2>&1
perf report -i "$work/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
  python3 "$here/support/profile_categories.py"
