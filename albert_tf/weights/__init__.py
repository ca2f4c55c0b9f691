"""Weights from where users hold them: one reader per format, all yielding a `WeightSource`
(TF1-named arrays + config + heads + tokenizer files), and writers back to those formats.

`open_source(path)` picks the reader from what the path holds; no format flag is needed.
Readers: `tf1` (TF1 checkpoints, output_dirs, TF-Hub v1 modules), `hf` (Hugging Face folders),
`keras_hub` (presets). Writers: `writers.write(source, output, "tf1"|"hf"|"keras_hub")`, or
`hf_writer.write_hf`, `keras_hub_writer.write_keras_hub`, `tf1_writer.write_tf1`. The name
tables: `albert_tf.checkpoint_names` (TF1, the one every reader maps to), `hf_names`,
`keras_hub_names`.
"""

from albert_tf.convert.source import HEADS, SourceError, WeightSource, open_source

__all__ = ["HEADS", "SourceError", "WeightSource", "open_source"]
