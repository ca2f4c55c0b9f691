"""Truncation and `[CLS] A [SEP] (B [SEP])` packing of id sequences, as the original's features."""

from __future__ import annotations

import tensorflow as tf


def truncated_lengths(len_a: tf.Tensor, len_b: tf.Tensor, max_seq_length: int):
    """Kept lengths of A and B under the original's rule.

    A row whose B has no pieces is packed as a single sentence (keeps `max_seq_length - 2`
    pieces of A), as the original, which tests `if tokens_b`. Pairs keep `max_seq_length - 3`
    pieces in total, popping the last piece of the longer list, B on ties; the closed form of
    that loop is: A keeps `min(len_a, max(budget - len_b, ceil(budget / 2)))`, B the rest.
    """
    has_b = len_b > 0
    budget = tf.where(has_b, tf.constant(max_seq_length - 3, len_a.dtype),
                      tf.constant(max_seq_length - 2, len_a.dtype))
    half_up = (budget + 1) // 2
    keep_a = tf.where(has_b, tf.minimum(len_a, tf.maximum(budget - len_b, half_up)),
                      tf.minimum(len_a, budget))
    keep_b = tf.minimum(len_b, budget - keep_a)
    return keep_a, keep_b


def _head(ids: tf.RaggedTensor, keep: tf.Tensor) -> tf.RaggedTensor:
    position = tf.ragged.range(ids.row_lengths())
    return tf.ragged.boolean_mask(ids, position < tf.expand_dims(keep, -1))


def pack(ids_a: tf.RaggedTensor, ids_b, max_seq_length: int, cls_id: int, sep_id: int):
    """Dict of int32 [B, max_seq_length] `input_ids`, `input_mask`, `segment_ids`, zero padded."""
    if max_seq_length < 3:
        raise ValueError(f"max_seq_length must be at least 3, got {max_seq_length}")
    ids_a = tf.cast(ids_a, tf.int32)
    batch = ids_a.nrows()
    len_a = ids_a.row_lengths()
    if ids_b is None:
        ids_b = tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), tf.zeros_like(len_a))
    ids_b = tf.cast(ids_b, tf.int32)
    len_b = ids_b.row_lengths()
    keep_a, keep_b = truncated_lengths(len_a, len_b, max_seq_length)
    head_a, head_b = _head(ids_a, keep_a), _head(ids_b, keep_b)

    has_b = tf.cast(keep_b > 0, len_b.dtype)
    column = tf.ones([batch, 1], tf.int32)
    cls = tf.RaggedTensor.from_tensor(column * cls_id)
    sep = tf.RaggedTensor.from_tensor(column * sep_id)
    sep_b = tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.reduce_sum(has_b)], tf.constant(sep_id, tf.int32)), has_b)
    first = tf.concat([cls, head_a, sep], axis=1)
    second = tf.concat([head_b, sep_b], axis=1)
    input_ids = tf.concat([first, second], axis=1)
    segment_ids = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1)
    input_mask = tf.ones_like(input_ids)
    shape = [None, max_seq_length]
    return {
        "input_ids": input_ids.to_tensor(0, shape=shape),
        "input_mask": input_mask.to_tensor(0, shape=shape),
        "segment_ids": segment_ids.to_tensor(0, shape=shape),
    }
