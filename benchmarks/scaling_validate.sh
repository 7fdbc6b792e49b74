#!/usr/bin/env bash
# Measurements that check the scaling model (benchmarks/scaling_model.py, docs/scaling.md): two simulated machines
# (network namespaces joined by a veth pair, as tests/examples/multinode_test.sh makes them), one rank of 1 thread
# on each, the link shaped by `tc qdisc ... tbf` on both ends (netem's delay does not exist in this kernel, so
# latency is whatever the veth has, measured). Each simulated machine owns one of the 2 cores (taskset; mpiexec
# --bind-to none): left to itself, Open MPI on each "host" binds its single rank to core 0, the two ranks then share
# one core and every message waits for the other rank's time slice (4 ms here). For each link setting, in this
# order, with /proc/loadavg beside each:
#   - the link: cputrain-bench-allreduce across the pair (one MPI_Allreduce of 1 kB .. 32 MB), for alpha and beta;
#   - compute: run_qa as one process of 1 thread with the per-rank shape; then two such processes at once, one per
#     simulated machine and core, without MPI (the two ranks' compute); then the same pair while
#     an all-reduce loops across the link (compute slowed by a busy communication thread), and the all-reduce once
#     more while the pair computes (the collective slowed by the compute): each "node" has one core, which its
#     compute and its communication thread share, so the model needs how the two slow each other here;
#   - run_qa with 2 ranks across the pair (the measurement to predict), and the bytes the veth sent meanwhile;
# and, once, cputrain-bench-scaling-inputs (per-layer backward timing and the reducer's buckets) for the same shape.
# The model: a "mid" BERT (4 layers of BERT-base's shape, its 30,522-row word table), sequences of 64, batch 4 per
# rank, so one step of 1 thread takes about half a second and the 115 MB of dense gradients take about a second at
# 1 Gbit/s. Root only; namespaces and files are removed on every exit.
# BYTES_ONLY=1: for each rate only the 2-rank run, once with fp32 and once with bf16 gradients on the wire
# (--ddp_communication_dtype), and the bytes each sent: bf16 should halve the dense part.
#   benchmarks/scaling_validate.sh [build dir] [output json] [rates...]
#   e.g. benchmarks/scaling_validate.sh build/release benchmarks/results/scaling_validation.json none 10gbit 5gbit 1gbit
set -euo pipefail
BUILD=$(cd "${1:-build/release}" && pwd)
OUT_JSON=$(realpath -m "${2:-benchmarks/results/scaling_validation.json}")
shift 2 || true
RATES=("$@")
[ ${#RATES[@]} -gt 0 ] || RATES=(none 10gbit 5gbit 1gbit)
STEPS=${STEPS:-24}
LAYERS=4 SEQ=64 BATCH=4
RUN_QA=$BUILD/examples/run_qa
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/scaling_validate.XXXXXX")
NS_A=ctscale$$a NS_B=ctscale$$b NET=10.$((200 + $$ % 50)).$(($$ / 50 % 256))
cleanup() {
  for ns in $NS_A $NS_B; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086  # one word per process id
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

"$HERE/base2_demo_data.sh" "$BUILD" "$WORK/demo"
python3 - "$WORK/demo/model/config.json" "$LAYERS" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["num_hidden_layers"] = int(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY

ip netns add "$NS_A"
ip netns add "$NS_B"
ip link add "v$NS_A" type veth peer name "v$NS_B"
ip link set "v$NS_A" netns "$NS_A"
ip link set "v$NS_B" netns "$NS_B"
ip -n "$NS_A" addr add "$NET.1/24" dev "v$NS_A"
ip -n "$NS_B" addr add "$NET.2/24" dev "v$NS_B"
for ns in $NS_A $NS_B; do ip -n "$ns" link set lo up; ip -n "$ns" link set "v$ns" up; done
cat > "$WORK/agent" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in $NET.1) ns=$NS_A; name=scale-node1; cpu=0 ;; *) ns=$NS_B; name=scale-node2; cpu=1 ;; esac
exec ip netns exec "\$ns" unshare --uts taskset -c \$cpu sh -c "hostname \$name; \$*"
EOF
chmod +x "$WORK/agent"
printf '%s slots=1\n%s slots=1\n' "$NET.1" "$NET.2" > "$WORK/hostfile"
OMPI="--allow-run-as-root --oversubscribe --hostfile $WORK/hostfile --map-by ppr:1:node -n 2 \
  --mca plm_rsh_agent $WORK/agent --mca oob_tcp_if_include $NET.0/24 --mca btl_tcp_if_include $NET.0/24 \
  --mca btl self,vader,tcp --bind-to none"
across() {  # across COMMAND...: one rank on each simulated machine
  timeout -k 10 300 ip netns exec "$NS_A" unshare --uts taskset -c 0 sh -c "hostname scale-node1; exec mpiexec $OMPI $*"
}
tx_bytes() { ip netns exec "$NS_A" cat "/sys/class/net/v$NS_A/statistics/tx_bytes"; }
shape() {  # shape RATE|none: the same token bucket on both ends, so both directions are limited
  local ns
  for ns in $NS_A $NS_B; do
    ip netns exec "$ns" tc qdisc del dev "v$ns" root 2>/dev/null || true
    [ "$1" = none ] && continue
    # The bucket holds 4 ms at the rate (at least 256 kB, more than one 64 kB GSO packet), so the shaper is exact
    # over a transfer of megabytes while a single large packet still passes.
    local bits=${1%gbit}
    local burst=$(( bits * 500 > 256 ? bits * 500 : 256 ))
    ip netns exec "$ns" tc qdisc add dev "v$ns" root tbf rate "$1" burst "${burst}kb" latency 50ms
  done
}

# A word list on purpose (split where it is used, unquoted): paths made here have no spaces.
COMMON="--config_name $WORK/demo/model --tokenizer_name $WORK/demo/model --train_file $WORK/demo/train.json \
  --do_train --max_steps $STEPS --max_seq_length $SEQ --doc_stride 16 --save_strategy no --disable_tqdm \
  --logging_steps $STEPS --overwrite_output_dir --per_device_train_batch_size $BATCH --threads 1"
load() { cut -d' ' -f1-3 /proc/loadavg; }
pair() {  # pair DIR: one single process in each namespace at once, no MPI between them
  local ns side pids=() rc=0
  for ns in $NS_A $NS_B; do
    side=a cpu=0
    [ "$ns" = "$NS_B" ] && side=b cpu=1
    timeout 300 ip netns exec "$ns" taskset -c $cpu "$RUN_QA" $COMMON --output_dir "$1/$side" > "$1.$side.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  [ $rc = 0 ] || { tail "$1".*.log; exit 1; }
}

if [ "${BYTES_ONLY:-0}" = 1 ]; then
  echo '{"shape": {"layers": '"$LAYERS"', "seq": '"$SEQ"', "batch": '"$BATCH"', "steps": '"$STEPS"'}, "runs": [' > "$WORK/out.json"
  first=1
  for rate in "${RATES[@]}"; do
    shape "$rate"
    for wire in fp32 bf16; do
      l=$(load)
      tx0=$(tx_bytes)
      across "$RUN_QA" $COMMON --ddp_communication_dtype $wire --output_dir "$WORK/$wire" > "$WORK/$wire.log" 2>&1 ||
        { tail -30 "$WORK/$wire.log"; exit 1; }
      tx1=$(tx_bytes)
      [ $first = 1 ] || echo "," >> "$WORK/out.json"
      first=0
      printf '{"rate": "%s", "wire": "%s", "loadavg": "%s", "tx_bytes": %d, "train": %s}' "$rate" "$wire" "$l" \
        $((tx1 - tx0)) "$(cat "$WORK/$wire/train_results.json")" >> "$WORK/out.json"
      echo "$rate $wire: $(( (tx1 - tx0) / STEPS )) bytes sent per step, load $l" >&2
    done
  done
  echo "]}" >> "$WORK/out.json"
  python3 -m json.tool "$WORK/out.json" > "$OUT_JSON"
  exit 0
fi

echo "{" > "$WORK/out.json"
printf '"machine": "%s, %s cores",\n' "$(lscpu | sed -n 's/^Model name: *//p')" "$(nproc)" >> "$WORK/out.json"
printf '"shape": {"layers": %d, "hidden": 768, "intermediate": 3072, "vocab": 30522, "seq": %d, "batch": %d, "threads": 1, "steps": %d},\n' \
  "$LAYERS" "$SEQ" "$BATCH" "$STEPS" >> "$WORK/out.json"
printf '"inputs_loadavg": "%s",\n' "$(load)" >> "$WORK/out.json"
"$BUILD/benchmarks/cputrain-bench-scaling-inputs" --layers "$LAYERS" --seq "$SEQ" --batch "$BATCH" --threads 1 \
  --steps 5 > "$WORK/inputs.json" 2>/dev/null
printf '"inputs": %s,\n"settings": [\n' "$(cat "$WORK/inputs.json")" >> "$WORK/out.json"
first=1
for rate in "${RATES[@]}"; do
  shape "$rate"
  [ $first = 1 ] || echo "," >> "$WORK/out.json"
  first=0
  l_link=$(load)
  across "$BUILD/benchmarks/cputrain-bench-allreduce" --sizes 0.001,0.1,1,2,4,8,16,32 --repeats 9 \
    --json "$WORK/link.json" > "$WORK/link.log" 2>&1 || { cat "$WORK/link.log"; exit 1; }
  l_one=$(load)
  timeout 300 taskset -c 0 "$RUN_QA" $COMMON --output_dir "$WORK/one" > "$WORK/one.log" 2>&1 ||
    { tail "$WORK/one.log"; exit 1; }
  l_pair=$(load)
  pair "$WORK/pair"
  l_busy=$(load)
  # Started directly (not in a function's subshell), so that $! is the timeout process, which passes the TERM
  # below on to mpiexec (the namespace's sh execs it), which ends its ranks.
  timeout -k 10 300 ip netns exec "$NS_A" unshare --uts taskset -c 0 sh -c "hostname scale-node1; exec mpiexec $OMPI \
    $BUILD/benchmarks/cputrain-bench-allreduce --sizes 8 --repeats 1000" > /dev/null 2>&1 &
  loop=$!
  sleep 2
  pair "$WORK/busy"
  kill "$loop" 2>/dev/null || true
  wait "$loop" 2>/dev/null || true
  pair "$WORK/under" &
  computing=$!
  sleep 5  # past the pair's start-up (tokenizing), into its steps
  across "$BUILD/benchmarks/cputrain-bench-allreduce" --sizes 8 --repeats 9 --json "$WORK/link_busy.json" \
    > "$WORK/link_busy.log" 2>&1 || { cat "$WORK/link_busy.log"; exit 1; }
  wait "$computing"
  l_two=$(load)
  tx0=$(tx_bytes)
  across "$RUN_QA" $COMMON --output_dir "$WORK/two" > "$WORK/two.log" 2>&1 || { tail -30 "$WORK/two.log"; exit 1; }
  tx1=$(tx_bytes)
  grep -q "^layout: 2 ranks on 2 hosts" "$WORK/two.log" || { head -20 "$WORK/two.log"; exit 1; }
  printf '{"rate": "%s", "link_loadavg": "%s", "link": %s,\n "one_loadavg": "%s", "one": %s,\n' \
    "$rate" "$l_link" "$(cat "$WORK/link.json")" "$l_one" "$(cat "$WORK/one/train_results.json")" >> "$WORK/out.json"
  printf ' "pair_loadavg": "%s", "pair": [%s, %s],\n "busy_loadavg": "%s", "busy": [%s, %s], "link_busy": %s,\n' \
    "$l_pair" "$(cat "$WORK/pair/a/train_results.json")" "$(cat "$WORK/pair/b/train_results.json")" "$l_busy" \
    "$(cat "$WORK/busy/a/train_results.json")" "$(cat "$WORK/busy/b/train_results.json")" \
    "$(cat "$WORK/link_busy.json")" >> "$WORK/out.json"
  printf ' "two_loadavg": "%s", "two": %s, "two_tx_bytes": %d}' \
    "$l_two" "$(cat "$WORK/two/train_results.json")" $((tx1 - tx0)) >> "$WORK/out.json"
  python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['train_runtime']; t=json.load(open(sys.argv[2])); print(sys.argv[3], 'one %.3f s/step, two %.3f s/step, exposed %.3f s/step' % (o/$STEPS, t['train_runtime']/$STEPS, t['train_communication_exposed_seconds']/$STEPS))" \
    "$WORK/one/train_results.json" "$WORK/two/train_results.json" "$rate" >&2
done
echo "]}" >> "$WORK/out.json"
mkdir -p "$(dirname "$OUT_JSON")"
python3 -m json.tool "$WORK/out.json" > "$OUT_JSON"
echo "wrote $OUT_JSON" >&2
