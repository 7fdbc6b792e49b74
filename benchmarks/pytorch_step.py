#!/usr/bin/python3
"""The PyTorch side of the step benchmark: the same training step as cputrain-bench-step (forward, backward,
clip_grad_norm_, AdamW; dropout as each family trains) of the same model, BertForQuestionAnswering by default or
any family's *ForSequenceClassification (scripts/torch_encoders.py), with the same flags, printing the same JSON
keys as its last line. bf16 runs under torch.autocast("cpu", bfloat16), as Hugging Face's Trainer does with
--bf16 --use_cpu.
  /usr/bin/python3 benchmarks/pytorch_step.py --layers 2 --hidden 768 --heads 12 --intermediate 3072 \\
      --seq 384 --batch 4 --precision fp32 --threads 2 --steps 5 \\
      [--model_type bert|roberta|xlm-roberta|distilbert|electra] [--head qa|sequence_classification] [--num_labels N]
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
from torch_encoders import MODEL_TYPES, family, forward, hf_init, is_layer_norm  # noqa: E402

# cputrain-bench-step's --head names -> torch_encoders' heads
HEADS = {"qa": "question_answering", "sequence_classification": "sequence_classification"}


def parse_args():
    ap = argparse.ArgumentParser()
    for name, default in (("layers", 2), ("hidden", 768), ("heads", 12), ("intermediate", 3072), ("seq", 384),
                          ("batch", 4), ("threads", 1), ("steps", 5), ("warmup", 1), ("vocab", 30522),
                          ("num_labels", 2)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--model_type", choices=MODEL_TYPES, default="bert")
    ap.add_argument("--head", choices=tuple(HEADS), default="qa")
    return ap.parse_args()


def make_config(a):
    """The config.json cputrain-bench-step's bert_config amounts to: BERT's defaults but for RobertaConfig's padding
    id 1 (real positions after it, so 514 rows for 512 tokens) and single token type; DistilBERT under its own
    key names."""
    if a.model_type == "distilbert":
        return {"model_type": "distilbert", "vocab_size": a.vocab, "dim": a.hidden, "n_layers": a.layers,
                "n_heads": a.heads, "hidden_dim": a.intermediate, "max_position_embeddings": max(512, a.seq),
                "dropout": 0.1, "attention_dropout": 0.1, "activation": "gelu", "qa_dropout": 0.1,
                "seq_classif_dropout": 0.2, "pad_token_id": 0, "initializer_range": 0.02, "num_labels": a.num_labels}
    roberta = family({"model_type": a.model_type}) == "roberta"
    return {"model_type": a.model_type, "vocab_size": a.vocab, "hidden_size": a.hidden, "num_hidden_layers": a.layers,
            "num_attention_heads": a.heads, "intermediate_size": a.intermediate,
            "max_position_embeddings": max(514, a.seq + 2) if roberta else max(512, a.seq),
            "type_vocab_size": 1 if roberta else 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1, "pad_token_id": 1 if roberta else 0, "hidden_act": "gelu",
            "initializer_range": 0.02, "num_labels": a.num_labels}


def make_batch(a, c):
    """cputrain-bench-step's batch shape: ids above the padding id (RoBERTa places that id at the padding position),
    a second segment only where the family has token types to spare (BERT, ELECTRA)."""
    ids = torch.randint(c["pad_token_id"] + 1, a.vocab, (a.batch, a.seq))
    types = torch.zeros(a.batch, a.seq, dtype=torch.int64)
    if a.model_type in ("bert", "electra"):
        types[:, a.seq // 4 + 1:] = 1
    batch = {"input_ids": ids, "token_type_ids": types, "attention_mask": torch.ones(a.batch, a.seq, dtype=torch.int64)}
    if a.head == "qa":
        batch["start_positions"] = torch.tensor([(i * 37) % a.seq for i in range(a.batch)])
        batch["end_positions"] = torch.tensor([(i * 37 + 5) % a.seq for i in range(a.batch)])
    elif a.num_labels == 1:  # Hugging Face regresses on one label (STS-B's scores)
        batch["labels"] = torch.tensor([float(i % 5) for i in range(a.batch)])
    else:
        batch["labels"] = torch.tensor([i % a.num_labels for i in range(a.batch)])
    return batch


def step_flops(a):
    """As cputrain-bench-step counts them: every matrix product three times (forward, and two in backward)."""
    B, T, H, I = a.batch, a.batch * a.seq, a.hidden, a.intermediate
    per_layer = 2 * T * H * H * 4 + 2 * T * H * I * 2 + 2 * T * a.seq * H * 2
    head = 2 * B * H * H + 2 * B * H * a.num_labels if a.head == "sequence_classification" else 2 * T * H * 2
    return 3.0 * (per_layer * a.layers + head)


def time_steps(a, P, c, batch):
    """Warm-up, then the timed steps: their seconds, sorted, and the last step's loss."""
    decay = [P[n] for n in P if "bias" not in n and not is_layer_norm(n)]
    no_decay = [P[n] for n in P if "bias" in n or is_layer_norm(n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-5)
    autocast = (torch.autocast(device_type="cpu", dtype=torch.bfloat16) if a.precision == "bf16"
                else contextlib.nullcontext())
    times = []
    for step in range(a.warmup + a.steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with autocast:
            loss, _ = forward(P, c, HEADS[a.head], batch, training=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0)
        opt.step()
        took = time.perf_counter() - start
        print(f"step {step}: {took:.3f} s, loss {loss.item():.4f}{' (warm-up)' if step < a.warmup else ''}",
              file=sys.stderr)
        if step >= a.warmup:
            times.append(took)
    return sorted(times), loss.item()


def main():
    a = parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    c = make_config(a)
    P = {n: t.requires_grad_() for n, t in hf_init(c, HEADS[a.head], torch.Generator().manual_seed(1)).items()}
    times, loss = time_steps(a, P, c, make_batch(a, c))
    median = times[len(times) // 2]
    out = {
        "implementation": "pytorch " + torch.__version__, "model_type": a.model_type, "head": a.head,
        "precision": a.precision, "layers": a.layers, "hidden": a.hidden, "heads": a.heads,
        "intermediate": a.intermediate, "seq": a.seq, "batch": a.batch, "threads": a.threads, "steps": a.steps,
        "step_seconds_median": median, "samples_per_s": a.batch / median, "tokens_per_s": a.batch * a.seq / median,
        "gflops": step_flops(a) / median * 1e-9,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, "final_loss": loss}
    if a.head == "sequence_classification":
        out["num_labels"] = a.num_labels
    print(json.dumps(out))


if __name__ == "__main__":
    main()
