#!/usr/bin/env python3
"""The header-style fitness function: every header under include/cputrain opens with a short preamble (at most
MAX_PREAMBLE comment lines before `#pragma once`: what the header offers, and the one decision a reader must know;
stories and measurements belong in docs/), and documents declarations with `///` lines above them, never with
trailing `///<` comments. Each violation is printed as file:line.

  check_headers.py <include-dir>              check a tree (exit 1 on any violation)
  check_headers.py <include-dir> --self-test  inject violations into a copy and check that each one is caught
"""
import pathlib
import re
import shutil
import sys
import tempfile

MAX_PREAMBLE = 8
TRAILING = re.compile(r"///<")
PRAGMA = re.compile(r"^\s*#\s*pragma\s+once\b")


def preamble_lines(lines: list[str]) -> list[int]:
    """Line numbers (1-based) of the comment lines before `#pragma once` (or before the first code line)."""
    found = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if PRAGMA.match(line) or (stripped and not stripped.startswith("//")):
            break
        if stripped.startswith("//"):
            found.append(number)
    return found


def check_file(path: pathlib.Path, shown: str) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = []
    preamble = preamble_lines(lines)
    if len(preamble) > MAX_PREAMBLE:
        problems.append(f"{shown}:{preamble[MAX_PREAMBLE]}: preamble has {len(preamble)} comment lines, at most "
                        f"{MAX_PREAMBLE} (what the header offers; the rest goes to docs/)")
    for number, line in enumerate(lines, start=1):
        if TRAILING.search(line):
            problems.append(f"{shown}:{number}: trailing '///<' comment: put a '///' line above the declaration")
    return problems


def check(root: pathlib.Path) -> list[str]:
    problems = []
    for path in sorted(root.rglob("*.hpp")):
        problems += check_file(path, str(path.relative_to(root)))
    return problems


def self_test(root: pathlib.Path) -> int:
    """Each injected violation must show up among the copy's problems; a preamble of exactly MAX_PREAMBLE lines
    must not. The tree's own problems (if any) are left aside, so the check of the check does not depend on them."""
    before = set(check(root))
    headers = sorted(p.relative_to(root) for p in root.rglob("*.hpp"))
    clean = [h for h in headers if not any(p.startswith(f"{h}:") for p in before)]
    if len(clean) < 3:
        print("self-test: fewer than three clean headers to inject into")
        return 1
    long_preamble, trailing, boundary = clean[0], clean[1], clean[2]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "include"
        shutil.copytree(root, copy)
        text = (copy / long_preamble).read_text(encoding="utf-8")
        (copy / long_preamble).write_text("// story line\n" * (MAX_PREAMBLE + 1) + text, encoding="utf-8")
        lines = (copy / trailing).read_text(encoding="utf-8").splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if PRAGMA.match(line)) + 1
        lines.insert(at, "int injected_member = 0;  ///< trailing\n")
        (copy / trailing).write_text("".join(lines), encoding="utf-8")
        lines = (copy / boundary).read_text(encoding="utf-8").splitlines(keepends=True)
        body = lines[next(i for i, line in enumerate(lines) if PRAGMA.match(line)):]
        (copy / boundary).write_text("// offer\n" * MAX_PREAMBLE + "".join(body), encoding="utf-8")

        new = set(check(copy)) - before
        expected = {f"{long_preamble}:": "preamble", f"{trailing}:{at + 1}:": "'///<'"}
        for prefix, what in expected.items():
            hits = [p for p in new if p.startswith(prefix) and what in p]
            if hits:
                print(f"self-test: caught {hits[0]}")
            else:
                print(f"self-test: MISSED {what} in {prefix.rstrip(':')}: got {sorted(new)}")
                failures += 1
        if any(p.startswith(f"{boundary}:") for p in new):
            print(f"self-test: a preamble of exactly {MAX_PREAMBLE} lines in {boundary} was flagged")
            failures += 1
        else:
            print(f"self-test: a preamble of exactly {MAX_PREAMBLE} lines passes ({boundary})")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not pathlib.Path(argv[1]).is_dir():
        print(__doc__)
        return 2
    root = pathlib.Path(argv[1])
    if argv[2:] == ["--self-test"]:
        return self_test(root)
    if argv[2:]:
        print(__doc__)
        return 2
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} header style problem(s)")
        return 1
    print("every header has a short preamble and no '///<' comments")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
