"""TFRecord feature names and types, defined once for the writers and the readers."""

from __future__ import annotations

import tensorflow as tf


def int_feature(values) -> tf.train.Feature:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


def float_feature(values) -> tf.train.Feature:
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(values)))


def pretraining_features(max_seq_length: int, max_predictions_per_seq: int) -> dict:
    """Parsing spec of the original's pretraining records (`create_pretraining_data` output).

    `next_sentence_labels` holds the sentence-order label (1 = segments swapped); the name is
    the original's. `token_boundary` is written by the generator but not needed to train.
    """
    seq, preds = max_seq_length, max_predictions_per_seq
    return {
        "input_ids": tf.io.FixedLenFeature([seq], tf.int64),
        "input_mask": tf.io.FixedLenFeature([seq], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([seq], tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature([preds], tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature([preds], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature([preds], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


PRETRAINING_WRITE_ORDER = ("input_ids", "input_mask", "segment_ids", "token_boundary",
                           "masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
                           "next_sentence_labels")


def classifier_features(max_seq_length: int, regression: bool = False, multi_label: int = 0,
                        windows: bool = False) -> dict:
    """Parsing spec of the original's GLUE feature records (`label_ids` is float for STS-B).
    Ours on top: `multi_label` > 0 makes `label_ids` a multi-hot [multi_label] vector; with
    `windows` (a long document's windows) every record also names its document
    (`example_index`) and its training weight (`window_weight`, 1 / the document's windows)."""
    label = ([multi_label], tf.int64) if multi_label else \
        ([], tf.float32 if regression else tf.int64)
    spec = {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "label_ids": tf.io.FixedLenFeature(*label),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64),
    }
    if windows:
        spec["example_index"] = tf.io.FixedLenFeature([], tf.int64)
        spec["window_weight"] = tf.io.FixedLenFeature([], tf.float32)
    return spec


def decode(record, spec: dict) -> dict:
    """Parses one serialized Example and casts int64 to int32 (TPUs and the model want int32)."""
    example = tf.io.parse_single_example(record, spec)
    return {name: tf.cast(t, tf.int32) if t.dtype == tf.int64 else t for name, t in example.items()}
