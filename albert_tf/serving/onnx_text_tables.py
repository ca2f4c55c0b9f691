"""The tables that let standard ONNX ops tokenize exactly as albert-tf's Python tokenizer does
(`tokenization.text_rules.preprocess_text`, SentencePiece, the original's digit-comma fix-up,
`tokenization.pack_pair`); `serving.onnx_text` builds the graph from them. Pure Python.

* `char_table(lower)`: the original's normalisation as one string per code point. With
  accents always stripped, NFKD then dropping the combining marks is exact per code point
  (canonical reordering only moves marks, and every mark is dropped), and so is `str.lower()`
  but for one context rule, the final sigma (below). Every `str.isspace()` character maps to
  " ": SentencePiece's own whitespace squeezing (`remove_extra_whitespaces`) then does what
  `" ".join(text.split())` did. The table holds the code points it changes.
* `final_sigma_pattern()`: Python lower-cases "Σ" to "ς" when a cased letter precedes it and
  none follows (case-ignorable characters skipped: CPython's Final_Sigma rule). The table
  leaves every "Σ" as it is; the graph rewrites the final ones with this RE2 pattern, then the
  rest to "σ". The classes are measured from `str.lower()` itself, and lower-casing keeps each
  character's class (checked for every code point the table can output).
* `digit_comma_table(sp_model)`: each vocabulary id's ids after the fix-up (most: itself),
  padded with -1 into [V, width].
* `truncated_lengths`: `truncate_seq_pair`'s loop in closed form, as the graph computes it.
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

from albert_tf.tokenization.sentencepiece import is_digit_comma_piece, split_digit_comma_python3

SIGMA = "\u03a3"
# LabelEncoder's answer for a character the table does not hold (no table value is it).
UNCHANGED = "\ufdd0\ufdd1"


# Planes 0-3 and 14: planes 4-13 are unassigned and 15-16 private use (Unicode 14 to 16), so
# NFKD, lower() and isspace() change none of their characters and none is cased or
# case-ignorable (measured on every code point with Unicode 14).
PLANES = (range(0, 0xD800), range(0xE000, 0x40000), range(0xE0000, 0xE1000))
# A character's part in the final-sigma rule, measured from str.lower() itself.
CASED, IGNORABLE = 1, 2


def _code_points():
    return (chr(cp) for points in PLANES for cp in points)


def casing(char: str) -> int:
    """`CASED` (a "Σ" after it is final), `IGNORABLE` (skipped when looking for one) or 0."""
    if (char + SIGMA).lower().endswith("\u03c2"):
        return CASED
    if ("A" + char + SIGMA).lower().endswith("\u03c2"):
        return IGNORABLE
    return 0


def _stripped(char: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))


def normalize_char(char: str, lower: bool) -> str:
    """What `preprocess_text` makes of one character (whitespace: " "; "Σ" kept for the
    final-sigma rewrite)."""
    if char.isspace():
        return " "
    out = _stripped(char)
    if lower:
        out = "".join(c if c == SIGMA else c.lower() for c in out)
    return out


@functools.lru_cache(maxsize=2)
def char_table(lower: bool) -> dict:
    """{character: its normalised string} for every code point the normalisation changes."""
    table = {}
    for char in _code_points():
        out = normalize_char(char, lower)
        if out != char:
            table[char] = out
    assert UNCHANGED not in table.values()
    return table


def _ranges(chars) -> str:
    """An RE2 class body of `chars` (sorted code points) as ranges."""
    points = sorted(ord(c) for c in chars)
    parts, start = [], None
    for k, point in enumerate(points):
        if start is None:
            start = point
        if k + 1 == len(points) or points[k + 1] != point + 1:
            parts.append(f"\\x{{{start:x}}}" if start == point else
                         f"\\x{{{start:x}}}-\\x{{{point:x}}}")
            start = None
    return "".join(parts)


@functools.lru_cache(maxsize=1)
def final_sigma_pattern() -> str:
    """RE2 pattern: (cased [case-ignorable]*) Σ ([case-ignorable]* (end | neither)), whose
    Σ is final in Python's lower(); rewrite `\\1ς\\2`."""
    cased, ignorable = [], []
    for char in _code_points():
        kind = casing(char)
        if kind == CASED:
            cased.append(char)
        elif kind == IGNORABLE:
            ignorable.append(char)
    cased_class, ignorable_class = _ranges(cased), _ranges(ignorable)
    return (f"([{cased_class}][{ignorable_class}]*){SIGMA}"
            f"([{ignorable_class}]*(?:$|[^{cased_class}{ignorable_class}]))")


def digit_comma_table(sp_model) -> np.ndarray:
    """int32 [V, width]: row v holds id v's ids after the original's digit-comma fix-up
    (`tokenization.sentencepiece.split_digit_comma_python3`), padded with -1."""
    rows = []
    for index in range(sp_model.GetPieceSize()):
        piece = sp_model.IdToPiece(index)
        rows.append([sp_model.PieceToId(p) for p in split_digit_comma_python3(sp_model, piece)]
                    if is_digit_comma_piece(piece) else [index])
    width = max(len(row) for row in rows)
    table = np.full((len(rows), width), -1, np.int32)
    for index, row in enumerate(rows):
        table[index, :len(row)] = row
    return table


def truncated_lengths(len_a, len_b, max_seq_length: int):
    """The lengths `tokenization.pack_pair` keeps of A and B (numpy arrays or ints): a pair
    (B non-empty) trimmed to max_seq_length - 3 by popping from the longer, B on ties; a
    single text cut to max_seq_length - 2."""
    len_a, len_b = np.asarray(len_a), np.asarray(len_b)
    budget = max_seq_length - 3
    pair_a = np.minimum(len_a, np.maximum(budget - len_b, (budget + 1) // 2))
    pair_b = np.minimum(len_b, budget - pair_a)
    single_a = np.minimum(len_a, max_seq_length - 2)
    return np.where(len_b > 0, pair_a, single_a), np.where(len_b > 0, pair_b, 0)
