"""The tables that let numeric ONNX ops run albert-tf's WordPiece tokenizer
(`tokenization.wordpiece.BertTokenizer`) on code points; `serving.onnx_wordpiece` builds the
graph from them. Pure Python.

* `char_codes(lower)`: per code point, the basic tokenizer's class (`NORMAL`, `DROP`: NUL,
  U+FFFD and controls — and `runtimes.NUL_STANDIN`, which the text runners send for a NUL —,
  `SPACE`: what `clean_text` turns into a space or `str.split()` splits at, `CJK`), its
  casing for the final-sigma rule (`CASED`, `IGNORABLE`: measured from `str.lower()` itself,
  as `onnx_text_tables.final_sigma_pattern` does) and, when lower-casing, its entry in the
  normalisation table (`strip_accents(c.lower())` per character, "Σ" kept for the graph's
  final-sigma rule; 0: unchanged). Per character is exact: `str.lower()` is per character but
  for the final sigma, and NFD is per character but for canonical reordering, which only moves
  marks: those with a combining class are all dropped (category Mn) but for 25 spacing marks
  (category Mc: viramas such as U+1B44, the Hangul tone marks U+302E-302F, musical symbols
  U+1D165-1D172; Unicode 14). Two of them in one word in falling class order, which NFD
  swaps, are the one text an uncased table tokenizes otherwise (their order kept).
* `out_codes(lower)`: per code point a normalised character can be: `PUNCT`
  (`is_punctuation`, a word of its own) or `SPACE` (the last `whitespace_tokenize` splits).
* `paged(values)`: a code point table as (page of each 256 code points, distinct pages).
* `vocab_keys(vocab)`: the vocabulary's tokens hashed as the graph hashes a word's windows (two
  polynomials of the code points, "##" for a continuation) into a two-level perfect hash
  (`Keys`); the graph checks each candidate's code points, so a hash never decides a match.
  Every product stays below 2**31: OpenVINO's CPU plugin runs int64 arithmetic in int32.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

import numpy as np

from albert_tf.serving import runtimes
# CASED and IGNORABLE are re-exported: onnx_wordpiece reads every code of the tables from here.
from albert_tf.serving.onnx_text_tables import CASED, IGNORABLE, PLANES, casing  # noqa: F401
from albert_tf.tokenization.wordpiece import (clean_text, is_cjk, is_punctuation,
                                              strip_accents)

NORMAL, DROP, SPACE, CJK = 0, 1, 2, 3
PUNCT = 1
SIGMA = 0x3A3
NUL_STANDIN = ord(runtimes.NUL_STANDIN)
LAST = 0x10FFFF
PAGE = 256
HASH_MOD = 1_048_573  # a prime below 2**20: a hash times a base below 1024 stays below 2**30
HASH_BASES = (911, 997)
# Every hash starts here, not at 0: a short key's hash is then no small number, whose products
# with a bucket's multipliers would not wrap around the modulus (and not mix).
HASH_SEED = 524_287


def code_points():
    """Planes 0-3 and 14 (`onnx_text_tables.PLANES`): the others hold no character that any
    rule changes or classifies (unassigned, private use: NORMAL, unchanged)."""
    return (cp for points in PLANES for cp in points)


def char_class(cp: int) -> int:
    char = chr(cp)
    if cp == NUL_STANDIN or clean_text(char) == "":
        return DROP
    if char.isspace() or clean_text(char) == " ":
        return SPACE
    return CJK if is_cjk(cp) else NORMAL


def normalized(char: str) -> str:
    """What lower-casing and accent stripping make of one character ("Σ" kept)."""
    return char if char == "\u03a3" else strip_accents(char.lower())


@functools.lru_cache(maxsize=2)
def char_codes(lower: bool):
    """(int32 [0x110000]: class + 4 * casing + 16 * entry, the entries' outputs: lengths,
    starts, code points)."""
    codes = np.zeros(LAST + 1, np.int32)
    lengths, starts, data = [1], [0], [0]
    for cp in code_points():
        kind, char = char_class(cp), chr(cp)
        code = kind + 4 * (casing(char) if kind == NORMAL else 0)
        out = normalized(char) if lower and kind in (NORMAL, CJK) else char
        if out != char:
            code += 16 * len(lengths)
            starts.append(len(data))
            lengths.append(len(out))
            data.extend(ord(c) for c in out)
        codes[cp] = code
    return codes, np.array(lengths, np.int64), np.array(starts, np.int64), np.array(data, np.int64)


@functools.lru_cache(maxsize=1)
def out_codes():
    """int32 [0x110000]: `PUNCT`, `SPACE` or 0 of each character a normalised text holds."""
    codes = np.zeros(LAST + 1, np.int32)
    for cp in code_points():
        char = chr(cp)
        codes[cp] = PUNCT if is_punctuation(char) else SPACE if char.isspace() else 0
    return codes


def paged(values: np.ndarray):
    """(int64 [pages]: each 256 code points' page, int32 [P * 256]: the distinct pages)."""
    pages, index = np.unique(values.reshape(-1, PAGE), axis=0, return_inverse=True)
    return index.reshape(-1).astype(np.int64), pages.reshape(-1).astype(np.int32)


def fold(h: int, cp: int, base: int) -> int:
    """One code point into a window's hash, as the graph folds it."""
    return (h * base + cp + 1) % HASH_MOD


@dataclass
class Keys:
    """The vocabulary's tokens as the graph looks them up: the `bases` of the two hashes,
    `prefixes` (their hashes of "##", from `HASH_SEED` as every hash), per bucket (the first hash's remainder) its two
    multipliers (of the second hash and the first: the place in the bucket), first slot and
    slot count, per slot its key (-1: none), per key its id, continuation flag, length and code
    points (padded with -2); `width`: the longest key in characters (no "##")."""
    bases: tuple
    prefixes: tuple
    multiplier: np.ndarray
    offset: np.ndarray
    size: np.ndarray
    slot: np.ndarray
    ids: np.ndarray
    continued: np.ndarray
    lengths: np.ndarray
    points: np.ndarray
    width: int


def _hash(points, base, h=HASH_SEED):
    for cp in points:
        h = fold(h, cp, base)
    return h


def place(a: int, c: int, first: int, second: int, count: int) -> int:
    """A key's place in its bucket of `count` slots, as the graph computes it."""
    return ((a * second) % HASH_MOD + (c * first) % HASH_MOD) % count


def vocab_keys(vocab, max_chars: int) -> Keys:
    """`Keys` of a token → id vocabulary (`tokenization.load_vocab`'s); tokens longer than
    `max_chars` characters (no word is) are left out."""
    tokens = [(t.startswith("##"), t[2:] if t.startswith("##") else t, i)
              for t, i in vocab.items()]
    tokens = [t for t in tokens if 0 < len(t[1]) <= max_chars]
    rng = random.Random(48)
    for bases in [HASH_BASES] + [(rng.randrange(257, 1024), rng.randrange(257, 1024))
                                 for _ in range(20)]:
        prefixes = tuple(_hash([ord("#")] * 2, b) for b in bases)
        hashes = [tuple(_hash(map(ord, s), b, p if c else HASH_SEED)
                        for b, p in zip(bases, prefixes)) for c, s, _ in tokens]
        if len(set(hashes)) == len(hashes):
            break
    else:
        raise ValueError("no hash bases give the vocabulary's tokens distinct hashes")
    buckets = [[] for _ in range(max(1, len(tokens)))]
    for key, (first, _) in enumerate(hashes):
        buckets[first % len(buckets)].append(key)
    multiplier, offset, size, slot = [], [], [], []
    for keys in buckets:
        count = max(1, len(keys) ** 2)
        for _ in range(10_000):
            a, c = rng.randrange(1, 1024), rng.randrange(1, 1024)
            places = [place(a, c, *hashes[k], count) for k in keys]
            if len(set(places)) == len(places):
                break
        else:
            raise ValueError(f"no multipliers place the tokens {[tokens[k][1] for k in keys]} "
                             "apart")
        table = [-1] * count
        for k, at in zip(keys, places):
            table[at] = k
        multiplier.append((a, c))
        offset.append(len(slot))
        size.append(count)
        slot.extend(table)
    width = max([len(s) for _, s, _ in tokens] or [1])
    points = np.full((max(1, len(tokens)), width), -2, np.int32)
    for k, (_, s, _) in enumerate(tokens):
        points[k, :len(s)] = [ord(c) for c in s]
    return Keys(bases, prefixes, np.array(multiplier, np.int64).reshape(-1, 2), np.array(offset, np.int64),
                np.array(size, np.int64), np.array(slot + [-1], np.int64),
                np.array([i for _, _, i in tokens] or [0], np.int64),
                np.array([c for c, _, _ in tokens] or [False]),
                np.array([len(s) for _, s, _ in tokens] or [0], np.int64), points, width)
