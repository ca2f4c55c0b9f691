"""Encoder SavedModel: TF-Hub encoder convention plus the original hub module's signatures."""

from __future__ import annotations

import tensorflow as tf

from albert_tf.export.saved_model import write_saved_model
from albert_tf.models import AlbertModel, AlbertPretrainer

_IDS = tf.TensorSpec([None, None], tf.int32)


def seed_generator_states(model) -> list:
    states = []
    for layer in model._flatten_layers():
        generator = getattr(layer, "seed_generator", None)
        if generator is not None:
            states.append(generator.state)
    return states


class EncoderModule(tf.__internal__.tracking.AutoTrackable):
    """Holds the Keras model once (shared layers are saved once) and exposes its functions.

    `__call__(inputs, training=False)` follows the TF-Hub encoder convention (dict in, dict out
    with `encoder_outputs` a list). Signatures must return flat tensors, so there
    `encoder_outputs` is stacked into [L·K, B, S, H].
    """

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.encoder = model.encoder if isinstance(model, AlbertPretrainer) else model
        if not isinstance(self.encoder, AlbertModel):
            raise TypeError(f"expected AlbertModel or AlbertPretrainer, got {type(model).__name__}")
        # Keras dropout keeps its RNG state in seed generators that TF's object graph does not
        # reach; track them here so the training=True trace can be saved.
        self.dropout_seed_states = seed_generator_states(self.encoder)
        # TF-Hub's reusable-SavedModel attributes, so a reloaded object can be fine-tuned.
        self.variables = list(self.encoder.weights)
        self.trainable_variables = list(self.encoder.trainable_weights)
        self.regularization_losses = []
        if isinstance(model, AlbertPretrainer):  # heads exist: add the hub module's head signatures
            self.sop = tf.function(self._sop, input_signature=[_IDS, _IDS, _IDS])
            self.mlm = tf.function(self._mlm, input_signature=[_IDS, _IDS, _IDS, _IDS])

    def _encode(self, input_word_ids, input_mask, input_type_ids, training=False):
        return self.encoder({"input_ids": input_word_ids, "input_mask": input_mask,
                             "segment_ids": input_type_ids}, training=training)

    @tf.function
    def __call__(self, inputs, training=False):
        out = self._encode(inputs["input_word_ids"], inputs["input_mask"], inputs["input_type_ids"],
                           training=training)
        return {"pooled_output": out["pooled_output"], "sequence_output": out["sequence_output"],
                "encoder_outputs": out["encoder_outputs"]}

    @tf.function(input_signature=[{"input_word_ids": _IDS, "input_mask": _IDS, "input_type_ids": _IDS}])
    def serve(self, inputs):
        """Dict in, flat dict out: the endpoint `keras.layers.TFSMLayer(path)` calls by default."""
        out = self._encode(inputs["input_word_ids"], inputs["input_mask"], inputs["input_type_ids"])
        return {"pooled_output": out["pooled_output"], "sequence_output": out["sequence_output"],
                "encoder_outputs": tf.stack(out["encoder_outputs"])}

    @tf.function(input_signature=[_IDS, _IDS, _IDS])
    def serving_default(self, input_word_ids, input_mask, input_type_ids):
        return self.serve({"input_word_ids": input_word_ids, "input_mask": input_mask,
                           "input_type_ids": input_type_ids})

    # The original TF1 hub module's signatures (spec §11.2), for pretraining checkpoints.
    @tf.function(input_signature=[_IDS, _IDS, _IDS])
    def tokens(self, input_ids, input_mask, segment_ids):
        out = self._encode(input_ids, input_mask, segment_ids)
        return {"sequence_output": out["sequence_output"], "pooled_output": out["pooled_output"]}

    def _sop(self, input_ids, input_mask, segment_ids):
        out = self._encode(input_ids, input_mask, segment_ids)
        logits = self.model.sentence_order(out["pooled_output"])
        return {"sequence_output": out["sequence_output"], "pooled_output": out["pooled_output"],
                "sop_log_probs": tf.nn.log_softmax(logits, axis=-1)}

    def _mlm(self, input_ids, input_mask, segment_ids, mlm_positions):
        out = self._encode(input_ids, input_mask, segment_ids)
        logits = self.model.masked_lm(out["sequence_output"], mlm_positions,
                                      self.encoder.embedding_table)
        return {"sequence_output": out["sequence_output"], "pooled_output": out["pooled_output"],
                "mlm_logits": tf.reshape(logits, [-1, tf.shape(logits)[-1]])}  # [B·M, V], as the original

    def signatures(self) -> dict:
        result = {"serving_default": self.serving_default, "tokens": self.tokens}
        if isinstance(self.model, AlbertPretrainer):
            result.update(sop=self.sop, mlm=self.mlm)
        return result


def export_encoder(model, export_dir) -> str:
    """Writes the encoder SavedModel (with `mlm`/`sop` when `model` is an `AlbertPretrainer`)."""
    module = EncoderModule(model)
    specs = {"input_word_ids": _IDS, "input_mask": _IDS, "input_type_ids": _IDS}
    for training in (False, True):  # trace both so reloaded __call__ serves fine-tuning too
        module.__call__.get_concrete_function(specs, training=training)
    return write_saved_model(module, export_dir, module.signatures())
