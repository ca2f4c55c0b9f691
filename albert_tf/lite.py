"""Alias of `albert_tf.serving.lite` (running the TFLite files on raw text lives there now);
kept for `from albert_tf.lite import LiteClassifier, LiteEncoder`."""

from albert_tf.serving.lite import LiteClassifier, LiteEncoder, LiteRunner, interpreter_runner

__all__ = ["LiteClassifier", "LiteEncoder", "LiteRunner", "interpreter_runner"]
