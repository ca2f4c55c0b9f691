"""SQuAD span heads on the ALBERT encoder, with the original's variables and losses.

`AlbertSquadV1`: one [2, H] projection → start/end logits, over every position (the original's
v1.1 head masks nothing).
`AlbertSquadV2`: masked start log-probs, end log-probs conditioned on a start (teacher-forced in
training, beam over start_n_top × end_n_top at inference) and an answerability logit.
Their names in each weight format are their `FORMATS`.
"""

from __future__ import annotations

import keras
from keras import ops

from albert_tf.config import AlbertConfig
from albert_tf.layers.dense import Dense, matmul_last
from albert_tf.layers.gather import gather_rows
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.normalization import LayerNorm
from albert_tf.models.base import AlbertTaskModel
from albert_tf.models.encoder import AlbertModel
from albert_tf.models.formats import HeadFormats, projection_formats

NEG_INF = 1e30


def _encoder_inputs(inputs):
    return {k: inputs[k] for k in ("input_ids", "input_mask", "segment_ids") if k in inputs}


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertSquadV1(AlbertTaskModel):
    """Outputs `start_logits`, `end_logits` [B, S] (float32); the original calls them log probs."""

    HEAD_ID = "squad_v1"
    HEADS = (HEAD_ID,)
    FORMATS = {HEAD_ID: projection_formats("cls/squad/", 2, "qa_outputs",
                                           hf_class="AlbertForQuestionAnswering", hf_pooler=False)}
    TFLITE_NAME = "squad"
    TFLITE_OUTPUTS = ("start_logits", "end_logits")
    SERVING = "albert_tf.tasks.squad.export:export_head"

    def __init__(self, config: AlbertConfig, encoder: AlbertModel | None = None, **kwargs):
        kwargs.setdefault("name", "squad_v1")
        super().__init__(config, encoder, **kwargs)
        hidden = self.config.hidden_size
        # The head computes in float32: autocast=False keeps a bfloat16 policy from rounding
        # the weights to bfloat16 when they are read (and from adding a bfloat16 bias to
        # float32 logits, which TensorFlow refuses).
        self.output_weights = self.add_weight(
            name="output_weights", shape=(2, hidden), autocast=False,
            initializer=truncated_normal(0.02))  # the original hard-codes 0.02 here
        self.output_bias = self.add_weight(name="output_bias", shape=(2,), initializer="zeros",
                                           autocast=False)

    def call(self, inputs, training=False):
        sequence = self.encoder(_encoder_inputs(inputs), training=training)["sequence_output"]
        # A matmul, not einsum: TFLite's einsum lowering bakes the traced batch into a reshape.
        logits = matmul_last(ops.cast(sequence, "float32"),
                             ops.transpose(ops.cast(self.output_weights, "float32"))) + self.output_bias
        return {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}


def squad_v1_loss(outputs, features):
    """½ (CE(start) + CE(end)), each averaged over the batch."""
    def cross_entropy(logits, positions):
        return ops.mean(keras.losses.sparse_categorical_crossentropy(
            ops.cast(positions, "int32"), logits, from_logits=True))
    return 0.5 * (cross_entropy(outputs["start_logits"], features["start_positions"]) +
                  cross_entropy(outputs["end_logits"], features["end_positions"]))


def _masked(logits, p_mask):
    return logits * (1.0 - p_mask) - NEG_INF * p_mask


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertSquadV2(AlbertTaskModel):
    """Inputs add `p_mask` [B,S] (1 = not an answer position) and, for training,
    `start_positions` [B] (teacher forcing of the end head).

    Training outputs: `start_log_probs`, `end_log_probs` [B,S], `cls_logits` [B].
    Inference outputs: `start_top_log_probs`, `start_top_index` [B, start_n_top],
    `end_top_log_probs`, `end_top_index` [B, start_n_top·end_n_top], `cls_logits` [B].
    """

    HEAD_ARGUMENTS = ("start_n_top", "end_n_top", "dropout_prob")
    HEAD_ID = "squad_v2"
    HEADS = (HEAD_ID,)
    # Hugging Face and keras-hub have no such head. The answerability layer has no bias.
    FORMATS = {HEAD_ID: HeadFormats(tf1=(
        ("start_logits/dense/kernel", "start_dense.kernel", ("hidden_size", 1)),
        ("start_logits/dense/bias", "start_dense.bias", (1,)),
        ("end_logits/dense_0/kernel", "end_dense_0.kernel", ("2*hidden_size", "hidden_size")),
        ("end_logits/dense_0/bias", "end_dense_0.bias", ("hidden_size",)),
        ("end_logits/LayerNorm/beta", "end_layer_norm.beta", ("hidden_size",)),
        ("end_logits/LayerNorm/gamma", "end_layer_norm.gamma", ("hidden_size",)),
        ("end_logits/dense_1/kernel", "end_dense_1.kernel", ("hidden_size", 1)),
        ("end_logits/dense_1/bias", "end_dense_1.bias", (1,)),
        ("answer_class/dense_0/kernel", "answer_dense_0.kernel", ("2*hidden_size", "hidden_size")),
        ("answer_class/dense_0/bias", "answer_dense_0.bias", ("hidden_size",)),
        ("answer_class/dense_1/kernel", "answer_dense_1.kernel", ("hidden_size", 1)),
    ))}
    SERVING = "albert_tf.tasks.squad.export:export_head"
    # No TFLite form: the answerability beam search needs dynamic shapes.

    def __init__(self, config: AlbertConfig, start_n_top: int = 5, end_n_top: int = 5,
                 dropout_prob: float = 0.1, encoder: AlbertModel | None = None, **kwargs):
        kwargs.setdefault("name", "squad_v2")
        super().__init__(config, encoder, **kwargs)
        self.start_n_top, self.end_n_top, self.dropout_prob = start_n_top, end_n_top, dropout_prob
        hidden, init = self.config.hidden_size, truncated_normal(self.config.initializer_range)
        self.start_dense = Dense(1, kernel_initializer=init, name="start_dense")
        self.end_dense_0 = Dense(hidden, activation="tanh", kernel_initializer=init,
                                              name="end_dense_0")
        self.end_layer_norm = LayerNorm(name="end_LayerNorm")
        self.end_dense_1 = Dense(1, kernel_initializer=init, name="end_dense_1")
        self.answer_dense_0 = Dense(hidden, activation="tanh",
                                                 kernel_initializer=init, name="answer_dense_0")
        self.answer_dropout = keras.layers.Dropout(dropout_prob)
        self.answer_dense_1 = Dense(1, use_bias=False, kernel_initializer=init,
                                                 name="answer_dense_1")
        for layer, width in ((self.start_dense, hidden), (self.end_dense_0, 2 * hidden),
                             (self.end_layer_norm, hidden), (self.end_dense_1, hidden),
                             (self.answer_dense_0, 2 * hidden), (self.answer_dense_1, hidden)):
            layer.build((None, width))

    def _end_logits(self, sequence, start_states, p_mask):
        """sequence [B,S,H], start_states [B,...,H] broadcast over S → masked end log-probs."""
        joined = ops.concatenate([sequence, ops.broadcast_to(start_states, ops.shape(sequence))],
                                 axis=-1)
        hidden = self.end_layer_norm(self.end_dense_0(joined))
        logits = ops.cast(ops.squeeze(self.end_dense_1(hidden), -1), "float32")
        return ops.log_softmax(_masked(logits, p_mask), axis=-1)

    def call(self, inputs, training=False):
        sequence = self.encoder(_encoder_inputs(inputs), training=training)["sequence_output"]
        p_mask = ops.cast(inputs["p_mask"], "float32")
        start_logits = ops.cast(ops.squeeze(self.start_dense(sequence), -1), "float32")
        start_masked = _masked(start_logits, p_mask)
        start_log_probs = ops.log_softmax(start_masked, axis=-1)
        outputs = {}
        if "start_positions" in inputs:
            positions = ops.cast(inputs["start_positions"], "int32")
            start_states = gather_rows(sequence, positions[:, None])  # [B,1,H]
            outputs["start_log_probs"] = start_log_probs
            outputs["end_log_probs"] = self._end_logits(sequence, start_states, p_mask)
        else:
            top_log_probs, top_index = ops.top_k(start_log_probs, k=self.start_n_top)
            start_states = gather_rows(sequence, top_index)  # [B,k,H]
            tiled = ops.repeat(sequence[:, None], self.start_n_top, axis=1)             # [B,k,S,H]
            end_log_probs = self._end_logits(tiled, start_states[:, :, None], p_mask[:, None])
            end_top_log_probs, end_top_index = ops.top_k(end_log_probs, k=self.end_n_top)
            flat = self.start_n_top * self.end_n_top
            outputs.update(start_top_log_probs=top_log_probs, start_top_index=top_index,
                           end_top_log_probs=ops.reshape(end_top_log_probs, (-1, flat)),
                           end_top_index=ops.reshape(end_top_index, (-1, flat)))
        start_weights = ops.softmax(start_masked, axis=-1)
        start_feature = ops.einsum("bs,bsh->bh", ops.cast(start_weights, sequence.dtype), sequence)
        answer_input = ops.concatenate([start_feature, sequence[:, 0]], axis=-1)
        hidden = self.answer_dropout(self.answer_dense_0(answer_input), training=training)
        outputs["cls_logits"] = ops.cast(ops.squeeze(self.answer_dense_1(hidden), -1), "float32")
        return outputs


def squad_v2_loss(outputs, features):
    """½ (NLL(start) + NLL(end)) + ½ · mean sigmoid-CE(cls_logits, is_impossible)."""
    def nll(log_probs, positions):
        picked = ops.take_along_axis(ops.cast(log_probs, "float32"),
                                     ops.cast(positions, "int32")[:, None], axis=1)
        return -ops.mean(picked)
    span = 0.5 * (nll(outputs["start_log_probs"], features["start_positions"]) +
                  nll(outputs["end_log_probs"], features["end_positions"]))
    labels = ops.cast(features["is_impossible"], "float32")
    logits = ops.cast(outputs["cls_logits"], "float32")
    answer = ops.mean(ops.binary_crossentropy(labels[:, None], logits[:, None], from_logits=True))
    return span + 0.5 * answer
