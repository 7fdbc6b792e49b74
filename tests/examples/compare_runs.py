"""Checks that run_qa runs trained the same model as a reference run (the distributed and multi-node tests).

    compare_runs.py WORK ENTRIES RUN... [--no-predictions] [--tolerance T] [--weights-tolerance W]

WORK/one is the reference (one process); each WORK/RUN must log ENTRIES loss entries with the same steps, learning
rates, losses and grad norms (relative difference <= 1e-5), epochs within 0.01 (the epoch fraction counts
micro-batches, which round differently with accumulation, as in the Trainer), the same tensors with weights within
a relative difference of 1e-5, and (unless --no-predictions) the same eval_predictions.json. --tolerance and
--weights-tolerance replace the two 1e-5 bounds (runs that are not meant to be exact: bf16 communication).
Exits 1 on any difference, printing each one.
"""
import json
import math
import struct
import sys
from array import array


def weights(work, run):
    raw = open(f"{work}/{run}/model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header, base, out = json.loads(raw[8:8 + n]), 8 + n, {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a = array("f")
        a.frombytes(raw[base + info["data_offsets"][0]:base + info["data_offsets"][1]])
        out[name] = a
    return out


def log(work, run):
    return [e for e in json.load(open(f"{work}/{run}/trainer_state.json"))["log_history"] if "loss" in e]


# Tensors whose gradient is zero in exact arithmetic (softmax ignores the key bias; the start/end softmaxes over
# positions ignore the QA bias and the last LayerNorm's bias): AdamW divides their rounding noise by its own size
# and takes full steps with it, in PyTorch too, so they are not compared.
def structural(name):
    return name.endswith("attention.self.key.bias") or name == "qa_outputs.bias" or \
        name == "bert.encoder.layer.1.output.LayerNorm.bias"


def options(args):
    """The positional arguments and the options of the command line."""
    positional, found = [], {"--no-predictions": False, "--tolerance": 1e-5, "--weights-tolerance": 1e-5}
    while args:
        a = args.pop(0)
        if a == "--no-predictions":
            found[a] = True
        elif a in found:
            found[a] = float(args.pop(0))
        else:
            positional.append(a)
    return positional, found


def main(argv):
    positional, found = options(argv[1:])
    predictions = not found["--no-predictions"]
    tolerance, weights_tolerance = found["--tolerance"], found["--weights-tolerance"]
    work, entries, runs = positional[0], int(positional[1]), positional[2:]
    one, one_log = weights(work, "one"), log(work, "one")
    ok = True
    for run in runs:
        other, other_log = weights(work, run), log(work, run)
        if not len(other_log) == len(one_log) == entries:
            print(f"{run}: {len(other_log)} log entries, the single process {len(one_log)}, expected {entries}")
            ok = False
        for a, b in zip(one_log, other_log):
            for key in ("loss", "grad_norm"):
                if abs(a[key] - b[key]) > tolerance * abs(a[key]):
                    print(f"{run}: step {a['step']}: {key} {b[key]} vs {a[key]}")
                    ok = False
            if a["learning_rate"] != b["learning_rate"] or abs(a["epoch"] - b["epoch"]) > 0.01 or a["step"] != b["step"]:
                print(f"{run}: step {a['step']} vs {b['step']}: learning_rate {b['learning_rate']} vs "
                      f"{a['learning_rate']}, epoch {b['epoch']} vs {a['epoch']}")
                ok = False
        if sorted(other) != sorted(one):
            print(f"{run}: tensors differ: {sorted(set(one) ^ set(other))}")
            ok = False
            continue
        diff = sum((p - q) ** 2 for k in one if not structural(k) for p, q in zip(one[k], other[k]))
        norm = sum(p * p for k in one if not structural(k) for p in one[k])
        rel = math.sqrt(diff / norm)
        print(f"{run}: weights relative difference {rel:.3g}")
        if not rel <= weights_tolerance:
            ok = False
        # Evaluation was split between the ranks and gathered: the same answers as one process computes.
        if predictions and json.load(open(f"{work}/{run}/eval_predictions.json")) != \
                json.load(open(f"{work}/one/eval_predictions.json")):
            print(f"{run}: eval_predictions.json differs from the single process's")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
