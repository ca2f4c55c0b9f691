"""One traced inference function per model, so scoring many checkpoints (or serving many calls
of a Python API) does not retrace, and feature arrays held in memory in batches."""

from __future__ import annotations

import tensorflow as tf


def predict_function(model, jit_compile: bool = False):
    """`model(features, training=False)` as a tf.function (XLA-compiled when `jit_compile`),
    traced once for every batch size: the first batch fixes the features' keys, dtypes and
    other dimensions, the batch dimension stays open (a last, smaller batch, or the next call
    of a Python API with another number of texts, does not retrace). Inference branches on
    Python values only, so autograph's rewrite is skipped."""
    traced = None

    def call(features):
        nonlocal traced
        if traced is None:
            signature = {key: tf.TensorSpec([None, *value.shape[1:]], value.dtype)
                         for key, value in features.items()}
            traced = tf.function(lambda batch: model(batch, training=False),
                                 input_signature=[signature],
                                 jit_compile=bool(jit_compile) or None, autograph=False)
        return traced(features)
    return call


def array_batches(arrays: dict, batch_size: int):
    """Feature arrays held in memory (numpy, one row per record) as batches of tensors, in
    order, the last one smaller: what `Dataset.from_tensor_slices(arrays).batch(batch_size)`
    gives, without setting up a tf.data pipeline (milliseconds, for a call on one text)."""
    count = len(next(iter(arrays.values())))
    for start in range(0, count, int(batch_size)):
        yield {key: tf.constant(value[start:start + int(batch_size)])
               for key, value in arrays.items()}


def inference_fn(model):
    """`model(features, training=False)` as a tf.function built once per model."""
    if getattr(model, "_albert_inference_fn", None) is None:
        model._albert_inference_fn = tf.function(lambda features: model(features, training=False),
                                                 reduce_retracing=True, autograph=False)
    return model._albert_inference_fn
