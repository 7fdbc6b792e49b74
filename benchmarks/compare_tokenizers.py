#!/usr/bin/python3
"""Side-by-side tokenizer speed: cputrain-bench-tokenizer (benchmarks/tokenizer_speed.cpp) against Hugging Face's
Rust tokenizer (benchmarks/tokenizer_speed.cjs, the npm package `tokenizers`) on the same texts, one thread each,
MB/s of UTF-8 input (MB = 10^6 bytes). Each round runs both, alternating which goes first, for each family given;
the best of the rounds is kept. Prints a Markdown table. Both sides must produce the same number of tokens (same
tokenizer, same texts); where they do not, the table says so and the exit status is 1.

  npm install --prefix /tmp/tokref tokenizers@0.23.2
  python3 benchmarks/compare_tokenizers.py --make-texts /tmp/texts.txt --squad ../shared/data/squad/dev-v2.0.json
  python3 benchmarks/compare_tokenizers.py --bench build/release/benchmarks/cputrain-bench-tokenizer \\
      --texts /tmp/texts.txt --wordpiece ../shared/data/bert-base-uncased/vocab.txt \\
      --byte-level-bpe tests/text/data/gpt2_cut/tokenizer.json --unigram tests/text/data/xlmr_cut/tokenizer.json \
      [--rounds 3] [--repeats 5] [--cpu N]

--make-texts OUT writes every context and question of the SQuAD files (--squad, repeatable) one per line, newlines
inside a text replaced by spaces, empty texts left out. The official nested format
{data: [{paragraphs: [{context, qas: [{question}]}]}]} and flat records {data: [{context, question}]} are read; in
the flat one a context repeated for each of its questions is written once, as the nested format holds it.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_SCRIPT = os.path.join(HERE, "tokenizer_speed.cjs")


def one_line(text):
    return text.replace("\r", " ").replace("\n", " ")


def squad_texts(path):
    """Contexts and questions of one SQuAD file, in file order."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)["data"]
    contexts, questions, seen = [], [], set()
    for record in data:
        if "paragraphs" in record:
            for p in record["paragraphs"]:
                contexts.append(p["context"])
                questions += [qa["question"] for qa in p["qas"]]
        else:
            if record["context"] not in seen:
                seen.add(record["context"])
                contexts.append(record["context"])
            questions.append(record["question"])
    return contexts, questions


def make_texts(out, squad_files):
    n_contexts = n_questions = n_bytes = 0
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for path in squad_files:
            contexts, questions = squad_texts(path)
            for kind, texts in (("c", contexts), ("q", questions)):
                for text in map(one_line, texts):
                    if not text:
                        continue
                    f.write(text + "\n")
                    n_bytes += len(text.encode("utf-8"))
                    if kind == "c":
                        n_contexts += 1
                    else:
                        n_questions += 1
    print(f"wrote {out}: {n_contexts + n_questions} texts ({n_contexts} contexts, {n_questions} questions), "
          f"{n_bytes / 1e6:.3f} MB")


def run(cmd, env=None, cpu=None):
    preexec = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=preexec)
    if out.returncode != 0:  # its stderr says why (a refused tokenizer file, a bad option); captured, so pass it on
        sys.stderr.write(out.stderr)
        raise subprocess.CalledProcessError(out.returncode, cmd)
    return json.loads(out.stdout.strip().splitlines()[-1])


def jobs_of(a, family, tokenizer, env):
    common = ["--family", family, "--tokenizer", tokenizer, "--texts", a.texts, "--repeats", str(a.repeats)]
    return [("cputrain", [a.bench] + common + ["--json"], None),
            ("huggingface", [a.node, NODE_SCRIPT] + common, env)]


def measure(a, families):
    env = dict(os.environ)
    env["NODE_PATH"] = a.node_path + (os.pathsep + env["NODE_PATH"] if env.get("NODE_PATH") else "")
    env["RAYON_NUM_THREADS"] = "1"
    best = {}
    for r in range(a.rounds):
        for family, tokenizer in families:
            jobs = jobs_of(a, family, tokenizer, env)
            for side, cmd, job_env in (jobs if r % 2 == 0 else reversed(jobs)):
                result = run(cmd, job_env, a.cpu)
                print(f"round {r + 1} {family} {side}: {result['mb_s']:.2f} MB/s, {result['tokens']} tokens",
                      file=sys.stderr)
                key = (family, side)
                if key not in best or result["mb_s"] > best[key]["mb_s"]:
                    best[key] = result
    return best


def table(best, families):
    mismatches = []
    print("| family | cputrain MB/s | Hugging Face MB/s | ratio | tokens (cputrain / HF) |")
    print("|---|---:|---:|---:|---|")
    for family, _ in families:
        c, h = best[(family, "cputrain")], best[(family, "huggingface")]
        tokens = f"{c['tokens']} / {h['tokens']}"
        if c["tokens"] != h["tokens"] or c["bytes"] != h["bytes"] or c["texts"] != h["texts"]:
            tokens += " **MISMATCH**"
            mismatches.append(f"{family}: cputrain {c['texts']} texts, {c['bytes']} bytes, {c['tokens']} tokens; "
                              f"Hugging Face {h['texts']} texts, {h['bytes']} bytes, {h['tokens']} tokens")
        print(f"| {family} | {c['mb_s']:.2f} | {h['mb_s']:.2f} | {c['mb_s'] / h['mb_s']:.2f} | {tokens} |")
    c = next(iter(best.values()))
    print(f"\n{c['texts']} texts, {c['bytes'] / 1e6:.3f} MB; one thread each; best of {c['repeats']} passes per run, "
          f"best run of the rounds; ratio = cputrain / Hugging Face")
    for m in mismatches:
        print(f"token counts differ: {m}", file=sys.stderr)
    return 1 if mismatches else 0


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--make-texts", metavar="OUT", help="write the texts of --squad to OUT and stop")
    ap.add_argument("--squad", action="append", default=[], help="SQuAD JSON file for --make-texts (repeatable)")
    ap.add_argument("--bench", help="the cputrain-bench-tokenizer program")
    ap.add_argument("--texts", help="one text per line")
    ap.add_argument("--wordpiece", help="BERT vocab.txt (or a directory holding one)")
    ap.add_argument("--byte-level-bpe", help="a byte-level BPE tokenizer.json (GPT-2, RoBERTa)")
    ap.add_argument("--unigram", help="a SentencePiece Unigram tokenizer.json (XLM-RoBERTa)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5, help="passes over the texts per run; the best is kept")
    ap.add_argument("--cpu", type=int, help="pin both sides to this CPU")
    ap.add_argument("--node", default="node")
    ap.add_argument("--node-path", default="/tmp/tokref/node_modules", help="where `tokenizers` is installed")
    a = ap.parse_args()
    if a.make_texts:
        if not a.squad:
            ap.error("--make-texts needs --squad PATH")
    elif not (a.bench and a.texts and (a.wordpiece or a.byte_level_bpe or a.unigram)):
        ap.error("--bench, --texts and at least one of --wordpiece, --byte-level-bpe, --unigram are required")
    elif a.rounds < 1 or a.repeats < 1:
        ap.error("--rounds and --repeats must be positive")
    return a


def main():
    a = parse_args()
    if a.make_texts:
        make_texts(a.make_texts, a.squad)
        return 0
    families = [(f, p) for f, p in (("wordpiece", a.wordpiece), ("byte_level_bpe", a.byte_level_bpe),
                                    ("unigram", a.unigram)) if p]
    return table(measure(a, families), families)


if __name__ == "__main__":
    sys.exit(main())
