"""One vector per text from an `AlbertModel`'s outputs, and the two training losses.

Pooling (named in a folder's `embedding_config.json`): `mean` of the sequence output over the
real tokens ([CLS] and [SEP] included, padding not: sentence-transformers' `Pooling` in mean
mode over a Hugging Face tokenizer's ids), `cls` (the [CLS] token's sequence output) or
`pooled` (the model's pooled output, a tanh layer over [CLS]). Every vector is L2-normalised.

Losses, on a batch of N pairs (a_i, b_i) with normalised vectors:
* `contrastive_loss`: in-batch negatives. S = (A Bᵀ) / temperature; the mean of the
  cross-entropy of each row of S against its own pair (a_i → b_i) and of each column
  (b_i → a_i): symmetric. temperature 0.05 is sentence-transformers' scale 20.
* `cosine_loss`: mean squared error between cos(a_i, b_i) and the pair's score mapped to
  0..1 (sentence-transformers' `CosineSimilarityLoss` on normalised labels).
"""

from __future__ import annotations

import tensorflow as tf

POOLINGS = ("mean", "cls", "pooled")


def pool(outputs, input_mask, pooling: str):
    """[B, H] L2-normalised vectors of an `AlbertModel`'s outputs."""
    if pooling == "mean":
        mask = tf.cast(input_mask, outputs["sequence_output"].dtype)[:, :, None]
        total = tf.reduce_sum(outputs["sequence_output"] * mask, axis=1)
        vectors = total / tf.maximum(tf.reduce_sum(mask, axis=1), 1e-9)
    elif pooling == "cls":
        vectors = outputs["sequence_output"][:, 0]
    elif pooling == "pooled":
        vectors = outputs["pooled_output"]
    else:
        raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")
    return tf.math.l2_normalize(tf.cast(vectors, tf.float32), axis=-1, epsilon=1e-12)


def embed(model, input_ids, input_mask, pooling: str, training: bool = False):
    outputs = model({"input_ids": input_ids, "input_mask": input_mask,
                     "segment_ids": tf.zeros_like(input_ids)}, training=training)
    return pool(outputs, input_mask, pooling)


def contrastive_loss(vectors_a, vectors_b, temperature: float):
    similarities = tf.matmul(vectors_a, vectors_b, transpose_b=True) / temperature
    labels = tf.range(tf.shape(similarities)[0])
    rows = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, similarities)
    columns = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, tf.transpose(similarities))
    return (tf.reduce_mean(rows) + tf.reduce_mean(columns)) / 2.0


def cosine_loss(vectors_a, vectors_b, targets):
    cosine = tf.reduce_sum(vectors_a * vectors_b, axis=-1)
    return tf.reduce_mean(tf.square(cosine - tf.cast(targets, cosine.dtype)))
