#!/usr/bin/python3
"""The JSON side of the benchmark figures (Debian's python3, standard library only).

  results.py wrap --name N --title T --command C --result FILE --output OUT [--run CMD]... [--build DIR]
                  --started ISO-DATE [--load L] [--load-end L]
      wraps a benchmark's own JSON (FILE) into benchmarks/results/N.json: the command that produced it, the date,
      the machine (lscpu, cores, memory, OS, the build's compiler) and the 1-minute load when it started and ended.
  results.py dat RESULTS_DIR OUT_DIR
      writes, for every figure, the gnuplot data (OUT_DIR/<figure>*.dat) and its strings (OUT_DIR/<figure>.gp:
      titles, captions) from RESULTS_DIR/<figure>.json. Same JSON, same bytes out.

collect.sh calls the first, scripts/plot_benchmarks.sh the second.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys


# ----------------------------------------------------------------------------------------------------------------
# wrap

def _lscpu():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def _os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def _memory_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _compiler(build):
    """The build's C++ compiler and its version line, from its CMakeCache.txt."""
    if not build:
        return None
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            cache = f.read()
    except OSError:
        return None
    m = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.*)$", cache, re.M)
    if not m:
        return None
    try:
        version = subprocess.run([m.group(1), "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        version = m.group(1)
    flags = re.search(r"^CPUTRAIN_ARCH_FLAGS:\w+=(.*)$", cache, re.M)
    kind = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", cache, re.M)
    return {"compiler": version, "build_type": kind.group(1) if kind else None,
            "arch_flags": flags.group(1) if flags else None}


def machine(build, load, load_end):
    cpu = _lscpu()
    flags = cpu.get("Flags", "").split()
    return {
        "cpu": cpu.get("Model name"),
        "cpu_family_model": f"family {cpu.get('CPU family')} model {cpu.get('Model')}",
        "cpus": os.cpu_count(),
        "threads_per_core": cpu.get("Thread(s) per core"),
        "hypervisor": cpu.get("Hypervisor vendor"),
        "simd": [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16") if f in flags],
        "memory_gib": _memory_gib(),
        "os": _os_name(),
        "kernel": platform.release(),
        "build": _compiler(build),
        "load_1min_at_start": load,
        "load_1min_at_end": load_end,
    }


def wrap(a):
    with open(a.result) as f:
        result = json.load(f)
    out = {"name": a.name, "title": a.title, "command": a.command}
    if a.run:
        out["runs"] = a.run
    out["date"] = a.started
    out["machine"] = machine(a.build, a.load, a.load_end)
    out["result"] = result
    with open(a.output, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


# ----------------------------------------------------------------------------------------------------------------
# dat: one function per figure; each returns {file suffix: text}. Numbers are formatted here, so the data files,
# and hence the SVGs, depend on the JSON alone.

def _g(x, digits=4):
    """A number for a data file: fixed significant digits, no locale, no exponent surprises."""
    return f"{x:.{digits}g}"


def _q(s):
    """A gnuplot double-quoted string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _day(doc):
    return (doc.get("date") or "")[:10]


def _machine_line(doc):
    m = doc.get("machine", {})
    cpus = m.get("cpus")
    fam = m.get("cpu_family_model", "")
    zen = {"family 25": "Zen 3/4", "family 26": "Zen 5", "family 23": "Zen/Zen 2"}
    arch = next((v for k, v in zen.items() if fam.startswith(k + " ")), None)
    cpu = m.get("cpu") or "unknown CPU"
    cpu = re.sub(r"\s+\d+-Core Processor$", "", cpu)
    cores = f"{cpus} vCPUs under {m['hypervisor']}" if m.get("hypervisor") else f"{cpus} cores"
    parts = [cpu + (f" ({arch})" if arch else ""), cores if cpus else None, _day(doc)]
    return ", ".join(p for p in parts if p)


def fig_demo_loss(doc):
    r = doc["result"]
    files, strings = {}, {}
    for precision in ("fp32", "bf16"):
        run = r[precision]
        rows = [e for e in run["log_history"] if "loss" in e and "step" in e]
        files[f"_{precision}.dat"] = "# step loss learning_rate\n" + "".join(
            f"{e['step']} {_g(e['loss'])} {_g(e.get('learning_rate', 0))}\n" for e in rows)
        res = run.get("all_results", {})
        label = precision
        if "eval_f1" in res:
            label += f": eval F1 {res['eval_f1']:.1f}"
        if "train_steps_per_second" in res:
            label += f", {res['train_steps_per_second']:.1f} steps/s"
        strings[f"label_{precision}"] = label
    strings["title"] = doc["title"]
    strings["machine"] = _machine_line(doc)
    return files, strings


STEP_CONFIGS = ("base-2", "mini", "tiny")
STEP_SERIES = (("cputrain", "fp32"), ("cputrain", "bf16"), ("pytorch", "fp32"), ("pytorch", "bf16"))


def fig_step_pytorch(doc):
    r = doc["result"]
    best = {(b["config"], b["precision"], b["implementation"]): b["result"] for b in r["best"]}
    files, strings = {}, {}
    configs = [c for c in STEP_CONFIGS if c in r["configs"]]
    for i, config in enumerate(configs):
        shape = r["configs"][config]
        strings[f"panel{i}"] = (f"{config}: {shape['layers']} layers, hidden {shape['hidden']}, "
                                f"seq {shape['seq']}, batch {shape['batch']}")
        rows = []
        ref = best.get((config, "fp32", "pytorch"))
        for impl, precision in STEP_SERIES:
            res = best.get((config, precision, impl))
            if res is None:
                rows.append('NaN NaN "" "" "" ""\n')
                continue
            sps, rss = res["samples_per_s"], res["peak_rss_mib"]
            speed = f"{sps / ref['samples_per_s']:.2f}x" if ref else ""
            memory = f"{rss / ref['peak_rss_mib']:.2f}x" if ref else ""
            rows.append(f'{_g(sps)} {_g(rss)} "{sps:.3g}" "{speed}" "{rss:.0f}" "{memory}"\n')
        files[f"_{i}.dat"] = ("# cputrain fp32, cputrain bf16, PyTorch fp32, PyTorch bf16 (NaN: not run)\n"
                              "# samples_per_s peak_rss_mib; labels: samples/s, vs PyTorch fp32, MiB, vs PyTorch fp32\n"
                              + "".join(rows))
    strings["panels"] = str(len(configs))
    strings["title"] = doc["title"]
    strings["machine"] = _machine_line(doc) + (f"; {r['threads']} threads, best of {r['rounds']} alternated rounds, "
                                               f"median of {r['steps']} steps")
    return files, strings


def fig_allreduce(doc):
    r = doc["result"]
    rows = []
    for s in r["sizes"]:
        bytes_ = s["megabytes"] * 1e6
        rows.append(" ".join([_g(s["megabytes"])] + [_g(bytes_ / s[k] / 1e9) for k in (
            "raw_seconds", "all_reduce_sum_seconds", "reducer_overlap_seconds", "reducer_no_overlap_seconds")]) + "\n")
    files = {".dat": "# MB GB/s: raw all_reduce_sum reducer_overlap reducer_no_overlap\n" + "".join(rows)}
    sim = {}
    for s in r["simulated_backward"]:
        sim.setdefault(s["megabytes"], {})[s["compute"]] = s
    srows = []
    for mb in sorted(sim):
        spin, sleep = sim[mb].get("spin"), sim[mb].get("sleep")
        cells = []
        for s in (spin, sleep):
            if s is None:
                cells += ["NaN", "NaN"]
            else:
                cells += [_g(s["no_overlap_step_seconds"] / s["step_seconds"], 3), _g(100 * s["hidden"], 3)]
        srows.append(f'"{mb:.4g} MB" ' + " ".join(cells) + "\n")
    files["_sim.dat"] = "# buffer speedup_spin hidden_spin speedup_sleep hidden_sleep\n" + "".join(srows)
    strings = {"title": doc["title"], "machine": _machine_line(doc) + (
        f"; {r['ranks']} ranks, buckets of {r['bucket_mib']:g} MiB, median of {r['repeats']} repeats")}
    return files, strings


def fig_distributed(doc):
    r = doc["result"]
    rounds = sorted({x["round"] for x in r["runs"]})
    rows = []
    for rd in rounds:
        runs = [x for x in r["runs"] if x["round"] == rd]
        one = next(x for x in runs if x["ranks"] == 1)
        cells = [_g(one["steps_per_second"])]
        labels = [f'"{one["steps_per_second"]:.2f}"']
        for sparse in (True, False):
            x = next((x for x in runs if x["ranks"] > 1 and x["sparse_embedding_gradients"] is sparse), None)
            if x is None:
                cells.append("NaN")
                labels += ['""', '""']
            else:
                cells.append(_g(x["steps_per_second"]))
                labels += [f'"{x["steps_per_second"]:.2f} ({x["steps_per_second"] / one["steps_per_second"]:.2f}x)"',
                           f'"{100 * x["communication_hidden"]:.0f} % hidden"']
        rows.append(f'"round {rd}" ' + " ".join(cells) + " " + " ".join(labels) + "\n")
    files = {".dat": "# round, steps/s: 1 process, ranks sparse, ranks dense; labels: 1 process; sparse: steps/s"
                     " (ratio), hidden; dense: the same\n" + "".join(rows)}
    ranks = max(x["ranks"] for x in r["runs"])
    one = next(x for x in r["runs"] if x["ranks"] == 1)
    multi = next(x for x in r["runs"] if x["ranks"] > 1)
    strings = {
        "title": doc["title"],
        "machine": _machine_line(doc) + f"; {r['model']}, seq {r['seq']}, global batch {r['global_batch']}, "
                                        f"{r['steps']} steps",
        "label_one": f"1 process x {one['threads_per_rank']} threads",
        "label_sparse": f"{ranks} ranks x {multi['threads_per_rank']} thread, embedding gradient as rows",
        "label_dense": f"{ranks} ranks x {multi['threads_per_rank']} thread, whole embedding table",
    }
    return files, strings


def fig_group_by_length(doc):
    r = doc["result"]
    rounds = sorted({x["round"] for x in r["runs"]})
    rows = []
    for rd in rounds:
        runs = {x["order"]: x for x in r["runs"] if x["round"] == rd}
        plain, grouped = runs["shuffled"], runs["group_by_length"]
        p, g = plain["steps_per_second"], grouped["steps_per_second"]
        rows.append(f'"round {rd}" {_g(p)} {_g(g)} "{p:.1f}" "{g:.1f} ({g / p:.2f}x)"\n')
    files = {".dat": "# round steps/s: shuffled group_by_length; labels\n" + "".join(rows)}
    strings = {"title": doc["title"], "machine": _machine_line(doc) + (
        f"; batch {r['batch']}, {r['steps']} steps, {r['threads']} threads")}
    return files, strings


FIGURES = {
    "demo_loss": fig_demo_loss,
    "step_pytorch": fig_step_pytorch,
    "allreduce": fig_allreduce,
    "distributed": fig_distributed,
    "group_by_length": fig_group_by_length,
}


def dat(a):
    os.makedirs(a.out_dir, exist_ok=True)
    for name, fn in FIGURES.items():
        path = os.path.join(a.results_dir, name + ".json")
        if not os.path.exists(path):
            print(f"results.py: no {path}, figure {name} skipped", file=sys.stderr)
            continue
        with open(path) as f:
            doc = json.load(f)
        files, strings = fn(doc)
        for suffix, text in files.items():
            with open(os.path.join(a.out_dir, name + suffix), "w") as f:
                f.write(text)
        with open(os.path.join(a.out_dir, name + ".gp"), "w") as f:
            for key, value in strings.items():
                f.write(f"{key} = {_q(value)}\n")
        print(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    w = sub.add_parser("wrap")
    w.add_argument("--name", required=True)
    w.add_argument("--title", required=True)
    w.add_argument("--command", required=True)
    w.add_argument("--run", action="append", default=[], help="an underlying command (repeatable)")
    w.add_argument("--result", required=True)
    w.add_argument("--output", required=True)
    w.add_argument("--build")
    w.add_argument("--started", required=True)
    w.add_argument("--load", type=float, help="1-minute load average at the start")
    w.add_argument("--load-end", type=float, help="... and at the end")
    d = sub.add_parser("dat")
    d.add_argument("results_dir")
    d.add_argument("out_dir")
    a = ap.parse_args()
    wrap(a) if a.what == "wrap" else dat(a)


if __name__ == "__main__":
    main()
