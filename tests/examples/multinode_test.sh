#!/usr/bin/env bash
# run_qa on simulated machines, one real machine standing in for several (docs/distributed.md, "Testing two
# machines on one"; the recipes are in the project's machine notes).
#   multinode_test.sh <run_qa> <cputrain-make-demo-data> <mpiexec> [two-hosts|two-numa-nodes]
#
#   two-hosts (the default): two network namespaces joined by a veth pair, each with its own host name, stand for
#     two machines; Open MPI starts its daemon in the second one through an rsh agent that enters the namespace
#     instead of using ssh, so the ranks talk over TCP across the veth pair. 4 ranks, 2 per "host", of batch 4
#     must log the same losses and grad norms and end with the same weights and eval predictions as one process
#     with batch 16, and the layout must show 4 ranks on 2 hosts, local ranks 0/2 and 1/2 on each host; with Open
#     MPI the second namespace must receive at least the weights' bytes over the veth pair (the data does cross
#     the "network"; not so under MPICH, see below).
#     Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN), iproute2's `ip`, util-linux's `unshare` and Open MPI; skips
#     (exit 77) where namespaces cannot be made, e.g. in an unprivileged container.
#     With MPICH's launcher (Hydra: mpiexec.hydra) as <mpiexec>, the guide's MPICH command itself:
#     `mpirun -f hostfile -n 4 -ppn 2 run_qa ... --bf16`, Hydra starting its proxy in the second namespace through
#     the same kind of agent (-launcher rsh -launcher-exec), against one process with --bf16.
#   two-numa-nodes: hwloc told the machine has two NUMA nodes (HWLOC_SYNTHETIC="package:1 numa:2 core:1 pu:1",
#     HWLOC_THISSYSTEM=1, CPU 0 on node 0, CPU 1 on node 1), passed to the ranks of `mpirun -n 2`: rank 0 must
#     train on NUMA node 0 with CPU 0 and rank 1 on NUMA node 1 with CPU 1, and match one process with the global
#     batch. Needs run_qa built with hwloc and Open MPI (for -x); skips otherwise.
#
# The namespaces, the veth pair (deleted with them) and the temporary files are removed on every exit; every
# launch runs under `timeout`, so the test never hangs, and it finishes in well under a minute here.
# shellcheck disable=SC2015  # "check && check || fail": fail exits, so it runs exactly when a check failed
set -u
RUN_QA=$1
MAKE_DEMO=$2
MPIEXEC=$3
CASE=${4:-two-hosts}
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skipped: $*"; exit 77; }

case $CASE in two-hosts | two-numa-nodes) ;; *) fail "unknown case $CASE";; esac
version=$("$MPIEXEC" --version 2>/dev/null)
if grep -q "Open MPI\|OpenRTE" <<< "$version"; then
  LAUNCHER=openmpi
elif grep -q "HYDRA" <<< "$version" && [ "$CASE" = two-hosts ]; then
  LAUNCHER=hydra
else
  skip "$MPIEXEC is not Open MPI (this case uses its --hostfile, --mca and -x flags)" \
       "$([ "$CASE" = two-hosts ] && echo "nor MPICH's Hydra")"
fi
OMPI=(--allow-run-as-root --oversubscribe)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/multinode_test.$$.XXXXXX") || fail "mktemp failed"
NS_A='' NS_B='' VETH_MADE=''
cleanup() {
  local ns
  for ns in $NS_A $NS_B; do
    # Processes still inside a namespace we made (a rank or daemon that outlived a timeout) are ours: end them,
    # or the namespace would live on after `ip netns del`.
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null)
    # shellcheck disable=SC2086  # one word per process id
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  [ -n "$VETH_MADE" ] && ip link del "$VETH_MADE" 2>/dev/null  # only if it never left this namespace
  rm -rf "$WORK"
}
trap cleanup EXIT
# Launches run in the background and are waited for, so that a signal to this script is acted on at once: the
# launch is told to end (timeout passes SIGTERM on to mpirun, which ends its ranks), then cleanup runs.
CHILD=
trap '[ -n "$CHILD" ] && kill -TERM "$CHILD" 2>/dev/null; exit 143' TERM INT HUP
bounded() {  # bounded SECONDS COMMAND... : runs COMMAND, killed after SECONDS (exit 124, or 137)
  timeout -k 10 "$@" &
  CHILD=$!
  wait "$CHILD"
  local rc=$?
  CHILD=
  return $rc
}

"$MAKE_DEMO" --output_dir "$WORK/demo" --train_paragraphs 400 --eval_paragraphs 40 --version_2_with_negative \
  > /dev/null || fail "cputrain-make-demo-data failed"
# The demo model has no dropout. Windows padded to max_seq_length, so every batch has the same shape.
COMMON=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" --train_file "$WORK/demo/train.json"
        --validation_file "$WORK/demo/dev.json" --version_2_with_negative --do_train --do_eval
        --learning_rate 2e-3 --max_seq_length 128 --doc_stride 32 --logging_steps 4
        --save_strategy no --disable_tqdm --per_device_eval_batch_size 16)

# compare LOG_ENTRIES RUN... : each run's losses, grad norms and weights against run "one", and its predictions.
compare() {
  python3 "$(dirname "$0")/compare_runs.py" "$WORK" "$@" ||
    fail "the distributed runs differ from the single process (see above)"
}

# The reference: one process with the global batch of 16.
reference() {  # reference STEPS [run_qa flags...]
  local steps=$1; shift
  bounded 45 "$RUN_QA" "${COMMON[@]}" --max_steps "$steps" "$@" --per_device_train_batch_size 16 --threads 2 \
    --output_dir "$WORK/one" > "$WORK/one.log" 2>&1 || fail "the single process failed: $(tail -20 "$WORK/one.log")"
}

# The layout block rank 0 prints: from the "layout:" line to the line before "training a new model".
layout_of() { sed -n '/^layout: /,/^training /p' "$1" | sed '$d'; }
# The lines of rank R's entry in a layout block (its "rank R/" line and the indented lines under it).
rank_entry() { awk -v r="rank $2/" 'index($0, r) == 1 {on = 1; print; next} /^rank / {on = 0} on' <<< "$1"; }

if [ "$CASE" = two-numa-nodes ]; then
  if command -v ldd > /dev/null && ! ldd "$RUN_QA" 2>/dev/null | grep -q libhwloc; then
    skip "run_qa was built without hwloc (CPUTRAIN_WITH_HWLOC), so HWLOC_SYNTHETIC cannot simulate NUMA nodes"
  fi
  python3 -c 'import os, sys; sys.exit(0 if {0, 1} <= os.sched_getaffinity(0) else 1)' ||
    skip "the simulated nodes hold CPUs 0 and 1, and this process may not run on both"
  start=$(date +%s)
  reference 8
  SYNTHETIC="package:1 numa:2 core:1 pu:1"
  # numa RUN MPIRUN_FLAGS... : 2 ranks of batch 8, the ranks seeing two NUMA nodes.
  numa() {
    local name=$1; shift
    HWLOC_SYNTHETIC="$SYNTHETIC" HWLOC_THISSYSTEM=1 bounded 30 "$MPIEXEC" "${OMPI[@]}" -n 2 "$@" \
      -x HWLOC_SYNTHETIC -x HWLOC_THISSYSTEM "$RUN_QA" "${COMMON[@]}" --max_steps 8 --per_device_train_batch_size 8 \
      --output_dir "$WORK/$name" > "$WORK/$name.log" 2>&1 || fail "$name: mpirun failed: $(tail -20 "$WORK/$name.log")"
  }
  # unbound: nobody binds the ranks (--bind-to none); each sees both nodes and the library places local rank r on
  #   node r and pins its threads to that node's CPUs.
  # default: what a user gets from a plain `mpirun -n 2`: Open MPI binds each of 2 ranks to a core (CPU 0, CPU 1),
  #   so each rank sees only the node its core is on.
  # numa: Open MPI's own per-socket binding, mpirun also seeing the two nodes: --map-by ppr:1:numa --bind-to numa.
  numa unbound --bind-to none
  numa default
  numa numa --map-by ppr:1:numa --bind-to numa
  for run in unbound default numa; do
    layout=$(layout_of "$WORK/$run.log")
    grep -q "^layout: 2 ranks on 1 host (multi_node)$" <<< "$layout" ||
      fail "$run: no layout line: $(head -8 "$WORK/$run.log")"
    r0=$(rank_entry "$layout" 0)
    r1=$(rank_entry "$layout" 1)
    grep -q "^rank 0/2 (local 0/2) on " <<< "$r0" && grep -q "^  NUMA node 0: cpus 0, 1 cores, 1 threads$" <<< "$r0" ||
      fail "$run: rank 0 is not on NUMA node 0 with CPU 0:"$'\n'"$layout"
    grep -q "^rank 1/2 (local 1/2) on " <<< "$r1" && grep -q "^  NUMA node 1: cpus 1, 1 cores, 1 threads$" <<< "$r1" ||
      fail "$run: rank 1 is not on NUMA node 1 with CPU 1:"$'\n'"$layout"
    [ "$(grep -c "^  NUMA node " <<< "$layout")" = 2 ] ||
      fail "$run: a rank trains on more than one node:"$'\n'"$layout"
    if grep -q "ranks share nodes\|share NUMA node\|share a CPU" <<< "$layout"; then
      fail "$run: a warning that ranks share a node, with one rank on each of two nodes:"$'\n'"$layout"
    fi
    echo "$run: rank 0 on NUMA node 0 (CPU 0), rank 1 on NUMA node 1 (CPU 1)"
  done
  compare 2 unbound default numa
  echo "ranks on two simulated NUMA nodes place themselves one per node and match the single process" \
       "($(( $(date +%s) - start )) s)"
  exit 0
fi

# ---- two-hosts ----
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip > /dev/null || skip "no ip command (iproute2)"
command -v unshare > /dev/null || skip "no unshare command (util-linux)"
command -v hostname > /dev/null || skip "no hostname command"

# Names unique to this run; a subnet of 10.200-249.x.0/24 that exists only inside the two namespaces made here.
NAME_A=ctmn$$a NAME_B=ctmn$$b
SUBNET_PREFIX=10.$((200 + $$ % 50)).$(( ($$ / 50) % 256 ))
SUBNET=$SUBNET_PREFIX.0/24
ADDR_A=$SUBNET_PREFIX.1 ADDR_B=$SUBNET_PREFIX.2
HOST_A=ctnode$$-1 HOST_B=ctnode$$-2

# A previous run killed before its trap could run (SIGKILL, e.g. by CTest's timeout) leaves its namespaces
# ctmn<pid>a/b and its directory multinode_test.<pid>.* behind: remove those whose process is gone. Nothing else.
for dir in "${TMPDIR:-/tmp}"/multinode_test.[0-9]*.??????; do
  [ -d "$dir" ] || continue
  pid=${dir##*/multinode_test.}; pid=${pid%%.*}
  kill -0 "$pid" 2>/dev/null || rm -rf "$dir"
done
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^ctmn[0-9]+[ab]$'); do
  pid=${ns#ctmn}; pid=${pid%[ab]}
  if ! kill -0 "$pid" 2>/dev/null; then
    pids=$(ip netns pids "$ns" 2>/dev/null)
    # shellcheck disable=SC2086  # one word per process id
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null && echo "removed the namespace $ns left by an earlier run"
  fi
done

err=$(ip netns add "$NAME_A" 2>&1) || skip "cannot create a network namespace: $err"
NS_A=$NAME_A
err=$(ip netns add "$NAME_B" 2>&1) || skip "cannot create a second network namespace: $err"
NS_B=$NAME_B
err=$(ip link add "$NAME_A" type veth peer name "$NAME_B" 2>&1) || skip "cannot create a veth pair: $err"
VETH_MADE=$NAME_A
{ ip link set "$NAME_A" netns "$NS_A" && ip link set "$NAME_B" netns "$NS_B"; } 2>"$WORK/ip.err" ||
  skip "cannot move the veth ends into the namespaces: $(cat "$WORK/ip.err")"
VETH_MADE=
# Inside its namespace each end takes one name, as a real cluster's machines name their network alike, so that one
# interface flag (Hydra's -iface) fits every host.
IFACE=ctmpi0
for side in A B; do
  ns_var=NS_$side addr_var=ADDR_$side
  ns=${!ns_var} addr=${!addr_var}
  { ip -n "$ns" link set "$ns" name "$IFACE" && ip -n "$ns" addr add "$addr/24" dev "$IFACE" &&
    ip -n "$ns" link set lo up && ip -n "$ns" link set "$IFACE" up; } \
    2>"$WORK/ip.err" || fail "cannot configure $ns: $(cat "$WORK/ip.err")"
done
err=$(ip netns exec "$NS_A" unshare --uts sh -c "hostname $HOST_A" 2>&1) ||
  skip "cannot enter the namespace with its own host name (unshare --uts): $err"

# Open MPI calls the agent as `AGENT HOST COMMAND...` and hands the remote command over as one shell string; Hydra
# calls it the same way, its proxy's words quoted for a shell.
cat > "$WORK/agent" <<EOF
#!/bin/sh
host=\$1
shift
case \$host in
  $ADDR_A) ns=$NS_A name=$HOST_A ;;
  $ADDR_B) ns=$NS_B name=$HOST_B ;;
  *) echo "multinode_test agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$name; \$*"
EOF
chmod +x "$WORK/agent"
if [ "$LAUNCHER" = hydra ]; then
  printf '%s:2\n%s:2\n' "$ADDR_A" "$ADDR_B" > "$WORK/hostfile"
else
  printf '%s slots=2\n%s slots=2\n' "$ADDR_A" "$ADDR_B" > "$WORK/hostfile"
fi
# Runs its arguments as host A: in the first namespace, with A's host name.
cat > "$WORK/on_host_a" <<EOF
#!/bin/sh
hostname $HOST_A || exit 1
exec "\$@"
EOF
chmod +x "$WORK/on_host_a"

# Bytes host B received over the veth pair: the ranks there must get at least the initial weights through it.
received_b() { ip netns exec "$NS_B" cat "/sys/class/net/$IFACE/statistics/rx_bytes"; }

start=$(date +%s)
if [ "$LAUNCHER" = hydra ]; then
  # bf16 results differ in their last bits with the batch's shape (compare_runs.py says how much): the runs are
  # held within 5e-3 of each other, and eval answers, whose ties can tip either way then, are not compared.
  PRECISION=(--bf16)
  AGREE=(--tolerance 5e-3 --weights-tolerance 5e-3 --no-predictions)
  # The data between the hosts does not cross the veth pair here: MPICH's UCX sees one kernel and reads the other
  # namespace's ranks by cross-memory attach. Made to use TCP (UCX_TLS=tcp,self), MPI_Finalize hung in 3 of 10 runs
  # with Debian's MPICH 4.0.2 and UCX 1.13.1, and a 4-rank all-reduce program in 9 of 15 (one rank waits in the
  # launcher's barrier, the others in UCX's closing of their TCP endpoints), so the byte count is Open MPI's only.
  LAUNCH=("$MPIEXEC" -f "$WORK/hostfile" -n 4 -ppn 2 -launcher rsh -launcher-exec "$WORK/agent" -iface "$IFACE")
else
  PRECISION=()
  AGREE=()
  # shellcheck disable=SC2054  # the commas are inside one argument (self,vader,tcp)
  LAUNCH=("$MPIEXEC" --hostfile "$WORK/hostfile" --map-by ppr:2:node -n 4 --mca plm_rsh_agent "$WORK/agent"
          --mca oob_tcp_if_include "$SUBNET" --mca btl_tcp_if_include "$SUBNET" --mca btl self,vader,tcp "${OMPI[@]}")
fi
reference 24 "${PRECISION[@]}"
rx_before=$(received_b)
bounded 75 ip netns exec "$NS_A" unshare --uts "$WORK/on_host_a" "${LAUNCH[@]}" \
  "$RUN_QA" "${COMMON[@]}" --max_steps 24 --per_device_train_batch_size 4 "${PRECISION[@]}" --output_dir "$WORK/hosts" \
  > "$WORK/hosts.log" 2>&1
rc=$?
rx_after=$(received_b)
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  fail "mpirun across the two namespaces did not end within 75 s: $(tail -20 "$WORK/hosts.log")"
fi
[ $rc -eq 0 ] || fail "mpirun across the two namespaces failed (exit $rc): $(tail -30 "$WORK/hosts.log")"

layout=$(layout_of "$WORK/hosts.log")
grep -q "^layout: 4 ranks on 2 hosts (multi_node)$" <<< "$layout" ||
  fail "the layout does not say 4 ranks on 2 hosts:"$'\n'"$(head -16 "$WORK/hosts.log")"
for want in "0/4 (local 0/2) on $HOST_A" "1/4 (local 1/2) on $HOST_A" "2/4 (local 0/2) on $HOST_B" \
            "3/4 (local 1/2) on $HOST_B"; do
  grep -q "^rank $want: " <<< "$layout" || fail "no \"rank $want\" in the layout:"$'\n'"$layout"
done
# The two ranks of a host train on different CPUs (Open MPI bound them to a core each, or the library split them).
for pair in "0 1" "2 3"; do
  # shellcheck disable=SC2086  # two rank numbers
  set -- $pair
  cpus_a=$(rank_entry "$layout" "$1" | grep -o "^  NUMA node .*: cpus [^,]*")
  cpus_b=$(rank_entry "$layout" "$2" | grep -o "^  NUMA node .*: cpus [^,]*")
  [ -n "$cpus_a" ] && [ -n "$cpus_b" ] && [ "$cpus_a" != "$cpus_b" ] ||
    fail "ranks $1 and $2 (one host) do not train on different CPUs:"$'\n'"$layout"
done
grep -q "Total batch size = 16 (4 per process x 4 processes x 1 accumulation steps)" "$WORK/hosts.log" ||
  fail "no total batch size line: $(grep -i batch "$WORK/hosts.log")"
[ "$(grep -c '"loss"' "$WORK/hosts.log")" = 6 ] || fail "the log entries are not printed once (by rank 0 alone)"
weights_bytes=$(stat -c %s "$WORK/one/model.safetensors")
[ "$LAUNCHER" = hydra ] || [ $((rx_after - rx_before)) -ge "$weights_bytes" ] ||
  fail "host B received $((rx_after - rx_before)) bytes over $IFACE, less than the $weights_bytes of the weights"
if [ "$LAUNCHER" = hydra ]; then
  grep -q "^matrix products (bf16)" "$WORK/hosts.log" ||
    fail "the ranks did not train in bf16: $(grep "^matrix products" "$WORK/hosts.log")"
fi
compare 6 hosts "${AGREE[@]}"
for f in model.safetensors trainer_state.json eval_results.json eval_predictions.json; do
  [ -s "$WORK/hosts/$f" ] || fail "the output_dir has no $f"
done
echo "4 ranks on two hosts ($HOST_A, $HOST_B; $LAUNCHER over $SUBNET, $((rx_after - rx_before)) bytes to" \
     "$HOST_B; ${PRECISION[*]:-fp32}) match the single process" \
     "($(( $(date +%s) - start )) s)"
