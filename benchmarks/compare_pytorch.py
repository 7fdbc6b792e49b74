#!/usr/bin/python3
"""Side-by-side training-step benchmark: cputrain-bench-step against benchmarks/pytorch_step.py on the same
configurations, in one run, alternating the two (rounds x configurations), so both see the same machine load.
Prints a Markdown table of the best-of-rounds samples/s, GFLOP/s, peak RSS and the ratios.

  /usr/bin/python3 benchmarks/compare_pytorch.py --bench build/release/benchmarks/cputrain-bench-step \\
      --threads 2 --rounds 3 [--configs base-2,mini,tiny] [--precisions fp32,bf16] [--torch-bf16-configs tiny] \\
      [--json FILE]

The configurations (CONFIGS) are BERT question answering (base-2, mini, tiny; the default) and GLUE-shaped
sequence classification on DistilBERT and RoBERTa (distilbert-base, distilbert-2, roberta-base, roberta-2).

--json FILE also writes every run's result and the best of each (config, precision, implementation) as JSON, for
the plots (benchmarks/plots/collect.sh).

PyTorch runs with OpenBLAS' OpenMP build (libopenblas0-openmp; its reference-BLAS default is 20x slower and no
fair peer), selected through LD_LIBRARY_PATH.
"""
import argparse
import json
import os
import subprocess
import sys

# Each entry's keys are both programs' flags: BERT question answering unless it names model_type and head. The
# sequence classification ones are GLUE's shape (128 tokens); RoBERTa's vocabulary is roberta-base's.
_GLUE = dict(hidden=768, heads=12, intermediate=3072, seq=128, batch=32, head="sequence_classification")
CONFIGS = {
    "base-2": dict(layers=2, hidden=768, heads=12, intermediate=3072, seq=384, batch=4),
    "mini": dict(layers=4, hidden=256, heads=4, intermediate=1024, seq=384, batch=8),
    "tiny": dict(layers=2, hidden=128, heads=2, intermediate=512, seq=128, batch=16),
    "distilbert-base": dict(_GLUE, model_type="distilbert", layers=6),
    "distilbert-2": dict(_GLUE, model_type="distilbert", layers=2),
    "roberta-base": dict(_GLUE, model_type="roberta", layers=12, vocab=50265),
    "roberta-2": dict(_GLUE, model_type="roberta", layers=2, vocab=50265),
}
OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


def run(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def args_of(config, precision, threads, steps):
    args = []
    for k, v in CONFIGS[config].items():
        args += [f"--{k}", str(v)]
    return args + ["--precision", precision, "--threads", str(threads), "--steps", str(steps)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--configs", default="base-2,mini,tiny")
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--torch-bf16-configs", default="tiny",
                    help="PyTorch's CPU autocast is 12-30x slower than its fp32 here: limit where it runs")
    ap.add_argument("--json", help="also write all results as JSON to this file")
    a = ap.parse_args()
    torch_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch_step.py")
    env = dict(os.environ)
    if os.path.isdir(OPENBLAS_OPENMP):
        env["LD_LIBRARY_PATH"] = OPENBLAS_OPENMP + (":" + env["LD_LIBRARY_PATH"] if "LD_LIBRARY_PATH" in env else "")
    configs = a.configs.split(",")
    precisions = a.precisions.split(",")
    torch_bf16 = set(a.torch_bf16_configs.split(",")) if a.torch_bf16_configs else set()
    best = {}
    runs = []
    for r in range(a.rounds):
        for config in configs:
            for precision in precisions:
                jobs = [("cputrain", [a.bench] + args_of(config, precision, a.threads, a.steps), None)]
                if precision == "fp32" or config in torch_bf16:
                    jobs.append(("pytorch", [sys.executable, torch_script] +
                                 args_of(config, precision, a.threads, a.steps if precision == "fp32" else 2), env))
                if r % 2:
                    jobs.reverse()
                for name, cmd, e in jobs:
                    result = run(cmd, e)
                    key = (config, precision, name)
                    runs.append(dict(round=r, config=config, precision=precision, implementation=name,
                                     result=result))
                    if key not in best or result["samples_per_s"] > best[key]["samples_per_s"]:
                        best[key] = result
                    print(f"round {r} {config} {precision} {name}: {result['samples_per_s']:.2f} samples/s",
                          file=sys.stderr)
    print(f"| config | precision | cputrain samples/s | PyTorch samples/s | speed ratio | cputrain GFLOP/s "
          f"(% of measured peak) | peak RSS cputrain / PyTorch (MiB) | RSS ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for config in configs:
        for precision in precisions:
            ours = best[(config, precision, "cputrain")]
            theirs = best.get((config, precision, "pytorch"))
            speed = f"{ours['samples_per_s'] / theirs['samples_per_s']:.2f}x" if theirs else "-"
            rss = f"{ours['peak_rss_mib'] / theirs['peak_rss_mib']:.2f}" if theirs else "-"
            print(f"| {config} | {precision} | {ours['samples_per_s']:.2f} | "
                  f"{theirs['samples_per_s']:.2f} | {speed} | " if theirs else
                  f"| {config} | {precision} | {ours['samples_per_s']:.2f} | not run | - | ", end="")
            print(f"{ours['gflops']:.1f} ({100 * ours['peak_fraction']:.0f}%) | {ours['peak_rss_mib']:.0f} / "
                  f"{theirs['peak_rss_mib']:.0f} | {rss} |" if theirs else
                  f"{ours['gflops']:.1f} ({100 * ours['peak_fraction']:.0f}%) | {ours['peak_rss_mib']:.0f} / - | - |")
    if a.json:
        best_list = [dict(config=c, precision=p, implementation=n, result=best[(c, p, n)])
                     for c in configs for p in precisions for n in ("cputrain", "pytorch") if (c, p, n) in best]
        with open(a.json, "w") as f:
            json.dump(dict(threads=a.threads, rounds=a.rounds, steps=a.steps, configs={c: CONFIGS[c] for c in configs},
                           best=best_list, runs=runs), f, indent=2)
            f.write("\n")
    for config in configs:
        if "fp32" in precisions and "bf16" in precisions:
            f32 = best[(config, "fp32", "cputrain")]
            b16 = best[(config, "bf16", "cputrain")]
            print(f"\ncputrain bf16 / fp32 on {config}: {b16['samples_per_s'] / f32['samples_per_s']:.2f}x speed, "
                  f"kept activations {b16['activation_mib']:.0f} / {f32['activation_mib']:.0f} MiB")
            if (config, "bf16", "pytorch") in best:
                t32 = best[(config, "fp32", "pytorch")]
                t16 = best[(config, "bf16", "pytorch")]
                print(f"PyTorch bf16 autocast / fp32 on {config}: {t16['samples_per_s'] / t32['samples_per_s']:.3f}x")


if __name__ == "__main__":
    main()
