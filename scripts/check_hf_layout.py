#!/usr/bin/env python3
"""Checks that a directory is what transformers' AutoModelForQuestionAnswering.from_pretrained and
AutoTokenizer.from_pretrained load for BERT: config.json (model_type bert, BertForQuestionAnswering), a
model.safetensors holding exactly BertForQuestionAnswering's state dict (names, shapes, F32, metadata
format=pt), and the tokenizer files. Needs only the Python standard library (transformers cannot be installed on
the project's machines); tests/examples/run_qa_test.sh runs it on run_qa's output.

    scripts/check_hf_layout.py OUTPUT_DIR
"""
import json
import os
import struct
import sys



def expected_shapes(c):
    h, i = c["hidden_size"], c["intermediate_size"]
    shapes = {
        "bert.embeddings.word_embeddings.weight": [c["vocab_size"], h],
        "bert.embeddings.position_embeddings.weight": [c["max_position_embeddings"], h],
        "bert.embeddings.token_type_embeddings.weight": [c["type_vocab_size"], h],
        "bert.embeddings.LayerNorm.weight": [h], "bert.embeddings.LayerNorm.bias": [h],
        "qa_outputs.weight": [2, h], "qa_outputs.bias": [2],
    }
    for l in range(c["num_hidden_layers"]):
        p = f"bert.encoder.layer.{l}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[p + name + ".weight"] = [h, h]
            shapes[p + name + ".bias"] = [h]
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + ln + ".weight"] = [h]
            shapes[p + ln + ".bias"] = [h]
        shapes[p + "intermediate.dense.weight"] = [i, h]
        shapes[p + "intermediate.dense.bias"] = [i]
        shapes[p + "output.dense.weight"] = [h, i]
        shapes[p + "output.dense.bias"] = [h]
    return shapes


def main(d):
    problems = []
    config = json.load(open(os.path.join(d, "config.json")))
    if config.get("model_type") != "bert":
        problems.append("config.json: model_type is not bert")
    if config.get("architectures") != ["BertForQuestionAnswering"]:
        problems.append("config.json: architectures is not [BertForQuestionAnswering]")
    with open(os.path.join(d, "model.safetensors"), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data_size = os.fstat(f.fileno()).st_size - 8 - n
    meta = header.pop("__metadata__", {})
    if meta.get("format") != "pt":
        problems.append("model.safetensors: metadata format is not pt")
    want = expected_shapes(config)
    for name in sorted(set(want) - set(header)):
        problems.append(f"model.safetensors: no {name}")
    for name in sorted(set(header) - set(want)):
        problems.append(f"model.safetensors: unexpected {name}")
    end = 0
    for name, info in header.items():
        if name in want and info["shape"] != want[name]:
            problems.append(f"model.safetensors: {name} has shape {info['shape']}, expected {want[name]}")
        if info["dtype"] != "F32":
            problems.append(f"model.safetensors: {name} is {info['dtype']}, not F32")
        end = max(end, info["data_offsets"][1])
    if end != data_size:
        problems.append(f"model.safetensors: data ends at {end}, file holds {data_size} bytes")
    vocab = open(os.path.join(d, "vocab.txt"), encoding="utf-8").read().split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    if len(vocab) > config["vocab_size"]:
        problems.append(f"vocab.txt: {len(vocab)} tokens for vocab_size {config['vocab_size']}")
    for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]"):
        if special not in vocab:
            problems.append(f"vocab.txt: no {special}")
    tok = json.load(open(os.path.join(d, "tokenizer_config.json")))
    if tok.get("tokenizer_class") not in ("BertTokenizer", "BertTokenizerFast"):
        problems.append("tokenizer_config.json: tokenizer_class is not BertTokenizer")
    json.load(open(os.path.join(d, "special_tokens_map.json")))
    for p in problems:
        print(p)
    print(f"{d}: {'loads as' if not problems else 'does NOT load as'} BertForQuestionAnswering "
          f"({len(header)} tensors, {len(vocab)} tokens)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
