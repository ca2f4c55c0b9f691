"""albert_tf.layers.dense: a 3-D projection is one 2-D MatMul between two Reshapes, with Keras'
results (bit for bit), its mixed-precision casts, and any batch or length at run time."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf.layers.dense import Dense, matmul_last


def _pair(units=5, activation="tanh"):
    ours, keras_dense = Dense(units, activation=activation), keras.layers.Dense(units,
                                                                               activation=activation)
    ours.build((None, None, 7))
    keras_dense.build((None, None, 7))
    rng = np.random.default_rng(0)
    weights = [rng.normal(size=w.shape).astype("float32") for w in keras_dense.get_weights()]
    ours.set_weights(weights)
    keras_dense.set_weights(weights)
    return ours, keras_dense


@pytest.mark.parametrize("shape", [(3, 4, 7), (2, 3, 4, 7), (6, 7)])
def test_matmul_last_equals_keras_matmul_bit_for_bit(shape):
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype("float32")
    kernel = rng.normal(size=(7, 5)).astype("float32")
    want = keras.ops.matmul(x, kernel)
    got = matmul_last(tf.constant(x), tf.constant(kernel))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_dense_matches_keras_dense_and_traces_one_matmul_for_any_batch_and_length():
    ours, keras_dense = _pair()
    function = tf.function(ours).get_concrete_function(tf.TensorSpec([None, None, 7]))
    types = [op.type for op in function.graph.get_operations()]
    assert types.count("MatMul") == 1 and types.count("Reshape") == 2
    # tf.tensordot's shape arithmetic is gone.
    assert not {"Prod", "ConcatV2", "GatherV2", "Transpose"} & set(types)
    for shape in [(1, 1, 7), (3, 9, 7)]:
        x = np.random.default_rng(2).normal(size=shape).astype("float32")
        got = function(tf.constant(x))
        assert got.shape == shape[:-1] + (5,)
        np.testing.assert_array_equal(got, keras_dense(x))


def test_dense_keeps_keras_mixed_precision_casts():
    ours, keras_dense = _pair()
    policy = keras.mixed_precision.DTypePolicy("mixed_float16")
    ours.dtype_policy = keras_dense.dtype_policy = policy
    x = np.random.default_rng(3).normal(size=(2, 3, 7)).astype("float32")
    got, want = ours(x), keras_dense(x)
    assert got.dtype == want.dtype == tf.float16
    assert ours.kernel.dtype == "float32"  # the variable stays float32; the read is cast
    np.testing.assert_array_equal(got, want)


def test_dense_round_trips_through_keras_serialization():
    ours, _ = _pair(activation="gelu")
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(ours))
    assert type(again) is Dense and again.units == 5
