"""What every in-graph text preprocessor shares: one or two [B] string segments in, the packed
int32 [B, max_seq_length] model inputs out (`packing.pack`). Subclasses give `tokenize`."""

from __future__ import annotations

import keras
import tensorflow as tf

from albert_tf.text import packing

_STRINGS = tf.TensorSpec([None], tf.string)


class TextPreprocessorLayer(keras.layers.Layer):
    """Base of `AlbertPreprocessor` (SentencePiece) and `WordpiecePreprocessor`.

    Subclasses set `cls_id`, `sep_id` and `SOURCE_KEY` (the constructor argument naming the
    tokenizer file, kept in `get_config`) and implement `tokenize([B] strings) -> [B, (ids)]`.
    """

    SOURCE_KEY = ""

    def __init__(self, source_file, max_seq_length: int, do_lower_case: bool = True, **kwargs):
        kwargs.setdefault("trainable", False)
        super().__init__(**kwargs)
        if max_seq_length < 3:
            raise ValueError(f"max_seq_length must be at least 3, got {max_seq_length}")
        self.source_file = source_file
        self.max_seq_length = int(max_seq_length)
        self.do_lower_case = bool(do_lower_case)
        # Strings are not Keras tensors: skip Keras' input conversion and autocasting.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def tokenize_strings(self, strings) -> tf.RaggedTensor:
        """`tokenize` of a [B] string tensor as one graph function per layer: the signatures of
        an export that tokenize (and both segments of a pair) call it, where each used to trace
        the text rules and the search again (most of a preprocessing export's time)."""
        return self.tokenize(strings)

    def call(self, inputs):
        name = type(self).__name__
        if isinstance(inputs, dict):
            raise TypeError(f"{name} takes a [B] string tensor or a (A, B) pair, got a dict "
                            f"with keys {sorted(inputs)}")
        if isinstance(inputs, (tuple, list)):
            if len(inputs) == 1:
                inputs = inputs[0]
            elif len(inputs) != 2:
                raise ValueError(f"{name} takes one or two segments, got {len(inputs)}")
        if isinstance(inputs, (tuple, list)):
            ids_a, ids_b = (self.tokenize_strings(self._as_strings(x, i))
                            for i, x in enumerate(inputs))
        else:
            ids_a, ids_b = self.tokenize_strings(self._as_strings(inputs, 0)), None
        return packing.pack(ids_a, ids_b, self.max_seq_length, self.cls_id, self.sep_id)

    def _as_strings(self, value, index: int) -> tf.Tensor:
        name = type(self).__name__
        tensor = tf.convert_to_tensor(value)
        if tensor.dtype != tf.string:
            raise TypeError(f"{name} segment {index} must be strings, got {tensor.dtype}")
        if tensor.shape.rank == 2 and tensor.shape[-1] == 1:  # keras.Input(shape=(1,))
            tensor = tf.squeeze(tensor, -1)
        if tensor.shape.rank != 1:
            raise ValueError(f"{name} segment {index} must be a [B] vector (or [B, 1]), got "
                             f"shape {tensor.shape}")
        return tensor

    def compute_output_spec(self, inputs):
        shape = (None, self.max_seq_length)
        return {name: keras.KerasTensor(shape, dtype="int32")
                for name in ("input_ids", "input_mask", "segment_ids")}

    def get_config(self):
        config = super().get_config()
        config.update({self.SOURCE_KEY: self.source_file, "max_seq_length": self.max_seq_length,
                       "do_lower_case": self.do_lower_case})
        return config
