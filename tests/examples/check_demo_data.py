"""Checks cputrain-make-demo-data's files for one task (python3's standard library only).

    check_demo_data.py MAKE_DEMO_DATA TASK

Runs MAKE_DEMO_DATA --task TASK twice with the same small sizes and once with another seed, then checks:
- the same flags gave the same bytes (every file, model/ too), another seed another train file;
- the files: qa train.json/dev.json (SQuAD); glue train/dev/test.csv parse as CSV with the header
  sentence1,sentence2,label,idx, labels 0 or 1 and both present, idx 0, 1, ..., no label 0 on two equal sentences;
  ner train/dev/test.json are JSON Lines of {"id","tokens","ner_tags"} with as many tags as tokens, valid IOB2 (no
  I-X but after B-X or I-X), every type (PER, LOC, ORG, MISC) in train and in dev and test, and no person or place
  of dev or test in train; mlm train.txt/dev.txt hold non-empty lines;
- every word of every file is in model/vocab.txt: after BERT's basic tokenization (lower-cased when
  tokenizer_config.json says do_lower_case; split at whitespace and punctuation) each word is a vocabulary token,
  a number (digit pieces), or a made-up name of two pieces ("kel", "##bury"); so WordPiece never gives [UNK], and
  a word missing from the vocabulary is told even where WordPiece would spell it letter by letter.
Exits 1 on any failure, printing each.
"""
import csv
import filecmp
import json
import os
import re
import subprocess
import sys
import tempfile
import unicodedata

SIZES = ["--train_examples", "60", "--eval_examples", "30"]
FILES = {
    "qa": ["train.json", "dev.json"],
    "glue": ["train.csv", "dev.csv", "test.csv"],
    "ner": ["train.json", "dev.json", "test.json"],
    "mlm": ["train.txt", "dev.txt"],
}
TYPES = {"PER", "LOC", "ORG", "MISC"}
failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def run(binary, task, out, *extra):
    flags = [binary, "--task", task, "--output_dir", out] + SIZES + list(extra)
    if task in ("glue", "ner"):
        flags += ["--test_examples", "30"]
    if task == "qa":
        flags += ["--version_2_with_negative"]
    subprocess.run(flags, check=True, stdout=subprocess.DEVNULL)


def all_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def check_same_bytes(a, b, c, task):
    if all_files(a) != all_files(b):
        fail(f"two runs wrote different file lists: {all_files(a)} / {all_files(b)}")
    for name in all_files(a):
        if not filecmp.cmp(os.path.join(a, name), os.path.join(b, name), shallow=False):
            fail(f"{name}: two runs with the same flags wrote different bytes")
    if filecmp.cmp(os.path.join(a, FILES[task][0]), os.path.join(c, FILES[task][0]), shallow=False):
        fail(f"{FILES[task][0]}: --seed 2 wrote the same bytes as the default seed")


class Vocabulary:
    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8") as f:
            self.tokens = set(line.rstrip("\n") for line in f)
        with open(os.path.join(model_dir, "tokenizer_config.json"), encoding="utf-8") as f:
            self.lower = json.load(f).get("do_lower_case", True)
        self.bad = set()

    @staticmethod
    def is_punctuation(ch):
        o = ord(ch)
        if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
            return True
        return unicodedata.category(ch).startswith("P")

    def basic_tokens(self, text):
        words = []
        for word in text.split():
            if self.lower:
                word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
            current = ""
            for ch in word:
                if self.is_punctuation(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def wordpieces(self, word):
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.tokens:
                    break
                end -= 1
            if end == start:
                return None  # [UNK]
            pieces.append(piece)
            start = end
        return pieces

    def covered(self, word):
        """A token, a number, or a start and an ending of the vocabulary ("kel" "##bury"), however WordPiece's
        greedy match cuts it ("millstead": mills ##t ##e ##a ##d, as the QA demo has always had it)."""
        if self.wordpieces(word) is None:
            return False
        if word in self.tokens or word.isdigit():
            return True
        return any(word[:k] in self.tokens and "##" + word[k:] in self.tokens for k in range(2, len(word)))

    def check(self, text, where):
        for word in self.basic_tokens(text):
            if word not in self.bad and not self.covered(word):
                self.bad.add(word)
                fail(f"{where}: '{word}' is not in vocab.txt (WordPiece: {self.wordpieces(word)})")


def check_qa(d, vocab):
    for name in FILES["qa"]:
        with open(os.path.join(d, name), encoding="utf-8") as f:
            data = json.load(f)["data"]
        for article in data:
            for paragraph in article["paragraphs"]:
                vocab.check(paragraph["context"], name)
                for qa in paragraph["qas"]:
                    vocab.check(qa["question"], name)


def check_glue(d, vocab):
    for name in FILES["glue"]:
        with open(os.path.join(d, name), encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
        if not rows or rows[0] != ["sentence1", "sentence2", "label", "idx"]:
            fail(f"{name}: header {rows[:1]}, not sentence1,sentence2,label,idx")
            continue
        labels = set()
        for n, row in enumerate(rows[1:]):
            if len(row) != 4 or row[3] != str(n) or row[2] not in ("0", "1") or not row[0] or not row[1]:
                fail(f"{name}: row {n}: {row}")
                continue
            labels.add(row[2])
            if row[2] == "0" and row[0] == row[1]:
                fail(f"{name}: row {n}: label 0 on two equal sentences")
            # A paraphrase states the same numbers; a near miss (by default a changed year) states other ones.
            same_numbers = sorted(re.findall(r"\d+", row[0])) == sorted(re.findall(r"\d+", row[1]))
            if same_numbers != (row[2] == "1"):
                fail(f"{name}: row {n}: label {row[2]} but the numbers are {'the same' if same_numbers else 'not'}: {row}")
            vocab.check(row[0] + " " + row[1], name)
        if labels != {"0", "1"}:
            fail(f"{name}: labels {sorted(labels)}, not both 0 and 1")


def ner_spans(tokens, tags):
    spans, current = [], None
    for token, tag in zip(tokens, tags):
        if tag.startswith("I-") and current is not None:
            current[1].append(token)
            continue
        current = [tag[2:], [token]] if tag.startswith("B-") else None
        if current is not None:
            spans.append(current)
    return [(kind, " ".join(words)) for kind, words in spans]


def check_ner_line(name, n, line, vocab):
    """The line's entity spans, or None when it is malformed."""
    obj = json.loads(line)
    tokens, tags = obj.get("tokens"), obj.get("ner_tags")
    if obj.get("id") != str(n) or not isinstance(tokens, list) or not isinstance(tags, list) or not tokens:
        fail(f"{name}: line {n}: {line.strip()}")
        return None
    if len(tokens) != len(tags):
        fail(f"{name}: line {n}: {len(tokens)} tokens, {len(tags)} tags")
        return None
    previous = "O"
    for tag in tags:
        valid = tag == "O" or (tag[:2] in ("B-", "I-") and tag[2:] in TYPES)
        if not valid or (tag.startswith("I-") and previous[2:] != tag[2:]):
            fail(f"{name}: line {n}: {tag} after {previous} (IOB2)")
            return None
        previous = tag
    for token in tokens:
        vocab.check(token, name)
    return ner_spans(tokens, tags)


def check_ner(d, vocab):
    spans = {}
    for name in FILES["ner"]:
        spans[name] = set()
        with open(os.path.join(d, name), encoding="utf-8") as f:
            for n, line in enumerate(f):
                spans[name] |= set(check_ner_line(name, n, line, vocab) or [])
    held_out = spans["dev.json"] | spans["test.json"]
    for where, found in (("train.json", spans["train.json"]), ("dev.json and test.json", held_out)):
        missing = TYPES - {kind for kind, _ in found}
        if missing:
            fail(f"{where}: no {sorted(missing)} entity")
    seen = {span for span in held_out & spans["train.json"] if span[0] in ("PER", "LOC")}
    if seen:
        fail(f"dev/test people or places also in train.json: {sorted(seen)[:5]}")


def check_mlm(d, vocab):
    for name in FILES["mlm"]:
        with open(os.path.join(d, name), encoding="utf-8") as f:
            lines = f.read().split("\n")
        if len(lines) < 2 or lines[-1] != "" or any(not line.strip() for line in lines[:-1]):
            fail(f"{name}: empty, an empty line, or no line break at the end")
        for line in lines:
            vocab.check(line, name)


def main():
    binary, task = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        a, b, c = (os.path.join(work, x) for x in "abc")
        run(binary, task, a)
        run(binary, task, b)
        run(binary, task, c, "--seed", "2")
        for name in FILES[task] + ["model/config.json", "model/vocab.txt", "model/tokenizer_config.json"]:
            if not os.path.isfile(os.path.join(a, name)) or os.path.getsize(os.path.join(a, name)) == 0:
                fail(f"{name}: missing or empty")
        if failures:
            return 1
        check_same_bytes(a, b, c, task)
        vocab = Vocabulary(os.path.join(a, "model"))
        {"qa": check_qa, "glue": check_glue, "ner": check_ner, "mlm": check_mlm}[task](a, vocab)
    print(f"check_demo_data.py {task}: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
