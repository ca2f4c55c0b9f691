"""Serving: SavedModels for TF Serving and `tf.saved_model.load`, TFLite files, and running them.

- `saved_model`: the one way a SavedModel is written (`write_saved_model`, `<base>/<n>`
  version folders, published only when complete) and its `ServingModule` root.
- `encoder`: TF-Hub encoder convention (`input_word_ids`, `input_mask`, `input_type_ids`
  → `pooled_output`, `sequence_output`, `encoder_outputs`), plus the original hub module's
  `tokens`, `sop` and `mlm` signatures when given an `AlbertPretrainer`.
- `preprocessing`: raw text → the three encoder inputs, tokenizer inside the graph.
- `hub_interface`: TF Hub's reusable-SavedModel interface on both (`default`, the encoder's
  `.mlm`, the preprocessor's `tokenize` and `bert_pack_inputs`).
- `text_inputs`: the input rule of every raw-text signature (`checked_text`).
- `verify`: loading an export in a fresh process and comparing its answers.
- `reference`: the Keras model a weight source holds and the outputs an export must match.
- `publish`: the folders of one export (a SavedModel, its TFLite files in `<base>/tflite/<n>`)
  staged under temporary names and published together at the next free version.
- `tflite`: TFLite conversion (builtin ops only); `tflite_file`: a .tflite file checked before
  an interpreter opens it; `lite`: running those files on raw text.

Task exports (`tasks/glue/export.py`, `tasks/squad/export.py`) write through the same
`write_saved_model` and follow the same text input rule; `albert_tf.source_export` (above the
tasks) exports everything a weight source holds.

This package file imports nothing, so `albert_tf.serving.lite` (a device-side runner) does not
pull in TensorFlow's model code; `albert_tf.export` keeps the old re-exports.
"""
