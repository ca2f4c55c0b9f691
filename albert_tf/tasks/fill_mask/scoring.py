"""The masked-LM head's top candidates at given positions: the one computation `FillMask`
(Python) and the `fill_mask` signature (export) share."""

from __future__ import annotations

import tensorflow as tf


def top_candidates(model, input_ids, input_mask, positions, top_k):
    """(ids [B, M, k] int32, probabilities [B, M, k]) of an `AlbertPretrainer` at `positions`
    [B, M]: a softmax over the whole vocabulary, as Hugging Face's fill-mask pipeline."""
    outputs = model.encoder({"input_ids": input_ids, "input_mask": input_mask,
                             "segment_ids": tf.zeros_like(input_ids)}, training=False)
    logits = model.masked_lm(outputs["sequence_output"], positions, model.encoder.embedding_table)
    top = tf.math.top_k(tf.nn.softmax(logits, axis=-1), k=top_k)
    return tf.cast(top.indices, tf.int32), top.values
