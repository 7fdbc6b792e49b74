#!/usr/bin/env bash
# The image's launcher (deploy/docker/launcher.sh) on recorded CPU flag lines: it runs the newest installed level
# the CPU supports, honours CPUTRAIN_ARCH_LEVEL and CPUTRAIN_MALLOC, and refuses what cannot work with exit 2 and
# a message naming the setting. The programs under libexec are stand-ins that print their level and LD_PRELOAD.
#   launcher_test.sh <source dir> <work dir>
set -euo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/prefix/bin" "$work/lib"
cp "$src/deploy/docker/launcher.sh" "$work/prefix/bin/run_qa"
for level in x86-64-v2 x86-64-v3 x86-64-v4 x86-64-v4-bf16; do
  mkdir -p "$work/prefix/libexec/cputrain/$level"
  printf '#!/bin/sh\necho "level=%s args=$* preload=${LD_PRELOAD:-none}"\n' "$level" \
    > "$work/prefix/libexec/cputrain/$level/run_qa"
  chmod +x "$work/prefix/libexec/cputrain/$level/run_qa"
done

v2="fpu sse sse2 ssse3 cx16 sse4_1 sse4_2 popcnt lahf_lm"
v3="$v2 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"
v4="$v3 avx512f avx512bw avx512cd avx512dq avx512vl"
cpu() { printf 'processor\t: 0\nflags\t\t: %s\n\nprocessor\t: 1\nflags\t\t: %s\n' "$1" "$1" > "$work/cpuinfo"; }
failures=0
expect() {  # <description> <expected regex> <command...>
  local what=$1 regex=$2
  shift 2
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  if [[ $out =~ $regex ]]; then echo "ok: $what"; else
    echo "FAILED: $what: expected /$regex/, got (exit $rc): $out"; failures=$((failures + 1)); fi
}
run() { env CPUTRAIN_CPUINFO="$work/cpuinfo" "$@" "$work/prefix/bin/run_qa" --do_train; }
system=(CPUTRAIN_MALLOC=system)

cpu "$v3";                         expect "Zen 3 (AVX2, FMA) runs x86-64-v3" "^level=x86-64-v3 args=--do_train preload=none$" run "${system[@]}"
cpu "$v4";                         expect "Skylake-SP (AVX-512) runs x86-64-v4" "^level=x86-64-v4 " run "${system[@]}"
cpu "$v4 avx512_bf16 avx512_vnni"; expect "Sapphire Rapids (AVX512-BF16) runs x86-64-v4-bf16" "^level=x86-64-v4-bf16 " run "${system[@]}"
cpu "$v3 avx512f";                 expect "a partial AVX-512 set stays on x86-64-v3" "^level=x86-64-v3 " run "${system[@]}"
cpu "$v2";                         expect "an SSE4.2-only CPU runs x86-64-v2" "^level=x86-64-v2 " run "${system[@]}"
cpu "fpu sse sse2";                expect "a CPU below every level is refused, exit 2" \
  "no build of run_qa for this CPU" run "${system[@]}"
cpu "$v4"
expect "CPUTRAIN_ARCH_LEVEL picks an older installed level" "^level=x86-64-v3 " run "${system[@]}" CPUTRAIN_ARCH_LEVEL=x86-64-v3
expect "CPUTRAIN_ARCH_LEVEL beyond the CPU is refused" "CPUTRAIN_ARCH_LEVEL=x86-64-v4-bf16: this CPU lacks its instructions" \
  run "${system[@]}" CPUTRAIN_ARCH_LEVEL=x86-64-v4-bf16
expect "CPUTRAIN_ARCH_LEVEL naming no build is refused" "CPUTRAIN_ARCH_LEVEL=znver9: no such build" \
  run "${system[@]}" CPUTRAIN_ARCH_LEVEL=znver9
expect "an unknown CPUTRAIN_MALLOC is refused" "CPUTRAIN_MALLOC=hoard: expected tcmalloc, jemalloc, tbbmalloc or system" \
  run CPUTRAIN_MALLOC=hoard
rm -r "$work/prefix/libexec/cputrain/x86-64-v4"
expect "a level not installed falls back to the next one the CPU supports" "^level=x86-64-v3 " run "${system[@]}"

# The default allocator is preloaded when installed, and a missing one is an error, not a silent fallback.
lib=/usr/lib/$(uname -m)-linux-gnu
for name in jemalloc:libjemalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4 tbbmalloc:libtbbmalloc_proxy.so.2; do
  if [[ -e $lib/${name#*:} ]]; then
    expect "CPUTRAIN_MALLOC=${name%%:*} preloads ${name#*:}" "preload=$lib/${name#*:}$" run CPUTRAIN_MALLOC="${name%%:*}"
  else
    expect "CPUTRAIN_MALLOC=${name%%:*} without ${name#*:} is refused" "${name#*:} is not installed" run CPUTRAIN_MALLOC="${name%%:*}"
  fi
done
if [[ -e $lib/libtcmalloc_minimal.so.4 ]]; then
  expect "tcmalloc is the default, and a preload already set is kept after it" \
    "preload=$lib/libtcmalloc_minimal.so.4:/opt/other.so$" run LD_PRELOAD=/opt/other.so
fi

# Exit status 2 on every refusal.
rc=0; CPUTRAIN_CPUINFO=$work/cpuinfo CPUTRAIN_MALLOC=hoard "$work/prefix/bin/run_qa" 2>/dev/null || rc=$?
[[ $rc -eq 2 ]] && echo "ok: refusals exit 2" || { echo "FAILED: a refusal exited $rc, not 2"; failures=$((failures + 1)); }
[[ $failures -eq 0 ]] || { echo "$failures launcher check(s) failed"; exit 1; }
