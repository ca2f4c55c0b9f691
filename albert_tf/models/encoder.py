"""`AlbertModel`: the ALBERT encoder (embeddings, shared transformer blocks, pooler)."""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers import AlbertEmbeddings, AlbertTransformer
from albert_tf.layers.dense import Dense
from albert_tf.layers.initializers import truncated_normal


def as_albert_config(config) -> AlbertConfig:
    """`config` as an `AlbertConfig`; a dict (what `get_config` stores) is converted."""
    return AlbertConfig.from_dict(config) if isinstance(config, dict) else config


def _input(inputs, name, like=None, fill=0):
    value = inputs.get(name) if isinstance(inputs, dict) else None
    if value is None:
        return ops.full(ops.shape(like), fill, dtype="int32")
    return ops.cast(value, "int32")


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertModel(keras.Model):
    """The ALBERT encoder: `{"input_ids", "input_mask", "segment_ids"}` (int32 [B,S]) →
    `sequence_output` [B,S,H], `pooled_output` [B,H], `encoder_outputs` (L·K × [B,S,H]),
    `embedding_output` [B,S,E] (after LayerNorm, before the E→H projection)."""

    # The encoder's TFLite file (as on `AlbertTaskModel`); the encoder itself has no head.
    TFLITE_NAME = "encoder"
    TFLITE_OUTPUTS = ("pooled_output", "sequence_output")

    def __init__(self, config: AlbertConfig, **kwargs):
        kwargs.setdefault("name", "albert")
        super().__init__(**kwargs)
        self.config = c = as_albert_config(config)
        self.embeddings = AlbertEmbeddings(
            c.vocab_size, c.embedding_size, c.type_vocab_size, c.max_position_embeddings,
            c.initializer_range, c.hidden_dropout_prob, name="embeddings")
        self.transformer = AlbertTransformer(c, name="transformer")
        self.pooler = Dense(
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
