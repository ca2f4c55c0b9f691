"""The original's activation lookup by name (case-insensitive)."""

import keras
from keras import ops


def gelu_tanh(x):
    """`gelu` as the original computes it: the tanh approximation (Keras' default is the exact
    erf form). `approximate=True` is the same formula, computed by TensorFlow's own kernel."""
    return ops.gelu(x, approximate=True)


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
