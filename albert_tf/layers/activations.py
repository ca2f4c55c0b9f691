"""The original's activation lookup by name (case-insensitive)."""

import math

import keras
import tensorflow as tf
from keras import ops

_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_A = 0.044715


@keras.saving.register_keras_serializable(package="albert_tf")
def gelu_tanh(x):
    """`gelu` as the original computes it: the tanh approximation (Keras' default is the exact
    erf form). `approximate=True` is the same formula, computed by TensorFlow's own kernel."""
    return ops.gelu(x, approximate=True)


@tf.function(jit_compile=True)
def _gelu_forward(x):
    t = tf.tanh(_GELU_C * (x + _GELU_A * x * x * x))
    return 0.5 * x * (1.0 + t), t


@tf.function(jit_compile=True)
def _gelu_backward(x, t, dy):
    slope = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _GELU_C * (1.0 + 3.0 * _GELU_A * x * x)
    return dy * slope


@tf.custom_gradient
def fused_gelu_tanh(x):
    """The same tanh-form gelu for training: forward and backward are each one XLA-fused
    element-wise pass (TF's composite gelu and its gradient are ~20 separate kernels over the
    [B·S, I] activations, ~4 % of an ALBERT-base CPU step). Only used with `training=True`, so
    exported inference graphs need no XLA."""
    y, t = _gelu_forward(x)
    return y, lambda dy: _gelu_backward(x, t, dy)


def get_activation(name, fused=False):
    """`linear`/empty → identity, `relu`, `gelu` and `gelu_new` (both tanh form), `tanh`.
    `fused=True` gives the training variant of gelu (`fused_gelu_tanh`)."""
    if not isinstance(name, str):
        return name
    key = name.lower()
    if key in ("", "linear"):
        return None
    gelu = fused_gelu_tanh if fused else gelu_tanh
    table = {"relu": keras.activations.relu, "gelu": gelu, "gelu_new": gelu,
             "tanh": keras.activations.tanh}
    if key not in table:
        raise ValueError(f"unsupported activation {name!r}")
    return table[key]
