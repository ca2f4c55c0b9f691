"""SavedModel exports for TF Serving and `tf.saved_model.load`.

- `export_encoder`: TF-Hub encoder convention (`input_word_ids`, `input_mask`, `input_type_ids`
  → `pooled_output`, `sequence_output`, `encoder_outputs`), plus the original hub module's
  `tokens`, `sop` and `mlm` signatures when given an `AlbertPretrainer`.
- `export_preprocessing`: raw text → the three encoder inputs, tokenizer inside the graph.
Task exports (`tasks/glue/export.py`, `tasks/squad/export.py`) write through the same
`write_saved_model` (one version rule: `<base>/<n>`; published only when complete) and their
text signatures follow the same input rule (`text_inputs.checked_text`).
"""

from albert_tf.export.encoder import EncoderFunctions, build_module, export_encoder
from albert_tf.export.preprocessing import PreprocessingModule, export_preprocessing
from albert_tf.export.saved_model import (ExportExistsError, ServingModule, versioned_dir,
                                          write_saved_model)

__all__ = ["EncoderFunctions", "build_module", "export_encoder", "PreprocessingModule",
           "export_preprocessing", "ExportExistsError", "ServingModule", "versioned_dir",
           "write_saved_model"]
