"""One traced inference function per model, so scoring many checkpoints does not retrace."""

from __future__ import annotations

import tensorflow as tf


def predict_function(model, jit_compile: bool = False):
    """`model(features, training=False)` as a new tf.function (XLA-compiled when
    `jit_compile`). Inference branches on Python values only, so autograph's rewrite is
    skipped."""
    return tf.function(lambda features: model(features, training=False),
                       jit_compile=bool(jit_compile) or None, autograph=False)


def inference_fn(model):
    """`model(features, training=False)` as a tf.function built once per model."""
    if getattr(model, "_albert_inference_fn", None) is None:
        model._albert_inference_fn = tf.function(lambda features: model(features, training=False),
                                                 reduce_retracing=True, autograph=False)
    return model._albert_inference_fn
