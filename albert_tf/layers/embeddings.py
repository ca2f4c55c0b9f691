"""Factorised embeddings: V×E word table, token-type and position tables, LayerNorm at width E."""

import keras
from keras import ops

from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.normalization import LayerNorm


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertEmbeddings(keras.layers.Layer):
    """word + token type + position (first S rows), then LayerNorm and dropout, all at width E.

    The E→H projection lives in the encoder, as in the original (`bert/encoder/...`).
    Returns (embedding_output [B,S,E], word_embedding_output [B,S,E]).
    """

    def __init__(self, vocab_size, embedding_size, type_vocab_size, max_position_embeddings,
                 initializer_range=0.02, dropout_rate=0.0, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.embedding_size = vocab_size, embedding_size
        self.type_vocab_size, self.max_position_embeddings = type_vocab_size, max_position_embeddings
        self.initializer_range, self.dropout_rate = initializer_range, dropout_rate
        self.layer_norm = LayerNorm(name="LayerNorm")
        self.dropout = keras.layers.Dropout(dropout_rate) if dropout_rate else None

    def build(self, input_shape=None):
        init = truncated_normal(self.initializer_range)
        self.word_embeddings = self.add_weight(
            name="word_embeddings", shape=(self.vocab_size, self.embedding_size), initializer=init)
        self.token_type_embeddings = self.add_weight(
            name="token_type_embeddings", shape=(self.type_vocab_size, self.embedding_size),
            initializer=init)
        self.position_embeddings = self.add_weight(
            name="position_embeddings", shape=(self.max_position_embeddings, self.embedding_size),
            initializer=init)
        self.layer_norm.build((None, None, self.embedding_size))

    def call(self, input_ids, segment_ids, training=False):
        seq_length = ops.shape(input_ids)[1]
        words = ops.take(ops.cast(self.word_embeddings, self.compute_dtype), input_ids, axis=0)
        types = ops.take(ops.cast(self.token_type_embeddings, self.compute_dtype), segment_ids, axis=0)
        positions = ops.cast(self.position_embeddings[:seq_length], self.compute_dtype)
        x = words + types + positions[None, :, :]
        x = self.layer_norm(x)
        if self.dropout is not None:
            x = self.dropout(x, training=training)
        return x, words

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size,
                "embedding_size": self.embedding_size, "type_vocab_size": self.type_vocab_size,
                "max_position_embeddings": self.max_position_embeddings,
                "initializer_range": self.initializer_range, "dropout_rate": self.dropout_rate}
