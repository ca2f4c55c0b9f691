"""The original's sequence classifier: ALBERT pooled output → dropout 0.1 → `output_weights`.

`output_weights` [C, H] and `output_bias` [C] live at the checkpoint root, stored in TF1
layout ([out, in]), so an original fine-tuned checkpoint loads by name
(`albert_tf.weights.tf1_names.CLASSIFIER_HEAD`).
With one output (STS-B) the model is a regressor and its loss is the squared error.
"""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers.initializers import truncated_normal
from albert_tf.models.base import AlbertTaskModel
from albert_tf.models.encoder import AlbertModel

# Fixed by the original's head whatever the config says (also for dropout-free v2 models).
HEAD_DROPOUT = 0.1
HEAD_INIT_STDDEV = 0.02


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertClassifier(AlbertTaskModel):
    """`{"input_ids","input_mask","segment_ids"}` → `logits` ([B,C]; [B] when regressing),
    `probabilities` ([B,C] softmax; the [B,1] raw output when regressing) and `predictions`
    ([B] int32 class ids; the float scores when regressing). Outputs are float32."""

    HEAD_ARGUMENTS = ("num_labels",)
    HEAD_ID = "classifier"
    HEADS = (HEAD_ID,)
    TFLITE_NAME = "classifier"
    TFLITE_OUTPUTS = ("probabilities",)

    def __init__(self, config: AlbertConfig, num_labels: int, encoder: AlbertModel | None = None,
                 **kwargs):
        kwargs.setdefault("name", "albert_classifier")
        if num_labels < 1:
            raise ValueError(f"num_labels must be at least 1, got {num_labels}")
        super().__init__(config, encoder, **kwargs)
        config = self.config
        self.num_labels = num_labels
        self.dropout = keras.layers.Dropout(HEAD_DROPOUT, name="head_dropout")
        self.output_weights = self.add_weight(
            name="output_weights", shape=(num_labels, config.hidden_size),
            initializer=truncated_normal(HEAD_INIT_STDDEV))
        self.output_bias = self.add_weight(name="output_bias", shape=(num_labels,),
                                           initializer="zeros")
        self.built = True

    @property
    def is_regression(self) -> bool:
        return self.num_labels == 1

    def call(self, inputs, training=False):
        pooled = self.encoder(inputs, training=training, pooled_only=True)["pooled_output"]
        pooled = self.dropout(pooled, training=training)
        logits = ops.matmul(pooled, ops.transpose(ops.cast(self.output_weights, pooled.dtype)))
        logits = ops.cast(logits, "float32") + ops.cast(self.output_bias, "float32")
        if self.is_regression:
            scores = ops.squeeze(logits, -1)
            return {"logits": scores, "probabilities": logits, "predictions": scores}
        return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1),
                "predictions": ops.cast(ops.argmax(logits, axis=-1), "int32")}


def per_example_loss(logits, labels, regression: bool):
    """Cross-entropy per example, or (score − label)² when regressing; float32 [B]."""
    logits = ops.cast(logits, "float32")
    if regression:
        return ops.square(logits - ops.cast(labels, "float32"))
    log_probs = ops.log_softmax(logits, axis=-1)
    labels = ops.reshape(ops.cast(labels, "int32"), (-1,))
    return -ops.squeeze(ops.take_along_axis(log_probs, labels[:, None], axis=-1), -1)


def classifier_loss(outputs, features, regression: bool):
    """Mean per-example loss over the batch (the original's training loss)."""
    return ops.mean(per_example_loss(outputs["logits"], features["label_ids"], regression))
