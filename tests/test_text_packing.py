"""The closed-form truncation equals the original's pop-from-the-longer loop for every length."""

import itertools

import tensorflow as tf

from albert_tf.text import packing


def _loop(len_a, len_b, max_seq_length):
    if len_b == 0:
        return min(len_a, max_seq_length - 2), 0
    while len_a + len_b > max_seq_length - 3:
        if len_a > len_b:
            len_a -= 1
        else:
            len_b -= 1
    return len_a, len_b


def test_truncated_lengths_equal_the_original_loop():
    for max_seq_length in (3, 4, 5, 8, 9):
        pairs = list(itertools.product(range(14), range(14)))
        keep_a, keep_b = packing.truncated_lengths(
            tf.constant([a for a, _ in pairs], tf.int64), tf.constant([b for _, b in pairs], tf.int64),
            max_seq_length)
        got = list(zip(keep_a.numpy().tolist(), keep_b.numpy().tolist()))
        assert got == [_loop(a, b, max_seq_length) for a, b in pairs], max_seq_length


def test_pack_layout_and_padding():
    ids_a = tf.ragged.constant([[7, 8, 9], [5]], tf.int32)
    ids_b = tf.ragged.constant([[6], []], tf.int32)
    out = packing.pack(ids_a, ids_b, 7, cls_id=2, sep_id=3)
    assert out["input_ids"].numpy().tolist() == [[2, 7, 8, 9, 3, 6, 3], [2, 5, 3, 0, 0, 0, 0]]
    assert out["segment_ids"].numpy().tolist() == [[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0, 0]]
    assert out["input_mask"].numpy().tolist() == [[1] * 7, [1, 1, 1, 0, 0, 0, 0]]
    single = packing.pack(ids_a, None, 4, cls_id=2, sep_id=3)
    assert single["input_ids"].numpy().tolist() == [[2, 7, 8, 3], [2, 5, 3, 0]]
