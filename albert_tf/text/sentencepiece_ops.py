"""SentencePiece encoding in TensorFlow ops with the original's digit-comma fix-up.

`albert_tf.tokenization.encode_pieces` re-encodes every piece that ends in digit + "," and
appends "," on its own (under Python 3 without dropping the new leading "▁"; see
`albert_tf.tokenization.split_digit_comma_python3`). The same second pass is done here on the
pieces the op returns, so the ids are the Python tokenizer's.
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf.text import normalize

SPIECE_UNDERLINE = "\u2581"


def digit_comma_pattern() -> str:
    """Pieces the original re-encodes: longer than one character, ending in digit + ","."""
    return "(?s).*" + normalize.digit_class() + ","


def encode_ids(sp: tf_text.SentencepieceTokenizer, text: tf.Tensor) -> tf.RaggedTensor:
    """Ids of each string of a [B] tensor as a [B, (pieces)] RaggedTensor (int32).

    The pieces are recovered with `id_to_string`, which is the piece text for every in-vocabulary
    id. An unknown piece reads "<unk>" there rather than its surface text; that cannot hide a
    digit-comma piece because "," is in every vocabulary the trainer keeps at the original's
    character coverage, so an unknown run never ends in ",".
    """
    ids = sp.tokenize(text)
    flat_ids = ids.flat_values
    pieces = sp.id_to_string(flat_ids)
    is_digit_comma = tf.strings.regex_full_match(pieces, digit_comma_pattern())
    return _split_digit_comma(sp, ids, pieces, is_digit_comma)


def _split_digit_comma(sp, ids: tf.RaggedTensor, pieces: tf.Tensor,
                       is_digit_comma: tf.Tensor) -> tf.RaggedTensor:
    """Replaces each flagged piece by the ids of its text without "," and "▁", then ","."""
    flat_ids = ids.flat_values
    flagged = tf.boolean_mask(pieces, is_digit_comma)
    without_comma = tf.strings.regex_replace(flagged, ",$", "")  # only the final ","
    stripped = tf.strings.regex_replace(without_comma, SPIECE_UNDERLINE, "")
    reencoded = sp.tokenize(stripped)
    comma_id = sp.string_to_id(tf.constant(","))
    comma = tf.RaggedTensor.from_tensor(
        tf.fill(tf.stack([tf.shape(stripped)[0], 1]), comma_id))
    replacements = tf.concat([reencoded, tf.cast(comma, reencoded.dtype)], axis=1)

    count = tf.shape(flat_ids, out_type=tf.int64)[0]
    singles = tf.RaggedTensor.from_tensor(tf.expand_dims(flat_ids, -1))
    rows = tf.concat([singles, replacements], axis=0)
    replacement_index = count + tf.cumsum(tf.cast(is_digit_comma, tf.int64)) - 1
    row_index = tf.where(is_digit_comma, replacement_index, tf.range(count))
    per_piece = tf.gather(rows, row_index)
    nested = tf.RaggedTensor.from_row_splits(per_piece, tf.cast(ids.row_splits, tf.int64))
    return nested.merge_dims(1, 2)
