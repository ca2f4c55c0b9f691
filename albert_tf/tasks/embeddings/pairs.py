"""Text pairs from CSV, TSV or JSONL files, and the STS benchmarks' score (TensorFlow-free).

Columns are found by name in a header row (a JSONL object's keys): the two texts as
`sentence1`/`sentence2` (GLUE's STS-B, MRPC-style files), `text_a`/`text_b`, `anchor`/`positive`
or `query`/`positive`; the score as `score`, `label` or `similarity`. GLUE's STS-B TSV files
are read as they are (no quoting, their header names sentence1, sentence2, score; test.tsv has
no score). A file without such a header holds the pair in its first two columns and, when it
has a third, the score there. A score must lie in the file's stated range (`score_range`,
STS-B's 0..5 by default for a file whose header is GLUE's, else 0..1).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os

import numpy as np

from albert_tf.errors import InputError, UsageError

TEXT_COLUMNS = (("sentence1", "sentence2"), ("text_a", "text_b"), ("anchor", "positive"),
                ("query", "positive"))
SCORE_COLUMNS = ("score", "label", "similarity")
GLUE_STSB_RANGE = (0.0, 5.0)
DEFAULT_RANGE = (0.0, 1.0)


class EmbeddingsError(UsageError):
    """Arguments of the embeddings API that cannot work (the message names the argument)."""


@dataclasses.dataclass
class Pairs:
    """`texts_a[i]`, `texts_b[i]` and, for a scored file, `scores[i]` (as in the file) with
    the file's `score_range`."""

    texts_a: list
    texts_b: list
    scores: list | None = None
    score_range: tuple = DEFAULT_RANGE
    path: str = ""

    def __len__(self):
        return len(self.texts_a)


def parse_range(value) -> tuple[float, float] | None:
    """'0,5' → (0.0, 5.0); None stays None."""
    if value is None or isinstance(value, tuple):
        return value
    try:
        low, high = (float(v) for v in str(value).split(","))
    except ValueError:
        raise UsageError(f"--score_range={value!r}: expected min,max (e.g. 0,5)") from None
    if not low < high:
        raise UsageError(f"--score_range={value!r}: min must be below max")
    return low, high


def _rows(path: str):
    """(line number, row as a list or dict) of a CSV, TSV or JSONL file."""
    extension = os.path.splitext(path)[1].lower()
    with open(path, encoding="utf-8-sig", newline="") as handle:
        if extension in (".jsonl", ".json"):
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as error:
                        raise InputError(f"{path}:{number}: not a JSON object ({error.msg})") \
                            from None
                    if not isinstance(row, dict):
                        raise InputError(f"{path}:{number}: expected a JSON object per line")
                    yield number, row
            return
        if extension not in (".tsv", ".csv", ".txt"):
            raise InputError(f"{path}: a pair file is .csv, .tsv or .jsonl")
        reader = csv.reader(handle, delimiter="," if extension == ".csv" else "\t",
                            quotechar='"' if extension == ".csv" else None)
        for number, row in enumerate(reader, 1):
            if row and any(cell.strip() for cell in row):
                yield number, row


def _columns(names, path) -> tuple[str, str, str | None] | None:
    lowered = [str(n).strip().lower() for n in names]
    for a, b in TEXT_COLUMNS:
        if a in lowered and b in lowered:
            score = next((s for s in SCORE_COLUMNS if s in lowered), None)
            return lowered.index(a), lowered.index(b), None if score is None else \
                lowered.index(score)
    return None


def read_pairs(path, score_range=None, need_scores: bool = False) -> Pairs:
    """The pairs of `path` (see the module docstring); every bad row is an `InputError`
    naming the file and line."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    rows = list(_rows(path))
    if not rows:
        raise InputError(f"{path}: no pairs")
    first = rows[0][1]
    glue = False
    if isinstance(first, dict):
        keys = list(first)
        where = _columns(keys, path)
        if where is None:
            raise InputError(f"{path}:{rows[0][0]}: no text pair keys (one of "
                             f"{', '.join('/'.join(p) for p in TEXT_COLUMNS)})")
        where = tuple(None if i is None else keys[i] for i in where)
    else:
        where = _columns(first, path)
        if where is not None:
            glue = [c.strip().lower() for c in first][where[0]] == "sentence1"
            rows = rows[1:]
        else:
            width = len(first)
            if width < 2:
                raise InputError(f"{path}:{rows[0][0]}: one column; a pair file needs two "
                                 "text columns (and an optional score)")
            where = (0, 1, 2 if width > 2 else None)
    low, high = parse_range(score_range) or (GLUE_STSB_RANGE if glue else DEFAULT_RANGE)
    if need_scores and where[2] is None:
        raise InputError(f"{path}: no score column (score, label or similarity; or a third "
                         "column)")
    texts_a, texts_b, scores = [], [], [] if where[2] is not None else None
    for number, row in rows:
        try:
            a, b = row[where[0]], row[where[1]]
        except (IndexError, KeyError):
            raise InputError(f"{path}:{number}: a row without both texts "
                             f"({len(row)} columns)") from None
        if not isinstance(a, str) or not isinstance(b, str) or not a.strip() or not b.strip():
            raise InputError(f"{path}:{number}: an empty or non-text text")
        texts_a.append(a)
        texts_b.append(b)
        if scores is not None:
            try:
                score = float(row[where[2]])
            except (IndexError, KeyError, TypeError, ValueError):
                raise InputError(f"{path}:{number}: the score is missing or not a number") \
                    from None
            if not low <= score <= high:
                raise InputError(f"{path}:{number}: score {score:g} is outside the file's range "
                                 f"{low:g}..{high:g} (--score_range)")
            scores.append(score)
    if not texts_a:
        raise InputError(f"{path}: no pairs")
    return Pairs(texts_a, texts_b, scores, (low, high), path)


def _ranks(values) -> np.ndarray:
    """Ranks from 1, ties given their mean rank (as the STS benchmarks' Spearman)."""
    values = np.asarray(values, np.float64)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(x, y) -> float:
    """Spearman's rank correlation (Pearson's of the ranks, ties averaged)."""
    return pearson(_ranks(x), _ranks(y))


def pearson(x, y) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / denominator) if denominator else 0.0
