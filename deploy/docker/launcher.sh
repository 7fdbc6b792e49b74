#!/bin/sh
# bin/run_qa and bin/cputrain-machine in the container image: runs the build of the program for the newest
# instruction-set level this CPU supports (deploy/docker/build.sh installs one per level under libexec/cputrain/),
# with the image's memory allocator preloaded.
#   CPUTRAIN_ARCH_LEVEL=x86-64-v3   use that level's build (it must be installed and the CPU must support it)
#   CPUTRAIN_MALLOC=tcmalloc|jemalloc|tbbmalloc|system   the allocator (default tcmalloc: measured in docs/container.md)
# POSIX sh, no bash: the launcher runs once per MPI rank, before anything else.
set -eu
program=$(basename "$0")
prefix=$(cd "$(dirname "$0")/.." && pwd)
libexec=$prefix/libexec/cputrain
cpuinfo=${CPUTRAIN_CPUINFO:-/proc/cpuinfo}  # tests point this at a recorded file

die() { echo "$program (launcher): $*" >&2; exit 2; }

# The first "flags" line (x86) of /proc/cpuinfo, padded with spaces so that " avx2 " matches whole words.
flags=" $(sed -n 's/^flags[[:space:]]*:[[:space:]]*//p' "$cpuinfo" 2>/dev/null | head -n 1) "
has_all() {
  for flag in "$@"; do
    case "$flags" in *" $flag "*) ;; *) return 1 ;; esac
  done
}
supported() {  # <level>: can this CPU run that level's build?
  case "$1" in
    native) return 0 ;;  # an image built for the machine it runs on
    x86-64-v2) has_all cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 ;;
    x86-64-v3) supported x86-64-v2 && has_all avx avx2 bmi1 bmi2 f16c fma abm movbe xsave ;;
    x86-64-v4) supported x86-64-v3 && has_all avx512f avx512bw avx512cd avx512dq avx512vl ;;
    x86-64-v4-bf16) supported x86-64-v4 && has_all avx512_bf16 ;;
    *) return 1 ;;
  esac
}

if [ -n "${CPUTRAIN_ARCH_LEVEL:-}" ]; then
  level=$CPUTRAIN_ARCH_LEVEL
  [ -x "$libexec/$level/$program" ] || die "CPUTRAIN_ARCH_LEVEL=$level: no such build (installed: $(ls "$libexec" | paste -sd ' ' -))"
  supported "$level" || die "CPUTRAIN_ARCH_LEVEL=$level: this CPU lacks its instructions (flags in $cpuinfo)"
else
  level=
  for candidate in native x86-64-v4-bf16 x86-64-v4 x86-64-v3 x86-64-v2; do
    if [ -x "$libexec/$candidate/$program" ] && supported "$candidate"; then
      level=$candidate
      break
    fi
  done
  [ -n "$level" ] || die "no build of $program for this CPU (installed: $(ls "$libexec" | paste -sd ' ' -); flags in $cpuinfo)"
fi

lib=/usr/lib/$(uname -m)-linux-gnu
case "${CPUTRAIN_MALLOC:-tcmalloc}" in
  jemalloc) malloc=$lib/libjemalloc.so.2 ;;
  tcmalloc) malloc=$lib/libtcmalloc_minimal.so.4 ;;
  tbbmalloc) malloc=$lib/libtbbmalloc_proxy.so.2 ;;
  system) malloc= ;;
  *) die "CPUTRAIN_MALLOC=${CPUTRAIN_MALLOC}: expected tcmalloc, jemalloc, tbbmalloc or system" ;;
esac
if [ -n "$malloc" ]; then
  [ -e "$malloc" ] || die "CPUTRAIN_MALLOC=${CPUTRAIN_MALLOC:-tcmalloc}: $malloc is not installed"
  LD_PRELOAD=$malloc${LD_PRELOAD:+:$LD_PRELOAD}
  export LD_PRELOAD
fi
exec "$libexec/$level/$program" "$@"
