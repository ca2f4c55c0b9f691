"""The original `preprocess_text` written with TensorFlow string ops, for tf.data and serving.

Python's notions of "whitespace", "combining character" and "digit" differ from RE2's `\\s`,
`\\p{M}` and `\\d`, so the character classes used here are enumerated from Python's own
`str.isspace`, `unicodedata.combining` and `str.isdigit` when the graph is built. That keeps the
graph exactly as selective as the Python tokenizer (for the Unicode version of this Python).
"""

from __future__ import annotations

import functools
import sys
import unicodedata

import tensorflow as tf
import tensorflow_text as tf_text


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


@functools.lru_cache(maxsize=None)
def digit_class() -> str:
    """RE2 class of the characters for which Python's `str.isdigit()` is true (not only ASCII)."""
    return _re2_class(_ranges(str.isdigit))


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
    text = tf_text.normalize_utf8(text, "NFKD")
    text = strip_combining(text)
    if lower:
        text = lower_case(text)
    return text


def lower_case(text: tf.Tensor) -> tf.Tensor:
    """Python's `str.lower` on UTF-8 strings, NUL characters included.

    `tf.strings.lower` stops at the first NUL (it treats the value as a C string), so the text
    is split at NULs, each part lower-cased, and the NULs put back.
    """
    shape = tf.shape(text)
    parts = tf.strings.split(tf.reshape(text, [-1]), "\x00")
    lowered = tf.ragged.map_flat_values(tf.strings.lower, parts, encoding="utf-8")
    position = tf.ragged.range(parts.row_lengths())
    is_last = tf.equal(position, tf.expand_dims(parts.row_lengths() - 1, -1))
    separator = tf.ragged.map_flat_values(
        lambda last: tf.where(last, tf.constant(""), tf.constant("\x00")), is_last)
    joined = tf.strings.reduce_join(tf.strings.join([lowered, separator]), axis=-1)
    return tf.reshape(joined, shape)
