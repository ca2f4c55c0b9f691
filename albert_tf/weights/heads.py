"""Which heads a model has and which heads a checkpoint holds, both read from the head classes
(`albert_tf.models.HEAD_CLASSES`, their `HEADS` and `FORMATS`): nothing here lists the heads
again."""

from __future__ import annotations

import numpy as np

from albert_tf.models import HEAD_CLASSES, AlbertModel, AlbertPretrainer
from albert_tf.models.formats import SequenceView, head_formats
from albert_tf.weights.tf1_names import HEAD_ROWS

# Every head a weight source may hold (`WeightSource.heads`), in the order they are listed.
HEADS = SequenceView(lambda: (head for cls in HEAD_CLASSES for head in cls.HEADS))


def task_heads() -> tuple:
    """The heads a fine-tuned model ends in: every registered head but the pretrainer's."""
    return tuple(head for cls in HEAD_CLASSES if cls is not AlbertPretrainer for head in cls.HEADS)


def reported_as(head: str, source_format: str) -> str:
    """The head a source of `source_format` reports when it holds `head`'s weights: the first
    registered head with the same keys (`_held`), TF1 names or, in our own checkpoints
    ("albert_tf"), model attributes. A RACE head is a one-label `classifier` to both; a SQuAD v1
    head a two-label one to ours."""
    def keys(name):
        return frozenset(row[1].partition(".")[0] if source_format == "albert_tf" else row[0]
                         for row in HEAD_ROWS[name])
    return next((other for other in HEADS if keys(other) == keys(head)), head)


def fixed_outputs(head: str) -> int | None:
    """The number of outputs of a head whose first weight has a fixed size (RACE's 1 score,
    SQuAD v1's start and end), None for one sized by its labels or by the config."""
    first = HEAD_ROWS[head][0][2][0] if head in HEAD_ROWS else None
    return first if isinstance(first, int) else None


def labelled_heads() -> dict:
    """{head: the TF1 name of its [num_labels, ...] weight} of the heads with one output per
    label (the classifier, the token classifier), from their classes' `FORMATS`."""
    return {head: f.tf1[0][0] for head, f in head_formats().items() if f.labelled}


def model_heads(model) -> tuple:
    """The heads (`HEADS` ids) of `model`'s class; none for the encoder alone."""
    return getattr(type(model), "HEADS", ())


def has_head(model) -> bool:
    return not isinstance(model, AlbertModel)


def head_loaded(head: str, loaded) -> bool:
    """Whether the TF1 names a load assigned include a weight of `head`."""
    names = {row[0] for row in HEAD_ROWS[head]}
    return any(name in names for name in loaded)


def _held(found: dict, key) -> tuple[tuple, int | None]:
    """(heads, (token) classifier label count): the heads all of whose rows are in `found` ({key:
    shape}). `key(row)` is (the row's key, its rank when `found` holds the weight itself, else
    None). Heads with the same keys as an earlier head cannot be told from it: only the first
    is reported (a TF1 RACE head is a one-label classifier by names and shapes)."""
    heads, seen = [], set()
    for head in HEADS:
        keys = [key(row) for row in HEAD_ROWS[head]]
        names = frozenset(name for name, _ in keys)
        if names in seen:
            continue
        seen.add(names)
        if all(name in found and (rank is None or len(found[name]) == rank)
               for name, rank in keys):
            heads.append(head)
    num_labels = None
    for head, formats in head_formats().items():  # heads sized by their labels
        if head in heads and formats.labelled:
            num_labels = int(found[key(formats.tf1[0])[0]][0])
    return tuple(heads), num_labels


def tf1_heads(shapes) -> tuple[tuple, int | None]:
    """(heads, classifier label count) of TF1 variable names → shapes (any `module/` scope).

    A root `output_weights` of shape [n, H] is a classifier with n labels. RACE's multiple-choice
    head is also a root [1, H] `output_weights`: by names and shapes it cannot be told from a
    one-label (regression) classifier, so it is reported as `classifier` with 1 label (it still
    loads into run_race's model, which takes the same names)."""
    names = {n.split("/", 1)[1] if n.startswith("module/") else n: s for n, s in shapes.items()}
    return _held(names, lambda row: (row[0], len(row[2])))


def heads_of(arrays: dict) -> tuple:
    """The heads whose TF1 weights `arrays` ({TF1 name: array}) holds."""
    return tf1_heads({name: np.shape(value) for name, value in arrays.items()})[0]


def our_heads(shapes) -> tuple[tuple, int | None]:
    """(heads, classifier label count) of one of our training checkpoints (object-graph names:
    `model/<attribute>/...`, the head's weights being the task model's own attributes).

    Object-graph names keep attributes, not classes: a root `output_weights` [n, H] is reported
    as a classifier with n labels, although run_squad's v1 head ([2, H]) and run_race's ([1, H])
    have the same attribute; each still loads into its own task's model."""
    attributes = {}
    for name, shape in shapes.items():
        parts = name.split("/")
        if len(parts) > 2 and parts[0] == "model" and parts[1] != "encoder":
            attributes.setdefault(parts[1], shape)

    def key(row):  # `output_weights` is a weight; `masked_lm.transform.kernel` is in a layer
        attribute, _, rest = row[1].partition(".")
        return attribute, None if rest else len(row[2])
    return _held(attributes, key)
