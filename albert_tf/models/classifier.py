"""The original's sequence classifier: ALBERT pooled output → dropout 0.1 → `output_weights`.

`output_weights` [C, H] and `output_bias` [C] live at the checkpoint root, stored in TF1
layout ([out, in]), so an original fine-tuned checkpoint loads by name (`FORMATS`).
With one output (STS-B) the model is a regressor and its loss is the squared error. With
`multi_label=True` every class is a yes/no of its own: a sigmoid per class, binary
cross-entropy, and a class is predicted when its probability is at least `threshold`.
"""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers.initializers import truncated_normal
from albert_tf.models.base import AlbertTaskModel
from albert_tf.models.encoder import AlbertModel
from albert_tf.models.formats import KerasHubHead, projection_formats

# Fixed by the original's head whatever the config says (also for dropout-free v2 models).
HEAD_DROPOUT = 0.1
HEAD_INIT_STDDEV = 0.02


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertClassifier(AlbertTaskModel):
    """`{"input_ids","input_mask","segment_ids"}` → `logits` ([B,C]; [B] when regressing),
    `probabilities` ([B,C] softmax; sigmoid when multi-label; the [B,1] raw output when
    regressing) and `predictions` ([B] int32 class ids; [B,C] int32 0/1 when multi-label; the
    float scores when regressing). Outputs are float32."""

    HEAD_ARGUMENTS = ("num_labels", "multi_label", "threshold")
    HEAD_ID = "classifier"
    HEADS = (HEAD_ID,)
    FORMATS = {HEAD_ID: projection_formats(
        # The original's GLUE head sits at the checkpoint root.
        "", "num_labels", "classifier", hf_class="AlbertForSequenceClassification",
        # AlbertTextClassifier: pooled output → dropout → `logits` dense, whose kernel is
        # [H, C] (transposed from TF1's [C, H]).
        keras_hub=KerasHubHead(
            "AlbertTextClassifier",
            layers=(("dense", "logits", ((0, "output_weights"), (1, "output_bias"))),
                    ("dropout", "output_dropout", ()))))}
    TFLITE_NAME = "classifier"
    TFLITE_OUTPUTS = ("probabilities",)
    SERVING = "albert_tf.tasks.classification.export:export_head"

    def __init__(self, config: AlbertConfig, num_labels: int, encoder: AlbertModel | None = None,
                 multi_label: bool = False, threshold: float = 0.5, **kwargs):
        kwargs.setdefault("name", "albert_classifier")
        if num_labels < 1:
            raise ValueError(f"num_labels must be at least 1, got {num_labels}")
        super().__init__(config, encoder, **kwargs)
        config = self.config
        self.num_labels = num_labels
        self.multi_label = bool(multi_label)
        self.threshold = float(threshold)
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
            logits = ops.squeeze(logits, -1)
        return classifier_outputs(logits, self.is_regression, self.multi_label, self.threshold)


def classifier_outputs(logits, regression: bool = False, multi_label: bool = False,
                       threshold: float = 0.5) -> dict:
    """The model's outputs from its logits (also from the pooled logits of a long document's
    windows, so they follow the same rule)."""
    if regression:
        return {"logits": logits, "probabilities": ops.expand_dims(logits, -1),
                "predictions": logits}
    if multi_label:
        probabilities = ops.sigmoid(logits)
        return {"logits": logits, "probabilities": probabilities,
                "predictions": ops.cast(probabilities >= threshold, "int32")}
    return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1),
            "predictions": ops.cast(ops.argmax(logits, axis=-1), "int32")}


def per_example_loss(logits, labels, regression: bool, multi_label: bool = False):
    """Cross-entropy per example, or (score − label)² when regressing, or the mean over classes
    of the binary cross-entropy when multi-label (labels multi-hot [B, C]); float32 [B]."""
    logits = ops.cast(logits, "float32")
    if regression:
        return ops.square(logits - ops.cast(labels, "float32"))
    if multi_label:
        labels = ops.cast(labels, "float32")
        # log(1 + e^x) - x·y, written to stay finite for large |x|
        losses = ops.maximum(logits, 0.0) - logits * labels + ops.log1p(ops.exp(-ops.abs(logits)))
        return ops.mean(losses, axis=-1)
    log_probs = ops.log_softmax(logits, axis=-1)
    labels = ops.reshape(ops.cast(labels, "int32"), (-1,))
    return -ops.squeeze(ops.take_along_axis(log_probs, labels[:, None], axis=-1), -1)


def classifier_loss(outputs, features, regression: bool):
    """Mean per-example loss over the batch (the original's training loss)."""
    return ops.mean(per_example_loss(outputs["logits"], features["label_ids"], regression))
