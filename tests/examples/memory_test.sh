#!/usr/bin/env bash
# run_qa's memory bill, on the demo data (self-contained: nothing downloaded).
#   refuse: a config.json with num_hidden_layers 1000000000, and a batch flag of 100,000,000, are refused within 3
#     times run_qa's own start-up (--help, measured alongside) with exit 2, naming config.json, the field or flag
#     and both figures, before the output directory exists; sizes whose products no 64-bit count holds are refused
#     by name (exit 1, a config.json value).
#   estimate: the "memory: about X at the peak" of run_qa's header is within 25% of the peak resident size the
#     kernel measured for the process (getrusage of the child, not run_qa's own report), for a tiny model and a
#     bert-base of two layers (fp32 and bf16, sequences of 384); and under ulimit -v, a run that cannot fit is
#     refused naming the limit.
#   memory_test.sh <case> <run_qa> <cputrain-make-demo-data>
set -u
CASE=$1
RUN_QA=$(readlink -f "$2")
MAKE_DEMO=$(readlink -f "$3")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memory_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL ($CASE): $*"; exit 1; }
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/demo_model.sh"  # make_model
cd "$WORK" || fail "cannot enter $WORK"
"$MAKE_DEMO" --output_dir "$WORK/demo" --train_paragraphs 40 --eval_paragraphs 10 --version_2_with_negative \
  > /dev/null || fail "cputrain-make-demo-data failed"

TRAIN=(--train_file "$WORK/demo/train.json" --do_train --max_seq_length 128 --doc_stride 32 --max_steps 2
       --version_2_with_negative --threads 2 --disable_tqdm)

# What starting and ending run_qa costs by itself (MPI, the thread pools; much more under the sanitizers), measured
# just before each refusal, under the same load: a refusal must take at most 3 times as long (measured here: the
# same time, 0.33 s), a ratio a busy machine does not break as it would a fixed number of seconds.
now() { date +%s.%N; }
startup() {
  local start
  start=$(now)
  "$RUN_QA" --help > /dev/null || { echo "FAIL: run_qa --help failed" >&2; exit 1; }
  python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(now)"
}

# expect_refusal NAME STATUS OUTPUT_DIR PATTERN... -- ARGS: exit STATUS within 3 times run_qa's start-up, every
# PATTERN in the message, no OUTPUT_DIR.
expect_refusal() {
  local name=$1 expected=$2 out=$3
  shift 3
  local patterns=()
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  local start end status STARTUP
  STARTUP=$(startup) || exit 1
  start=$(now)
  "$RUN_QA" "$@" --output_dir "$out" > "$WORK/$name.out" 2> "$WORK/$name.err"
  status=$?
  end=$(now)
  [ $status -eq "$expected" ] || { cat "$WORK/$name.err"; fail "$name: exit $status, expected $expected"; }
  python3 - "$start" "$end" "$STARTUP" "$name" <<'PY' || fail "$name: took more than 3 times run_qa's start-up"
import sys
start, end, startup, name = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print(f"{name}: refused in {end - start:.2f} s (run_qa --help: {startup:.2f} s)")
sys.exit(0 if end - start <= 3 * startup else 1)
PY
  for p in "${patterns[@]}"; do
    grep -qF -- "$p" "$WORK/$name.err" || { cat "$WORK/$name.err"; fail "$name: the message does not say \"$p\""; }
  done
  [ ! -e "$out" ] || fail "$name: $out was created for a run that was refused"
  echo "ok: $name refused: $(head -c 300 "$WORK/$name.err")"
}

case $CASE in
  refuse)
    make_model "$WORK/layers" '{"num_hidden_layers": 1000000000}'
    expect_refusal layers 2 "$WORK/out-layers" "layers/config.json: " "num_hidden_layers 1000000000" "needs about" \
      "PiB of memory; this machine allows" "AdamW moments" -- \
      --config_name "$WORK/layers" --tokenizer_name "$WORK/layers" "${TRAIN[@]}"
    expect_refusal batch 2 "$WORK/out-batch" "--per_device_train_batch_size 100000000 x --max_seq_length 128" \
      "needs about" "this machine allows" -- \
      --config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model" "${TRAIN[@]}" \
      --per_device_train_batch_size 100000000
    # Every product overflows 64 bits: refused by name while the config is read, before any estimate (exit 1, as
    # every config.json value the model cannot run with).
    make_model "$WORK/absurd" '{"num_hidden_layers": 2147483647, "hidden_size": 2147483646,
      "intermediate_size": 2147483647, "num_attention_heads": 2}'
    expect_refusal absurd 1 "$WORK/out-absurd" "absurd/config.json" "num_hidden_layers = 2147483647" \
      "more parameters than a 64-bit size can count" -- \
      --config_name "$WORK/absurd" --tokenizer_name "$WORK/absurd" "${TRAIN[@]}"
    ;;
  estimate)
    make_model "$WORK/base2" '{"num_hidden_layers": 2, "hidden_size": 768, "num_attention_heads": 12,
      "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512}'
    # check_estimate NAME ARGS...: the header's estimate against the child's peak resident size.
    check_estimate() {
      local name=$1
      shift
      python3 - "$RUN_QA" "$WORK/out-$name" "$name" "$@" <<'PY' || fail "$name: estimate check failed"
import re, resource, subprocess, sys
run_qa, out, name, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
done = subprocess.run([run_qa, *args, "--output_dir", out], capture_output=True, text=True)
if done.returncode != 0:
    sys.exit(f"{name}: run_qa exited {done.returncode}: {done.stderr[-2000:]}")
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # the largest child so far: run it alone
units = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
m = re.search(r"^memory: about ([0-9.]+) (\w+) at the peak", done.stdout, re.M)
if not m:
    sys.exit(f"{name}: no 'memory: about X at the peak' line in the header:\n{done.stdout[:3000]}")
estimate = float(m.group(1)) * units[m.group(2)]
ratio = estimate / peak
print(f"{name}: estimated {estimate / 2**20:.1f} MiB, measured peak {peak / 2**20:.1f} MiB, ratio {ratio:.3f}")
if not 0.75 <= ratio <= 1.25:
    sys.exit(f"{name}: the estimate is not within 25% of the measured peak")
PY
    }
    DEMO=(--config_name "$WORK/demo/model" --tokenizer_name "$WORK/demo/model")
    BASE2=(--config_name "$WORK/base2" --tokenizer_name "$WORK/base2" --max_seq_length 384 --doc_stride 128
           --per_device_train_batch_size 4 --per_device_eval_batch_size 4)
    check_estimate tiny "${DEMO[@]}" "${TRAIN[@]}"
    check_estimate base2-fp32 "${TRAIN[@]}" "${BASE2[@]}" --max_steps 1
    check_estimate base2-bf16 "${TRAIN[@]}" "${BASE2[@]}" --max_steps 1 --bf16
    # An address-space limit the run cannot fit in: refused naming it (the limit leaves room to start, not to train).
    (
      ulimit -v $((800 * 1024))
      expect_refusal ulimit 2 "$WORK/out-ulimit" "needs about" "ulimit -v 819200" -- "${TRAIN[@]}" "${BASE2[@]}"
    ) || exit 1
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS ($CASE)"
