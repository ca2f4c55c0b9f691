"""Pooler and pretraining heads, with the original's variable layout."""

import keras
from keras import ops

from albert_tf.layers.activations import get_activation
from albert_tf.layers.dense import Dense, matmul_last
from albert_tf.layers.gather import gather_rows
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.normalization import LayerNorm


@keras.saving.register_keras_serializable(package="albert_tf")
class MaskedLMHead(keras.layers.Layer):
    """`cls/predictions`: dense H→E + act + LayerNorm, logits against the tied [V,E] table + bias."""

    def __init__(self, embedding_size, vocab_size, hidden_act="gelu", initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.embedding_size = embedding_size
        self.vocab_size = vocab_size
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.transform = Dense(
            embedding_size, activation=get_activation(hidden_act),
            kernel_initializer=truncated_normal(initializer_range), name="transform_dense")
        self.layer_norm = LayerNorm(name="LayerNorm")

    def build(self, hidden_size):
        self.transform.build((None, hidden_size))
        self.layer_norm.build((None, self.embedding_size))
        self.output_bias = self.add_weight(name="output_bias", shape=(self.vocab_size,),
                                           initializer="zeros")

    def call(self, sequence_output, positions, embedding_table):
        """`positions` None: `sequence_output` already holds the [B,P,H] rows to predict."""
        gathered = sequence_output
        if positions is not None:
            gathered = gather_rows(sequence_output, positions)  # [B,P,H]
        transformed = self.layer_norm(self.transform(gathered))
        logits = matmul_last(transformed, ops.transpose(ops.cast(embedding_table, transformed.dtype)))
        return ops.cast(logits, "float32") + ops.cast(self.output_bias, "float32")

    def get_config(self):
        return {**super().get_config(), "embedding_size": self.embedding_size,
                "vocab_size": self.vocab_size, "hidden_act": self.hidden_act,
                "initializer_range": self.initializer_range}


@keras.saving.register_keras_serializable(package="albert_tf")
class SentenceOrderHead(keras.layers.Layer):
    """`cls/seq_relationship`: weights stored [2, H] ([out, in]) as in the original."""

    def __init__(self, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.initializer_range = initializer_range

    def build(self, hidden_size):
        self.output_weights = self.add_weight(
            name="output_weights", shape=(2, hidden_size),
            initializer=truncated_normal(self.initializer_range))
        self.output_bias = self.add_weight(name="output_bias", shape=(2,), initializer="zeros")

    def call(self, pooled_output):
        logits = ops.matmul(pooled_output, ops.transpose(ops.cast(self.output_weights, pooled_output.dtype)))
        return ops.cast(logits, "float32") + ops.cast(self.output_bias, "float32")

    def get_config(self):
        return {**super().get_config(), "initializer_range": self.initializer_range}
