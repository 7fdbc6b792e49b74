#!/usr/bin/env bash
# Puts Boost.MPI's compiled sources (libs/mpi/src/*.cpp, without the Python bindings) under DEST, taken from
# Debian's boost1.74 source package of exactly the version whose headers are installed (libboost1.74-dev), so that
# a Boost.MPI compiled from them for another MPI (MPICH) agrees with /usr/include/boost. Debian builds its
# libboost-mpi for Open MPI only; the build uses this for its MPICH test programs (docs/distributed.md, "MPICH and
# Intel MPI's syntax").
#   boost-mpi-sources.sh DEST            fetch (or take from the cache) and extract; prints the files written
#   boost-mpi-sources.sh --check         exit 0 when the sources can be had (cached, or apt knows where), else say why
#
# The download (the 58 MiB orig tarball; apt checks it against the signed Sources index) is kept in
# $CPUTRAIN_SOURCE_CACHE (default /var/cache/cputrain), when that can be written, so that further build trees on
# this machine skip it. Needs a deb-src entry for the suite (scripts/install-deps.sh --test adds one).
set -euo pipefail

die() { echo "boost-mpi-sources: $*" >&2; exit 1; }

version=$(dpkg-query -W -f='${Version}' libboost1.74-dev 2>/dev/null) ||
  die "libboost1.74-dev is not installed (its version chooses the sources)"
upstream=${version%-*}                      # 1.74.0+ds1-21 -> 1.74.0+ds1
orig="boost1.74_${upstream}.orig.tar.xz"
cache=${CPUTRAIN_SOURCE_CACHE:-/var/cache/cputrain}/boost1.74-$version

have_cached() { [[ -s "$cache/$orig" ]]; }

if [[ "${1:-}" == --check ]]; then
  have_cached && exit 0
  uris=$(cd /tmp && apt-get source --print-uris -qq "boost1.74=$version" 2>&1) ||
    die "apt cannot find the source package boost1.74=$version: add a deb-src entry for the suite and run" \
        "apt-get update (scripts/install-deps.sh --test does both); apt said: $uris"
  grep -qF "$orig" <<< "$uris" || die "apt's boost1.74=$version has no $orig: $uris"
  exit 0
fi

[[ $# -eq 1 ]] || { echo "usage: $0 DEST | --check" >&2; exit 2; }
dest=$1

if ! have_cached; then
  # Where the cache cannot be written (not root), the download stays in the build tree.
  if ! mkdir -p "$cache" 2>/dev/null || [[ ! -w "$cache" ]]; then
    cache="$dest/download"
    mkdir -p "$cache"
  fi
  tmp=$(mktemp -d "$cache/.download.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # apt's own client checks the tarball against the signed index; the .dsc and Debian's patches are not needed
  # (none of Debian's patches touches libs/mpi/src).
  uri=$(cd /tmp && apt-get source --print-uris -qq "boost1.74=$version" | tr -d "'" | awk -v f="$orig" '$2 == f {print $1}')
  [[ -n "$uri" ]] || die "apt knows no $orig for boost1.74=$version (a deb-src entry and apt-get update are needed)"
  (cd "$tmp" && apt-get source --download-only -qq "boost1.74=$version" > "$tmp/apt.log" 2>&1) ||
    die "apt-get source boost1.74=$version failed: $(tail -5 "$tmp/apt.log")"
  [[ -s "$tmp/$orig" ]] || die "apt-get source left no $orig in $tmp"
  mv "$tmp/$orig" "$cache/$orig"
fi

rm -rf "$dest/src"
mkdir -p "$dest/src"
# Only libs/mpi/src: the headers come from the installed package, the same version.
tar -xJf "$cache/$orig" -C "$dest/src" --strip-components=4 --wildcards --no-wildcards-match-slash \
  '*/libs/mpi/src/*.cpp' || die "cannot extract libs/mpi/src from $cache/$orig"
ls "$dest/src"/*.cpp > /dev/null 2>&1 || die "no libs/mpi/src/*.cpp in $cache/$orig"
echo "$version" > "$dest/boost-version"
