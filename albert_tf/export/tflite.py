"""Alias of `albert_tf.serving.tflite` (TFLite conversion lives there now); kept for
`albert_tf.export.tflite.export_tflite(model, folder, max_seq_length, kinds)`."""

from albert_tf.serving.tflite import (FLOAT32_ATOL, INPUT_NAMES, KINDS, TFLiteExportError,
                                      check_builtin_only, convert, default_heads, export_tflite,
                                      operators, parse_kinds, sample_inputs, serving_function)

__all__ = ["FLOAT32_ATOL", "INPUT_NAMES", "KINDS", "TFLiteExportError", "check_builtin_only",
           "convert", "default_heads", "export_tflite", "operators", "parse_kinds",
           "sample_inputs", "serving_function"]
