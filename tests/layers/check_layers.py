#!/usr/bin/env python3
"""The include-direction fitness function: every #include "cputrain/<layer>/..." in include/cputrain/<folder>/ must
point to a layer that docs/overview.md's diagram lets <folder> use (LAYERS below is that diagram as data). An edge
that points up or sideways fails, naming the file, the line and the layer it may not reach.

  check_layers.py <include-dir>              check a tree (exit 1 on a bad edge or a layer header that misses one of
                                             its folder's headers, 2 on a folder the map lacks)
  check_layers.py <include-dir> --self-test  inject bad includes into a copy and check that each one is caught
  check_layers.py <include-dir> --graph      print the edge count of every pair of folders (for the docs)
"""
import collections
import pathlib
import re
import shutil
import sys
import tempfile

# Each layer and the layers it may include, bottom to top. The umbrella headers cputrain/<layer>.hpp and
# cputrain/cputrain.hpp sit above everything and are checked separately (they include only what they export).
LAYERS = {
    "core": set(),
    "machine": {"core"},
    "policy": {"core", "machine"},
    "kernels": {"core", "policy"},
    "optim": {"core", "policy"},
    "nn": {"core", "machine", "policy", "kernels", "optim"},
    "io": {"core", "nn"},
    "text": {"core"},
    "data": {"core", "io", "text", "nn"},
    "distributed": {"core", "policy"},
    "train": {"core", "machine", "policy", "kernels", "optim", "nn", "io", "text", "data", "distributed"},
    "mpi": {"core", "machine", "policy", "distributed"},
    "cli": {"core", "optim", "train"},
}
# Which third-party headers a layer may reach is checked by compiling, not here: tests/layers/poison_headers.cmake.
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](cputrain/[^>"]+)[>"]')


def layer_of(relative: pathlib.PurePosixPath) -> str:
    return relative.parts[0] if len(relative.parts) > 1 else "(umbrella)"


def edges(root: pathlib.Path):
    """Yields (file, line number, from layer, to layer, included path) for every cputrain include under root."""
    for path in sorted(root.rglob("*.hpp")):
        relative = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        source = layer_of(relative)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = INCLUDE.match(line)
            if match:
                target = pathlib.PurePosixPath(match.group(1)).relative_to("cputrain")
                yield relative, number, source, layer_of(target), target


def check(root: pathlib.Path) -> list[str]:
    problems = []
    for relative, number, source, target, included in edges(root):
        if source == "(umbrella)" or target == source:
            continue
        if source not in LAYERS:
            problems.append(f"{relative}: folder {source}/ is not in the layer map (tests/layers/check_layers.py)")
        elif target == "(umbrella)":
            problems.append(f"{relative}:{number}: includes the umbrella header cputrain/{included}; include the "
                            f"header that declares what is used")
        elif target not in LAYERS[source]:
            allowed = ", ".join(sorted(LAYERS[source])) or "nothing"
            problems.append(f"{relative}:{number}: {source}/ includes cputrain/{included}, but {source} may use "
                            f"only {allowed} (docs/overview.md)")
    return sorted(set(problems))


def check_umbrellas(root: pathlib.Path) -> list[str]:
    """Every header of a layer (outside detail/) is included by that layer's cputrain/<layer>.hpp."""
    problems = []
    for layer in LAYERS:
        umbrella = root / f"{layer}.hpp"
        if not umbrella.is_file():
            problems.append(f"cputrain/{layer}.hpp is missing: each layer has one header that includes it")
            continue
        text = umbrella.read_text(encoding="utf-8")
        for header in sorted((root / layer).rglob("*.hpp")):
            relative = header.relative_to(root).as_posix()
            if "/detail/" not in relative and f'"cputrain/{relative}"' not in text:
                problems.append(f"cputrain/{layer}.hpp does not include cputrain/{relative}")
    return problems


def self_test(root: pathlib.Path) -> int:
    injections = [
        ("nn/linear.hpp", '#include "cputrain/train/qa_trainer.hpp"', "nn/ includes cputrain/train/qa_trainer.hpp"),
        ("policy/precision/fp32.hpp", '#include "cputrain/mpi/communicator.hpp"', "policy/ includes cputrain/mpi"),
        ("text/utf8.hpp", '#include "cputrain/data/squad_example.hpp"', "text/ includes cputrain/data"),
        ("core/error.hpp", '#include "cputrain/machine/topology.hpp"', "core/ includes cputrain/machine"),
        ("kernels/bias.hpp", '#include "cputrain/nn.hpp"', "includes the umbrella header cputrain/nn.hpp"),
    ]
    if check(root):
        print("self-test: the tree itself has bad edges; fix those first")
        return 1
    failures = 0
    for file, line, expected in injections:
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp) / "cputrain"
            shutil.copytree(root, copy)
            target = copy / file
            text = target.read_text(encoding="utf-8")
            target.write_text(text.replace("#pragma once\n", "#pragma once\n" + line + "\n", 1), encoding="utf-8")
            found = check(copy)
            if any(expected in p for p in found):
                print(f"self-test: caught {file} <- {line}")
            else:
                print(f"self-test: MISSED {file} <- {line}: got {found}")
                failures += 1
    # tests/layers/CMakeLists.txt passes the test on this last line only (and fails it on "MISSED").
    if failures:
        print(f"self-test: MISSED {failures} of {len(injections)} bad includes")
        return 1
    print(f"self-test: caught all {len(injections)} bad includes")
    return 0


def graph(root: pathlib.Path) -> None:
    counts = collections.Counter((s, t) for _, _, s, t, _ in edges(root) if s != t and s != "(umbrella)")
    for (source, target), count in sorted(counts.items()):
        print(f"{source} -> {target}: {count}")


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not pathlib.Path(argv[1]).is_dir():
        print(__doc__)
        return 2
    root = pathlib.Path(argv[1])
    root = root / "cputrain" if (root / "cputrain").is_dir() else root
    if argv[2:] == ["--self-test"]:
        return self_test(root)
    if argv[2:] == ["--graph"]:
        graph(root)
        return 0
    unknown = sorted({p.name for p in root.iterdir() if p.is_dir()} - set(LAYERS))
    if unknown:
        print(f"folders not in the layer map (tests/layers/check_layers.py): {', '.join(unknown)}")
        return 2
    problems = check(root) + check_umbrellas(root)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s) with the layering" if problems else "every include points down")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
