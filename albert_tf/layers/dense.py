"""Projections of [..., K] activations as one 2-D matmul.

Keras' `ops.matmul` of a 3-D input by a 2-D kernel goes through `tf.tensordot`, which builds
about twenty graph ops of shape arithmetic around each MatMul. Here the leading dimensions are
folded into rows with one Reshape and unfolded with another: the same MatMul on the same 2-D
operands (the results are bit-identical), in a graph a quarter smaller. Every traced function
and SavedModel of the model carries fewer ops, and tracing one is faster.
"""

import keras
from keras import ops


def matmul_last(x, kernel):
    """x [..., K] @ kernel [K, N] → [..., N].

    The leading dimension is -1, never a traced size: a TFLite file converted at batch 1 still
    runs after its inputs are resized to another batch.
    """
    rank = len(x.shape)
    if rank <= 2 or x.shape[-1] is None:
        return ops.matmul(x, kernel)
    inner = x.shape[1:-1]
    if any(size is None for size in inner):
        shape = ops.shape(x)  # one Shape op for all the unknown sizes
        inner = [shape[i] if size is None else size for i, size in enumerate(inner, 1)]
    rows = ops.matmul(ops.reshape(x, (-1, x.shape[-1])), kernel)
    return ops.reshape(rows, (-1, *inner, kernel.shape[-1]))


@keras.saving.register_keras_serializable(package="albert_tf")
class Dense(keras.layers.Dense):
    """`keras.layers.Dense` whose matmul is `matmul_last`. Same weights, names and outputs; Keras
    still casts inputs and kernel for mixed precision (in `__call__` and on reading the kernel),
    and a quantized layer still runs Keras' own `quantized_call`."""

    def call(self, inputs, training=None):
        x = matmul_last(inputs, self.kernel)
        if self.bias is not None:
            x = ops.add(x, self.bias)
        if self.activation is not None:
            x = self.activation(x)
        return x
