#!/usr/bin/python3
"""PyTorch reference for cputrain's BERT question-answering model (tests/nn/bert_qa_parity_test.cpp).

Implements Hugging Face's BertForQuestionAnswering in plain PyTorch, operation for operation as
transformers' modeling_bert.py computes it (no `transformers` package needed), runs it on a small deterministic
configuration and batch, and writes one safetensors fixture with:
  param/<hf name>     the initial weights
  input/...           the batch (input_ids, token_type_ids, attention_mask, start_positions, end_positions)
  expected/loss       the loss of the first forward; expected/logits [batch, seq, 2]
  grad/<hf name>      the gradients of that loss
  after3/<hf name>    the weights after 3 training steps: clip_grad_norm_(1.0), AdamW (HF Trainer's grouping:
                      no decay for biases and LayerNorm weights), linear schedule with warmup
  expected/losses, expected/grad_norms, expected/lrs   per step
and the configuration as the file's __metadata__ "config" (a config.json).

Run with Debian's python3-torch (1.13):  /usr/bin/python3 scripts/pytorch_reference.py tests/nn/data/bert_qa_reference.safetensors
"""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_bert_qa import forward, parameter_shapes  # noqa: E402

CONFIG = {
    "vocab_size": 40, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 48, "max_position_embeddings": 24, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
    "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.2,
    "pad_token_id": 0, "hidden_act": "gelu", "model_type": "bert",
}
BATCH, SEQ = 3, 12
LR, WARMUP, TOTAL, WEIGHT_DECAY, MAX_GRAD_NORM, STEPS = 1e-3, 2, 10, 0.01, 1.0, 3


def write_safetensors(path, tensors, metadata):
    """The safetensors layout, by hand: u64 header length, JSON header, then the tensors' bytes."""
    dtypes = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtypes[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def main(out_path):
    torch.manual_seed(1234)
    c = CONFIG
    shapes = parameter_shapes(c)
    P = {}
    for name, shape in shapes.items():
        if name.endswith("LayerNorm.weight"):
            t = 1.0 + 0.1 * torch.randn(shape)
        elif name.endswith(".bias"):
            t = 0.05 * torch.randn(shape)
        else:
            t = c["initializer_range"] * torch.randn(shape)
        P[name] = t.float().requires_grad_()
    with torch.no_grad():
        P["bert.embeddings.word_embeddings.weight"][c["pad_token_id"]].zero_()
    initial = {n: t.detach().clone() for n, t in P.items()}

    input_ids = torch.randint(1, c["vocab_size"], (BATCH, SEQ))
    attention_mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    attention_mask[1, 9:] = 0       # padded sequence
    attention_mask[2, 5:] = 0
    input_ids[attention_mask == 0] = c["pad_token_id"]
    token_type_ids = torch.zeros(BATCH, SEQ, dtype=torch.int64)
    token_type_ids[:, 4:] = 1
    start_positions = torch.tensor([5, 0, 30])   # 30 is past the sequence: clamped to SEQ = ignored
    end_positions = torch.tensor([7, 0, 3])

    decay = [n for n in P if "bias" not in n and "LayerNorm" not in n]
    no_decay = [n for n in P if n not in decay]
    opt = torch.optim.AdamW([{"params": [P[n] for n in decay], "weight_decay": WEIGHT_DECAY},
                             {"params": [P[n] for n in no_decay], "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-8)
    linear = lambda step: step / max(1, WARMUP) if step < WARMUP else max(0.0, (TOTAL - step) / max(1, TOTAL - WARMUP))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, linear)

    out = {"param/" + n: t for n, t in initial.items()}
    out.update({"input/input_ids": input_ids, "input/token_type_ids": token_type_ids,
                "input/attention_mask": attention_mask, "input/start_positions": start_positions,
                "input/end_positions": end_positions})
    losses, norms, lrs = [], [], []
    for step in range(STEPS):
        opt.zero_grad()
        loss, logits = forward(P, c, input_ids, token_type_ids, attention_mask, start_positions, end_positions)
        loss.backward()
        if step == 0:
            out["expected/loss"] = loss.detach().reshape(1)
            out["expected/logits"] = logits.detach()
            out.update({"grad/" + n: t.grad.detach().clone() for n, t in P.items()})
        norm = torch.nn.utils.clip_grad_norm_(list(P.values()), MAX_GRAD_NORM)
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
        losses.append(loss.item())
        norms.append(norm.item())
    out.update({"after3/" + n: t.detach().clone() for n, t in P.items()})
    out["expected/losses"] = torch.tensor(losses, dtype=torch.float32)
    out["expected/grad_norms"] = torch.tensor(norms, dtype=torch.float32)
    out["expected/lrs"] = torch.tensor(lrs, dtype=torch.float32)
    meta = {"config": json.dumps(c), "torch": torch.__version__,
            "training": json.dumps({"lr": LR, "warmup_steps": WARMUP, "total_steps": TOTAL,
                                    "weight_decay": WEIGHT_DECAY, "max_grad_norm": MAX_GRAD_NORM, "steps": STEPS})}
    write_safetensors(out_path, out, meta)
    print(f"wrote {out_path}: loss {losses[0]:.7f}, losses {losses}, grad norms {norms}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/nn/data/bert_qa_reference.safetensors")
