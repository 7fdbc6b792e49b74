#!/usr/bin/python3
"""PyTorch reference fixtures for cputrain's encoder families and heads (the C++ parity tests read them).

Runs scripts/torch_encoders.py (Hugging Face's BERT, ELECTRA, DistilBERT and RoBERTa models written out in plain
PyTorch) on a tiny deterministic configuration and batch, and writes one safetensors file per family and head to
tests/nn/data/encoders/<model_type>_<head>.safetensors, plus <model_type>_sequence_classification_multi_label and
_regression. Each holds
  param/<hf name>          the weights, named as HF's model.safetensors names them (a tied tensor once, under the
                           name HF keeps: the word table, not the MLM decoder)
  input/input_ids, input/attention_mask, input/token_type_ids (not for DistilBERT, which has none)
  input/labels             (QA: input/start_positions, input/end_positions)
  expected/loss [1], expected/logits     of one forward with dropout off
  grad/<hf name>           the gradient of that loss for every param/ tensor (a tied tensor's gradient is the sum
                           over both of its uses)
  expected_bf16/loss, expected_bf16/logits   the same forward under torch.autocast("cpu", dtype=torch.bfloat16),
                           HF's mixed precision on CPU. (tests/nn/bert_qa_test.cpp checks cputrain's bf16 path against
                           its own fp32 result within 1e-2; these give the autocast numbers too, to be compared with a
                           bf16-sized tolerance, never bit for bit)
and as __metadata__: "config" (a complete config.json for the family and head), "torch" (the version that made it)
and "structurally_zero_grads" (a JSON list of the tensors whose gradient is zero in exact arithmetic, so holds
rounding noise only: compare those by size, not by relative error).

Weights are random, not HF's initialisation (torch_encoders.hf_init has that): normal(0, 0.2) matrices, LayerNorm
weights 1 + 0.1 n and every bias 0.05 n, so that a gradient bug in a bias or a LayerNorm shows; the padding rows are
left random too (HF zeroes them), so an implementation that skips the lookup of pad tokens, or lets gradient into
the padding row, shows up.

Regenerate (byte-identical on rerun; Debian's python3-torch 1.13, one thread):
    /usr/bin/python3 scripts/encoder_reference.py
Self-check: (a) BERT QA equals scripts/torch_bert_qa.py on tests/nn/data/bert_qa_reference.safetensors; (b) every
gradient is nonzero but the structurally zero ones, padding rows get none; (c) names and shapes equal a replica of
HF's module trees after save_pretrained's tied-weight de-duplication; (d) the files on disk equal a fresh
generation byte for byte; (e) ELECTRA and DistilBERT reproduce BERT on renamed weights where the math coincides:
    /usr/bin/python3 scripts/encoder_reference.py --check
"""
import argparse
import json
import os
import re
import struct
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_bert_qa  # noqa: E402
from pytorch_reference import write_safetensors  # noqa: E402
from torch_encoders import (HEADS, TIED_WEIGHTS_KEYS, architecture, dims, family, forward, is_layer_norm,  # noqa: E402
                            padding_rows, parameter_shapes, tied_parameters)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(ROOT, "tests", "nn", "data", "encoders")
BERT_QA_FIXTURE = os.path.join(ROOT, "tests", "nn", "data", "bert_qa_reference.safetensors")

FAMILIES = ("bert", "electra", "distilbert", "roberta")
BATCH, SEQ = 3, 12
MASK_ID = 3            # the [MASK] / <mask> stand-in for masked LM inputs; real tokens are drawn from 4..vocab-1
WEIGHT_STD = 0.2       # like pytorch_reference.py: large enough that every layer matters to the logits

# (variant suffix, problem_type, id2label) for the sequence-classification fixtures
SEQ_CLS_VARIANTS = (
    ("", "single_label_classification", ["negative", "neutral", "positive"]),
    ("_multi_label", "multi_label_classification", ["toxic", "obscene", "insult"]),
    ("_regression", "regression", ["LABEL_0"]),
)
TOKEN_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def base_config(model_type):
    """The config.json keys of each family that the math reads, with its configuration_*.py defaults where the tiny
    sizes do not override them. Dropouts are 0 so a test may run in training mode and still match."""
    if model_type == "distilbert":
        return {
            "model_type": "distilbert", "vocab_size": 40, "max_position_embeddings": 24, "sinusoidal_pos_embds": False,
            "n_layers": 2, "n_heads": 4, "dim": 32, "hidden_dim": 48, "dropout": 0.0, "attention_dropout": 0.0,
            "activation": "gelu", "initializer_range": 0.02, "qa_dropout": 0.0, "seq_classif_dropout": 0.0,
            "pad_token_id": 0, "tie_word_embeddings": True, "torch_dtype": "float32",
        }
    c = {
        "model_type": model_type, "vocab_size": 40, "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "intermediate_size": 48, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0, "max_position_embeddings": 24, "type_vocab_size": 2,
        "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "absolute",
        "classifier_dropout": None, "use_cache": True, "tie_word_embeddings": True, "torch_dtype": "float32",
    }
    if model_type == "electra":
        # embedding_size < hidden_size, as in electra-small, so embeddings_project exists
        c.update({"embedding_size": 16, "summary_type": "first", "summary_use_proj": True,
                  "summary_activation": "gelu", "summary_last_dropout": 0.0})
    if model_type == "roberta":
        # roberta-base's values: pad 1 (<s> 0, </s> 2), one token type, eps 1e-5, and max_position_embeddings =
        # longest sequence + pad + 1 (514 there), here exactly SEQ + 2 so an off-by-one in the position ids overflows
        c.update({"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "type_vocab_size": 1,
                  "layer_norm_eps": 1e-05, "max_position_embeddings": SEQ + 2})
    return c


def make_config(model_type, head, problem_type=None, labels=None):
    c = base_config(model_type)
    c["architectures"] = [architecture(model_type, head)]
    if head == "sequence_classification":
        c["problem_type"] = problem_type
    if labels is not None:
        c["num_labels"] = len(labels)
        c["id2label"] = {str(i): n for i, n in enumerate(labels)}
        c["label2id"] = {n: i for i, n in enumerate(labels)}
    return c


def fixtures():
    """(file stem, config, head) for every fixture, with a seed each."""
    out = []
    for fi, model_type in enumerate(FAMILIES):
        for hi, head in enumerate(HEADS):
            if head == "sequence_classification":
                for vi, (suffix, pt, labels) in enumerate(SEQ_CLS_VARIANTS):
                    out.append((f"{model_type}_{head}{suffix}", make_config(model_type, head, pt, labels), head,
                                1000 + 100 * fi + 10 * hi + vi))
            else:
                labels = TOKEN_LABELS if head == "token_classification" else None
                out.append((f"{model_type}_{head}", make_config(model_type, head, labels=labels), head,
                            1000 + 100 * fi + 10 * hi))
    return out


def fixture_weights(c, head, g):
    P = {}
    for name, shape in parameter_shapes(c, head).items():
        if is_layer_norm(name) and name.endswith(".weight"):
            t = 1.0 + 0.1 * torch.randn(shape, generator=g)
        elif name.endswith(".bias"):  # also the MLM heads' own bias (cls.predictions.bias, lm_head.bias, ...)
            t = 0.05 * torch.randn(shape, generator=g)
        else:
            t = WEIGHT_STD * torch.randn(shape, generator=g)
        P[name] = t.float()
    return P


def fixture_batch(c, head, g):
    fam = family(c)
    pad = c["pad_token_id"]
    input_ids = torch.randint(4, c["vocab_size"], (BATCH, SEQ), generator=g)
    attention_mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    attention_mask[1, 9:] = 0   # right-padded rows, as the tokenizers pad
    attention_mask[2, 5:] = 0
    input_ids[attention_mask == 0] = pad
    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    if fam != "distilbert":
        token_type_ids = torch.zeros(BATCH, SEQ, dtype=torch.int64)
        if c["type_vocab_size"] > 1:
            token_type_ids[:, 4:] = 1           # a second segment, padded with type 0 as the tokenizers do
            token_type_ids[attention_mask == 0] = 0
        batch["token_type_ids"] = token_type_ids
    if head == "question_answering":
        batch["start_positions"] = torch.tensor([5, 0, 30])  # 30 is past the sequence: clamped to SEQ = ignored
        batch["end_positions"] = torch.tensor([7, 0, 3])
    elif head == "sequence_classification":
        pt = c["problem_type"]
        if pt == "single_label_classification":
            batch["labels"] = torch.tensor([2, 0, 1])
        elif pt == "multi_label_classification":
            batch["labels"] = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
        else:
            batch["labels"] = torch.tensor([0.5, -1.25, 2.0])
    elif head == "token_classification":
        labels = torch.randint(0, len(TOKEN_LABELS), (BATCH, SEQ), generator=g)
        labels[:, 0] = -100                     # the first (special) token, as tokenize_and_align_labels does
        labels[attention_mask == 0] = -100      # DataCollatorForTokenClassification pads labels with -100
        batch["labels"] = labels
    elif head == "masked_lm":
        labels = torch.full((BATCH, SEQ), -100, dtype=torch.int64)
        for r, s, replace in ((0, 1, True), (0, 6, False), (0, 10, True), (1, 3, True), (1, 8, True), (2, 2, True)):
            labels[r, s] = input_ids[r, s]
            if replace:                         # (0, 6) keeps its token: the collator's "unchanged" 10%
                input_ids[r, s] = MASK_ID
        batch["labels"] = labels
    return batch


def structurally_zero(c, head):
    """Gradients that are zero in exact arithmetic. A key bias adds q.b to every score of a query row alike, and
    softmax ignores that. In QA, qa_outputs.bias gets the sum over positions of softmax - one-hot (zero for each
    example), and through qa_outputs the last LayerNorm's bias gets W^T of that same sum."""
    fam = family(c)
    _, _, layers, _, _ = dims(c)
    names = [n for n in parameter_shapes(c, head) if n.endswith(("attention.self.key.bias", "attention.k_lin.bias"))]
    if head == "question_answering":
        names.append("qa_outputs.bias")
        last = layers - 1
        names.append(f"distilbert.transformer.layer.{last}.output_layer_norm.bias" if fam == "distilbert"
                     else f"{fam}.encoder.layer.{last}.output.LayerNorm.bias")
    return sorted(names)


def compute(c, head, seed):
    g = torch.Generator().manual_seed(seed)
    P0 = fixture_weights(c, head, g)
    batch = fixture_batch(c, head, g)
    P = {n: t.clone().requires_grad_() for n, t in P0.items()}
    loss, logits = forward(P, c, head, batch)
    loss.backward()
    out = {"param/" + n: t for n, t in P0.items()}
    out.update({"input/" + n: t for n, t in batch.items()})
    out["expected/loss"] = loss.detach().reshape(1)
    out["expected/logits"] = logits.detach()
    out.update({"grad/" + n: t.grad.detach().clone() for n, t in P.items()})
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        loss16, logits16 = forward(P0, c, head, batch)
    out["expected_bf16/loss"] = loss16.float().reshape(1)
    out["expected_bf16/logits"] = logits16.float()
    meta = {"config": json.dumps(c), "torch": torch.__version__,
            "structurally_zero_grads": json.dumps(structurally_zero(c, head))}
    return out, meta


def read_safetensors(path):
    """(tensors, metadata) of a safetensors file with F32 and I64 tensors."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    dtypes = {"F32": torch.float32, "I64": torch.int64}
    out = {}
    for name, info in header.items():
        a, b = info["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=dtypes[info["dtype"]]) if b > a else \
            torch.empty(0, dtype=dtypes[info["dtype"]])
        out[name] = t.reshape(info["shape"])
    return out, meta


def write_all(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for stem, c, head, seed in fixtures():
        tensors, meta = compute(c, head, seed)
        path = os.path.join(out_dir, stem + ".safetensors")
        write_safetensors(path, tensors, meta)
        print(f"{path}: {os.path.getsize(path)} bytes, loss {tensors['expected/loss'].item():.7f}, "
              f"bf16 loss {tensors['expected_bf16/loss'].item():.7f}")


# ---------------------------------------------------------------------------------------------------------- checks

def check_bert_qa():
    """(a) BERT QA here == torch_bert_qa.forward (and the stored fixture) on bert_qa_reference.safetensors."""
    T, meta = read_safetensors(BERT_QA_FIXTURE)
    c = json.loads(meta["config"])
    names = list(torch_bert_qa.parameter_shapes(c))
    assert names == list(parameter_shapes(c, "question_answering")), "BERT QA names differ from torch_bert_qa"
    batch = {k: T["input/" + k] for k in ("input_ids", "token_type_ids", "attention_mask", "start_positions",
                                          "end_positions")}
    Pa = {n: T["param/" + n].clone().requires_grad_() for n in names}
    Pb = {n: T["param/" + n].clone().requires_grad_() for n in names}
    loss_a, logits_a = forward(Pa, c, "question_answering", batch)
    loss_b, logits_b = torch_bert_qa.forward(Pb, c, batch["input_ids"], batch["token_type_ids"],
                                             batch["attention_mask"], batch["start_positions"], batch["end_positions"])
    loss_a.backward()
    loss_b.backward()
    worst = max([(logits_a - logits_b).abs().max().item(), (loss_a - loss_b).abs().item()] +
                [(Pa[n].grad - Pb[n].grad).abs().max().item() for n in names])
    stored = max([(logits_a - T["expected/logits"]).abs().max().item(),
                  (loss_a.reshape(1) - T["expected/loss"]).abs().item()] +
                 [(Pa[n].grad - T["grad/" + n]).abs().max().item() for n in names])
    ok = worst <= 1e-6 and stored <= 1e-6
    print(f"(a) bert question_answering vs torch_bert_qa.forward on bert_qa_reference.safetensors: loss "
          f"{loss_a.item():.7f}, max |diff| over logits, loss and {len(names)} grads {worst:.3g} "
          f"(vs the stored expected/ and grad/: {stored:.3g}) {'OK' if ok else 'FAIL'}")
    return ok


def check_gradients(stem, c, head, T):
    """(b) every gradient nonzero somewhere, except those zero in exact arithmetic (which must then be noise)."""
    grads = {n[len("grad/"):]: t for n, t in T.items() if n.startswith("grad/")}
    scale = max(t.abs().max().item() for t in grads.values())
    tiny = sorted(n for n, t in grads.items() if t.abs().max().item() < 1e-6 * scale)
    expected = structurally_zero(c, head)
    ok = tiny == expected and set(grads) == set(parameter_shapes(c, head))
    if not ok:
        print(f"(b) {stem}: near-zero gradients {tiny}, expected {expected}  FAIL")
    # padding_idx rows: no gradient from the lookup, so none at all unless the table is also the tied MLM decoder
    for name, row in padding_rows(c).items():
        zero = bool((grads[name][row] == 0).all())
        if zero != (head != "masked_lm" or "word_embeddings" not in name):
            ok = False
            print(f"(b) {stem}: padding row {row} of {name} {'has no' if zero else 'has a'} gradient  FAIL")
    # rows of the embedding tables that get no gradient (informative: unused ids, padding rows, positions >= SEQ)
    rows = {}
    for n, t in grads.items():
        if "embeddings." in n and n.endswith("embeddings.weight"):
            zero = (t.abs().amax(dim=1) == 0).nonzero().flatten().tolist()
            rows[n.split(".")[-2]] = zero
    return ok, rows


def hf_module_tree(c, head):
    """An nn.Module tree with the attribute names, nesting and registration order of HF's X<Head> __init__ (no
    forward), tied as HF ties them: what XForY(config).state_dict() is made from."""
    def m(**children):
        mod = nn.Module()
        for k, v in children.items():
            setattr(mod, k, v)
        return mod
    L, LN, E = nn.Linear, nn.LayerNorm, nn.Embedding
    fam = family(c)
    h, e, layers, _, inter = dims(c)
    v, pad = c["vocab_size"], c["pad_token_id"]
    n = 2 if head == "question_answering" else c.get("num_labels", 2)
    if fam == "distilbert":
        base = m(embeddings=m(word_embeddings=E(v, h, padding_idx=pad),
                              position_embeddings=E(c["max_position_embeddings"], h), LayerNorm=LN(h, eps=1e-12)),
                 transformer=m(layer=nn.ModuleList([
                     m(attention=m(q_lin=L(h, h), k_lin=L(h, h), v_lin=L(h, h), out_lin=L(h, h)),
                       sa_layer_norm=LN(h), ffn=m(lin1=L(h, inter), lin2=L(inter, h)), output_layer_norm=LN(h))
                     for _ in range(layers)])))
    else:
        pos_pad = pad if fam == "roberta" else None
        base = nn.Module()
        base.embeddings = m(word_embeddings=E(v, e, padding_idx=pad),
                            position_embeddings=E(c["max_position_embeddings"], e, padding_idx=pos_pad),
                            token_type_embeddings=E(c["type_vocab_size"], e), LayerNorm=LN(e))
        if fam == "electra" and e != h:
            base.embeddings_project = L(e, h)
        base.encoder = m(layer=nn.ModuleList([
            m(attention=m(self=m(query=L(h, h), key=L(h, h), value=L(h, h)), output=m(dense=L(h, h), LayerNorm=LN(h))),
              intermediate=m(dense=L(h, inter)), output=m(dense=L(inter, h), LayerNorm=LN(h)))
            for _ in range(layers)]))
        if fam == "bert" and head == "sequence_classification":
            base.pooler = m(dense=L(h, h))
    model = nn.Module()
    setattr(model, fam, base)
    word = base.embeddings.word_embeddings
    if head == "question_answering":
        model.qa_outputs = L(h, 2)
    elif head == "sequence_classification":
        if fam == "bert":
            model.classifier = L(h, n)
        elif fam == "distilbert":
            model.pre_classifier = L(h, h)
            model.classifier = L(h, n)
        else:
            model.classifier = m(dense=L(h, h), out_proj=L(h, n))
    elif head == "token_classification":
        model.classifier = L(h, n)
    elif fam == "bert":  # BertOnlyMLMHead > BertLMPredictionHead
        pred = nn.Module()
        pred.transform = m(dense=L(h, h), LayerNorm=LN(h))
        pred.decoder = L(h, v, bias=False)
        pred.bias = nn.Parameter(torch.zeros(v))
        pred.decoder.bias = pred.bias
        pred.decoder.weight = word.weight
        model.cls = m(predictions=pred)
    elif fam == "roberta":  # RobertaLMHead
        lm = nn.Module()
        lm.dense, lm.layer_norm, lm.decoder = L(h, h), LN(h), L(h, v)
        lm.bias = nn.Parameter(torch.zeros(v))
        lm.decoder.bias = lm.bias
        lm.decoder.weight = word.weight
        model.lm_head = lm
    elif fam == "distilbert":
        model.vocab_transform, model.vocab_layer_norm, model.vocab_projector = L(h, h), LN(h), L(h, v)
        model.vocab_projector.weight = word.weight
    else:  # ElectraForMaskedLM
        model.generator_predictions = m(LayerNorm=LN(e), dense=L(h, e))
        model.generator_lm_head = L(e, v)
        model.generator_lm_head.weight = word.weight
    return model


def safetensors_names(model, tied_keys):
    """save_pretrained(safe_serialization=True)'s de-duplication: among state_dict names sharing storage, drop those
    matching _tied_weights_keys (in sorted order, keeping at least one)."""
    sd = model.state_dict()
    by_ptr = {}
    for name, t in sd.items():
        by_ptr.setdefault(t.data_ptr(), []).append(name)
    dropped = {}
    for names in by_ptr.values():
        if len(names) < 2:
            continue
        found = 0
        for name in sorted(names):
            if any(re.search(pat, name) for pat in tied_keys):
                found += 1
                if found < len(names):
                    dropped[name] = None
        kept = [x for x in names if x not in dropped]
        for name in names:
            if name in dropped:
                dropped[name] = kept[0]
    kept = {name: list(t.shape) for name, t in sd.items() if name not in dropped}
    return kept, dropped


def check_names():
    """(c) parameter_shapes / tied_parameters against HF's module trees, for every family and head; and DistilBERT's
    names spelled out."""
    ok = True
    for stem, c, head, _ in fixtures():
        model = hf_module_tree(c, head)
        kept, dropped = safetensors_names(model, TIED_WEIGHTS_KEYS[family(c)] if head == "masked_lm" else [])
        mine = parameter_shapes(c, head)
        if list(kept.items()) != list(mine.items()) or dropped != tied_parameters(c, head):
            ok = False
            print(f"(c) {stem}: names/shapes differ from the HF module tree:\n  only HF: "
                  f"{sorted(set(kept) - set(mine))}\n  only here: {sorted(set(mine) - set(kept))}\n  tied: {dropped}")
    c = make_config("distilbert", "sequence_classification", "single_label_classification", ["a", "b", "c"])
    s = parameter_shapes(c, "sequence_classification")
    want = {
        "distilbert.embeddings.word_embeddings.weight": [40, 32],
        "distilbert.embeddings.position_embeddings.weight": [24, 32],
        "distilbert.embeddings.LayerNorm.weight": [32],
        "distilbert.transformer.layer.0.attention.q_lin.weight": [32, 32],
        "distilbert.transformer.layer.0.attention.k_lin.bias": [32],
        "distilbert.transformer.layer.0.attention.out_lin.weight": [32, 32],
        "distilbert.transformer.layer.0.sa_layer_norm.weight": [32],
        "distilbert.transformer.layer.0.sa_layer_norm.bias": [32],
        "distilbert.transformer.layer.1.ffn.lin1.weight": [48, 32],
        "distilbert.transformer.layer.1.ffn.lin2.weight": [32, 48],
        "distilbert.transformer.layer.1.output_layer_norm.weight": [32],
        "pre_classifier.weight": [32, 32], "pre_classifier.bias": [32],
        "classifier.weight": [3, 32], "classifier.bias": [3],
    }
    bad = {k: s.get(k) for k, shape in want.items() if s.get(k) != shape}
    if bad or any("token_type" in k for k in s) or len(s) != 4 + 2 * 16 + 4:
        ok = False
        print(f"(c) distilbert names/shapes wrong: {bad}")
    print(f"(c) names and shapes of all {len(fixtures())} fixtures equal HF's module trees after save_pretrained's "
          f"tied-weight de-duplication; DistilBERT's {len(s)} tensors (sa_layer_norm, output_layer_norm, "
          f"ffn.lin1/lin2, q_lin..out_lin, pre_classifier, no token types) as HF names them: "
          f"{'OK' if ok else 'FAIL'}")
    return ok


def check_cross_family():
    """(e) With dropout off the families are one network in different clothes: ELECTRA with embedding_size ==
    hidden_size is BERT, and DistilBERT is BERT with a zero token-type table (q/sqrt(d) before the matmul and
    masked_fill instead of the additive mask change rounding only). Run each on BERT's fixture weights renamed."""
    T, meta = read_safetensors(BERT_QA_FIXTURE)
    cb = json.loads(meta["config"])
    batch = {k: T["input/" + k] for k in ("input_ids", "token_type_ids", "attention_mask", "start_positions",
                                          "end_positions")}
    Pb = {n: T["param/" + n].clone().requires_grad_() for n in parameter_shapes(cb, "question_answering")}
    loss_b, logits_b = forward(Pb, cb, "question_answering", batch)
    loss_b.backward()
    ok = True
    ce = dict(cb, model_type="electra", embedding_size=cb["hidden_size"])
    cd = {"model_type": "distilbert", "vocab_size": cb["vocab_size"], "max_position_embeddings":
          cb["max_position_embeddings"], "n_layers": cb["num_hidden_layers"], "n_heads": cb["num_attention_heads"],
          "dim": cb["hidden_size"], "hidden_dim": cb["intermediate_size"], "dropout": 0.0, "attention_dropout": 0.0,
          "activation": "gelu", "qa_dropout": 0.0, "pad_token_id": cb["pad_token_id"]}
    # BERT name -> DistilBERT name; the attention ones first, so ".output.dense" is left meaning the FFN's
    distil = (("bert.encoder.layer.", "distilbert.transformer.layer."), ("bert.embeddings.", "distilbert.embeddings."),
              ("attention.self.query", "attention.q_lin"), ("attention.self.key", "attention.k_lin"),
              ("attention.self.value", "attention.v_lin"), ("attention.output.dense", "attention.out_lin"),
              ("attention.output.LayerNorm", "sa_layer_norm"), ("intermediate.dense", "ffn.lin1"),
              (".output.dense", ".ffn.lin2"), (".output.LayerNorm", ".output_layer_norm"))
    for c in (ce, cd):
        fam = family(c)
        rename = {}
        for n in Pb:
            if fam == "distilbert":
                rename[n] = n
                for x, y in distil:
                    rename[n] = rename[n].replace(x, y)
            else:
                rename[n] = n.replace("bert.", "electra.", 1) if n.startswith("bert.") else n
        batch_c = dict(batch)
        if fam == "distilbert":  # no token types there: BERT's run below gets a zero table and type 0 throughout
            batch_c.pop("token_type_ids")
        P = {rename[n]: T["param/" + n].clone().requires_grad_() for n in Pb
             if not (fam == "distilbert" and n.endswith("token_type_embeddings.weight"))}
        assert set(P) == set(parameter_shapes(c, "question_answering")), sorted(set(P) ^ set(
            parameter_shapes(c, "question_answering")))
        loss, logits = forward(P, c, "question_answering", batch_c)
        loss.backward()
        if fam == "distilbert":
            # the BERT run to compare with: token types all 0 and a zero token-type table
            Pz = {n: (torch.zeros_like(T["param/" + n]) if n.endswith("token_type_embeddings.weight")
                      else T["param/" + n].clone()).requires_grad_() for n in Pb}
            bz = dict(batch, token_type_ids=torch.zeros_like(batch["token_type_ids"]))
            ref_loss, ref_logits = forward(Pz, cb, "question_answering", bz)
            ref_loss.backward()
            ref = {rename[n]: t.grad for n, t in Pz.items() if rename[n] in P}
        else:
            ref_loss, ref_logits, ref = loss_b, logits_b, {rename[n]: t.grad for n, t in Pb.items()}
        scale = max(g.abs().max().item() for g in ref.values())
        worst = max([(logits - ref_logits).abs().max().item() / ref_logits.abs().max().item(),
                     abs(loss.item() - ref_loss.item()) / abs(ref_loss.item())] +
                    [(P[n].grad - g).abs().max().item() / scale for n, g in ref.items()])
        good = worst < 1e-5 if fam == "distilbert" else worst == 0
        ok &= good
        wanted = "< 1e-5" if fam == "distilbert" else "exactly 0"
        print(f"(e) {fam} QA on BERT's fixture weights, renamed: largest difference from BERT {worst:.3g} "
              f"(logits and loss relative to their size, gradients to the largest; {wanted} wanted) "
              f"{'OK' if good else 'FAIL'}")
    return ok


def check(out_dir):
    torch.set_num_threads(1)
    ok = check_bert_qa()
    ok &= check_cross_family()
    zero_rows, bad_grads, stale = {}, 0, []
    for stem, c, head, seed in fixtures():
        tensors, meta = compute(c, head, seed)
        g_ok, rows = check_gradients(stem, c, head, tensors)
        bad_grads += not g_ok
        zero_rows[stem] = rows
        path = os.path.join(out_dir, stem + ".safetensors")
        fresh = os.path.join(out_dir, "." + stem + ".check")
        write_safetensors(fresh, tensors, meta)
        with open(fresh, "rb") as a:
            new = a.read()
        os.remove(fresh)
        if not os.path.exists(path) or open(path, "rb").read() != new:
            stale.append(stem)
    ok &= bad_grads == 0
    print(f"(b) gradients: every tensor of all {len(zero_rows)} fixtures has a gradient above 1e-6 x the largest, "
          f"except exactly the structurally zero ones (key biases; in QA also qa_outputs.bias and the last "
          f"LayerNorm's bias); padding_idx rows get none (but the word table's in masked LM, the tied decoder's): {'OK' if bad_grads == 0 else f'{bad_grads} FAIL'}")
    for stem in ("bert_masked_lm", "bert_token_classification", "roberta_question_answering",
                 "distilbert_question_answering", "electra_masked_lm"):
        print(f"    embedding rows without gradient, {stem}: " +
              "; ".join(f"{k} {v}" for k, v in zero_rows[stem].items()))
    ok &= check_names()
    print(f"(d) files in {os.path.relpath(out_dir, ROOT)} byte-identical to a fresh generation: "
          f"{'OK' if not stale else 'STALE ' + ', '.join(stale)}")
    ok &= not stale
    print("check passed" if ok else "check FAILED")
    return ok


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=OUT_DIR, help="output folder (default tests/nn/data/encoders)")
    ap.add_argument("--check", action="store_true", help="run the self-checks instead of writing")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.check:
        sys.exit(0 if check(args.out) else 1)
    write_all(args.out)
