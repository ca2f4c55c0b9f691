"""Encoder SavedModel: TF-Hub encoder convention (`serving.hub_interface`: `default`, the `.mlm`
sub-object) plus the original hub module's signatures."""

from __future__ import annotations

import tensorflow as tf
# The freezing the TFLite converter uses; TensorFlow 2 has no public name for it.
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

from albert_tf.serving.hub_interface import MlmObject, named_as_saved, variable_holder
from albert_tf.serving.saved_model import (ServingModule, track_captured_variables, tracing_for_save,
                                           write_saved_model)
from albert_tf.models import AlbertModel, AlbertPretrainer

_IDS = tf.TensorSpec([None, None], tf.int32)
_HUB_INPUTS = {"input_word_ids": _IDS, "input_mask": _IDS, "input_type_ids": _IDS}


class EncoderFunctions:
    """The serving functions of an `AlbertModel` or `AlbertPretrainer` (plain Python: the
    SavedModel root holds only these functions and flat variable lists, see `build_module`)."""

    def __init__(self, model, xla: bool = False):
        self.model = model
        self.encoder = model.encoder if isinstance(model, AlbertPretrainer) else model
        if not isinstance(self.encoder, AlbertModel):
            raise TypeError(f"expected AlbertModel or AlbertPretrainer, got {type(model).__name__}")
        # Every signature calls this one function, so the encoder's graph is traced once per
        # `training` value rather than once per signature (the bulk of an export's time); the
        # runtime inlines the call, so serving runs the same ops.
        self._encoder_call = tf.function(self._run_encoder, autograph=False)
        # `xla`: the id-input serving signatures run one XLA-compiled encoder call (1.3-1.4x
        # faster at batch 1 on CPU: fused elementwise ops, no per-op dispatch). TF Serving must
        # then run with --xla_cpu_compilation_enabled=true, so it is opt-in; `__call__` (TF-Hub
        # fine-tuning, training=True) stays plain.
        self._serving_call = self._compiled_with_constant_weights() if xla else self._encoder_call

    def _compiled_with_constant_weights(self):
        """The inference encoder with its weights frozen into the graph as constants, then
        XLA-compiled. XLA lays constant weights out for its matmuls once, at compile time, where
        a variable is re-read and re-laid out at every call: 11-17 % less time per batch-1 call
        of ALBERT-base here (docs/serving.md). The weights are then saved twice (variables for `__call__`, constants
        for the signatures)."""
        traced = tf.function(self._run_encoder, autograph=False).get_concrete_function(
            _IDS, _IDS, _IDS)
        frozen = convert_variables_to_constants_v2(traced)

        def frozen_encoder(input_word_ids, input_mask, input_type_ids, training=False):
            flat = frozen(input_word_ids, input_mask, input_type_ids)  # loses the structure
            return tf.nest.pack_sequence_as(traced.structured_outputs, flat)

        return tf.function(frozen_encoder, autograph=False, jit_compile=True)

    def _run_encoder(self, input_word_ids, input_mask, input_type_ids, training=False):
        return self.encoder({"input_ids": input_word_ids, "input_mask": input_mask,
                             "segment_ids": input_type_ids}, training=training)

    def _encode(self, input_word_ids, input_mask, input_type_ids, training=False):
        call = self._encoder_call if training else self._serving_call
        return call(input_word_ids, input_mask, input_type_ids, training=training)

    def hub_call(self, inputs, training=False):
        """TF-Hub encoder convention: dict in, `encoder_outputs` a list, `default` =
        `pooled_output`."""
        out = self._hub_outputs(inputs, training, self._encoder_call)
        return {**out, "default": out["pooled_output"]}

    def _hub_outputs(self, inputs, training, call):
        out = call(inputs["input_word_ids"], inputs["input_mask"], inputs["input_type_ids"],
                   training=training)
        return {"pooled_output": out["pooled_output"], "sequence_output": out["sequence_output"],
                "encoder_outputs": out["encoder_outputs"]}

    def hub_mlm(self, inputs, training=False):
        """TF-Hub's `encoder.mlm`: the encoder outputs plus `mlm_logits` [B, P, V]."""
        out = self.hub_call(inputs, training=training)
        logits = self.model.masked_lm(out["sequence_output"], inputs["masked_lm_positions"],
                                      self.encoder.embedding_table)
        return {**out, "mlm_logits": logits}

    def serve(self, inputs):
        """Dict in, flat dict out (signatures need flat tensors: `encoder_outputs` is stacked
        into [L·K, B, S, H]); `keras.layers.TFSMLayer(path)` calls this endpoint."""
        out = self._hub_outputs(inputs, False, self._serving_call)
        return {**out, "default": out["pooled_output"],
                "encoder_outputs": tf.stack(out["encoder_outputs"])}

    def serving_default(self, input_word_ids, input_mask, input_type_ids):
        return self.serve({"input_word_ids": input_word_ids, "input_mask": input_mask,
                           "input_type_ids": input_type_ids})

    # The original TF1 hub module's signatures: `tokens`, `sop` and `mlm`.
    def tokens(self, input_ids, input_mask, segment_ids):
        out = self._encode(input_ids, input_mask, segment_ids)
        return {"sequence_output": out["sequence_output"], "pooled_output": out["pooled_output"]}

    def sop(self, input_ids, input_mask, segment_ids):
        out = self._encode(input_ids, input_mask, segment_ids)
        logits = self.model.sentence_order(out["pooled_output"])
        return {"sequence_output": out["sequence_output"], "pooled_output": out["pooled_output"],
                "sop_log_probs": tf.nn.log_softmax(logits, axis=-1)}

    def mlm(self, input_ids, input_mask, segment_ids, mlm_positions):
        out = self._encode(input_ids, input_mask, segment_ids)
        logits = self.model.masked_lm(out["sequence_output"], mlm_positions,
                                      self.encoder.embedding_table)
        return {"sequence_output": out["sequence_output"], "pooled_output": out["pooled_output"],
                "mlm_logits": tf.reshape(logits, [-1, tf.shape(logits)[-1]])}  # [B·M, V], as the original


def build_module(model, sop: bool = True, xla: bool = False):
    """See `_build_module`; traced as `tf.saved_model.save` will look the functions up."""
    with tracing_for_save():
        return _build_module(model, sop, xla)


def _build_module(model, sop: bool = True, xla: bool = False):
    """(root module, signatures); `sop=False`: an `AlbertPretrainer` from a source without the
    sentence-order head (the `mlm` parts only); `xla`: see `EncoderFunctions`.

    The root holds the captured variables and tf.functions that reach the Keras model only
    through Python closures: the layout keras.export uses, which every loader restores. Its
    variable lists are the encoder's; with pretraining heads, `root.mlm` (TF Hub's sub-object)
    lists the encoder's and the MLM head's, and `root.pretraining_heads` saves what the TF1
    `sop` and `mlm` signatures use.
    """
    functions = EncoderFunctions(model, xla)
    root = ServingModule()
    root.__call__ = tf.function(functions.hub_call, autograph=False)
    # Both traces, so a reloaded encoder serves fine-tuning too.
    hub_inputs = named_as_saved(_HUB_INPUTS, "inputs")
    traced = [root.__call__.get_concrete_function(hub_inputs, training=t) for t in (False, True)]
    root.serve = tf.function(functions.serve, input_signature=[_HUB_INPUTS], autograph=False)
    root.serving_default = tf.function(functions.serving_default, input_signature=[_IDS] * 3,
                                       autograph=False)
    root.tokens = tf.function(functions.tokens, input_signature=[_IDS] * 3, autograph=False)
    signatures = {"serving_default": root.serving_default, "tokens": root.tokens}
    traced += [f.get_concrete_function() for f in (root.serve, *signatures.values())]
    track_captured_variables(root, traced)
    if isinstance(model, AlbertPretrainer):
        # The TF1 hub module's `mlm` signature; `root.mlm` is TF Hub's TF2 sub-object.
        root.tf1_mlm = tf.function(functions.mlm, input_signature=[_IDS] * 4, autograph=False)
        signatures["mlm"] = root.tf1_mlm
        if sop:
            root.sop = tf.function(functions.sop, input_signature=[_IDS] * 3, autograph=False)
            signatures["sop"] = root.sop
        root.pretraining_heads = variable_holder(
            [root.tf1_mlm] + ([root.sop] if sop else []))
        root.mlm = MlmObject(functions.hub_mlm)
    return root, signatures


def export_encoder(model, base_dir, version: int | None = None, verify=None,
                   xla: bool = False) -> str:
    """Writes the encoder SavedModel to `<base_dir>/<version>` (with `mlm`/`sop` when `model` is
    an `AlbertPretrainer`); see `write_saved_model` for `version` and `verify`, and
    `EncoderFunctions` for `xla`."""
    root, signatures = build_module(model, xla=xla)
    return write_saved_model(root, base_dir, signatures, version, verify)
