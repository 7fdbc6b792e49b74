#!/usr/bin/env bash
# A real control-group CPU limit reaches the thread plan: cputrain-machine started inside a new cgroup limited to
# half a CPU, asked for 2 threads, warns that the kernel will throttle them and names the limit's file. Needs root
# and a writable cgroup file system (v1 `cpu` hierarchy or v2 with the cpu controller); exits 77 (skipped)
# otherwise, saying why.
#   cpu_limit_test.sh <cputrain-machine>
set -euo pipefail
machine=$1
skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "not root: cannot create a control group"
name=cputrain-cpu-limit-test-$$
if [[ -d /sys/fs/cgroup/cpu && -w /sys/fs/cgroup/cpu ]]; then                       # cgroup v1
  group=/sys/fs/cgroup/cpu/$name
  mkdir "$group" 2>/dev/null || skip "cannot create $group"
  trap 'rmdir "$group" 2>/dev/null || true' EXIT
  echo 100000 > "$group/cpu.cfs_period_us"
  echo 50000 > "$group/cpu.cfs_quota_us"
  file=$group/cpu.cfs_quota_us
elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then                 # cgroup v2
  grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu > /sys/fs/cgroup/cgroup.subtree_control ||
    skip "cannot enable the cpu controller for child groups"
  group=/sys/fs/cgroup/$name
  mkdir "$group" 2>/dev/null || skip "cannot create $group"
  trap 'rmdir "$group" 2>/dev/null || true' EXIT
  echo "50000 100000" > "$group/cpu.max"
  file=$group/cpu.max
else
  skip "no writable cgroup file system with the cpu controller"
fi
# The child shell joins the group, then becomes cputrain-machine.
out=$(sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" --melements 1 --repeats 1 --threads 2' sh "$group" "$machine" 2>&1)
echo "$out"
expected="warning: 2 threads for the CPU limit of 0.5 CPUs ($file): the kernel throttles the threads beyond it"
grep -qF "$expected" <<<"$out" || { echo "FAILED: expected the line: $expected"; exit 1; }
