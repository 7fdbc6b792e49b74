#!/usr/bin/env bash
# The container image's runtime stage, also checked by CI on a Debian 12 host (tests/deploy/docker).
#   deploy/docker/runtime.sh install              (image) the runtime packages, the user, the ssh set-up
#   deploy/docker/runtime.sh packages             print the runtime package list
#   deploy/docker/runtime.sh check <prefix>       (CI) every shared library the programs under <prefix> load, and the
#                                                 preloadable allocators, come from the runtime packages or their
#                                                 dependencies; the packages exist in Debian 12
#   deploy/docker/runtime.sh files <root>         (CI) write the user's ssh files under <root> instead of /
# The user: cputrain (uid and gid 1000), home /home/cputrain, working directory /workspace.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# What run_qa and mpirun need at run time (the -dev packages stay in the build stage; libdnnl2, oneDNN's kernels,
# brings libgomp1), the allocators the launcher can preload (docs/container.md), ssh for the Kubeflow MPI Operator,
# and tools for looking at a node's layout.
packages=(
  libtbb12 libtbbmalloc2 libboost-mpi1.74.0 libboost-program-options1.74.0 libboost-serialization1.74.0
  libopenmpi3 openmpi-bin libutf8proc2 libxxhash0 libhwloc15 libdnnl2 libstdc++6
  libjemalloc2 libtcmalloc-minimal4
  openssh-server openssh-client
  hwloc-nox numactl procps
)
user=cputrain uid=1000 home=/home/cputrain

write_files() {  # <root>: the user's sshd config and the client's settings for the operator's workers
  local root=$1
  install -D -m 644 "$here/sshd_config" "$root$home/.sshd_config"
  install -d -m 755 "$root/etc/ssh/ssh_config.d"
  # Workers are pods that come and go under the same names: their host keys are the operator's, not a known host.
  printf '%s\n' "Host *" "    Port 2222" "    StrictHostKeyChecking no" "    UserKnownHostsFile /dev/null" \
    "    LogLevel ERROR" > "$root/etc/ssh/ssh_config.d/cputrain.conf"
}

case "${1:-}" in
  packages)
    printf '%s\n' "${packages[@]}"
    ;;
  install)
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
    rm -rf /var/lib/apt/lists/*
    # Host keys come from the operator's Secret: none generated into the image. sshd as a non-root user needs no
    # privilege-separation directory, but the package's own checks expect it.
    rm -f /etc/ssh/ssh_host_*
    mkdir -p /run/sshd
    groupadd --gid "$uid" "$user"
    useradd --uid "$uid" --gid "$uid" --create-home --home-dir "$home" --shell /bin/bash "$user"
    write_files /
    chown "$user:$user" "$home/.sshd_config"
    install -d -m 755 -o "$user" -g "$user" /workspace
    ;;
  files)
    [[ $# -eq 2 ]] || { echo "usage: $0 files <root>" >&2; exit 2; }
    write_files "$2"
    ;;
  check)
    [[ $# -eq 2 ]] || { echo "usage: $0 check <prefix>" >&2; exit 2; }
    prefix=$2
    # One apt-cache call for all of them (each call loads the cache: 0.7 s apiece, most of this check's time).
    found=$(apt-cache show --no-all-versions "${packages[@]}" 2>/dev/null | sed -n 's/^Package: //p' | sort -u)
    for p in "${packages[@]}"; do
      grep -qx "$p" <<<"$found" || { echo "runtime.sh: package $p is not in this system's Debian archive" >&2; exit 1; }
    done
    # The runtime packages with everything they depend on: what the image's runtime stage will hold.
    # (apt-cache prints every package of the closure once, unindented, followed by its indented dependencies.)
    closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
                --no-enhances "${packages[@]}" | grep -v '^[ <]' | sed 's/:[a-z0-9]*$//' | sort -u)
    multiarch=$(gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
    libs=()
    while IFS= read -r -d '' program; do
      if [[ $(head -c 4 "$program" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]; then  # an ELF file
        while read -r path; do libs+=("$path"); done < <(ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
        if ldd "$program" | grep -q "not found"; then
          echo "runtime.sh: $program: $(ldd "$program" | grep "not found" | tr -s ' \t' ' ')" >&2; exit 1
        fi
      fi
    done < <(find "$prefix/libexec" "$prefix/bin" -type f -print0)
    libs+=("/usr/lib/$multiarch/libjemalloc.so.2" "/usr/lib/$multiarch/libtcmalloc_minimal.so.4"
           "/usr/lib/$multiarch/libtbbmalloc_proxy.so.2")
    # Debian 12 merged /lib into /usr/lib: dpkg knows each file under one of its names. Every name of every library
    # goes to one dpkg query (a query per name took 0.2 s); the owner of a name is its first line's package.
    unique=($(printf '%s\n' "${libs[@]}" | sort -u))
    names=()
    for path in "${unique[@]}"; do names+=("$path" "/usr$path" "${path#/usr}" "$(readlink -f "$path")"); done
    declare -A owner_of=()
    while IFS= read -r line; do
      name=${line##*: }
      [[ -n ${owner_of[$name]:-} ]] || owner_of[$name]=${line%%:*}
    done < <(dpkg -S "${names[@]}" 2>/dev/null || true)
    missing=0 checked=0
    for path in "${unique[@]}"; do
      owner=
      for name in "$path" "/usr$path" "${path#/usr}" "$(readlink -f "$path")"; do
        owner=${owner_of[$name]:-} && [[ -n $owner ]] && break
      done
      if [[ -z $owner ]]; then echo "runtime.sh: no package owns $path" >&2; missing=1; continue; fi
      if ! grep -qx "$owner" <<<"$closure"; then
        echo "runtime.sh: $path comes from $owner, which the runtime packages do not bring" >&2; missing=1
      fi
      checked=$((checked + 1))
    done
    [[ $missing -eq 0 ]] || exit 1
    echo "runtime.sh: the $checked shared libraries of $prefix and the allocators come from the runtime packages"
    ;;
  *)
    echo "usage: $0 install | packages | check <prefix> | files <root>" >&2
    exit 2
    ;;
esac
