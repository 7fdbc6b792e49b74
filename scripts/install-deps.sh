#!/usr/bin/env bash
# Installs the Debian 12 packages cputrain needs, only those missing (idempotent), as root or through sudo.
#   scripts/install-deps.sh            what building and running the library and its programs needs (the
#                                      `user` preset: cmake --preset user, docs/build.md)
#   scripts/install-deps.sh --test     plus what the test suite and benchmarks need (the other presets: Catch2,
#                                      Clang with its libFuzzer and sanitizer runtimes, Google Benchmark, ip and
#                                      pgrep for the multi-node and fault tests, the allocators the image
#                                      preloads, and the deployment checks' linters: yamllint, jsonschema, npm for
#                                      the Dockerfile linter, gnuplot for the plots), MPICH for the tests under
#                                      its launcher, and a deb-src entry for the suite, from which the build
#                                      takes Boost.MPI's sources to compile it for MPICH (Debian's is built for
#                                      Open MPI only)
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev libtbb-dev libboost-mpi-dev libboost-program-options-dev libboost-serialization-dev
  openmpi-bin libopenmpi-dev libhwloc-dev hwloc-nox numactl nlohmann-json3-dev libutf8proc-dev libopenblas-dev
  libdnnl-dev libxxhash-dev
)
case "${1:-}" in
  --test)
    packages+=(catch2 clang libclang-rt-14-dev libbenchmark-dev git python3 iproute2 procps libjemalloc2
               libtcmalloc-minimal4 yamllint python3-yaml python3-jsonschema gnuplot-nox mpich libmpich-dev lld)
    # npm may come with a Node.js from elsewhere (it is not a Debian package then): only Debian's when none is here.
    command -v npm >/dev/null || packages+=(npm)
    ;;
  "") ;;
  *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac

# Installing mpich leaves Open MPI the default mpirun, mpicxx and FindMPI's choice: Debian ranks Open MPI's
# alternatives above MPICH's (50 against 40), so the Open MPI build and tests see no change.

# Source packages (apt-get source) need a deb-src entry for this suite; one is added, in its own file, only when
# no entry names deb-src at all.
deb_src_file=/etc/apt/sources.list.d/cputrain-deb-src.sources
add_deb_src=
if [[ "${1:-}" == --test ]] && command -v apt-get >/dev/null &&
   ! grep -qsE '^[[:space:]]*(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
     /etc/apt/sources.list.d/*.sources; then
  # shellcheck disable=SC1091  # the system's own file
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [[ -n "$suite" ]] || { echo "install-deps: no VERSION_CODENAME in /etc/os-release for the deb-src entry" >&2; exit 1; }
  add_deb_src=$suite
fi

missing=()
for p in "${packages[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 && -z "$add_deb_src" ]] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "install-deps: missing packages (${missing[*]}) and no apt-get: this script is for Debian 12;" \
       "install the equivalents by hand (see docs/build.md)" >&2
  exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo=(sudo); else
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
if [[ -n "$add_deb_src" ]]; then
  echo "install-deps: adding $deb_src_file (deb-src, $add_deb_src)"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
    "$add_deb_src" /usr/share/keyrings/debian-archive-keyring.gpg | "${sudo[@]}" tee "$deb_src_file" >/dev/null
fi
"${sudo[@]}" apt-get update -qq
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "install-deps: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
