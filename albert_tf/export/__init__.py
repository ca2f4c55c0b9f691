"""Alias of `albert_tf.serving` (the SavedModel exports live there now); kept for users'
imports such as `albert_tf.export.export_encoder` and `albert_tf.export.tflite.export_tflite`."""

from albert_tf.serving.encoder import EncoderFunctions, build_module, export_encoder
from albert_tf.serving.preprocessing import PreprocessingModule, export_preprocessing
from albert_tf.serving.saved_model import (ExportExistsError, ServingModule, versioned_dir,
                                           write_saved_model)

__all__ = ["EncoderFunctions", "build_module", "export_encoder", "PreprocessingModule",
           "export_preprocessing", "ExportExistsError", "ServingModule", "versioned_dir",
           "write_saved_model"]
