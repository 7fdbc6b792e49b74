#!/usr/bin/python3
"""The PyTorch side of the step benchmark: the same BertForQuestionAnswering training step as
cputrain-bench-step (forward, backward, clip_grad_norm_, AdamW; dropout 0.1 as BERT trains), with the same
flags, printing the same JSON keys as its last line. bf16 runs under torch.autocast("cpu", bfloat16), as
Hugging Face's Trainer does with --bf16 --use_cpu.
  /usr/bin/python3 benchmarks/pytorch_step.py --layers 2 --hidden 768 --heads 12 --intermediate 3072 \\
      --seq 384 --batch 4 --precision fp32 --threads 2 --steps 5
"""
import argparse
import contextlib
import json
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from torch_bert_qa import forward, parameter_shapes  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    for name, default in (("layers", 2), ("hidden", 768), ("heads", 12), ("intermediate", 3072), ("seq", 384),
                          ("batch", 4), ("threads", 1), ("steps", 5), ("warmup", 1), ("vocab", 30522)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    c = {"vocab_size": a.vocab, "hidden_size": a.hidden, "num_hidden_layers": a.layers,
         "num_attention_heads": a.heads, "intermediate_size": a.intermediate,
         "max_position_embeddings": max(512, a.seq), "type_vocab_size": 2, "layer_norm_eps": 1e-12,
         "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "pad_token_id": 0}
    P = {}
    for name, shape in parameter_shapes(c).items():
        if name.endswith("LayerNorm.weight"):
            t = torch.ones(shape)
        elif name.endswith(".bias"):
            t = torch.zeros(shape)
        else:
            t = 0.02 * torch.randn(shape)
        P[name] = t.requires_grad_()
    decay = [P[n] for n in P if "bias" not in n and "LayerNorm" not in n]
    no_decay = [P[n] for n in P if "bias" in n or "LayerNorm" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-5)
    ids = torch.randint(1, a.vocab, (a.batch, a.seq))
    types = torch.zeros(a.batch, a.seq, dtype=torch.int64)
    types[:, a.seq // 4 + 1:] = 1
    mask = torch.ones(a.batch, a.seq, dtype=torch.int64)
    starts = torch.tensor([(i * 37) % a.seq for i in range(a.batch)])
    ends = torch.tensor([(i * 37 + 5) % a.seq for i in range(a.batch)])
    autocast = (torch.autocast(device_type="cpu", dtype=torch.bfloat16) if a.precision == "bf16"
                else contextlib.nullcontext())
    times = []
    for step in range(a.warmup + a.steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with autocast:
            loss, _ = forward(P, c, ids, types, mask, starts, ends, training=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0)
        opt.step()
        took = time.perf_counter() - start
        print(f"step {step}: {took:.3f} s, loss {loss.item():.4f}{' (warm-up)' if step < a.warmup else ''}",
              file=sys.stderr)
        if step >= a.warmup:
            times.append(took)
    times.sort()
    median = times[len(times) // 2]
    T, H, I = a.batch * a.seq, a.hidden, a.intermediate
    per_layer = 2 * T * H * H * 4 + 2 * T * H * I * 2 + 2 * T * a.seq * H * 2
    flops = 3.0 * (per_layer * a.layers + 2 * T * H * 2)
    print(json.dumps({
        "implementation": "pytorch " + torch.__version__, "precision": a.precision, "layers": a.layers,
        "hidden": a.hidden, "heads": a.heads, "intermediate": a.intermediate, "seq": a.seq, "batch": a.batch,
        "threads": a.threads, "steps": a.steps, "step_seconds_median": median, "samples_per_s": a.batch / median,
        "tokens_per_s": T / median, "gflops": flops / median * 1e-9,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "final_loss": loss.item()}))


if __name__ == "__main__":
    main()
