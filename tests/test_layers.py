"""Layer-level checks of the original's numerics (the model tests cover them end to end)."""

import math

import keras
import numpy as np
import pytest

from albert_tf.layers import LayerNorm, attention_bias, gelu_tanh, get_activation


def test_gelu_is_the_tanh_approximation():
    x = np.linspace(-6, 6, 101).astype("float32")
    expected = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(gelu_tanh(x), expected, atol=1e-6)
    exact = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    assert np.abs(np.asarray(gelu_tanh(x)) - exact).max() > 1e-4  # not Keras' erf default


def test_activation_lookup_is_case_insensitive_and_strict():
    assert get_activation("GELU") is gelu_tanh and get_activation("gelu_new") is gelu_tanh
    assert get_activation("linear") is None and get_activation("") is None
    assert get_activation("relu") is keras.activations.relu
    assert get_activation(abs) is abs
    with pytest.raises(ValueError, match="swish"):
        get_activation("swish")


def test_layer_norm_uses_epsilon_1e12_and_population_variance():
    x = np.array([[1e-4, 2e-4, 3e-4, 4e-4]], "float32")  # tiny variance: 1e-3 epsilon would flatten it
    layer = LayerNorm()
    centred = x - x.mean()
    expected = centred / np.sqrt((centred ** 2).mean() + 1e-12)
    np.testing.assert_allclose(layer(x), expected, rtol=1e-4)
    assert [w.name for w in layer.weights] == ["beta", "gamma"]


def test_layer_norm_statistics_in_float32_under_bf16():
    layer = LayerNorm(dtype="mixed_bfloat16")
    out = layer(np.full((2, 8), 300.0, "float32") + np.arange(8, dtype="float32"))
    assert "bfloat16" in str(out.dtype) and np.isfinite(np.asarray(out, "float32")).all()


def test_attention_bias_masks_keys_with_minus_10000():
    bias = np.asarray(attention_bias(np.array([[1, 1, 0]])))
    assert bias.shape == (1, 1, 1, 3)
    np.testing.assert_array_equal(bias[0, 0, 0], [0.0, 0.0, -10000.0])
