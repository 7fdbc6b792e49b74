#!/usr/bin/env python3
"""Sorts `perf report --sort dso,symbol --stdio` lines (stdin) into the kernels of a training step and prints
each kernel's share of the samples. Rules are tried in order; the first whose pattern occurs in the dso or the
symbol names the kernel."""
import re
import sys

RULES = [
    ("GEMM (Eigen)", ("gebp", "gemm_pack", "general_matrix_matrix", "GeneralProduct", "kernels::gemm",
                      "kernels::detail::panel")),
    ("LayerNorm", ("layer_norm",)),
    ("GELU", ("gelu",)),
    ("softmax", ("softmax",)),
    ("dropout", ("dropout",)),
    ("bias", ("add_bias", "bias_backward")),
    ("AdamW", ("adamw",)),
    ("gradient clipping", ("clip_grad",)),
    ("embeddings", ("embeddings",)),
    ("bf16 conversion", ("to_bf16", "to_float", "convert_")),
    ("attention (rest)", ("attention_forward", "attention_backward")),
    ("QA loss", ("qa_loss",)),
    ("encoder layer (residual adds)", ("encoder_layer",)),
    ("GEMM (oneDNN library)", ("libdnnl",)),
    ("memset / memcpy", ("memset", "memcpy", "memmove")),
    ("oneTBB scheduling", ("libtbb", "tbb::detail", "sched_yield")),
    ("kernel (page faults, idle)", ("[kernel", "[k]")),
]
JIT = "GEMM (oneDNN JIT)"
# The benchmark's own measurement of the FMA peak (after the steps): not part of a step, left out of the shares.
NOT_A_STEP = ("fma_loop_flops",)


def main() -> int:
    totals: dict[str, float] = {}
    unsorted: dict[str, float] = {}
    line_re = re.compile(r"^\s*([0-9.]+)%\s+(.+?)\s+\[(.)\]\s+(.*)$")  # dso may hold spaces: "[JIT] tid 7"
    for line in sys.stdin:
        m = line_re.match(line)
        if not m:
            continue
        share, dso, kind = float(m.group(1)), m.group(2), m.group(3)
        symbol = re.sub(r"(\s+-)+\s*$", "", m.group(4)).strip()  # perf pads with empty "-" columns
        text = f"{dso} {symbol}"
        if any(p in text for p in NOT_A_STEP):
            continue
        name = None
        if kind == "k":
            name = "kernel (page faults, idle)"
        elif re.match(r"^0x[0-9a-f]+$", symbol) and "libdnnl" not in dso:
            name = JIT  # generated code: no symbol, no file
        else:
            for label, patterns in RULES:
                if any(p in text for p in patterns):
                    name = label
                    break
        totals[name or "other"] = totals.get(name or "other", 0.0) + share
        if name is None:
            unsorted[symbol[:100]] = unsorted.get(symbol[:100], 0.0) + share
    if not totals:
        print("profile_categories: no samples read", file=sys.stderr)
        return 1
    total = sum(totals.values())
    print(f"{'kernel':32} {'share':>7}")
    for name, share in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"{name:32} {100 * share / total:6.1f}%")
    if unsorted:
        print("largest in other:")
        for symbol, share in sorted(unsorted.items(), key=lambda kv: -kv[1])[:5]:
            print(f"  {100 * share / total:5.1f}%  {symbol}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # a reader such as head stopped early
        sys.exit(0)
