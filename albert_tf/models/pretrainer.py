"""`AlbertPretrainer` (encoder + masked-LM and sentence-order heads) and the pretraining losses."""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers import MaskedLMHead, SentenceOrderHead
from albert_tf.models.base import AlbertTaskModel
from albert_tf.models.encoder import AlbertModel
from albert_tf.models.formats import HeadFormats, KerasHubHead


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertPretrainer(AlbertTaskModel):
    """Encoder + masked-LM head (tied to the word table) + sentence-order head.

    Extra input `masked_lm_positions` [B,P]; extra outputs `masked_lm_logits` [B,P,V] and
    `sentence_order_logits` [B,2], both float32 whatever the precision policy.
    `heads_only=True` (what pretraining uses) runs the last block only at the masked positions
    and [CLS]: same logits and gradients, ~6 % less work for ALBERT-base; `sequence_output` is
    then the [B,P,H] rows at `masked_lm_positions`.
    """

    HEAD_ID = "pretraining"
    HEADS = ("mlm", "sop")
    FORMATS = {
        # The MLM decoder is tied to the word embeddings: only its bias is a weight of its own.
        "mlm": HeadFormats(
            tf1=(("cls/predictions/transform/dense/kernel", "masked_lm.transform.kernel",
                  ("hidden_size", "embedding_size")),
                 ("cls/predictions/transform/dense/bias", "masked_lm.transform.bias",
                  ("embedding_size",)),
                 ("cls/predictions/transform/LayerNorm/beta", "masked_lm.layer_norm.beta",
                  ("embedding_size",)),
                 ("cls/predictions/transform/LayerNorm/gamma", "masked_lm.layer_norm.gamma",
                  ("embedding_size",)),
                 ("cls/predictions/output_bias", "masked_lm.output_bias", ("vocab_size",))),
            hf=(("predictions.dense.weight", "cls/predictions/transform/dense/kernel", True),
                ("predictions.dense.bias", "cls/predictions/transform/dense/bias", False),
                ("predictions.LayerNorm.weight", "cls/predictions/transform/LayerNorm/gamma",
                 False),
                ("predictions.LayerNorm.bias", "cls/predictions/transform/LayerNorm/beta", False),
                ("predictions.bias", "cls/predictions/output_bias", False)),
            hf_class="AlbertForPreTraining",
            # AlbertMaskedLM's `mlm_head` holds the output bias and two sub-layers.
            keras_hub=KerasHubHead(
                "AlbertMaskedLM", holder="mlm_head",
                holder_vars=((0, "cls/predictions/output_bias"),),
                layers=(("_intermediate_dense", "intermediate_dense", (
                    (0, "cls/predictions/transform/dense/kernel"),
                    (1, "cls/predictions/transform/dense/bias"))),
                        ("_intermediate_layer_norm", "intermediate_layer_norm", (
                            (0, "cls/predictions/transform/LayerNorm/gamma"),
                            (1, "cls/predictions/transform/LayerNorm/beta")))))),
        "sop": HeadFormats(
            tf1=(("cls/seq_relationship/output_weights", "sentence_order.output_weights",
                  (2, "hidden_size")),
                 ("cls/seq_relationship/output_bias", "sentence_order.output_bias", (2,))),
            hf=(("sop_classifier.classifier.weight", "cls/seq_relationship/output_weights",
                 False),
                ("sop_classifier.classifier.bias", "cls/seq_relationship/output_bias", False)),
            hf_class="AlbertForPreTraining"),
    }
    # Its TFLite file is the encoder's (the heads are for training).
    TFLITE_NAME = AlbertModel.TFLITE_NAME
    TFLITE_OUTPUTS = AlbertModel.TFLITE_OUTPUTS

    def __init__(self, config: AlbertConfig, encoder: AlbertModel | None = None, **kwargs):
        kwargs.setdefault("name", "albert_pretrainer")
        super().__init__(config, encoder, **kwargs)
        config = self.config
        self.masked_lm = MaskedLMHead(config.embedding_size, config.vocab_size, config.hidden_act,
                                      config.initializer_range, name="predictions")
        self.sentence_order = SentenceOrderHead(config.initializer_range, name="seq_relationship")
        self.build()

    def build(self, input_shape=None):
        self.masked_lm.build(self.config.hidden_size)
        self.sentence_order.build(self.config.hidden_size)
        self.built = True

    def call(self, inputs, training=False, heads_only=False):
        positions = inputs["masked_lm_positions"]
        if heads_only:
            outputs = dict(self.encoder(inputs, training=training, output_positions=positions))
            positions = None  # sequence_output already holds just those rows
        else:
            outputs = dict(self.encoder(inputs, training=training))
        outputs["masked_lm_logits"] = self.masked_lm(
            outputs["sequence_output"], positions, self.encoder.embedding_table)
        outputs["sentence_order_logits"] = self.sentence_order(outputs["pooled_output"])
        return outputs


def masked_lm_example_loss(logits, label_ids):
    """Per-prediction −log p(label) [B,P] (float32), by the fused sparse cross-entropy kernel:
    picking from log_softmax with a gather makes its gradient a scatter into a zeroed
    [B·P, V] tensor, ~4 % of an ALBERT-base CPU step."""
    return ops.sparse_categorical_crossentropy(ops.cast(label_ids, "int32"),
                                               ops.cast(logits, "float32"), from_logits=True)


def masked_lm_loss(logits, label_ids, label_weights):
    """The original's weighting: Σ w·loss / (Σ w + 1e-5)."""
    weights = ops.cast(label_weights, "float32")
    per_example = masked_lm_example_loss(logits, label_ids)
    return ops.sum(per_example * weights) / (ops.sum(weights) + 1e-5)


def sentence_order_example_loss(logits, labels):
    labels = ops.reshape(ops.cast(labels, "int32"), (-1,))
    return ops.sparse_categorical_crossentropy(labels, ops.cast(logits, "float32"), from_logits=True)


def sentence_order_loss(logits, labels):
    """Mean over the batch of −log p(label); label 1 means the two segments were swapped."""
    return ops.mean(sentence_order_example_loss(logits, labels))


def pretraining_losses(outputs, features):
    """(total, masked_lm, sentence_order) losses for an `AlbertPretrainer` output dict."""
    mlm = masked_lm_loss(outputs["masked_lm_logits"], features["masked_lm_ids"],
                         features["masked_lm_weights"])
    sop = sentence_order_loss(outputs["sentence_order_logits"], features["next_sentence_labels"])
    return mlm + sop, mlm, sop
