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
        # A LoRA adapter of the word table (`enable_lora`, `models.lora`): off until enabled.
        self.word_lora_rank = 0

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

    def enable_lora(self, rank: int) -> None:
        """A rank-R adapter of the V×E word table: row i of the table reads W[i] + A[i]·B,
        A [V,R] starting at zero (the base model's outputs), B [R,E] drawn at 1/sqrt(E) so that
        A's first steps move a word by about the norm of a row."""
        self._tracker.unlock()
        self.word_lora_a = self.add_weight(name="word_lora_a", shape=(self.vocab_size, rank),
                                           initializer="zeros")
        self.word_lora_b = self.add_weight(
            name="word_lora_b", shape=(rank, self.embedding_size),
            initializer=keras.initializers.RandomNormal(stddev=self.embedding_size ** -0.5))
        self._tracker.lock()
        self.word_lora_rank = int(rank)

    def merged_word_embeddings(self):
        """W + A·B: the word table an export holds (`models.lora.merged_lora`)."""
        return self.word_embeddings + ops.matmul(self.word_lora_a, self.word_lora_b)

    def call(self, input_ids, segment_ids, training=False):
        seq_length = ops.shape(input_ids)[1]
        words = ops.take(ops.cast(self.word_embeddings, self.compute_dtype), input_ids, axis=0)
        if self.word_lora_rank:  # only the batch's rows of A: no V×E product per step
            rows = ops.take(ops.cast(self.word_lora_a, self.compute_dtype), input_ids, axis=0)
            words = words + ops.matmul(rows, ops.cast(self.word_lora_b, self.compute_dtype))
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
