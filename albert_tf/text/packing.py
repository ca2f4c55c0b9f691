"""Truncation and `[CLS] A [SEP] (B [SEP])` packing of id sequences, as the original's features."""

from __future__ import annotations

import tensorflow as tf


def truncated_lengths(len_a: tf.Tensor, len_b: tf.Tensor, max_seq_length, has_b=None):
    """Kept lengths of A and B under the original's rule.

    A row whose B has no pieces is packed as a single sentence (keeps `max_seq_length - 2`
    pieces of A), as the original, which tests `if tokens_b`. Pairs keep `max_seq_length - 3`
    pieces in total, popping the last piece of the longer list, B on ties; the closed form of
    that loop is: A keeps `min(len_a, max(budget - len_b, ceil(budget / 2)))`, B the rest.
    That is also TF Hub's round-robin trimming (one piece to A, one to B, ... until the budget
    is spent), which differs only by packing every row of a two-segment call as a pair:
    `has_b` (bool [B]) overrides the `len_b > 0` test.
    """
    has_b = len_b > 0 if has_b is None else has_b
    length = tf.cast(max_seq_length, len_a.dtype)
    budget = tf.where(has_b, length - 3, length - 2)
    half_up = (budget + 1) // 2
    keep_a = tf.where(has_b, tf.minimum(len_a, tf.maximum(budget - len_b, half_up)),
                      tf.minimum(len_a, budget))
    keep_b = tf.minimum(len_b, budget - keep_a)
    return keep_a, keep_b


def pack(ids_a: tf.RaggedTensor, ids_b, max_seq_length, cls_id: int, sep_id: int,
         pad_id: int = 0, empty_b_is_pair: bool = False):
    """Dict of int32 [B, max_seq_length] `input_ids`, `input_mask`, `segment_ids`, padded with
    `pad_id` (the original pads with 0).

    Built with dense gathers rather than ragged concatenation: position j of a row holds [CLS]
    at 0, A[j-1] up to the kept length of A, [SEP], then B and its [SEP], then padding.
    `empty_b_is_pair=True` (TF Hub's `bert_pack_inputs`): a row with an empty B still gets B's
    [SEP] and the pair budget, where the original packs it as a single sentence.
    `max_seq_length` may be a scalar tensor.
    """
    if isinstance(max_seq_length, int) and max_seq_length < 3:
        raise ValueError(f"max_seq_length must be at least 3, got {max_seq_length}")
    values_a = tf.cast(ids_a.flat_values, tf.int32)
    splits_a = tf.cast(ids_a.row_splits, tf.int64)
    len_a = splits_a[1:] - splits_a[:-1]
    if ids_b is None:
        values_b, splits_b = tf.zeros([0], tf.int32), tf.zeros_like(splits_a)
    else:
        values_b = tf.cast(ids_b.flat_values, tf.int32)
        splits_b = tf.cast(ids_b.row_splits, tf.int64)
    len_b = splits_b[1:] - splits_b[:-1]
    forced = tf.fill(tf.shape(len_a), ids_b is not None) if empty_b_is_pair else None
    keep_a, keep_b = truncated_lengths(len_a, len_b, max_seq_length, forced)
    has_b = tf.cast(keep_b > 0 if forced is None else forced, tf.int64)

    column = lambda x: tf.expand_dims(x, -1)  # noqa: E731
    position = tf.range(tf.cast(max_seq_length, tf.int64))[tf.newaxis, :]
    end_a = column(keep_a) + 1                      # position of the first [SEP]
    start_b = end_a + 1
    end_b = start_b + column(keep_b)                # position of B's [SEP] when B is present
    length = end_b + column(has_b)                  # positions < length are real tokens

    in_a = (position >= 1) & (position < end_a)
    in_b = (position >= start_b) & (position < end_b)
    index_a = tf.where(in_a, column(splits_a[:-1]) + position - 1, 0)
    index_b = tf.where(in_b, column(splits_b[:-1]) + position - start_b, 0)
    pad = tf.zeros_like(position, tf.int32)
    from_a = tf.gather(tf.concat([values_a, [0]], 0), index_a)
    from_b = tf.gather(tf.concat([values_b, [0]], 0), index_b)
    is_sep = (position == end_a) | ((position == end_b) & (column(has_b) > 0))
    input_ids = tf.where(position == 0, cls_id, pad)
    input_ids = tf.where(in_a, from_a, input_ids)
    input_ids = tf.where(in_b, from_b, input_ids)
    input_ids = tf.where(is_sep, sep_id, input_ids)
    if pad_id:
        input_ids = tf.where(position < length, input_ids, pad_id)
    input_mask = tf.cast(position < length, tf.int32)
    segment_ids = tf.cast((position >= start_b) & (position < length), tf.int32)
    return {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
