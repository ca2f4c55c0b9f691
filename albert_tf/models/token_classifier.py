"""Token classifier (NER, POS, any tag set): ALBERT sequence output → dropout → one linear layer
per position, as Hugging Face's `AlbertForTokenClassification`.

TF1 names (`FORMATS`): `token_classifier/output_weights` [num_labels, H] and
`token_classifier/output_bias` [num_labels], in the [out, in] layout of the original's
`output_weights`. A scope of their own, because the GLUE classifier's root
`output_weights` must not load into this head (or this head into it). In our own training
checkpoints the attributes are `token_output_weights` / `token_output_bias`, which no other
model has, so a reader tells a token classifier's output_dir from a classifier's.
"""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers.dense import matmul_last
from albert_tf.layers.initializers import truncated_normal
from albert_tf.models.base import AlbertTaskModel
from albert_tf.models.encoder import AlbertModel
from albert_tf.models.formats import projection_formats

HEAD_INIT_STDDEV = 0.02


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertTokenClassifier(AlbertTaskModel):
    """`{"input_ids","input_mask","segment_ids"}` [B,S] → `logits` [B,S,C] (float32),
    `probabilities` [B,S,C] (softmax) and `predictions` [B,S] (int32 tag ids), for every
    position; which positions carry a word's tag is the task's business (its first piece)."""

    HEAD_ARGUMENTS = ("num_labels", "dropout_prob")
    HEAD_ID = "token_classifier"
    HEADS = (HEAD_ID,)
    # AlbertForTokenClassification: the same `classifier` names as a sequence classifier,
    # applied to every position; no pooler.
    FORMATS = {HEAD_ID: projection_formats(
        "token_classifier/", "num_labels", "classifier",
        ("token_output_weights", "token_output_bias"),
        hf_class="AlbertForTokenClassification", hf_pooler=False)}
    TFLITE_NAME = "token_classifier"
    TFLITE_OUTPUTS = ("probabilities",)
    SERVING = "albert_tf.tasks.token_classification.export:export_head"

    def __init__(self, config: AlbertConfig, num_labels: int, dropout_prob: float = 0.1,
                 encoder: AlbertModel | None = None, **kwargs):
        kwargs.setdefault("name", "albert_token_classifier")
        if num_labels < 1:
            raise ValueError(f"num_labels must be at least 1, got {num_labels}")
        super().__init__(config, encoder, **kwargs)
        self.num_labels = int(num_labels)
        self.dropout_prob = float(dropout_prob)
        self.dropout = keras.layers.Dropout(self.dropout_prob, name="head_dropout")
        # float32 head (autocast=False): a bfloat16 policy must not round the weights.
        self.token_output_weights = self.add_weight(
            name="output_weights", shape=(self.num_labels, self.config.hidden_size),
            initializer=truncated_normal(HEAD_INIT_STDDEV), autocast=False)
        self.token_output_bias = self.add_weight(name="output_bias", shape=(self.num_labels,),
                                                 initializer="zeros", autocast=False)

    def call(self, inputs, training=False):
        encoder_inputs = {k: inputs[k] for k in ("input_ids", "input_mask", "segment_ids")
                          if k in inputs}
        sequence = self.encoder(encoder_inputs, training=training)["sequence_output"]
        sequence = ops.cast(self.dropout(sequence, training=training), "float32")
        # A matmul, not einsum: TFLite's einsum lowering bakes the traced batch into a reshape.
        logits = matmul_last(sequence, ops.transpose(self.token_output_weights))
        logits = logits + self.token_output_bias
        return {"logits": logits, "probabilities": ops.softmax(logits, axis=-1),
                "predictions": ops.cast(ops.argmax(logits, axis=-1), "int32")}


def token_classifier_loss(logits, label_ids):
    """(Σ cross-entropy over positions with a label, number of such positions): `label_ids`
    [B,S] holds a tag id at each word's first piece and -1 elsewhere."""
    labels = ops.cast(label_ids, "int32")
    weights = ops.cast(ops.greater_equal(labels, 0), "float32")
    log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
    picked = ops.take_along_axis(log_probs, ops.maximum(labels, 0)[..., None], axis=-1)[..., 0]
    return -ops.sum(picked * weights), ops.sum(weights)
