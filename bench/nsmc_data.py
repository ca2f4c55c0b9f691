"""NSMC-format files built from the NSMC repository's raw crawl (github e9t/nsmc, CC0): its
`raw/<movie id>.json` files hold every review with its 1-10 rating. The repository's own
ratings*.txt are too large for the stored snapshot, so they are rebuilt here with NSMC's rules
(ratings 1-4 negative = 0, 9-10 positive = 1, 5-8 left out, classes balanced) and layout
(`id<TAB>document<TAB>label`, a header, text as typed: bare quotes kept). A tab or line break
inside a review (NSMC has none) becomes a space.

Held out by movie: movies whose id ends in 0-5 give corpus.txt (the vocabulary's text: every
review, one a line, a blank line after each movie), 6 heldout.txt (the pretraining text, never
seen by the vocabulary: its [UNK] rate is the held-out one), 7-8 the fine-tuning train/dev
files, 9 the test file (no label column). So the classifier is scored on movies the vocabulary
and the pretraining never saw.

    python bench/nsmc_data.py --raw=/path/to/nsmc/raw --out=data/nsmc
"""

from __future__ import annotations

import argparse
import json
import os
import random


def _clean(text: str) -> str:
    return " ".join(text.replace("\t", " ").splitlines()).strip()


def reviews(raw_dir):
    """(movie id, review id, text, rating) of every raw file, in file-name order."""
    for name in sorted(os.listdir(raw_dir)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(raw_dir, name), encoding="utf-8") as f:
            for item in json.load(f):
                yield item["movie_id"], item["review_id"], _clean(item["review"]), int(item["rating"])


def label_of(rating: int):
    return 0 if rating <= 4 else 1 if rating >= 9 else None


def _balanced(rows, count, rng):
    by_label = {0: [r for r in rows if r[2] == 0], 1: [r for r in rows if r[2] == 1]}
    half = min(count // 2, *(len(v) for v in by_label.values()))
    picked = rng.sample(by_label[0], half) + rng.sample(by_label[1], half)
    rng.shuffle(picked)
    return picked


def _write_tsv(path, rows, with_labels=True):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("id\tdocument" + ("\tlabel" if with_labels else "") + "\n")
        for review_id, text, label in rows:
            f.write(f"{review_id}\t{text}" + (f"\t{label}\n" if with_labels else "\n"))


def build(raw_dir, out_dir, train: int = 20000, dev: int = 2000, test: int = 1000,
          corpus_reviews: int = 300_000, seed: int = 1234) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(seed)
    corpus, heldout, labelled, held = {}, {}, {"tune": [], "test": []}, 0
    for movie, review_id, text, rating in reviews(raw_dir):
        if not text:
            continue
        bucket = int(movie) % 10
        if bucket <= 6:
            (corpus if bucket <= 5 else heldout).setdefault(movie, []).append(text)
        elif label_of(rating) is not None:
            labelled["tune" if bucket <= 8 else "test"].append(
                (review_id, text, label_of(rating)))
            held += 1
    tune = _balanced(labelled["tune"], train + dev, rng)
    test_rows = _balanced(labelled["test"], test, rng)
    _write_tsv(os.path.join(out_dir, "train.tsv"), tune[:train])
    _write_tsv(os.path.join(out_dir, "dev.tsv"), tune[train:train + dev])
    _write_tsv(os.path.join(out_dir, "test.tsv"), test_rows, with_labels=False)
    _write_tsv(os.path.join(out_dir, "test_labels.tsv"), test_rows)
    written = {}
    for name, movies in (("corpus.txt", corpus), ("heldout.txt", heldout)):
        written[name] = 0
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            for movie in sorted(movies):
                if written[name] >= corpus_reviews:
                    break
                f.write("\n".join(movies[movie]) + "\n\n")
                written[name] += len(movies[movie])
    quotes = sum('"' in t for _, t, _ in tune[:train])
    return {"reviews_written": written, "train": train, "dev": dev, "test": len(test_rows),
            "train_rows_with_quotes": quotes, "labelled_held_out": held}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raw", required=True, help="the NSMC repository's raw/ folder")
    parser.add_argument("--out", required=True)
    parser.add_argument("--train", type=int, default=20000)
    parser.add_argument("--dev", type=int, default=2000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--corpus_reviews", type=int, default=300_000)
    args = parser.parse_args()
    print(json.dumps(build(args.raw, args.out, args.train, args.dev, args.test,
                          args.corpus_reviews), indent=1))
