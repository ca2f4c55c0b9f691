"""The attention half of an ALBERT block: self-attention, dropout, residual, `LayerNorm`."""

import math

import keras
from keras import ops

from albert_tf.layers.dense import Dense
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.normalization import LayerNorm

MASK_ADDEND = -10000.0  # finite, so an all-padding row gets uniform attention instead of NaN


def attention_bias(input_mask, dtype="float32"):
    """[B,S] 0/1 mask → [B,1,1,S] additive bias that masks keys only, as the original."""
    mask = ops.cast(input_mask, dtype)
    return ((1.0 - mask) * MASK_ADDEND)[:, None, None, :]


@keras.saving.register_keras_serializable(package="albert_tf")
class AttentionSublayer(keras.layers.Layer):
    """`attention_1/self/{query,key,value}`, `attention_1/output/dense`, then `LayerNorm`.

    Kernels are kept 2-D ([H, N·D], head-major columns) exactly as TF1 stores them, so loading a
    checkpoint is a rename and nothing is reshaped on disk.
    """

    def __init__(self, hidden_size, num_heads, initializer_range=0.02, dropout_rate=0.0,
                 attention_dropout_rate=0.0, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_size = hidden_size // num_heads
        self.initializer_range = initializer_range
        self.dropout_rate = dropout_rate
        self.attention_dropout_rate = attention_dropout_rate
        dense = dict(kernel_initializer=truncated_normal(initializer_range))
        self.query = Dense(hidden_size, name="query", **dense)
        self.key = Dense(hidden_size, name="key", **dense)
        self.value = Dense(hidden_size, name="value", **dense)
        self.output_dense = Dense(hidden_size, name="output_dense", **dense)
        self.layer_norm = LayerNorm(name="LayerNorm")
        self.attention_dropout = (keras.layers.Dropout(attention_dropout_rate)
                                  if attention_dropout_rate else None)
        self.output_dropout = keras.layers.Dropout(dropout_rate) if dropout_rate else None

    def build(self, input_shape):
        shape = (None, None, self.hidden_size)
        for layer in (self.query, self.key, self.value, self.output_dense):
            layer.build(shape)
        self.layer_norm.build(shape)

    def _heads(self, x):
        """[B,S,N·D] → [B,N,S,D]. The batch is -1, never a traced size: a TFLite file converted
        at batch 1 then still runs after its inputs are resized to another batch."""
        length = ops.shape(x)[1]
        x = ops.reshape(x, (-1, length, self.num_heads, self.head_size))
        return ops.transpose(x, (0, 2, 1, 3))

    def call(self, x, bias, training=False, return_probs=False, query_input=None):
        """`query_input` [B,F,H] (default `x`): the rows to compute outputs for; keys and
        values always come from all of `x`, so each output row equals the full pass's."""
        rows = x if query_input is None else query_input
        q = self._heads(self.query(rows))
        k = self._heads(self.key(x))
        v = self._heads(self.value(x))
        # Plain batched matmuls, not einsum (the original's `use_einsum=False` path): TFLite's
        # einsum lowering bakes the traced batch into its reshapes.
        # Scale the product, not q: the order the original uses, so rounding matches.
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2)))
        # Softmax in float32; Keras may have autocast `bias` to the compute dtype on the way in.
        scores = ops.cast(scores, "float32") * (1.0 / math.sqrt(self.head_size)) + ops.cast(bias, "float32")
        probs = ops.softmax(scores, axis=-1)
        attention = ops.cast(probs, self.compute_dtype)
        if self.attention_dropout is not None:
            attention = self.attention_dropout(attention, training=training)
        context = ops.transpose(ops.matmul(attention, v), (0, 2, 1, 3))  # [B,F,N,D]
        context = ops.reshape(context, (-1, ops.shape(rows)[1], self.hidden_size))
        out = self.output_dense(context)
        if self.output_dropout is not None:
            out = self.output_dropout(out, training=training)
        out = self.layer_norm(out + rows)
        return (out, probs) if return_probs else out

    def get_config(self):
        return {**super().get_config(), "hidden_size": self.hidden_size,
                "num_heads": self.num_heads, "initializer_range": self.initializer_range,
                "dropout_rate": self.dropout_rate,
                "attention_dropout_rate": self.attention_dropout_rate}
