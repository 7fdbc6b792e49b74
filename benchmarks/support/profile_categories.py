#!/usr/bin/env python3
"""Sorts `perf report --sort dso,symbol --stdio` lines (stdin) into the kernels of a training step and prints
each kernel's share of the samples. Rules are tried in order; the first whose pattern occurs in the dso or the
symbol names the kernel."""
import re
import sys

RULES = [
    ("GEMM (Eigen)", ("gebp", "gemm_pack", "general_matrix_matrix", "GeneralProduct", "kernels::gemm")),
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
    ("oneTBB scheduling", ("libtbb", "tbb::detail")),
    ("kernel (page faults, idle)", ("[kernel", "[k]")),
]
JIT = "GEMM (oneDNN JIT)"


def main() -> int:
    totals: dict[str, float] = {}
    line_re = re.compile(r"^\s*([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$")
    for line in sys.stdin:
        m = line_re.match(line)
        if not m:
            continue
        share, dso, kind, symbol = float(m.group(1)), m.group(2), m.group(3), m.group(4)
        text = f"{dso} {symbol}"
        name = None
        if kind == "k":
            name = "kernel (page faults, idle)"
        elif re.match(r"^0x[0-9a-f]+$", symbol.strip()) and "libdnnl" not in dso:
            name = JIT  # generated code: no symbol, no file
        else:
            for label, patterns in RULES:
                if any(p in text for p in patterns):
                    name = label
                    break
        totals[name or "other"] = totals.get(name or "other", 0.0) + share
    if not totals:
        print("profile_categories: no samples read", file=sys.stderr)
        return 1
    print(f"{'kernel':32} {'share':>7}")
    for name, share in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"{name:32} {share:6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
