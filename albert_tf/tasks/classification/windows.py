"""Long documents (`--long_document=windows`): a text longer than one window is read as
overlapping windows of its pieces, and the document's logits are its windows' logits pooled.

The rule, the same in Python (features, metrics) and in the graph (`serve_text`):
* text_a is windowed; text_b (pairs) is repeated with every window. A window of text_a holds
  L pieces: `max_seq_length - 2` for a single text; for a pair, what the original's pair
  truncation would keep of a long text_a, `max(budget - len(b), ceil(budget / 2))` with
  `budget = max_seq_length - 3` (text_b then keeps what is left, as that truncation does).
* windows start every `stride` pieces (at most L) until one reaches the end of text_a; a text
  that fits is one window, exactly the `first` feature.
* the document's logits are the mean (or, with `--window_pooling=max`, the per-class maximum)
  of its windows' logits; probabilities and predictions follow from them as from one window's.
* training sees every window with the weight 1 / (the document's windows), so a long document
  counts as much as a short one.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.text import packing
from albert_tf.tokenization import pack_pair


def window_length(len_b: int, max_seq_length: int) -> int:
    """How many pieces of text_a one window holds (see the module docstring)."""
    if not len_b:
        return max_seq_length - 2
    budget = max_seq_length - 3
    return max(budget - len_b, (budget + 1) // 2)


def window_starts(num_pieces: int, length: int, stride: int) -> list[int]:
    """Where each window of `length` pieces starts over `num_pieces` pieces."""
    stride = max(1, min(stride, length))  # a wider stride would skip pieces
    starts = [0]
    while starts[-1] + length < num_pieces:
        starts.append(starts[-1] + stride)
    return starts


def window_tokens(tokens_a: list, tokens_b: list | None, max_seq_length: int,
                  stride: int) -> list[tuple[list, list]]:
    """(tokens, segment ids) of every window of one example, packed as `pack_pair` packs one."""
    length = window_length(len(tokens_b or ()), max_seq_length)
    return [pack_pair(tokens_a[start:start + length], tokens_b, max_seq_length)
            for start in window_starts(len(tokens_a), length, stride)]


def pool(values, example_index, num_examples: int, pooling: str = "mean") -> np.ndarray:
    """Per example (0..num_examples-1), the mean or maximum of its windows' rows of `values`."""
    values = np.asarray(values, np.float64)
    example_index = np.asarray(example_index, np.int64)
    shape = (num_examples,) + values.shape[1:]
    if pooling == "max":
        pooled = np.full(shape, -np.inf)
        np.maximum.at(pooled, example_index, values)
        return pooled.astype(np.float32)
    total = np.zeros(shape)
    np.add.at(total, example_index, values)
    counts = np.bincount(example_index, minlength=num_examples).reshape(
        (num_examples,) + (1,) * (values.ndim - 1))
    return (total / np.maximum(counts, 1)).astype(np.float32)


def pool_tf(logits, row, num_rows, pooling: str = "mean"):
    """`pool` in the graph: `row` [W] (sorted) names each window's text."""
    if pooling == "max":
        return tf.math.unsorted_segment_max(logits, row, num_rows)
    return tf.math.unsorted_segment_mean(logits, row, num_rows)


def window_inputs(ids_a: tf.RaggedTensor, ids_b, max_seq_length: int, stride: int, cls_id: int,
                  sep_id: int):
    """The packed model inputs [W, max_seq_length] of every window of every text, and the text
    (row) of each window [W]: `window_tokens` over a batch of piece ids."""
    ids_a = tf.cast(ids_a, tf.int64)
    len_a = ids_a.row_lengths()
    batch = ids_a.nrows()
    if ids_b is None:
        len_b = tf.zeros_like(len_a)
    else:
        ids_b = tf.cast(ids_b, tf.int64)
        len_b = ids_b.row_lengths()
    budget = tf.constant(max_seq_length - 3, tf.int64)
    length = tf.where(len_b > 0, tf.maximum(budget - len_b, (budget + 1) // 2), budget + 1)
    step = tf.maximum(tf.minimum(tf.constant(stride, tf.int64), length), 1)
    count = tf.where(len_a > length, (len_a - length + step - 1) // step + 1,
                     tf.ones_like(len_a))
    row = tf.repeat(tf.range(batch), count)
    k = tf.range(tf.reduce_sum(count)) - tf.gather(tf.cumsum(count, exclusive=True), row)
    start = k * tf.gather(step, row)
    size = tf.maximum(tf.minimum(tf.gather(length, row), tf.gather(len_a, row) - start), 0)
    first = tf.gather(ids_a.row_starts(), row) + start
    pieces = tf.gather(ids_a.flat_values, tf.ragged.range(first, first + size))
    windows_b = None if ids_b is None else tf.gather(ids_b, row)
    features = packing.pack(pieces, windows_b, max_seq_length, cls_id, sep_id)
    return features, row
