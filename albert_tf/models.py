"""`AlbertModel` (encoder + pooler) and `AlbertPretrainer` (+ MLM and SOP heads), with losses."""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers import AlbertEmbeddings, AlbertTransformer, MaskedLMHead, SentenceOrderHead
from albert_tf.layers.initializers import truncated_normal


def _input(inputs, name, like=None, fill=0):
    value = inputs.get(name) if isinstance(inputs, dict) else None
    if value is None:
        return ops.full(ops.shape(like), fill, dtype="int32")
    return ops.cast(value, "int32")


class AlbertModel(keras.Model):
    """The ALBERT encoder: `{"input_ids", "input_mask", "segment_ids"}` (int32 [B,S]) →
    `sequence_output` [B,S,H], `pooled_output` [B,H], `encoder_outputs` (L·K × [B,S,H]),
    `embedding_output` [B,S,E] (after LayerNorm, before the E→H projection)."""

    def __init__(self, config: AlbertConfig, **kwargs):
        kwargs.setdefault("name", "albert")
        super().__init__(**kwargs)
        if isinstance(config, dict):
            config = AlbertConfig.from_dict(config)
        self.config = config
        c = config
        self.embeddings = AlbertEmbeddings(
            c.vocab_size, c.embedding_size, c.type_vocab_size, c.max_position_embeddings,
            c.initializer_range, c.hidden_dropout_prob, name="embeddings")
        self.transformer = AlbertTransformer(c, name="transformer")
        self.pooler = keras.layers.Dense(
            c.hidden_size, activation="tanh",
            kernel_initializer=truncated_normal(c.initializer_range), name="pooler")
        self.build()

    def build(self, input_shape=None):
        self.embeddings.build()
        self.transformer.build()
        self.pooler.build((None, self.config.hidden_size))
        self.built = True

    def call(self, inputs, training=False, return_attention=False, output_positions=None,
             pooled_only=False):
        """`output_positions` [B,P] (optional): compute the last block only for those rows (and
        [CLS] for the pooler); `sequence_output` and the last `encoder_outputs` entry are then
        [B,P,H], row p equal to the full pass's row `output_positions[:, p]`.
        `pooled_only=True`: the last block runs for [CLS] alone (what classifiers read);
        `sequence_output` is then empty ([B,0,H])."""
        input_ids = ops.cast(inputs["input_ids"], "int32")
        input_mask = _input(inputs, "input_mask", input_ids, 1)
        segment_ids = _input(inputs, "segment_ids", input_ids, 0)
        embedding_output, word_output = self.embeddings(input_ids, segment_ids, training=training)
        rows = None
        if pooled_only:
            rows = ops.zeros_like(input_ids[:, :1])
        elif output_positions is not None:
            positions = ops.cast(output_positions, "int32")
            rows = ops.concatenate([ops.zeros_like(positions[:, :1]), positions], axis=1)
        encoded = self.transformer(embedding_output, input_mask, training=training,
                                   return_attention=return_attention, output_positions=rows)
        outputs, probs = encoded if return_attention else (encoded, None)
        last = outputs[-1]
        if rows is not None:
            outputs = outputs[:-1] + [last[:, 1:]]
        sequence_output = outputs[-1]
        pooled_output = self.pooler(last[:, 0])
        result = {"sequence_output": sequence_output, "pooled_output": pooled_output,
                  "encoder_outputs": outputs, "embedding_output": embedding_output,
                  "word_embedding_output": word_output}
        if return_attention:
            result["attention_probs"] = probs
        return result

    @property
    def embedding_table(self):
        return self.embeddings.word_embeddings

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(AlbertConfig.from_dict(config["config"]), name=config.get("name", "albert"))


class AlbertPretrainer(keras.Model):
    """Encoder + masked-LM head (tied to the word table) + sentence-order head.

    Extra input `masked_lm_positions` [B,P]; extra outputs `masked_lm_logits` [B,P,V] and
    `sentence_order_logits` [B,2], both float32 whatever the precision policy.
    `heads_only=True` (what pretraining uses) runs the last block only at the masked positions
    and [CLS]: same logits and gradients, ~6 % less work for ALBERT-base; `sequence_output` is
    then the [B,P,H] rows at `masked_lm_positions`.
    """

    def __init__(self, config: AlbertConfig, encoder: AlbertModel | None = None, **kwargs):
        kwargs.setdefault("name", "albert_pretrainer")
        super().__init__(**kwargs)
        if isinstance(config, dict):
            config = AlbertConfig.from_dict(config)
        self.config = config
        self.encoder = encoder if encoder is not None else AlbertModel(config)
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

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(AlbertConfig.from_dict(config["config"]), name=config.get("name", "albert_pretrainer"))


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
