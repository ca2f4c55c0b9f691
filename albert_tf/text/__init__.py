"""In-graph (TensorFlow ops) text preprocessing that matches `albert_tf.tokenization`."""

from albert_tf.text.normalize import preprocess_text
from albert_tf.text.preprocessor import AlbertPreprocessor
from albert_tf.text.wordpiece import WordpiecePreprocessor, text_preprocessor

__all__ = ["AlbertPreprocessor", "WordpiecePreprocessor", "preprocess_text", "text_preprocessor"]
