"""Multiple-choice head (RACE): the pooled output of each (context, choice) pair → one score;
softmax over the choices."""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers.initializers import truncated_normal
from albert_tf.models.base import AlbertTaskModel
from albert_tf.models.encoder import AlbertModel
from albert_tf.models.formats import projection_formats

RACE_NUM_CHOICES = 4  # every RACE question has options A-D


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertMultipleChoice(AlbertTaskModel):
    """Inputs [B, num_choices, S] → `logits` [B, num_choices] (float32). Root variables
    `output_weights` [1, H] and `output_bias` [1], as the original's RACE head.

    `dropout_prob` comes before `num_choices` so the original's call `(config, dropout_prob)`
    keeps working.
    """

    HEAD_ARGUMENTS = ("dropout_prob", "num_choices")
    HEAD_ID = "multiple_choice"
    HEADS = (HEAD_ID,)
    # One score per (context, choice) pair, at the checkpoint root: by TF1 names and shapes a
    # one-label classifier.
    FORMATS = {HEAD_ID: projection_formats("", 1, "classifier", hf_class="AlbertForMultipleChoice")}
    # Exported as a pair scorer: serve_pair(context, choice) → its score.
    SERVING = "albert_tf.tasks.race.export:export_head"

    def __init__(self, config: AlbertConfig, dropout_prob: float = 0.1,
                 num_choices: int = RACE_NUM_CHOICES, encoder: AlbertModel | None = None,
                 **kwargs):
        kwargs.setdefault("name", "race")
        if num_choices < 1:
            raise ValueError(f"num_choices must be at least 1, got {num_choices}")
        super().__init__(config, encoder, **kwargs)
        self.dropout_prob, self.num_choices = dropout_prob, num_choices
        self.dropout = keras.layers.Dropout(dropout_prob)
        # The head computes in float32: autocast=False keeps a bfloat16 policy from rounding
        # the weights when they are read (and from adding a bfloat16 bias to float32 logits,
        # which TensorFlow refuses).
        self.output_weights = self.add_weight(name="output_weights",
                                              shape=(1, self.config.hidden_size),
                                              initializer=truncated_normal(0.02), autocast=False)
        self.output_bias = self.add_weight(name="output_bias", shape=(1,), initializer="zeros",
                                           autocast=False)

    def call(self, inputs, training=False):
        seq = ops.shape(inputs["input_ids"])[-1]
        flat = {k: ops.reshape(inputs[k], (-1, seq))
                for k in ("input_ids", "input_mask", "segment_ids")}
        pooled = self.encoder(flat, training=training, pooled_only=True)["pooled_output"]
        pooled = ops.cast(self.dropout(pooled, training=training), "float32")
        logits = ops.matmul(pooled, ops.transpose(ops.cast(self.output_weights, "float32")))
        return {"logits": ops.reshape(logits + self.output_bias, (-1, self.num_choices))}


def multiple_choice_loss(outputs, features):
    """Mean over the batch of −log p(label) under the softmax over the choices."""
    return ops.mean(keras.losses.sparse_categorical_crossentropy(
        ops.cast(features["label_ids"], "int32"), outputs["logits"], from_logits=True))
