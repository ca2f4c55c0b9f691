"""The original `preprocess_text` written with TensorFlow string ops, for tf.data and serving.

Python's notions of "whitespace" and "combining character" differ from RE2's `\\s` and
`\\p{M}`, so the character classes used here are enumerated from Python's own `str.isspace`
and `unicodedata.combining` when the graph is built. That keeps the
graph exactly as selective as the Python tokenizer (for the Unicode version of this Python).
"""

from __future__ import annotations

import functools
import sys
import unicodedata

import tensorflow as tf

from albert_tf.text.optional import tensorflow_text


def _ranges(predicate) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:  # surrogates never occur in valid UTF-8
            continue
        if predicate(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return ranges


def _re2_class(ranges: list[tuple[int, int]]) -> str:
    parts = []
    for start, end in ranges:
        parts.append(f"\\x{{{start:X}}}" if start == end else f"\\x{{{start:X}}}-\\x{{{end:X}}}")
    return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=None)
def whitespace_class() -> str:
    """RE2 class of the characters Python's `str.split()` / `str.strip()` treat as whitespace."""
    return _re2_class(_ranges(str.isspace))


@functools.lru_cache(maxsize=None)
def combining_class() -> str:
    """RE2 class of the characters with a non-zero canonical combining class (dropped after NFKD)."""
    return _re2_class(_ranges(unicodedata.combining))


def drop_invalid_utf8(text: tf.Tensor) -> tf.Tensor:
    """Drops bytes that are not valid UTF-8, as the original's `decode("utf-8", "ignore")`."""
    return tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="ignore")


def squeeze_whitespace(text: tf.Tensor) -> tf.Tensor:
    """`" ".join(text.strip().split())` with Python's whitespace set."""
    ws = whitespace_class()
    text = tf.strings.regex_replace(text, ws + "+", " ")
    return tf.strings.regex_replace(text, "^ | $", "")


def strip_combining(text: tf.Tensor) -> tf.Tensor:
    """Removes every character with a non-zero combining class (accent stripping)."""
    return tf.strings.regex_replace(text, combining_class(), "")


def preprocess_text(text: tf.Tensor, remove_space: bool = True, lower: bool = False) -> tf.Tensor:
    """`albert_tf.tokenization.preprocess_text` on a string tensor of any shape.

    Order as the original: squeeze whitespace, NFKD, drop combining marks, then lower-case
    (ICU full lower-casing, which like Python's `str.lower` handles the final sigma; see
    `lower_case`).
    """
    text = drop_invalid_utf8(tf.convert_to_tensor(text, tf.string))
    if remove_space:
        text = squeeze_whitespace(text)
    text = tensorflow_text().normalize_utf8(text, "NFKD")
    text = strip_combining(text)
    if lower:
        text = lower_case(text)
    return text


def lower_case(text: tf.Tensor) -> tf.Tensor:
    """Python's `str.lower` on UTF-8 strings, NUL characters included.

    `tf.strings.lower` stops at the first NUL (it treats the value as a C string), so the text
    is split at NULs, each part lower-cased, and the parts joined again with NULs. NUL is
    neither cased nor case-ignorable, so this also keeps the final-sigma rule as Python applies
    it. Plain ops only (no tf.cond, no validating ragged constructors): control flow makes
    `tf.data` map functions several times slower.
    """
    shape = tf.shape(text)
    flat = tf.reshape(text, [-1])
    parts = tf.strings.split(flat, "\x00")
    lowered = tf.strings.lower(parts.flat_values, encoding="utf-8")
    # Every part gets a NUL after it; the one after the last part is cut off below.
    joined = tf.strings.unsorted_segment_join(
        tf.strings.join([lowered, tf.fill(tf.shape(lowered), "\x00")]), parts.value_rowids(),
        tf.shape(flat)[0])
    length = tf.strings.length(joined)
    trimmed = tf.strings.substr(joined, tf.zeros_like(length), tf.maximum(length - 1, 0))
    return tf.reshape(trimmed, shape)
