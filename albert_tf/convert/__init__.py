"""Weights from where users hold them: one reader per format, all yielding a `WeightSource`
(TF1-named arrays + config + heads + tokenizer files), and writers back to those formats.

`open_source(path)` picks the reader from what the path holds; no format flag is needed.
"""

from albert_tf.convert.source import HEADS, SourceError, WeightSource, open_source

__all__ = ["HEADS", "SourceError", "WeightSource", "open_source"]
