"""RACE head: pooled output of each (context, choice) pair → one score; softmax over 4 choices."""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers.initializers import truncated_normal
from albert_tf.models import AlbertModel
from albert_tf.tasks.race.data import NUM_CHOICES


class RaceModel(keras.Model):
    """Inputs [B, 4, S] → `logits` [B, 4] (float32). Root variables `output_weights` [1, H] and
    `output_bias` [1], as the original."""

    def __init__(self, config, dropout_prob: float = 0.1, **kwargs):
        kwargs.setdefault("name", "race")
        super().__init__(**kwargs)
        self.config = AlbertConfig.from_dict(config) if isinstance(config, dict) else config
        self.encoder = AlbertModel(self.config)
        self.dropout = keras.layers.Dropout(dropout_prob)
        self.output_weights = self.add_weight(name="output_weights",
                                              shape=(1, self.config.hidden_size),
                                              initializer=truncated_normal(0.02))
        self.output_bias = self.add_weight(name="output_bias", shape=(1,), initializer="zeros")

    def tf1_head_rows(self):
        return [("output_weights", "output_weights", (1, "hidden_size")),
                ("output_bias", "output_bias", (1,))]

    def call(self, inputs, training=False):
        seq = ops.shape(inputs["input_ids"])[-1]
        flat = {k: ops.reshape(inputs[k], (-1, seq))
                for k in ("input_ids", "input_mask", "segment_ids")}
        pooled = self.encoder(flat, training=training, pooled_only=True)["pooled_output"]
        pooled = ops.cast(self.dropout(pooled, training=training), "float32")
        logits = ops.matmul(pooled, ops.transpose(ops.cast(self.output_weights, "float32")))
        return {"logits": ops.reshape(logits + self.output_bias, (-1, NUM_CHOICES))}


def race_loss(outputs, features):
    return ops.mean(keras.losses.sparse_categorical_crossentropy(
        ops.cast(features["label_ids"], "int32"), outputs["logits"], from_logits=True))
