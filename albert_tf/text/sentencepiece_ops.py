"""SentencePiece encoding in TensorFlow ops with the original's digit-comma fix-up.

`albert_tf.tokenization.encode_pieces` re-encodes every piece that ends in digit + "," and
appends "," on its own (under Python 3 without dropping the new leading "▁"; see
`albert_tf.tokenization.split_digit_comma_python3`). The same second pass is done here, so the
ids are the Python tokenizer's.
"""

from __future__ import annotations

import numpy as np
import sentencepiece as spm
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.tokenization import SPIECE_UNDERLINE


def digit_comma_table(processor: spm.SentencePieceProcessor) -> np.ndarray:
    """bool [vocab]: which ids the fix-up re-encodes, by the Python rule on the piece text.

    Deciding per id is exact: an in-vocabulary piece's text is its surface, and an unknown
    piece (id `<unk>`, never flagged) cannot end in "," because "," is in the vocabulary of
    any model trained at the original's character coverage (checked by `comma_id`).
    """
    return np.array([tokenization.is_digit_comma_piece(processor.IdToPiece(i))
                     and not processor.IsUnknown(i) for i in range(processor.GetPieceSize())])


def comma_id(processor: spm.SentencePieceProcessor) -> int:
    """The id of ",". A model trained on text without a comma has none, and then no piece ends
    in "," either: the fix-up never runs and the id (`<unk>`'s) is never used."""
    piece_id = processor.PieceToId(",")
    if processor.IsUnknown(piece_id) and digit_comma_table(processor).any():
        raise tokenization.TokenizerError(
            "SentencePiece model has no ',' piece; the digit-comma fix-up needs one")
    return piece_id


def encode_ids(sp: "tensorflow_text.SentencepieceTokenizer", text: tf.Tensor, table, comma: int
               ) -> tf.RaggedTensor:
    """Ids of each string of a [B] tensor as a [B, (pieces)] int32 RaggedTensor.

    `table` is `digit_comma_table(model)`, `comma` is `comma_id(model)`. Each flagged piece is
    replaced by the ids of its text without "," and "▁" (`split_digit_comma_python3`), then
    ",". Written with dense gathers only: tf.cond and validating ragged constructors make
    `tf.data` map functions several times slower.
    """
    ids = sp.tokenize(text)
    flat_ids = ids.flat_values
    flagged = tf.gather(tf.constant(table, tf.bool), flat_ids)
    pieces = sp.id_to_string(tf.boolean_mask(flat_ids, flagged))
    without_comma = tf.strings.regex_replace(pieces, ",$", "")  # only the final ","
    reencoded = sp.tokenize(tf.strings.regex_replace(without_comma, SPIECE_UNDERLINE, ""))

    # Per original piece: its number of output ids (1, or re-encoded length + 1 for ",").
    re_splits = tf.cast(reencoded.row_splits, tf.int64)
    re_lengths = re_splits[1:] - re_splits[:-1]
    flagged_index = tf.cumsum(tf.cast(flagged, tf.int64)) - 1   # its row in `reencoded`
    safe_index = tf.maximum(flagged_index, 0)
    padded_lengths = tf.concat([re_lengths, [0]], 0)              # room for an empty batch
    own_re_length = tf.gather(padded_lengths, safe_index)
    out_lengths = tf.where(flagged, own_re_length + 1, 1)
    out_starts = tf.concat([[0], tf.cumsum(out_lengths)], 0)
    total = out_starts[-1]

    # Output position → (original piece, offset inside its replacement).
    position = tf.range(total)
    piece = tf.searchsorted(out_starts, position, side="right") - 1
    offset = position - tf.gather(out_starts, piece)
    piece_flagged = tf.gather(flagged, piece)
    piece_re_length = tf.gather(own_re_length, piece)
    piece_re_start = tf.gather(tf.concat([re_splits[:-1], [0]], 0),
                               tf.gather(safe_index, piece))
    re_values = tf.concat([reencoded.flat_values, tf.zeros([1], reencoded.flat_values.dtype)], 0)
    from_reencoded = tf.gather(re_values, tf.where(offset < piece_re_length,
                                                   piece_re_start + offset,
                                                   tf.shape(re_values, out_type=tf.int64)[0] - 1))
    replaced = tf.where(offset < piece_re_length, from_reencoded,
                        tf.constant(comma, flat_ids.dtype))
    values = tf.where(piece_flagged, replaced, tf.gather(flat_ids, piece))
    row_splits = tf.gather(out_starts, tf.cast(ids.row_splits, tf.int64))
    return tf.RaggedTensor.from_row_splits(values, row_splits, validate=False)
