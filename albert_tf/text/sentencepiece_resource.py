"""tensorflow-text's SentencePiece tokenizer with a model resource that survives a new seed.

Built eagerly, the op's model resource belongs to the op's kernel, and TensorFlow drops its
eager kernels whenever the global seed is set: after `keras.utils.set_random_seed(...)` (or
`tf.random.set_seed`) every tokenizer built before failed with "Resource .../SentencepieceOp/...
does not exist". `sentencepiece_tokenizer` gives the tokenizer a model resource of its own
name, destroyed with the tokenizer. Traced for a SavedModel, the resource is created as
tensorflow-text creates it, so exports are unchanged.
"""

from __future__ import annotations

import sys
import uuid

import tensorflow as tf


def _op_module(tokenizer):
    """tensorflow-text's generated op wrappers, from the tokenizer class's own module (not public
    API: None if they move)."""
    module = sys.modules.get(type(tokenizer).__module__)
    return getattr(module, "gen_sentencepiece_tokenizer", None)


class SentencepieceModel(tf.saved_model.experimental.TrackableResource):
    """The SentencePiece model resource: named and destroyed by this object when eager."""

    def __init__(self, ops, model_proto: bytes):
        super().__init__()
        self._ops = ops
        self._model = model_proto
        self._eager_handle = None
        _ = self.resource_handle  # created now, as tensorflow-text does

    def _create_resource(self):
        if tf.executing_eagerly():
            self._eager_handle = self._ops.sentencepiece_op(
                model=self._model, shared_name=f"albert_tf_sentencepiece_{uuid.uuid4().hex}")
            return self._eager_handle
        # Traced for a SavedModel: the op's own resource, as tensorflow-text creates it.
        return self._ops.sentencepiece_op(model=self._model)

    def _destroy_resource(self):
        # Only the handle this object made eagerly (a SavedModel's copy holds a graph handle).
        handle = self._eager_handle
        if handle is not None and handle is self._resource_handle and tf.executing_eagerly():
            tf.raw_ops.DestroyResourceOp(resource=handle, ignore_lookup_error=True)


def sentencepiece_tokenizer(text_ops, model_proto: bytes, out_type=tf.int32):
    """`text_ops.SentencepieceTokenizer(model=model_proto, out_type=out_type)` whose model
    resource outlives a new global seed (the module docstring)."""
    tokenizer = text_ops.SentencepieceTokenizer(model=model_proto, out_type=out_type)
    ops = _op_module(tokenizer)
    if (tf.executing_eagerly() and ops is not None and hasattr(ops, "sentencepiece_op")
            and hasattr(tokenizer, "_model_resource")):
        tokenizer._model_resource = SentencepieceModel(ops, model_proto)
    return tokenizer
