#!/usr/bin/env bash
# run_qa's training speed across two simulated machines against one: two network namespaces joined by a veth pair,
# each with its own host name (as tests/examples/multinode_test.sh builds them), one rank of 1 thread in each,
# talking TCP over the pair; against 2 ranks on one host (shared memory) and one process of 2 threads. Same
# model and data as benchmarks/distributed_throughput.sh (base-2, sequences of 384, global batch 4). Each simulated
# machine owns one of the 2 cores (taskset, mpiexec --bind-to none): Open MPI on each "host" would otherwise bind
# its one rank to core 0, and the two ranks would share a core. Root only.
#   benchmarks/multinode_throughput.sh [build dir] [rounds]
set -euo pipefail
BUILD=$(cd "${1:-build/release}" && pwd)
ROUNDS=${2:-2}
RUN_QA=$BUILD/examples/run_qa
WORK=$(mktemp -d "${TMPDIR:-/tmp}/multinode_throughput.XXXXXX")
NS_A=ctbench$$a NS_B=ctbench$$b NET=10.$((200 + $$ % 50)).$(($$ / 50 % 256))
cleanup() {
  for ns in $NS_A $NS_B; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

"$(dirname "$0")/base2_demo_data.sh" "$BUILD" "$WORK/demo"

ip netns add "$NS_A"
ip netns add "$NS_B"
ip link add "v$NS_A" type veth peer name "v$NS_B"
ip link set "v$NS_A" netns "$NS_A"
ip link set "v$NS_B" netns "$NS_B"
ip -n "$NS_A" addr add "$NET.1/24" dev "v$NS_A"
ip -n "$NS_B" addr add "$NET.2/24" dev "v$NS_B"
for ns in $NS_A $NS_B; do ip -n "$ns" link set lo up; done
ip -n "$NS_A" link set "v$NS_A" up
ip -n "$NS_B" link set "v$NS_B" up
cat > "$WORK/agent" <<EOF
#!/bin/sh
# Open MPI's rsh agent: "agent HOST COMMAND..." enters the namespace of HOST under its own host name.
host=\$1; shift
case \$host in $NET.1) ns=$NS_A; name=bench-node1; cpu=0 ;; *) ns=$NS_B; name=bench-node2; cpu=1 ;; esac
exec ip netns exec "\$ns" unshare --uts taskset -c \$cpu sh -c "hostname \$name; \$*"
EOF
chmod +x "$WORK/agent"
printf '%s slots=1\n%s slots=1\n' "$NET.1" "$NET.2" > "$WORK/hostfile"

COMMON=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" --train_file "$WORK/demo/train.json"
        --do_train --max_steps 12 --max_seq_length 384 --doc_stride 128 --save_strategy no --disable_tqdm
        --logging_steps 12 --overwrite_output_dir --output_dir "$WORK/out")
OMPI=(--allow-run-as-root --oversubscribe)
value() { sed -n "s/^  $1 *= *//p" "$WORK/log"; }
row() {  # row ROUND NAME [-]: this run's steps/s and hidden communication (none for a single process)
  local hidden=-
  [ "${3:-}" = - ] || hidden=$(printf "%.2f" "$(value train_communication_hidden)")
  printf "%-5s %-44s %10.3f %14s\n" "$1" "$2" "$(value train_steps_per_second)" "$hidden"
}
printf "%-5s %-44s %10s %14s\n" round run "steps/s" "comm. hidden"
for round in $(seq "$ROUNDS"); do
  "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size 4 --threads 2 > "$WORK/log" 2>&1
  row "$round" "1 process x 2 threads" -
  mpiexec "${OMPI[@]}" -n 2 "$RUN_QA" "${COMMON[@]}" --per_device_train_batch_size 2 --threads 1 > "$WORK/log" 2>&1
  row "$round" "2 ranks x 1 thread, one host (shared memory)"
  ip netns exec "$NS_A" unshare --uts taskset -c 0 sh -c "hostname bench-node1; mpiexec ${OMPI[*]} \
    --hostfile $WORK/hostfile --map-by ppr:1:node --bind-to none -n 2 --mca plm_rsh_agent $WORK/agent \
    --mca oob_tcp_if_include $NET.0/24 --mca btl_tcp_if_include $NET.0/24 --mca btl self,vader,tcp \
    $RUN_QA ${COMMON[*]} --per_device_train_batch_size 2 --threads 1" > "$WORK/log" 2>&1
  grep -q "^layout: 2 ranks on 2 hosts" "$WORK/log" || { head -20 "$WORK/log"; exit 1; }
  row "$round" "2 ranks x 1 thread, two hosts (TCP over veth)"
done
