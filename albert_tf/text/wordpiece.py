"""`WordpiecePreprocessor`: raw text to ALBERT inputs in the graph, for WordPiece (Chinese) models.

The ids are those of the Python path `FullTokenizer(vocab_file, do_lower_case)` (that is,
`albert_tf.wordpiece.BertTokenizer`, BERT's basic tokenization then greedy WordPiece), packed
as the SentencePiece preprocessor packs them (`albert_tf.text.packing`). The basic tokenization
is written here with regex ops rather than taken from `tensorflow_text.BertTokenizer`, whose
lower-casing is NFKC case folding: full-width letters, "ß", ligatures come out differently from
Python's `str.lower` (tests/test_text_wordpiece.py pins two such words). The greedy match is
`tensorflow_text.WordpieceTokenizer` over a table built from `tokenization.load_vocab` (ids by
first occurrence, as the original).

Known difference: character classes (control, whitespace, punctuation, combining marks) come
from RE2's Unicode tables rather than Python's `unicodedata`; characters assigned in one
Unicode version and not the other may be classed differently. tests/test_text_wordpiece.py
checks CJK, accents, punctuation, control characters and case against the Python tokenizer.
"""

from __future__ import annotations

import os

import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf import tokenization, wordpiece
from albert_tf.text import normalize
from albert_tf.text.layer import TextPreprocessorLayer

# Python's `str.split()` splits on these too (Zl, Zp), and `clean_text` keeps them.
_SPACES = r"[\t\n\r\p{Zs}\x{2028}\x{2029}]"
# `clean_text` drops NUL, U+FFFD and Cc/Cf characters (tab, newline, CR became spaces above).
_DROPPED = r"[\x{0}\x{FFFD}\p{Cc}\p{Cf}]"
_CJK = "[" + "".join(f"\\x{{{start:X}}}-\\x{{{end:X}}}" for start, end in wordpiece._CJK_RANGES) + "]"
# `is_punctuation`: the ASCII symbol ranges and every Unicode P* character.
_PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}]"


def basic_tokenize(text: tf.Tensor, do_lower_case: bool) -> tf.RaggedTensor:
    """[B] strings → [B, (words)] as `wordpiece.BasicTokenizer(do_lower_case).tokenize`."""
    text = tf.strings.regex_replace(text, _SPACES, " ")
    text = tf.strings.regex_replace(text, _DROPPED, "")
    text = tf.strings.regex_replace(text, _CJK, r" \0 ")
    if do_lower_case:
        text = normalize.lower_case(text)
        text = tf_text.normalize_utf8(text, "NFD")
        text = tf.strings.regex_replace(text, r"\p{Mn}", "")
    text = tf.strings.regex_replace(text, _PUNCTUATION, r" \0 ")
    return tf.strings.split(text)


class WordpiecePreprocessor(TextPreprocessorLayer):
    """Maps [B] UTF-8 strings, or a pair of them, to int32 [B, max_seq_length] model inputs.

    Same interface as `AlbertPreprocessor`; the vocabulary is a lookup table in the graph (see
    `resources`), so a SavedModel holding this layer needs no file at serving time.
    """

    SOURCE_KEY = "vocab_file"

    def __init__(self, vocab_file, max_seq_length: int, do_lower_case: bool = True, **kwargs):
        super().__init__(os.fspath(vocab_file), max_seq_length, do_lower_case, **kwargs)
        self.vocab_file = self.source_file
        vocab = tokenization.load_vocab(self.vocab_file)
        for token in ("[CLS]", "[SEP]", wordpiece.UNK_TOKEN):
            if token not in vocab:
                raise tokenization.TokenizerError(f"vocab file {self.vocab_file} has no {token}")
        self.cls_id, self.sep_id = vocab["[CLS]"], vocab["[SEP]"]
        self.unk_id = vocab[wordpiece.UNK_TOKEN]
        self.vocab_size = len(vocab)
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(list(vocab.keys()), tf.string),
                                                tf.constant(list(vocab.values()), tf.int64)),
            default_value=-1)
        # Words over the original's 200 characters become [UNK]; the byte limit only has to be
        # above what 200 characters can take.
        self.wordpiece = tf_text.WordpieceTokenizer(
            self.table, suffix_indicator="##", max_bytes_per_word=4 * wordpiece.MAX_INPUT_CHARS_PER_WORD,
            token_out_type=tf.int64, unknown_token=wordpiece.UNK_TOKEN)

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
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > \
            wordpiece.MAX_INPUT_CHARS_PER_WORD
        words = words.with_flat_values(
            tf.where(too_long, wordpiece.UNK_TOKEN, words.flat_values))
        pieces = self.wordpiece.tokenize(words)  # [B, (words), (pieces)]
        return tf.cast(pieces.merge_dims(1, 2), tf.int32)

    def tokenize_with_offsets(self, strings):
        """SQuAD's tokenization: the ids of `tokenize(preprocess_text(strings))` with each
        piece's start and end byte in the raw strings (`wordpiece_offsets`)."""
        from albert_tf.text import wordpiece_offsets

        return wordpiece_offsets.tokenize_with_offsets(self, strings)


def text_preprocessor(max_seq_length: int, do_lower_case: bool = True, spm_model_file=None,
                      vocab_file=None, albert_text_rules: bool = True):
    """The in-graph preprocessor of a tokenizer as `FullTokenizer` picks it: SentencePiece when
    `spm_model_file` is given, else WordPiece over `vocab_file`; None when neither is.
    `albert_text_rules=False`: SentencePiece on the text as is (keras-hub's tokenizer)."""
    if spm_model_file:
        from albert_tf.text.preprocessor import AlbertPreprocessor

        return AlbertPreprocessor(spm_model_file, max_seq_length, do_lower_case,
                                  albert_text_rules)
    if vocab_file:
        return WordpiecePreprocessor(vocab_file, max_seq_length, do_lower_case)
    return None
