"""What a head says about itself besides its Keras code, and the one registry of heads.

Each model with a head carries, beside its layers, a `FORMATS` mapping: head id → `HeadFormats`,
where that head's weights sit in every format we read and write (the original's TF1 names,
Hugging Face's, keras-hub's). The weight tables (`albert_tf.weights.tf1_names.HEAD_ROWS`,
`hf_names.HEADS`, `keras_hub_names.CLASSIFIER`...) are views built from `HEAD_CLASSES`, so a
new head is its own class plus one line registering it. How a head is served is its class's
`SERVING`: `"<module>:<function>"` (a task's export module, named as text because tasks sit
above models) or the function itself.

TensorFlow-free on purpose: plain data and a list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

# The one registry of models with a head, in the order heads are listed everywhere
# (`WeightSource.heads`, load reports, the tables). Filled by `albert_tf.models`.
HEAD_CLASSES: list = []


def register_head(cls):
    """Adds a head class to `HEAD_CLASSES` (usable as a class decorator); returns it."""
    if cls not in HEAD_CLASSES:
        HEAD_CLASSES.append(cls)
    return cls


@dataclasses.dataclass(frozen=True)
class KerasHubHead:
    """A head as a keras-hub task stores it in `task.weights.h5`.

    `layers`: (h5 key, layer name, ((var index, TF1 name), ...)) of the task's own layers;
    `holder`: the layer whose own vars hold `holder_vars` ((var index, TF1 name)) and whose
    sub-layers are `layers` (keras-hub's MLM head); "" when the layers sit at the task's root.
    """

    task_class: str
    layers: tuple
    holder: str = ""
    holder_vars: tuple = ()


@dataclasses.dataclass(frozen=True)
class HeadFormats:
    """Where one head's weights sit in each format.

    `tf1`: (TF1 name, attribute path in the model, shape) rows, relative to the model holding
    the head; a shape entry is an int, an `AlbertConfig` key, a head argument (`num_labels`) or
    `"<n>*<key>"`. Every weight keeps the TF1 layout, so a row is a pure rename.
    `hf`: (HF name, TF1 name, transpose) rows at the HF model's root; `hf_class` the
    transformers class holding this head (what the HF writer names in `architectures`) and
    `hf_pooler` whether that class has a pooler. No `hf` rows: HF has no place for the head.
    `keras_hub`: its keras-hub task, or None when keras-hub has none."""

    tf1: tuple
    hf: tuple = ()
    hf_class: str = ""
    hf_pooler: bool = True
    keras_hub: KerasHubHead | None = None

    @property
    def labelled(self) -> bool:
        """Whether the head's first weight has one row per label (`num_labels` outputs)."""
        return bool(self.tf1) and self.tf1[0][2][:1] == ("num_labels",)


def projection_formats(scope: str, outputs, hf_prefix: str,
                       attributes=("output_weights", "output_bias"), **more) -> HeadFormats:
    """The formats of a head that is one projection of the hidden size: TF1
    `<scope>output_weights` [outputs, H] and `<scope>output_bias` [outputs] (model attributes
    `attributes`), HF `<hf_prefix>.weight` / `.bias` in the same [out, in] layout; `more`: the
    other `HeadFormats` fields."""
    weights, bias = scope + "output_weights", scope + "output_bias"
    return HeadFormats(
        tf1=((weights, attributes[0], (outputs, "hidden_size")), (bias, attributes[1], (outputs,))),
        hf=((f"{hf_prefix}.weight", weights, False), (f"{hf_prefix}.bias", bias, False)), **more)


def head_formats() -> dict:
    """{head id: HeadFormats} of every registered head, in registry order."""
    return {head: cls.FORMATS[head] for cls in HEAD_CLASSES for head in cls.HEADS}


class MappingView(Mapping):
    """A table built from the registry each time it is read, so a head registered after import
    (a test's own head) is in every table."""

    def __init__(self, build):
        self._build = build

    def __getitem__(self, key):
        return self._build()[key]

    def __iter__(self):
        return iter(self._build())

    def __len__(self):
        return len(self._build())

    def __repr__(self):
        return repr(self._build())


class SequenceView(Sequence):
    """A tuple built from the registry each time it is read (see `MappingView`)."""

    def __init__(self, build):
        self._build = build

    def __getitem__(self, index):
        return tuple(self._build())[index]

    def __len__(self):
        return len(tuple(self._build()))

    def __eq__(self, other):
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    __hash__ = None

    def __repr__(self):
        return repr(tuple(self._build()))
