"""In-graph (TensorFlow ops) text preprocessing that matches `albert_tf.tokenization`."""

from albert_tf.text.normalize import preprocess_text
from albert_tf.text.preprocessor import AlbertPreprocessor

__all__ = ["AlbertPreprocessor", "preprocess_text"]
