"""Moved to `albert_tf.weights.tf1_checkpoint` (TF1-named checkpoints over the name table
`albert_tf.weights.tf1_names`); this alias keeps `from albert_tf import checkpoint` working."""

from albert_tf.weights.tf1_checkpoint import (ArrayReader, CheckpointError,  # noqa: F401
                                              CheckpointNotFoundError, Entry, LoadReport,
                                              dimensions, encoder_entries, head_rows,
                                              load_tf1_checkpoint, load_tf1_weights,
                                              model_entries, resolve_prefix,
                                              restore_mismatch_error, save_tf1_checkpoint,
                                              tf1_weights, write_tf1_checkpoint)
