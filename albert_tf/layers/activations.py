"""The original's activation lookup by name (case-insensitive)."""

import math

import keras
from keras import ops


def gelu_tanh(x):
    """`gelu` as the original computes it: the tanh approximation, not Keras' exact erf form."""
    return 0.5 * x * (1.0 + ops.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * ops.power(x, 3))))


def get_activation(name):
    """`linear`/empty → identity, `relu`, `gelu` and `gelu_new` (both tanh form), `tanh`."""
    if not isinstance(name, str):
        return name
    key = name.lower()
    if key in ("", "linear"):
        return None
    table = {"relu": keras.activations.relu, "gelu": gelu_tanh, "gelu_new": gelu_tanh,
             "tanh": keras.activations.tanh}
    if key not in table:
        raise ValueError(f"unsupported activation {name!r}")
    return table[key]
