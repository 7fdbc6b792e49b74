#!/usr/bin/python3
"""Reference numbers for tests/optim/*_test.cpp, computed by PyTorch (1.13, Debian's python3-torch).

    /usr/bin/python3 scripts/make_optim_reference.py            # print the C++ snippets
    /usr/bin/python3 scripts/make_optim_reference.py --write    # paste them into tests/optim/*_test.cpp

Each section names its test file; --write replaces the block between the "output of ... make_optim_reference.py"
and "end of the pasted output" comments there. The inputs are small integer formulas that the C++ tests
evaluate the same way, so only outputs are pasted:

  * AdamW: torch.optim.AdamW (foreach=False, torch 1.13's default) on 37 parameters in three tensors, the middle one
    without weight decay (Hugging Face Trainer's grouping), 5 steps under a LambdaLR linear warmup schedule.
    Run twice, in child processes: with ATEN_CPU_CAPABILITY=avx2 (fused multiply-adds) and =default
    (no FMA), the two roundings cputrain reproduces depending on the target.
  * clip_grad_norm_ (norm_type 2): the total norm and the clipped gradients, one case that clips, one that does not.
  * The Hugging Face learning-rate schedules (transformers' optimization.py formulas) driven through LambdaLR, whose
    param_groups[0]["lr"] is the Python float (double) that AdamW then uses.

Floats are printed as C++ hex-float literals, exact.
"""

import json
import math
import os
import subprocess
import sys
import textwrap

import torch

# ---- shared inputs (tests/optim/*_test.cpp evaluate the same formulas) -------------------------------------------

SIZES = [20, 5, 12]          # three tensors, flat buffer order; the middle one has no weight decay
DECAY = [True, False, True]
N = sum(SIZES)


def initial_param(i):
    return ((i * 7) % 19 - 9) / 16.0


def grad(step, i):           # step is 1-based; dyadic, so exact in float; some are zero
    return ((i * 13 + step * 7) % 29 - 14) * 2.0 ** -(6 + (i + step) % 5)


ADAMW = dict(base_lr=2e-3, weight_decay=0.01, betas=(0.9, 0.999), eps=1e-8, warmup=2, total=5, steps=5)


def clip_grad(i):
    return ((i * 11) % 23 - 11) / 8.0


# ---- formatting ---------------------------------------------------------------------------------------------------

def comment(text, indent=""):
    """A C++ comment, wrapped to the project's 120 columns."""
    for line in textwrap.wrap(text, 116 - len(indent), break_on_hyphens=False):
        print("// " + indent + line)


def hex_literal(x, suffix):
    """C++ hex-float literal of a double x, trailing zero digits dropped."""
    if x == 0.0:
        return ("-" if math.copysign(1.0, x) < 0 else "") + "0x0p+0" + suffix
    mantissa, exponent = x.hex().split("p")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + "p" + exponent + suffix


def f32(x):
    return hex_literal(float(x), "f")


def f64(x):
    return hex_literal(float(x), "")


def cpp_array(name, values, fmt, ctype="float", per_line=4):
    lines = []
    for k in range(0, len(values), per_line):
        lines.append("    " + ", ".join(fmt(v) for v in values[k:k + per_line]) + ",")
    return "constexpr std::array<%s, %d> %s = {\n%s\n};" % (ctype, len(values), name, "\n".join(lines))


def split(flat):
    out, at = [], 0
    for n in SIZES:
        out.append(flat[at:at + n])
        at += n
    return out


# ---- HF schedules (transformers/optimization.py) -------------------------------------------------------------------

def linear_lambda(warmup, total):
    def f(step):
        if step < warmup:
            return float(step) / float(max(1, warmup))
        return max(0.0, float(total - step) / float(max(1, total - warmup)))
    return f


def cosine_lambda(warmup, total, num_cycles=0.5):
    def f(step):
        if step < warmup:
            return float(step) / float(max(1, warmup))
        progress = float(step - warmup) / float(max(1, total - warmup))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
    return f


def constant_lambda(warmup, total):
    return lambda _step: 1


def constant_with_warmup_lambda(warmup, total):
    def f(step):
        if step < warmup:
            return float(step) / float(max(1.0, warmup))
        return 1.0
    return f


SCHEDULES = {"linear": linear_lambda, "cosine": cosine_lambda, "constant": constant_lambda,
             "constant_with_warmup": constant_with_warmup_lambda}


def lambda_lr_values(lr_lambda, base_lr, steps):
    """param_groups[0]['lr'] after `step` scheduler steps, as Hugging Face's Trainer sees it, for each step."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=base_lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    values, done = {}, 0
    for s in sorted(steps):
        while done < s:
            opt.step()
            sched.step()
            done += 1
        values[s] = opt.param_groups[0]["lr"]
    return [values[s] for s in steps]


# ---- AdamW in a child process (ATen picks its kernels once, at start) ----------------------------------------------

def adamw_child():
    a = ADAMW
    flat = torch.tensor([initial_param(i) for i in range(N)], dtype=torch.float32)
    params = [torch.nn.Parameter(t.clone()) for t in split(flat)]
    groups = [{"params": [p for p, d in zip(params, DECAY) if d], "weight_decay": a["weight_decay"]},
              {"params": [p for p, d in zip(params, DECAY) if not d], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=a["base_lr"], betas=a["betas"], eps=a["eps"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, linear_lambda(a["warmup"], a["total"]))
    history, lrs = [], []
    for step in range(1, a["steps"] + 1):
        g = split(torch.tensor([grad(step, i) for i in range(N)], dtype=torch.float32))
        for p, gi in zip(params, g):
            p.grad = gi.clone()
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
        history.append(torch.cat([p.detach() for p in params]).tolist())
    state = [opt.state[p] for p in params]
    json.dump({"capability": [l for l in torch.__config__.show().splitlines() if "CPU capability" in l],
               "lrs": lrs, "history": history,
               "exp_avg": torch.cat([s["exp_avg"] for s in state]).tolist(),
               "exp_avg_sq": torch.cat([s["exp_avg_sq"] for s in state]).tolist()}, sys.stdout)


def run_adamw(capability):
    env = dict(os.environ)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    out = subprocess.run([sys.executable, __file__, "--adamw-child"], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def print_adamw():
    print("// ===== tests/optim/adamw_test.cpp =====")
    comment("torch %s, AdamW %s, params and grads from initial_param()/grad()" % (torch.__version__, ADAMW))
    lrs = None
    for label, capability in (("fused", "avx2"), ("unfused", "default")):
        r = run_adamw(capability)
        if lrs is None:
            lrs = r["lrs"]
            print("// param_groups[0][\"lr\"] of each step")
            print(cpp_array("torch_lrs", lrs, f64, "double", 5))
        assert r["lrs"] == lrs
        # ATen falls back silently when the CPU lacks the capability asked for; these numbers would then be wrong.
        assert {"avx2": "AVX2", "default": "NO AVX"}[capability] in r["capability"][0], r["capability"]
        print("// %s: %s" % (label, r["capability"][0].strip(" -")))
        print("constexpr std::array<std::array<float, %d>, %d> torch_params_%s = {{" % (N, len(r["history"]), label))
        for step, values in enumerate(r["history"], 1):
            print("    {  // after step %d" % step)
            for k in range(0, len(values), 4):
                print("        " + ", ".join(f32(v) for v in values[k:k + 4]) + ",")
            print("    },")
        print("}};")
        print(cpp_array("torch_exp_avg_" + label, r["exp_avg"], f32))
        print(cpp_array("torch_exp_avg_sq_" + label, r["exp_avg_sq"], f32))
    print()


# ---- clip_grad_norm_ -------------------------------------------------------------------------------------------------

def print_clip():
    print("// ===== tests/optim/grad_clip_test.cpp =====")
    flat = [clip_grad(i) for i in range(N)]
    exact = math.sqrt(math.fsum(x * x for x in flat))
    print("// exact norm (double, fsum): %r" % exact)
    print("constexpr double exact_norm = %s;" % f64(exact))
    for label, max_norm in (("clipped", 1.0), ("unclipped", 100.0)):
        params = [torch.nn.Parameter(torch.zeros(n)) for n in SIZES]
        for p, g in zip(params, split(torch.tensor(flat, dtype=torch.float32))):
            p.grad = g.clone()
        total = torch.nn.utils.clip_grad_norm_(params, max_norm)
        print("// max_norm %r" % max_norm)
        print("constexpr float torch_norm_%s = %s;" % (label, f32(total.item())))
        print(cpp_array("torch_grads_" + label, torch.cat([p.grad for p in params]).tolist(), f32))
    print()


# ---- schedules ------------------------------------------------------------------------------------------------------

SCHEDULE_CASES = [  # (base_lr, warmup, total, steps)
    (3e-5, 10, 100, [0, 1, 5, 9, 10, 11, 37, 50, 99, 100, 101, 150, 200]),
    (5e-5, 0, 7, [0, 1, 3, 6, 7, 8]),
]
RATIO_CASES = [(0.07, 100), (0.06, 50), (0.1, 1000), (0.0, 100), (1.0, 33), (0.5, 0), (0.333, 10)]


def print_schedules():
    print("// ===== tests/optim/lr_schedule_test.cpp =====")
    for case, (base_lr, warmup, total, steps) in enumerate(SCHEDULE_CASES):
        print("// case %d: base_lr %r, warmup %d, total %d" % (case, base_lr, warmup, total))
        print(cpp_array("steps_%d" % case, steps, str, "std::int64_t", 13))
        for name, make in SCHEDULES.items():
            values = lambda_lr_values(make(warmup, total), base_lr, steps)
            comment("%s: %s" % (name, values), "  ")
            print(cpp_array("torch_%s_%d" % (name, case), values, f64, "double", 3))
    print("// warmup_steps = math.ceil(num_training_steps * warmup_ratio), TrainingArguments.get_warmup_steps")
    print("constexpr std::array<warmup_case, %d> python_warmup_cases = {{" % len(RATIO_CASES))
    for ratio, total in RATIO_CASES:
        print("    {%r, %d, %d}," % (ratio, total, math.ceil(total * ratio)))
    print("}};")


BEGIN = "// ---- output of /usr/bin/python3 scripts/make_optim_reference.py"
END = "// ---- end of the pasted output ----"


def write_tests(text):
    """Replaces the block between BEGIN's line and END in each test file by its section of `text`."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sections = text.split("// ===== ")[1:]
    for section in sections:
        name, body = section.split(" =====\n", 1)
        path = os.path.join(root, name)
        with open(path) as f:
            source = f.read()
        start = source.index("\n", source.index(BEGIN)) + 1
        end = source.index(END)
        with open(path, "w") as f:
            f.write(source[:start] + body.rstrip("\n") + "\n" + source[end:])
        print("updated", name, file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:] == ["--adamw-child"]:
        adamw_child()
    elif sys.argv[1:] in ([], ["--write"]):
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            print_adamw()
            print_clip()
            print_schedules()
        if sys.argv[1:] == ["--write"]:
            write_tests(out.getvalue())
        else:
            sys.stdout.write(out.getvalue())
    else:
        sys.exit("usage: %s [--write]" % sys.argv[0])
