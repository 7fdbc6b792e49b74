#!/usr/bin/env bash
# The compute inputs of the published scaling table (docs/scaling.md): cputrain-bench-scaling-inputs on BERT-base's
# and BERT-large's layer shapes, 2 layers each (a layer costs the same wherever it sits, so per-layer times are
# what is kept), sequences of 384, batch 12, with all of this machine's threads; written with the machine, the load
# before and after, and the commands, as the model's `table` mode reads it.
#   benchmarks/scaling_compute.sh [build dir] [output json]
set -euo pipefail
BUILD=$(cd "${1:-build/release}" && pwd)
OUT=${2:-benchmarks/results/scaling_compute.json}
BENCH=$BUILD/benchmarks/cputrain-bench-scaling-inputs
THREADS=$(nproc)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/scaling_compute.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
before=$(cut -d' ' -f1-3 /proc/loadavg)
run() {  # run NAME FLAGS...
  local name=$1
  shift
  echo "cputrain-bench-scaling-inputs $* --seq 384 --batch 12 --threads $THREADS --steps 3 --warmup 1" > "$WORK/$name.cmd"
  "$BENCH" "$@" --seq 384 --batch 12 --threads "$THREADS" --steps 3 --warmup 1 > "$WORK/$name.json"
}
run hidden_768 --layers 2 --hidden 768 --heads 12 --intermediate 3072
run hidden_1024 --layers 2 --hidden 1024 --heads 16 --intermediate 4096
after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$WORK" "$OUT" "$(lscpu | sed -n 's/^Model name: *//p'), $THREADS cores" "$before" "$after" <<'PY'
import json, sys
work, out, machine, before, after = sys.argv[1:]
result = {"machine": machine, "loadavg_before": before, "loadavg_after": after, "threads": None}
for name in ("hidden_768", "hidden_1024"):
    m = json.load(open(f"{work}/{name}.json"))
    ready = m["ready_s"]  # head, layer 1, layer 0, embeddings (offset 0)
    layers = m["layers"]
    per_layer = [ready[i + 1][1] - ready[i][1] for i in range(layers)]
    params = sum(size for _, _, size in m["tensors"])
    result["threads"] = m["threads"]
    result[name] = {
        "command": open(f"{work}/{name}.cmd").read().strip(),
        "forward_layer_s": m["forward_s"] / layers,  # embeddings' and head's forward are negligible beside a layer
        "forward_rest_s": 0.0,
        "backward_head_s": ready[0][1],
        "backward_layer_s": sum(per_layer) / layers,
        "backward_embeddings_s": ready[-1][1] - ready[-2][1],
        "optimizer_s_per_param": m["optimizer_s"] / params,
        "measured": {k: m[k] for k in ("forward_s", "backward_s", "optimizer_s", "ready_s", "layers", "seq", "batch")},
    }
json.dump(result, open(out, "w"), indent=2)
print(json.dumps({k: v for k, v in result.items() if not k.startswith("hidden")}))
PY
