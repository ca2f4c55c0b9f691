"""SQuAD's WordPiece tokenization in the graph, with each piece's byte span in the raw text.

The SQuAD features tokenize `preprocess_text(text, lower=do_lower_case)` (squeeze whitespace,
NFKD, drop combining marks, lower-case) with the WordPiece tokenizer; the ids here are those.
Both steps rewrite the text (NFKD expands "ﬁ" to "fi" and "…" to "...", accents go, CJK
characters and punctuation become words of their own), so a piece's position in the rewritten
text says nothing about the raw text. Instead every rewritten character carries the index of the
raw character it came from: the text is processed character by character (each step of both
normalisations maps one character to zero or more, independently of its neighbours), except
lower-casing, which runs on whole strings because of the Greek final sigma and keeps the
character count (after NFKD has split "İ", the one character whose lower case is two). Words,
then pieces (`tensorflow_text.WordpieceTokenizer.tokenize_with_offsets`), are runs of those
characters, so each piece maps to the raw characters from its first to its last one.

A piece made from part of one raw character ("ﬁ" → "fi" → "f", "##i") covers that whole
character. An over-long word ([UNK]) covers the word.

Compared with the Python path's alignment (`tasks.squad.alignment`, a banded LCS of raw and
piece characters): equal on the real SQuAD passages and crafted accented, CJK and mixed-case
texts (tests/test_text_wordpiece_offsets.py). Where the LCS can only guess, these spans are the
exact ones: an [UNK] piece (whose text "[UNK]" matches nothing; the neighbours then absorb its
characters, or the paragraph is dropped), one raw character split into several words ("…" →
". . ."), a character that normalises to a space ("¨").
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf import wordpiece
from albert_tf.text import normalize
from albert_tf.text.wordpiece import _CJK, _DROPPED, _PUNCTUATION, _SPACES


def _chars(strings: tf.Tensor, owner: tf.Tensor):
    """Flat characters of flat strings, each with the `owner` entry of its string."""
    split = tf.strings.unicode_split(strings, "UTF-8")
    return split.flat_values, tf.gather(owner, split.value_rowids())


def _matches(chars: tf.Tensor, pattern: str) -> tf.Tensor:
    return tf.strings.regex_full_match(chars, pattern)


def _preprocessed_chars(text: tf.Tensor, do_lower_case: bool):
    """The characters of `preprocess_text(text)` with their raw character index (flat over the
    batch), and the raw characters' byte spans and rows."""
    raw, raw_starts = tf.strings.unicode_split_with_offsets(text, "UTF-8")
    raw_chars = raw.flat_values
    raw_row = raw.value_rowids()
    starts = raw_starts.flat_values
    ends = starts + tf.cast(tf.strings.length(raw_chars), starts.dtype)
    index = tf.range(tf.shape(raw_chars, out_type=tf.int64)[0])
    # Squeezing whitespace only merges separators, so each whitespace character becomes " ".
    normal = normalize.strip_combining(tf_text.normalize_utf8(raw_chars, "NFKD"))
    normal = tf.where(_matches(raw_chars, normalize.whitespace_class()), " ", normal)
    chars, owner = _chars(normal, index)
    if do_lower_case:
        batch = tf.shape(text, out_type=tf.int64)[0]
        rows = tf.RaggedTensor.from_value_rowids(normal, raw_row, nrows=batch)
        lowered = tf.strings.unicode_split(normalize.lower_case(tf.strings.reduce_join(rows, 1)),
                                           "UTF-8").flat_values
        same = tf.debugging.assert_equal(tf.size(lowered), tf.size(chars), message=(
            "lower-casing changed the number of characters; piece offsets would be wrong"))
        with tf.control_dependencies([same]):
            chars = tf.identity(lowered)
    return chars, owner, raw_row, starts, ends


def _basic_chars(chars: tf.Tensor, owner: tf.Tensor, do_lower_case: bool):
    """`BasicTokenizer`'s per-character steps: control characters dropped and, when
    lower-casing, NFD with nonspacing marks removed. (Its own lower-casing is a no-op on text
    `preprocess_text` lower-cased.)"""
    kept = tf.where(_matches(chars, _DROPPED), "", chars)
    if do_lower_case:
        kept = tf.strings.regex_replace(tf_text.normalize_utf8(kept, "NFD"), r"\p{Mn}", "")
    return _chars(kept, owner)


def _words(chars: tf.Tensor, row: tf.Tensor):
    """Word index of every character (-1 for separators) and the number of words: a CJK or
    punctuation character is a word; other non-space characters form words of maximal runs."""
    space = _matches(chars, _SPACES)
    alone = _matches(chars, _PUNCTUATION) | _matches(chars, _CJK)
    inside = ~space & ~alone
    follows = tf.concat([[False], inside[:-1] & tf.equal(row[1:], row[:-1])], 0)
    starts = alone | (inside & ~follows)
    word = tf.cumsum(tf.cast(starts, tf.int64)) - 1
    count = tf.reduce_sum(tf.cast(starts, tf.int64))
    return tf.where(space, tf.constant(-1, tf.int64), word), count


def tokenize_with_offsets(layer, text: tf.Tensor):
    """[B] raw strings → (ids, start bytes, end bytes), each [B, (pieces)]: the ids of
    `encode_ids(WordpiecePieces, preprocess_text(text, lower=do_lower_case))` (the SQuAD
    features' tokenization) and each piece's raw span `text[start:end]` in bytes.

    `layer` is a `WordpiecePreprocessor` (its vocabulary table and do_lower_case).
    """
    text = tf.convert_to_tensor(text, tf.string)
    batch = tf.shape(text, out_type=tf.int64)[0]
    chars, owner, raw_row, raw_starts, raw_ends = _preprocessed_chars(text, layer.do_lower_case)
    chars, owner = _basic_chars(chars, owner, layer.do_lower_case)
    word, num_words = _words(chars, tf.gather(raw_row, owner))
    in_word = word >= 0
    chars, owner, word = (tf.boolean_mask(t, in_word) for t in (chars, owner, word))

    # Words and where their characters sit in the bytes of all words laid end to end.
    words = tf.strings.unsorted_segment_join(chars, word, num_words)
    char_bytes = tf.cast(tf.strings.length(chars), tf.int64)
    char_at = tf.cumsum(char_bytes, exclusive=True)
    position = tf.range(tf.shape(chars, out_type=tf.int64)[0])
    first = tf.math.unsorted_segment_min(position, word, num_words)
    last = tf.math.unsorted_segment_max(position, word, num_words)
    too_long = (last - first + 1) > wordpiece.MAX_INPUT_CHARS_PER_WORD
    words = tf.where(too_long, wordpiece.UNK_TOKEN, words)
    word_row = tf.gather(raw_row, tf.gather(owner, first))
    ragged_words = tf.RaggedTensor.from_value_rowids(words, word_row, nrows=batch, validate=False)

    pieces, begin, end = layer.wordpiece.tokenize_with_offsets(ragged_words)
    piece_word = pieces.values.value_rowids()          # index into `words`
    base = tf.gather(tf.gather(char_at, first), piece_word)
    begin, end = tf.cast(begin.flat_values, tf.int64), tf.cast(end.flat_values, tf.int64)
    first_char = tf.searchsorted(char_at, base + begin, side="right", out_type=tf.int64) - 1
    last_char = tf.searchsorted(char_at, base + end - 1, side="right", out_type=tf.int64) - 1
    long_piece = tf.gather(too_long, piece_word)
    first_char = tf.where(long_piece, tf.gather(first, piece_word), first_char)
    last_char = tf.where(long_piece, tf.gather(last, piece_word), last_char)
    piece_start = tf.gather(raw_starts, tf.gather(owner, first_char))
    piece_end = tf.gather(raw_ends, tf.gather(owner, last_char))

    ids = tf.cast(pieces.merge_dims(1, 2), tf.int32)
    return ids, ids.with_flat_values(tf.cast(piece_start, tf.int64)), \
        ids.with_flat_values(tf.cast(piece_end, tf.int64))
