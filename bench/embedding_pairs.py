"""Positive text pairs for contrastive training, gathered from ../shared/data's GLUE and SQuAD
files into JSONL pair files (`{"anchor": ..., "positive": ...}` a line, what run_embeddings.py
--train_file reads):

    python bench/embedding_pairs.py --data=../shared/data --output_dir=/tmp/pairs

writes, each a positive pair a line:
  stsb.jsonl   STS-B train pairs scored at or above --stsb_min (default 4 of 5)
  mrpc.jsonl   MRPC train paraphrases (label 1)
  qnli.jsonl   QNLI dev question -> the sentence that answers it (entailment)
  rte.jsonl    RTE train premise -> entailed hypothesis
  squad.jsonl  SQuAD v1.1 dev question -> the paragraph sentence holding its first answer
  all.jsonl    all of them, in that order (run_embeddings.py shuffles them each epoch)
and prints the count of each. None of these is STS-B dev, which the runs are scored on.
"""

from __future__ import annotations

import csv
import json
import os
import pathlib
import re
import sys

from absl import app, flags

flags.DEFINE_string("data", "../shared/data", "The shared data folder (MANIFEST.md).")
flags.DEFINE_string("output_dir", None, "Where the JSONL pair files go.")
flags.DEFINE_float("stsb_min", 4.0, "STS-B train pairs scored at or above this are positives.")
FLAGS = flags.FLAGS


def _tsv(path):
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quotechar=None))
    header = rows[0]
    return [dict(zip(header, row)) for row in rows[1:] if len(row) == len(header)]


def stsb(glue):
    return [(r["sentence1"], r["sentence2"]) for r in _tsv(glue / "STS-B" / "train.tsv")
            if float(r["score"]) >= FLAGS.stsb_min]


def mrpc(glue):
    return [(r["#1 String"], r["#2 String"]) for r in _tsv(glue / "MRPC" / "train.tsv")
            if r["Quality"] == "1"]


def qnli(glue):
    return [(r["question"], r["sentence"]) for r in _tsv(glue / "QNLI" / "dev.tsv")
            if r["label"] == "entailment"]


def rte(glue):
    return [(r["sentence1"], r["sentence2"]) for r in _tsv(glue / "RTE" / "train.tsv")
            if r["label"] == "entailment"]


def squad(data):
    articles = json.loads((data / "squad" / "v1.1" / "dev-v1.1.json").read_text("utf-8"))
    pairs = []
    for article in articles["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            # sentence spans: split after . ! ? followed by a space and a capital
            bounds = [0] + [m.end() for m in re.finditer(r"[.!?]\s+(?=[A-Z\"'])", context)]
            bounds.append(len(context))
            for qa in paragraph["qas"]:
                start = qa["answers"][0]["answer_start"]
                for left, right in zip(bounds, bounds[1:]):
                    if left <= start < right:
                        pairs.append((qa["question"].strip(), context[left:right].strip()))
                        break
    return pairs


def _write(path, pairs):
    with open(path, "w", encoding="utf-8") as out:
        for anchor, positive in pairs:
            out.write(json.dumps({"anchor": anchor, "positive": positive}) + "\n")


def main(argv):
    del argv
    data = pathlib.Path(FLAGS.data)
    glue = data / "glue"
    if not (glue / "STS-B" / "train.tsv").is_file():
        sys.exit(f"error: --data={FLAGS.data}: no glue/STS-B/train.tsv")
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    counts, everything = {}, []
    for name, pairs in (("stsb", stsb(glue)), ("mrpc", mrpc(glue)), ("qnli", qnli(glue)),
                        ("rte", rte(glue)), ("squad", squad(data))):
        pairs = [(a, b) for a, b in pairs if a.strip() and b.strip()]
        _write(os.path.join(FLAGS.output_dir, f"{name}.jsonl"), pairs)
        counts[name] = len(pairs)
        everything += pairs
    _write(os.path.join(FLAGS.output_dir, "all.jsonl"), everything)
    counts["all"] = len(everything)
    print(json.dumps(counts))


if __name__ == "__main__":
    flags.mark_flag_as_required("output_dir")
    app.run(main)
