"""TF Hub's reusable-SavedModel interface of BERT/ALBERT encoders and preprocessors, on our
exports (next to our own signatures), so code written for TF Hub's `albert_en_base` and
`*_preprocess` models runs on them unchanged (`hub.load`, `hub.KerasLayer`):

* encoder: `encoder(inputs)` → `default`, `pooled_output`, `sequence_output`,
  `encoder_outputs`; with an MLM head, the sub-object `encoder.mlm` (`MlmObject`):
  `encoder.mlm(dict(inputs, masked_lm_positions=...))` → the same plus `mlm_logits` [B, P, V];
  its variables are the encoder's and the MLM head's, the encoder's own exclude the head;
* preprocessing: `preprocess(strings)` → the packed encoder inputs at the export's length;
  `preprocess.tokenize(strings)` → int32 [B, (words), (pieces)] with
  `preprocess.tokenize.get_special_tokens_dict()`; `preprocess.bert_pack_inputs(segments,
  seq_length=...)` (`text.hub_preprocessing` has the rules and where they differ from TF Hub's).
"""

from __future__ import annotations

import tensorflow as tf

from albert_tf.serving.saved_model import ServingModule, track_captured_variables
from albert_tf.serving.text_inputs import checked_text
from albert_tf.text.hub_preprocessing import HubPreprocessing

_IDS = tf.TensorSpec([None, None], tf.int32)
MLM_INPUTS = {"input_word_ids": _IDS, "input_mask": _IDS, "input_type_ids": _IDS,
              "masked_lm_positions": _IDS}
_TEXT = tf.TensorSpec([None], tf.string)


def named_as_saved(specs: dict, argument: str) -> dict:
    """`specs` named as `tf.saved_model.save` names the tensors of a dict `argument`: save looks
    each trace up again by its specs, names included, and traced unnamed ones a second time."""
    return {key: tf.TensorSpec(spec.shape, spec.dtype, name=f"{argument}_{key}")
            for key, spec in specs.items()}


class MlmObject(ServingModule):
    """`encoder.mlm`: callable on the encoder inputs plus `masked_lm_positions` [B, P]; holds
    (as TF Hub's reusable SavedModels do) the variables its call uses."""

    def __init__(self, hub_mlm):
        super().__init__(name="mlm")
        self.__call__ = tf.function(hub_mlm, autograph=False)
        # Both traces, so `hub.KerasLayer(encoder.mlm, trainable=True)` can fine-tune it.
        traced = [self.__call__.get_concrete_function(named_as_saved(MLM_INPUTS, "inputs"),
                                                      training=t)
                  for t in (False, True)]
        track_captured_variables(self, traced)


def variable_holder(functions) -> ServingModule:
    """A module holding what `functions` capture: variables that the root must not list as
    its own (the pretraining heads of the TF1 `sop`/`mlm` signatures) but the SavedModel must
    still save."""
    holder = ServingModule()
    track_captured_variables(holder, [f.get_concrete_function() for f in functions])
    return holder


class SpecialTokens(tf.Module):
    def __init__(self, special: dict):
        super().__init__(name="get_special_tokens_dict")
        values = dict(special)
        self.__call__ = tf.function(
            lambda: {k: tf.constant(v, tf.int32) for k, v in values.items()}, input_signature=[],
            autograph=False)


def _checked(strings):
    # Invalid UTF-8 is refused, as by every raw-text signature of ours (was tokenized silently).
    return checked_text(strings=strings)["strings"]


class Tokenize(tf.Module):
    """`preprocess.tokenize`: [B] strings → int32 [B, (words), (pieces)]."""

    def __init__(self, hub: HubPreprocessing):
        super().__init__(name="tokenize")
        self.__call__ = tf.function(lambda strings: hub.tokenize(_checked(strings)),
                                    input_signature=[_TEXT], autograph=False)
        self.get_special_tokens_dict = SpecialTokens(hub.special)


class BertPackInputs(tf.Module):
    """`preprocess.bert_pack_inputs(segments, seq_length=default)`: 1 or 2 RaggedTensors of
    ragged rank 1 or 2 (every combination is traced, as the loaded function only takes the
    traced ones)."""

    def __init__(self, hub: HubPreprocessing, default_seq_length: int):
        super().__init__(name="bert_pack_inputs")
        default = int(default_seq_length)

        def call(inputs, seq_length=default):
            return hub.pack(inputs, seq_length)

        self.__call__ = tf.function(call, autograph=False)
        for rank in (1, 2):
            spec = tf.RaggedTensorSpec([None] * (rank + 1), tf.int32, ragged_rank=rank)
            for count in (1, 2):
                # The spec named as save names it, so save reuses these traces (an unnamed one
                # was traced again there).
                self.__call__.get_concrete_function(
                    [spec] * count, seq_length=tf.TensorSpec([], tf.int32, name="seq_length"))


def attach_preprocessing(module: tf.Module, preprocessor, default_seq_length: int) -> None:
    """Gives a preprocessing export's root TF Hub's preprocessor interface (see the module
    docstring); `module` already holds the tokenizer's resources."""
    hub = HubPreprocessing(preprocessor)
    length = int(default_seq_length)
    module.__call__ = tf.function(lambda strings: hub(_checked(strings), length),
                                  input_signature=[_TEXT], autograph=False)
    module.tokenize = Tokenize(hub)
    module.bert_pack_inputs = BertPackInputs(hub, length)
