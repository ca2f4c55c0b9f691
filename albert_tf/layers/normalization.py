"""LayerNorm with the original's numerics and variable names."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="albert_tf")
class LayerNorm(keras.layers.Layer):
    """Last-axis layer normalisation, epsilon 1e-12, weights `gamma`/`beta` as in TF1 checkpoints.

    Statistics are taken in float32 even under a bf16/fp16 policy: 1e-12 underflows in half
    precision and the variance of large activations overflows fp16.
    """

    def __init__(self, epsilon=1e-12, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = epsilon

    def build(self, input_shape):
        width = input_shape[-1]
        self.beta = self.add_weight(name="beta", shape=(width,), initializer="zeros")
        self.gamma = self.add_weight(name="gamma", shape=(width,), initializer="ones")

    def call(self, inputs):
        x = ops.cast(inputs, "float32")
        mean = ops.mean(x, axis=-1, keepdims=True)
        variance = ops.mean(ops.square(x - mean), axis=-1, keepdims=True)
        normed = (x - mean) * ops.rsqrt(variance + self.epsilon)
        out = normed * ops.cast(self.gamma, "float32") + ops.cast(self.beta, "float32")
        return ops.cast(out, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon}
