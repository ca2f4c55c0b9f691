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
from typing import Callable, Mapping

import numpy as np

from albert_tf import io_utils
from albert_tf.errors import UsageError
from albert_tf.labels import LabelFile


class SourceError(UsageError):
    """A path that holds no weights we can read, or weights that contradict their own config."""


class _ReadWithWeights:
    """A `WeightSource` field that a reader may fill only when the weights are read (what the
    weights hold: their arrays, the heads found in them, a head's size): reading the field reads
    the weights first, once (`WeightSource.read_weights`)."""

    def __init__(self, default):
        self.default = default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, source, owner=None):
        if source is None:  # the dataclass default
            return self.default
        source.read_weights()
        return source.__dict__.get(self.name, self.default)

    def __set__(self, source, value):
        source.__dict__[self.name] = value


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

    A reader that converts weights (HF, keras-hub) reads them when first needed, not when it
    opens the source: it passes `weights_reader`, which returns the values of the fields that
    depend on the weights (`arrays`, `heads`, `num_labels`, `labels`, `problem_type`, `filled`);
    the first read of any of them calls it, once. Config and tokenizer files cost no weight read.
    """

    path: str
    format: str  # "tf1", "tfhub", "albert_tf", "hf", "keras_hub"
    config: object = None
    arrays: Mapping[str, np.ndarray] | None = _ReadWithWeights(None)
    checkpoint_prefix: str | None = None
    heads: tuple = _ReadWithWeights(())
    num_labels: int | None = _ReadWithWeights(None)
    labels: list | None = _ReadWithWeights(None)
    # HF's `problem_type` of a classifier head: "multi_label_classification" for a sigmoid per
    # label (our multi-label runs: their labels.json says so), else None (softmax / regression).
    problem_type: str | None = _ReadWithWeights(None)
    spm_model_file: str | None = None
    vocab_file: str | None = None
    do_lower_case: bool | None = None
    # TF1 names the reader made up because the format has no such weight (HF's QA and MLM
    # models have no pooler: zeros, which the span/MLM outputs never read).
    filled: tuple = _ReadWithWeights(())
    # The sequence length the source's own text preprocessor packs to (keras-hub's
    # preprocessor.json, or our run's sequence_lengths.json), when it has one: its raw-text
    # outputs truncate there.
    sequence_length: int | None = None
    # Caveats the reader wants shown wherever the source is described (one sentence each).
    notes: tuple = ()
    weights_reader: Callable[[], dict] | None = dataclasses.field(
        default=None, repr=False, compare=False)

    def read_weights(self) -> None:
        """Reads the weights now if the reader left them for first need; a no-op afterwards."""
        reader = self.__dict__.get("weights_reader")
        if reader is None:
            return
        values = reader()  # raises (a damaged file) without marking the weights as read
        self.weights_reader = None
        for name, value in values.items():
            setattr(self, name, value)

    @property
    def weights_read(self) -> bool:
        return self.__dict__.get("weights_reader") is None

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


MULTI_LABEL = "multi_label_classification"


def problem_type(folder) -> str | None:
    """HF's `problem_type` of the classifier of `folder` (a run_classifier output_dir): its
    labels.json records `task_type` multi_label; None otherwise."""
    return MULTI_LABEL if LabelFile.read(folder).task_type == "multi_label" else None


def read_json(path) -> dict:
    """A source's JSON object (config, task, index, preprocessor), or one SourceError naming the
    file: not JSON, or JSON of another type."""
    return io_utils.read_json_object(path, SourceError)


def json_key(values: dict, key: str, types, path, default=None):
    """`values[key]` when it is of `types` (None: absent), else one SourceError naming the file
    and the key."""
    value = values.get(key, default)
    if value is None or (isinstance(value, types) and not isinstance(value, bool)):
        return value
    names = {dict: "an object", int: "an integer", str: "a string"}
    raise SourceError(f"{path}: key {key} must be {names.get(types, types.__name__)}, got "
                      f"{json.dumps(value)}")
