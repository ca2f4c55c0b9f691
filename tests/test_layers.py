"""Layer-level checks of the original's numerics (the model tests cover them end to end)."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf.layers import FeedForwardSublayer, LayerNorm, attention_bias, gelu_tanh, get_activation
from albert_tf.layers.activations import fused_gelu_tanh
from albert_tf.layers.gather import gather_rows


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
    # Large activations that bf16 holds exactly (its step is 2 at 256, 16 at 3072), so the only
    # error left is the output's own rounding: at most half a bf16 step at [1, 2), 3.9e-3
    # (measured 3.7e-3). Statistics taken in bf16 round the mean by a step: 0.2 off.
    x = np.stack([256 + 2 * np.arange(8), 3072 + 16 * np.arange(8)]).astype("float32")
    out = layer(x)
    assert "bfloat16" in str(out.dtype)
    x64 = x.astype("float64")
    want = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(np.asarray(out, "float64"), want, atol=1e-2)


def test_attention_bias_masks_keys_with_minus_10000():
    bias = np.asarray(attention_bias(np.array([[1, 1, 0]])))
    assert bias.shape == (1, 1, 1, 3)
    np.testing.assert_array_equal(bias[0, 0, 0], [0.0, 0.0, -10000.0])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_fused_gelu_matches_tensorflows_gelu_and_its_gradient(dtype):
    x = tf.cast(tf.linspace(-8.0, 8.0, 4001), dtype)
    dy = tf.cast(tf.cos(tf.linspace(0.0, 30.0, 4001)), dtype)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        fused, reference = fused_gelu_tanh(x), gelu_tanh(x)
    tol = 1e-6 if dtype == "float32" else 2e-2
    assert fused.dtype == x.dtype
    np.testing.assert_allclose(tf.cast(fused, "float32"), tf.cast(reference, "float32"), atol=tol * 4)
    np.testing.assert_allclose(tf.cast(tape.gradient(fused, x, dy), "float32"),
                               tf.cast(tape.gradient(reference, x, dy), "float32"), atol=tol * 8)


def test_fused_gelu_only_in_training():
    assert get_activation("gelu", fused=True) is fused_gelu_tanh
    assert get_activation("relu", fused=True) is keras.activations.relu
    layer = FeedForwardSublayer(4, 8)
    layer.build((None, None, 4))
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")
    np.testing.assert_allclose(layer(x, training=True), layer(x, training=False), atol=1e-6)

    def xla_functions(training):
        graph = tf.function(lambda v: layer(v, training=training)).get_concrete_function(
            tf.TensorSpec((None, None, 4), tf.float32)).graph
        return [name for name, f in graph._functions.items()
                if f.definition.attr["_XlaMustCompile"].b]

    assert xla_functions(True) and not xla_functions(False)  # exported graphs need no XLA


def test_gather_rows_picks_rows_per_example_and_scatters_gradients_back():
    sequence = tf.reshape(tf.range(2 * 5 * 3, dtype=tf.float32), (2, 5, 3))
    positions = np.array([[4, 0, 0], [1, 3, 1]], "int32")
    with tf.GradientTape() as tape:
        tape.watch(sequence)
        rows = gather_rows(sequence, positions)
    np.testing.assert_array_equal(rows, np.take_along_axis(sequence.numpy(), positions[:, :, None], 1))
    counts = np.zeros((2, 5), "float32")
    for b, row in enumerate(positions):
        for p in row:
            counts[b, p] += 1
    np.testing.assert_array_equal(tf.convert_to_tensor(tape.gradient(rows, sequence)),
                                  np.repeat(counts[:, :, None], 3, axis=2))
