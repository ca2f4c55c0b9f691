"""WordPiece (Chinese) models in the graph: `WordpiecePreprocessor` (raw text to ALBERT inputs)
and `tokenize_with_offsets` (SQuAD's tokenization, with each piece's byte span in the raw text).

The ids are those of the Python path `FullTokenizer(vocab_file, do_lower_case)` (that is,
`albert_tf.tokenization.wordpiece.BertTokenizer`, BERT's basic tokenization then greedy
WordPiece), packed as the SentencePiece preprocessor packs them (`albert_tf.text.packing`). The
basic tokenization is written here with regex ops rather than taken from
`tensorflow_text.BertTokenizer`, whose lower-casing is NFKC case folding: full-width letters,
"ß", ligatures come out differently from Python's `str.lower` (tests/test_text_wordpiece.py
pins two such words). The greedy match is `tensorflow_text.WordpieceTokenizer` over a table
built from `tokenization.load_vocab` (ids by first occurrence, as the original).

Known difference: character classes (control, whitespace, punctuation, combining marks) come
from RE2's Unicode tables rather than Python's `unicodedata`; characters assigned in one
Unicode version and not the other may be classed differently. tests/test_text_wordpiece.py
checks CJK, accents, punctuation, control characters and case against the Python tokenizer.

Offsets. The SQuAD features tokenize `preprocess_text(text, lower=do_lower_case)` (squeeze
whitespace, NFKD, drop combining marks, lower-case) with the WordPiece tokenizer;
`tokenize_with_offsets` gives those ids. Both steps rewrite the text (NFKD expands "ﬁ" to "fi"
and "…" to "...", accents go, CJK characters and punctuation become words of their own), so a
piece's position in the rewritten text says nothing about the raw text. Instead every rewritten
character carries the index of the raw character it came from: the text is processed character
by character (each step of both normalisations maps one character to zero or more,
independently of its neighbours), except lower-casing, which runs on whole strings because of
the Greek final sigma and keeps the character count (after NFKD has split "İ", the one
character whose lower case is two). Words, then pieces
(`tensorflow_text.WordpieceTokenizer.tokenize_with_offsets`), are runs of those characters, so
each piece maps to the raw characters from its first to its last one.

A piece made from part of one raw character ("ﬁ" → "fi" → "f", "##i") covers that whole
character. An over-long word ([UNK]) covers the word.

Compared with the Python path's alignment (`tasks.squad.alignment`, a banded LCS of raw and
piece characters): equal on the real SQuAD passages and crafted accented, CJK and mixed-case
texts (tests/test_text_wordpiece.py). Where the LCS can only guess, these spans are the exact
ones: an [UNK] piece (whose text "[UNK]" matches nothing; the neighbours then absorb its
characters, or the paragraph is dropped), one raw character split into several words ("…" →
". . ."), a character that normalises to a space ("¨").
"""

from __future__ import annotations

import os

import tensorflow as tf

from albert_tf.tokenization.wordpiece import (
    CJK_RANGES, MAX_INPUT_CHARS_PER_WORD, UNK_TOKEN, WORDPIECE_SPECIAL_TOKENS, load_vocab)
from albert_tf.text import normalize
from albert_tf.text.layer import TextPreprocessorLayer
from albert_tf.text.optional import tensorflow_text
from albert_tf.text.preprocessor import AlbertPreprocessor

# Python's `str.split()` splits on these too (Zl, Zp), and `clean_text` keeps them.
_SPACES = r"[\t\n\r\p{Zs}\x{2028}\x{2029}]"
# `clean_text` drops NUL, U+FFFD and Cc/Cf characters (tab, newline, CR became spaces above).
_DROPPED = r"[\x{0}\x{FFFD}\p{Cc}\p{Cf}]"
_CJK = "[" + "".join(f"\\x{{{start:X}}}-\\x{{{end:X}}}" for start, end in CJK_RANGES) + "]"
# `is_punctuation`: the ASCII symbol ranges and every Unicode P* character.
_PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}]"


def basic_tokenize(text: tf.Tensor, do_lower_case: bool) -> tf.RaggedTensor:
    """[B] strings → [B, (words)] as the Python `BasicTokenizer(do_lower_case).tokenize`."""
    text = tf.strings.regex_replace(text, _SPACES, " ")
    text = tf.strings.regex_replace(text, _DROPPED, "")
    text = tf.strings.regex_replace(text, _CJK, r" \0 ")
    if do_lower_case:
        text = normalize.lower_case(text)
        text = tensorflow_text().normalize_utf8(text, "NFD")
        text = tf.strings.regex_replace(text, r"\p{Mn}", "")
    text = tf.strings.regex_replace(text, _PUNCTUATION, r" \0 ")
    return tf.strings.split(text)


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
    normal = normalize.strip_combining(tensorflow_text().normalize_utf8(raw_chars, "NFKD"))
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
        kept = tf.strings.regex_replace(tensorflow_text().normalize_utf8(kept, "NFD"), r"\p{Mn}",
                                        "")
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
    too_long = (last - first + 1) > MAX_INPUT_CHARS_PER_WORD
    words = tf.where(too_long, UNK_TOKEN, words)
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


class WordpiecePreprocessor(TextPreprocessorLayer):
    """Maps [B] UTF-8 strings, or a pair of them, to int32 [B, max_seq_length] model inputs.

    Same interface as `AlbertPreprocessor`; the vocabulary is a lookup table in the graph (see
    `resources`), so a SavedModel holding this layer needs no file at serving time.
    """

    SOURCE_KEY = "vocab_file"

    def __init__(self, vocab_file, max_seq_length: int, do_lower_case: bool = True, **kwargs):
        super().__init__(os.fspath(vocab_file), max_seq_length, do_lower_case, **kwargs)
        self.vocab_file = self.source_file
        vocab = load_vocab(self.vocab_file, WORDPIECE_SPECIAL_TOKENS)
        self.cls_id, self.sep_id = vocab["[CLS]"], vocab["[SEP]"]
        self.unk_id = vocab[UNK_TOKEN]
        self.vocab_size = len(vocab)
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(list(vocab.keys()), tf.string),
                                                tf.constant(list(vocab.values()), tf.int64)),
            default_value=-1)
        # Words over the original's 200 characters become [UNK]; the byte limit only has to be
        # above what 200 characters can take.
        self.wordpiece = tensorflow_text("the in-graph WordPiece tokenizer").WordpieceTokenizer(
            self.table, suffix_indicator="##", max_bytes_per_word=4 * MAX_INPUT_CHARS_PER_WORD,
            token_out_type=tf.int64, unknown_token=UNK_TOKEN)

    @property
    def resources(self) -> dict:
        """What a SavedModel root must hold for functions that call this layer."""
        return {"wordpiece_vocab": self.table}

    def tokenize(self, strings, preprocess: bool = True) -> tf.RaggedTensor:
        """[B] strings → [B, (pieces)] int32 ids, as `FullTokenizer(vocab_file).tokenize`.
        (`preprocess` is accepted for `AlbertPreprocessor`'s signature; the basic tokenization
        always runs, as it does in the Python tokenizer.)"""
        del preprocess
        words = basic_tokenize(tf.convert_to_tensor(strings, tf.string), self.do_lower_case)
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > MAX_INPUT_CHARS_PER_WORD
        words = words.with_flat_values(tf.where(too_long, UNK_TOKEN, words.flat_values))
        pieces = self.wordpiece.tokenize(words)  # [B, (words), (pieces)]
        return tf.cast(pieces.merge_dims(1, 2), tf.int32)

    def tokenize_with_offsets(self, strings):
        """SQuAD's tokenization: the ids of `tokenize(preprocess_text(strings))` with each
        piece's start and end byte in the raw strings (module `tokenize_with_offsets`)."""
        return tokenize_with_offsets(self, strings)


def text_preprocessor(max_seq_length: int, do_lower_case: bool = True, spm_model_file=None,
                      vocab_file=None, albert_text_rules: bool = True):
    """The in-graph preprocessor of a tokenizer as `FullTokenizer` picks it: SentencePiece when
    `spm_model_file` is given, else WordPiece over `vocab_file`; None when neither is.
    `albert_text_rules=False`: SentencePiece on the text as is (keras-hub's tokenizer)."""
    if spm_model_file:
        return AlbertPreprocessor(spm_model_file, max_seq_length, do_lower_case,
                                  albert_text_rules)
    if vocab_file:
        return WordpiecePreprocessor(vocab_file, max_seq_length, do_lower_case)
    return None
