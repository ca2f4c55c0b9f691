"""TensorFlow runtime errors as one line a user can act on (a file, a record, a flag)."""

from __future__ import annotations

import re

import tensorflow as tf

from albert_tf.errors import first_line  # noqa: F401 - also imported from here
from albert_tf.io_utils import describe_disk, disk_full_reason, error_path

_SIZE = re.compile(r"Key: (\w+)\.\s*Data types don't match|Key: (\w+), Index: \d+\.\s*Number of "
                   r"(?:int64|float) values != expected\.\s*Values size: (\d+) but output shape: "
                   r"\[(\d+)\]")
# The flag that fixes each fixed-length feature's length.
LENGTH_FLAGS = {"input_ids": "--max_seq_length", "input_mask": "--max_seq_length",
                "segment_ids": "--max_seq_length", "token_boundary": "--max_seq_length",
                "p_mask": "--max_seq_length",
                "masked_lm_positions": "--max_predictions_per_seq",
                "masked_lm_ids": "--max_predictions_per_seq",
                "masked_lm_weights": "--max_predictions_per_seq"}


def describe_feature_mismatch(message: str) -> str | None:
    """'feature input_ids holds 64 values but --max_seq_length=128 expects 128' from a parse error."""
    match = _SIZE.search(str(message))
    if not match or not match.group(2):
        return None
    key, found, expected = match.group(2), match.group(3), match.group(4)
    flag = LENGTH_FLAGS.get(key)
    hint = f"{flag}={expected}" if flag else f"the reader's length {expected}"
    return (f"feature {key!r} of a record holds {found} values but {hint} expects {expected}; "
            f"pass the {flag or 'length'} the records were written with ({found})")


def describe_tf_error(error: BaseException, path: str | None = None) -> str | None:
    """One line for a TensorFlow runtime error (None when `error` is not one). `path` names the
    file being read when the caller knows it."""
    if not isinstance(error, tf.errors.OpError):
        return None
    where = f"{path}: " if path else ""
    if isinstance(error, tf.errors.DataLossError):
        return f"{where}corrupted or truncated TFRecord ({first_line(error.message)})"
    if isinstance(error, tf.errors.InvalidArgumentError):
        mismatch = describe_feature_mismatch(error.message)
        if mismatch:
            return where + mismatch
    if isinstance(error, tf.errors.ResourceExhaustedError):
        reason = disk_full_reason(error)
        if reason is not None:  # TensorFlow reports a full disk as RESOURCE_EXHAUSTED too
            path = error_path(error) or path
            return (f"{path + ': ' if path else ''}could not write it ({reason}; "
                    f"{describe_disk(path or '.')})")
        return f"{where}out of memory ({first_line(error.message)}); lower the batch size"
    return where + first_line(error.message)
