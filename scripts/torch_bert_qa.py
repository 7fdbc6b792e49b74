"""Hugging Face's BertForQuestionAnswering written out in plain PyTorch, operation for operation as
transformers' modeling_bert.py computes it (no `transformers` package needed). Used by the reference that
keeps cputrain's numbers honest (scripts/pytorch_reference.py); the side-by-side speed benchmark
(benchmarks/pytorch_step.py) runs scripts/torch_encoders.py, which computes the same for BERT QA."""
import math

import torch
import torch.nn.functional as F


def parameter_shapes(c):
    h, i = c["hidden_size"], c["intermediate_size"]
    shapes = {
        "bert.embeddings.word_embeddings.weight": [c["vocab_size"], h],
        "bert.embeddings.position_embeddings.weight": [c["max_position_embeddings"], h],
        "bert.embeddings.token_type_embeddings.weight": [c["type_vocab_size"], h],
        "bert.embeddings.LayerNorm.weight": [h], "bert.embeddings.LayerNorm.bias": [h],
    }
    for l in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{l}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[p + name + ".weight"] = [h, h]
            shapes[p + name + ".bias"] = [h]
        shapes[p + "attention.output.LayerNorm.weight"] = [h]
        shapes[p + "attention.output.LayerNorm.bias"] = [h]
        shapes[p + "intermediate.dense.weight"] = [i, h]
        shapes[p + "intermediate.dense.bias"] = [i]
        shapes[p + "output.dense.weight"] = [h, i]
        shapes[p + "output.dense.bias"] = [h]
        shapes[p + "output.LayerNorm.weight"] = [h]
        shapes[p + "output.LayerNorm.bias"] = [h]
    shapes["qa_outputs.weight"] = [2, h]
    shapes["qa_outputs.bias"] = [2]
    return shapes


def forward(P, c, input_ids, token_type_ids, attention_mask, start_positions, end_positions, training=False):
    h, heads = c["hidden_size"], c["num_attention_heads"]
    d = h // heads
    eps = c["layer_norm_eps"]
    b, s = input_ids.shape
    positions = torch.arange(s).unsqueeze(0).expand(b, s)
    # BertEmbeddings: inputs_embeds + token_type_embeddings, then + position_embeddings
    x = F.embedding(input_ids, P["bert.embeddings.word_embeddings.weight"], padding_idx=c["pad_token_id"])
    x = x + F.embedding(token_type_ids, P["bert.embeddings.token_type_embeddings.weight"])
    x = x + F.embedding(positions, P["bert.embeddings.position_embeddings.weight"])
    x = F.layer_norm(x, (h,), P["bert.embeddings.LayerNorm.weight"], P["bert.embeddings.LayerNorm.bias"], eps)
    drop = lambda t, p: F.dropout(t, p, training) if training and p > 0 else t
    hp, ap = c["hidden_dropout_prob"], c["attention_probs_dropout_prob"]
    x = drop(x, hp)
    # get_extended_attention_mask: (1 - mask) * finfo.min, broadcast over heads and queries
    ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
    for l in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{l}."
        lin = lambda t, n: F.linear(t, P[p + n + ".weight"], P[p + n + ".bias"])
        split = lambda t: t.view(b, s, heads, d).permute(0, 2, 1, 3)
        q, k, v = (split(lin(x, "attention.self." + n)) for n in ("query", "key", "value"))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + ext
        probs = drop(F.softmax(scores, dim=-1), ap)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(b, s, h)
        x = F.layer_norm(drop(lin(ctx, "attention.output.dense"), hp) + x, (h,), P[p + "attention.output.LayerNorm.weight"],
                         P[p + "attention.output.LayerNorm.bias"], eps)
        f = F.gelu(lin(x, "intermediate.dense"))
        x = F.layer_norm(drop(lin(f, "output.dense"), hp) + x, (h,), P[p + "output.LayerNorm.weight"],
                         P[p + "output.LayerNorm.bias"], eps)
    logits = F.linear(x, P["qa_outputs.weight"], P["qa_outputs.bias"])
    start_logits, end_logits = logits[..., 0], logits[..., 1]
    ignored = start_logits.size(1)
    sp, ep = start_positions.clamp(0, ignored), end_positions.clamp(0, ignored)
    loss = (F.cross_entropy(start_logits, sp, ignore_index=ignored) +
            F.cross_entropy(end_logits, ep, ignore_index=ignored)) / 2
    return loss, logits
