"""TF Hub's preprocessing conventions over our in-graph tokenizers.

TF Hub's BERT/ALBERT preprocessors split preprocessing in two calls: `tokenize` (strings →
[batch, words, pieces] ids) and `bert_pack_inputs` (1–2 tokenized segments → the encoder's
`input_word_ids`, `input_mask`, `input_type_ids`, trimmed round-robin to `seq_length`). Here
the ids are ours (`AlbertPreprocessor` / `WordpiecePreprocessor`: the original's text rules, the
ids of `albert_tf.tokenization`); only the call structure and the packing rules are TF Hub's:

* words: a piece starts a word when its text starts with "▁" (SentencePiece) or does not start
  with "##" (WordPiece); the first piece of a text always does;
* packing: `[CLS] A [SEP] (B [SEP])`, round-robin trimming to `seq_length - 1 - segments`,
  padded with the padding id. Unlike the original, a two-segment call packs an empty B as a
  pair (`[CLS] A [SEP] [SEP]`, the last [SEP] of type 1).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.errors import UsageError
from albert_tf.text import packing
from albert_tf.tokenization import SPIECE_UNDERLINE

# TF Hub's names of the special tokens, and the piece each is looked up as.
SENTENCEPIECE_SPECIALS = {"start_of_sequence_id": "[CLS]", "end_of_segment_id": "[SEP]",
                          "padding_id": "<pad>", "mask_id": "[MASK]"}
WORDPIECE_SPECIALS = dict(SENTENCEPIECE_SPECIALS, padding_id="[PAD]")
# [CLS], one piece, [SEP]: below it a row holds no text (0 gave an empty row, a negative
# length a raw TensorFlow error).
MIN_SEQ_LENGTH = 3


def _pieces(preprocessor) -> list[str]:
    """Every id's piece text, from the tokenizer file the preprocessor was built from."""
    if getattr(preprocessor, "spm_model_file", None):
        processor = tokenization.load_sentencepiece(preprocessor.spm_model_file)
        return [processor.IdToPiece(i) for i in range(processor.GetPieceSize())]
    vocab = tokenization.load_vocab(preprocessor.vocab_file)
    pieces = [""] * (max(vocab.values()) + 1)
    for piece, index in vocab.items():
        pieces[index] = piece
    return pieces


def special_tokens(preprocessor) -> dict:
    """TF Hub's `get_special_tokens_dict()`: `vocab_size` and the ids of the special tokens the
    vocabulary has (a missing one is left out, as TF Hub does)."""
    pieces = _pieces(preprocessor)
    sentencepiece = bool(getattr(preprocessor, "spm_model_file", None))
    names = SENTENCEPIECE_SPECIALS if sentencepiece else WORDPIECE_SPECIALS
    index = {}
    for i, piece in enumerate(pieces):
        index.setdefault(piece, i)
    result = {"vocab_size": len(pieces)}
    result.update({name: index[piece] for name, piece in names.items() if piece in index})
    return result


def word_start_table(preprocessor) -> np.ndarray:
    """bool [vocab]: whether a piece starts a word (see the module docstring)."""
    if getattr(preprocessor, "spm_model_file", None):
        return np.array([p.startswith(SPIECE_UNDERLINE) for p in _pieces(preprocessor)])
    return np.array([not p.startswith("##") for p in _pieces(preprocessor)])


def group_words(ids: tf.RaggedTensor, table: np.ndarray) -> tf.RaggedTensor:
    """[B, (pieces)] ids → [B, (words), (pieces)], a word starting at each piece the table
    marks and at the first piece of every row."""
    values = ids.flat_values
    splits = tf.cast(ids.row_splits, tf.int64)
    position = tf.range(tf.shape(values, out_type=tf.int64)[0])
    row_start = tf.gather(splits, ids.value_rowids())
    starts = tf.gather(tf.constant(table, tf.bool), values) | tf.equal(position, row_start)
    word_splits = tf.concat([tf.where(starts)[:, 0], tf.shape(values, out_type=tf.int64)], 0)
    words = tf.RaggedTensor.from_row_splits(values, word_splits, validate=False)
    words_per_row = tf.math.segment_sum(tf.cast(starts, tf.int64), ids.value_rowids())
    words_per_row = tf.concat([words_per_row, tf.zeros(
        [ids.nrows() - tf.shape(words_per_row, out_type=tf.int64)[0]], tf.int64)], 0)
    return tf.RaggedTensor.from_row_lengths(words, words_per_row, validate=False)


def bert_pack_inputs(segments, seq_length, special: dict) -> dict:
    """TF Hub's `bert_pack_inputs`: a list of 1 or 2 int RaggedTensors ([B, (pieces)] or
    [B, (words), (pieces)]) → int32 [B, seq_length] `input_word_ids`, `input_mask`,
    `input_type_ids`."""
    if not isinstance(segments, (list, tuple)):
        segments = [segments]
    if not 1 <= len(segments) <= 2:
        raise ValueError(f"bert_pack_inputs takes 1 or 2 segments, got {len(segments)}")
    flat = [s.merge_dims(1, -1) if s.shape.rank > 2 else s for s in segments]
    if isinstance(seq_length, (int, np.integer)):
        if seq_length < MIN_SEQ_LENGTH:
            raise UsageError(f"bert_pack_inputs: seq_length must be at least {MIN_SEQ_LENGTH} "
                             f"([CLS], a piece, [SEP]), got {seq_length}")
    else:  # a tensor: the exported function's argument, checked when it is called
        check = tf.debugging.assert_greater_equal(
            tf.cast(seq_length, tf.int32), MIN_SEQ_LENGTH,
            message=f"bert_pack_inputs: seq_length must be at least {MIN_SEQ_LENGTH} ([CLS], "
                    "a piece, [SEP])")
        with tf.control_dependencies([check]):
            # Clamped too: a constant negative length failed the graph's own shape checks
            # (a raw "Requires start <= limit") before the check could run.
            seq_length = tf.maximum(tf.cast(seq_length, tf.int32), MIN_SEQ_LENGTH)
    packed = packing.pack(flat[0], flat[1] if len(flat) == 2 else None, seq_length,
                          special["start_of_sequence_id"], special["end_of_segment_id"],
                          pad_id=special.get("padding_id", 0), empty_b_is_pair=True)
    return {"input_word_ids": packed["input_ids"], "input_mask": packed["input_mask"],
            "input_type_ids": packed["segment_ids"]}


class HubPreprocessing:
    """The TF Hub calls over one of our preprocessors (`text_preprocessor(...)`)."""

    def __init__(self, preprocessor):
        self.preprocessor = preprocessor
        self.special = special_tokens(preprocessor)
        self.word_starts = word_start_table(preprocessor)

    def tokenize(self, strings) -> tf.RaggedTensor:
        """[B] strings → int32 [B, (words), (pieces)]."""
        return group_words(self.preprocessor.tokenize_strings(strings), self.word_starts)

    def pack(self, segments, seq_length) -> dict:
        return bert_pack_inputs(segments, seq_length, self.special)

    def __call__(self, strings, seq_length) -> dict:
        return self.pack([self.tokenize(strings)], seq_length)
