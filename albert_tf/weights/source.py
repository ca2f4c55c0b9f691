"""`WeightSource`: what any weight format yields (`readers.open_source` picks the reader).

Every reader turns its format into the original's TF1 variable names (`tf1_names`), so one
loader (`tf1_checkpoint.load_tf1_weights`) and one name table serve every format. Our own
training checkpoints (object-graph names) are the exception: they keep `checkpoint_prefix` and
load through `tf.train.Checkpoint` (`our_checkpoints`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Mapping

import numpy as np
import tensorflow as tf

from albert_tf.errors import UsageError


class SourceError(UsageError):
    """A path that holds no weights we can read, or weights that contradict their own config."""


@dataclasses.dataclass
class WeightSource:
    """What a weight source holds.

    `arrays`: TF1-named float arrays (`bert/...`, `cls/...`, task heads at their TF1 names), or
    None for one of our own training checkpoints (then `checkpoint_prefix` is set).
    `config`: the `AlbertConfig` when the source carries one (HF config.json, keras-hub
    config.json, our output_dir's albert_config.json), else None (`--albert_config_file` needed).
    `heads`: the subset of `heads.HEADS` present. `num_labels`/`labels`: a classifier (or token
    classifier) head's size and label names (HF `id2label`) when known. Tokenizer files are
    absolute paths or None.
    """

    path: str
    format: str  # "tf1", "tfhub", "albert_tf", "hf", "keras_hub"
    config: object = None
    arrays: Mapping[str, np.ndarray] | None = None
    checkpoint_prefix: str | None = None
    heads: tuple = ()
    num_labels: int | None = None
    labels: list | None = None
    # HF's `problem_type` of a classifier head: "multi_label_classification" for a sigmoid per
    # label (our multi-label runs: their labels.json says so), else None (softmax / regression).
    problem_type: str | None = None
    spm_model_file: str | None = None
    vocab_file: str | None = None
    do_lower_case: bool | None = None
    # TF1 names the reader made up because the format has no such weight (HF's QA and MLM
    # models have no pooler: zeros, which the span/MLM outputs never read).
    filled: tuple = ()
    # The sequence length the source's own text preprocessor packs to (keras-hub's
    # preprocessor.json), when it has one: its raw-text outputs truncate there.
    sequence_length: int | None = None
    # Caveats the reader wants shown wherever the source is described (one sentence each).
    notes: tuple = ()

    def describe(self) -> str:
        heads = ", ".join(self.heads) if self.heads else "none"
        text = f"{self.format} weights from {self.path} (heads: {heads})"
        if self.filled:
            text += f"; not in the source, set to zeros: {', '.join(self.filled)}"
        for note in self.notes:
            text += f"; {note}"
        return text


def folder_json(folder, name) -> dict:
    """The JSON object in `folder/name`, or {} when there is none or it is not one: what the
    readers' detectors look at (they must be cheap and never fail)."""
    path = os.path.join(folder, name)
    if not (os.path.isdir(folder) and os.path.isfile(path)):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            values = json.load(f)
    except (OSError, ValueError):
        return {}
    return values if isinstance(values, dict) else {}


LABELS_FILE = "labels.json"


def _labels_json(folder):
    """What `folder/labels.json` holds (a list of names, or a multi-label run's object); None
    when there is none or it is not JSON."""
    path = os.path.join(os.fspath(folder), LABELS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    try:
        with tf.io.gfile.GFile(path, "r") as reader:
            return json.load(reader)
    except ValueError:
        return None


def label_names(folder, num_labels) -> list | None:
    """The label (or tag) names of `folder/labels.json` (run_classifier's and run_ner's
    output_dir, and the folders converted from one) when they fit a head of `num_labels`
    classes: what exports serve as `labels` and an HF config writes as `id2label`."""
    names = None if num_labels is None else _labels_json(folder)
    if isinstance(names, dict):  # a multi-label (or windowed) run: {"labels": [...], ...}
        names = names.get("labels")
    ok = isinstance(names, list) and len(names) == num_labels
    return [str(n) for n in names] if ok else None


MULTI_LABEL = "multi_label_classification"


def problem_type(folder) -> str | None:
    """HF's `problem_type` of the classifier of `folder` (a run_classifier output_dir): its
    labels.json records `task_type` multi_label; None otherwise."""
    value = _labels_json(folder)
    multi = isinstance(value, dict) and value.get("task_type") == "multi_label"
    return MULTI_LABEL if multi else None


def write_label_names(folder, names) -> None:
    """`folder/labels.json` (a converted folder keeps its source's label names)."""
    if names:
        with open(os.path.join(folder, LABELS_FILE), "w", encoding="utf-8") as writer:
            json.dump([str(n) for n in names], writer, ensure_ascii=False)
            writer.write("\n")


def read_json(path):
    """A source's JSON file (config, task, index), or one SourceError naming it."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise SourceError(f"{path}: cannot read it as JSON ({error})") from None
