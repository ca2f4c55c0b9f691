"""What `export_saved_model.py` (`source_export.export_source`) hands each head's export, and
what the export hands back.

A head class names its export in `SERVING` (`albert_tf.models.formats`): a function
`export_head(cls, inputs: HeadInputs) -> HeadExport` that builds the model of `cls` with the
source's weights (`inputs.load`) and its serving module, without writing anything;
`export_source` writes, checks and publishes every head's module together.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.labels import LABELS_FILE

# Texts every raw-text check sends (the second pair's text_b left empty on purpose).
SAMPLE_TEXT = (["The quick brown fox jumps over the lazy dog.", "ALBERT shares its layers."],
               ["A fox.", ""])


@dataclasses.dataclass
class HeadInputs:
    """The resolved inputs of one export: the model config, the opened weight source, its
    tokenizer files and casing, the length to export for, and `load(model)`, which gives the
    model the source's weights (its head required) and returns it; `max_qa_length`: the pieces
    a multiple-choice export keeps of a question+option (run_race.py's flag)."""

    config: object
    source: object
    spm_model_file: str | None
    vocab_file: str | None
    max_seq_length: int
    do_lower_case: bool
    albert_text_rules: bool
    load: Callable
    max_qa_length: int | None = 128  # a question+option's pieces (None: the folder's, else 128)


@dataclasses.dataclass
class HeadExport:
    """One head's export, built but not written: `name` (its folder under the export_dir), the
    module and signatures to save, `check()` → (calls, the Keras model's outputs) for the
    fresh-process comparison, and the Keras model its TFLite files come from (None: no TFLite
    form) with the TFLite writer's extra arguments."""

    name: str
    root: object
    signatures: dict
    check: Callable
    tflite_model: object = None
    tflite_args: dict = dataclasses.field(default_factory=dict)


def example_bytes(ids, mask, segments, length) -> bytes:
    """A serialized tf.train.Example of one input, padded to `length` (what run_classifier's
    `serving_default` reads)."""
    def feature(values):
        padded = np.zeros(length, np.int64)
        padded[:len(values)] = values
        return tf.train.Feature(int64_list=tf.train.Int64List(value=padded))

    return tf.train.Example(features=tf.train.Features(feature={
        "input_ids": feature(ids), "input_mask": feature(mask),
        "segment_ids": feature(segments)})).SerializeToString()


def numpy_outputs(outputs) -> dict:
    """The numeric outputs of a serving function as arrays (strings are compared by the ids
    they come from)."""
    return {k: v.numpy() for k, v in outputs.items() if v.dtype != tf.string}


def text_labels(source, num_labels: int) -> list | None:
    """The source's label names when it names one per output, else None: for one of our
    runs' folders (which write labels.json before training) with a warning, as a missing
    tokenizer file gets."""
    labels = source.labels
    if labels and len(labels) == num_labels:
        return list(labels)
    if source.format == "albert_tf" and num_labels > 1:
        path = os.fspath(source.path)
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        logging.warning("%s not found: the export cannot name the %d classes its run trained "
                        "(it serves class ids, or LABEL_i); put back the run's labels.json",
                        os.path.join(folder, LABELS_FILE), num_labels)
    return None
