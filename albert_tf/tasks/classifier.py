"""The original's sequence classifier: ALBERT pooled output → dropout 0.1 → `output_weights`.

`output_weights` [C, H] and `output_bias` [C] live at the checkpoint root, stored in TF1
layout ([out, in]), so an original fine-tuned checkpoint loads by name (`tf1_head_rows`).
With one output (STS-B) the model is a regressor and its loss is the squared error.
"""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers.initializers import truncated_normal
from albert_tf.models import AlbertModel

# Fixed by the original's head whatever the config says (also for dropout-free v2 models).
HEAD_DROPOUT = 0.1
HEAD_INIT_STDDEV = 0.02


class AlbertClassifier(keras.Model):
    """`{"input_ids","input_mask","segment_ids"}` → `logits` ([B,C]; [B] when regressing),
    `probabilities` ([B,C] softmax; the [B,1] raw output when regressing) and `predictions`
    ([B] int32 class ids; the float scores when regressing). Outputs are float32."""

    def __init__(self, config: AlbertConfig, num_labels: int, encoder: AlbertModel | None = None,
                 **kwargs):
        kwargs.setdefault("name", "albert_classifier")
        super().__init__(**kwargs)
        if isinstance(config, dict):
            config = AlbertConfig.from_dict(config)
        if num_labels < 1:
            raise ValueError(f"num_labels must be at least 1, got {num_labels}")
        self.config = config
        self.num_labels = num_labels
        self.encoder = encoder if encoder is not None else AlbertModel(config)
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

    def tf1_head_rows(self):
        """TF1 names of the head weights (at the checkpoint root, as the original)."""
        return [("output_weights", "output_weights", (self.num_labels, "hidden_size")),
                ("output_bias", "output_bias", (self.num_labels,))]

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

    def get_config(self):
        return {"config": self.config.to_dict(), "num_labels": self.num_labels, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(AlbertConfig.from_dict(config["config"]), config["num_labels"],
                   name=config.get("name", "albert_classifier"))


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
