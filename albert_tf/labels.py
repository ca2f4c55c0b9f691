"""Label sets: the names of a classifier's classes and of a token classifier's tags, in id order.
The one home of labels, TensorFlow-free:

* `parse`: `--label_list` (names comma-separated) or a Python list;
* `derive`: the set a training run uses: the names given, else the sorted set of the training
  labels (names that differ only in case refused: one class or two?), at least `minimum`;
* `check_known`: every label of a dev (or labelled test) file one the model can predict;
* `disagreement`: two label sets of one model compared: names that differ only in case agree
  (an HF MNLI model's ENTAILMENT is entailment); HF's placeholders LABEL_0, LABEL_1, ... (its
  names for classes nobody named, served as they are) agree with any names of their count; the
  same names in another order rename every id;
* `LabelFile`: `<folder>/labels.json`, read, checked against a head's class count, written
  (a JSON list of names, or an object with `labels` and the settings the classifier was
  trained with: `task_type`, `threshold`, `label_separator`, `long_document`, `doc_stride`,
  `window_pooling`).
"""

from __future__ import annotations

import dataclasses
import json
import os

from albert_tf import io_utils
from albert_tf.errors import UsageError

LABELS_FILE = "labels.json"
# The settings labels.json may record beside the names, and the JSON type of each.
SETTING_TYPES = {"task_type": (str,), "label_separator": (str,), "long_document": (str,),
                 "window_pooling": (str,), "threshold": (int, float), "doc_stride": (int,)}


def parse(value) -> list[str] | None:
    """A label list given as a flag (names comma-separated) or a list; None when empty."""
    if not value:
        return None
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [part.strip() for part in str(value).split(",") if part.strip()] or None


def placeholders(count: int) -> list[str]:
    """HF's names of classes nobody named: LABEL_0, LABEL_1, ..."""
    return [f"LABEL_{i}" for i in range(int(count))]


def are_placeholders(names) -> bool:
    return bool(names) and [str(n) for n in names] == placeholders(len(names))


def case_clash(labels) -> tuple[int, int] | None:
    """(index of a label, index of a later one spelt differently that differs only in case), or
    None: such labels would become two classes."""
    first = {}
    for index, label in enumerate(labels):
        key = str(label).casefold()
        if key in first and labels[first[key]] != label:
            return first[key], index
        first.setdefault(key, index)
    return None


def label_set(value, label_of, where: str) -> tuple:
    """One example's labels for a multi-label classifier: a list (tuple, set) of names or class
    ids, each checked by `label_of(label, where)`; duplicates once."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
        raise UsageError(f"{where}: a multi-label classifier takes a list of labels per text "
                         f"(possibly empty), got {type(value).__name__} {value!r:.60}")
    items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
    return tuple(dict.fromkeys(label_of(label, f"{where}[{i}]") for i, label in enumerate(items)))


@dataclasses.dataclass(frozen=True)
class Words:
    """How messages name a label set's members: the flag that gives them, a member ("label",
    "tag"), a class of the model ("class"), what is trained ("a classifier")."""
    flag: str = "--label_list"
    label: str = "label"
    unit: str = "class"
    units: str = "classes"
    model: str = "a classifier"


CLASSES = Words()
LABEL_SETS = Words(unit="label", units="labels", model="a multi-label classifier")
TAGS = Words(label="tag", unit="tag", units="tags", model="a tagger")


def derive(pairs, train_name: str, given=None, *, error=UsageError, words: Words = CLASSES,
           minimum: int = 2) -> list[str]:
    """The names in id order: `given`, else the sorted set of the training labels. `pairs`:
    (label, where it was read) of every training label. Every training label must be in
    `given`; names that differ only in case are refused unless `given` names both."""
    pairs = list(pairs)
    if given:
        given = [str(n) for n in given]
        if len(set(given)) != len(given):
            raise error(f"{words.flag} names a {words.label} twice: {', '.join(given)}")
        check_known(pairs, given, True, error=error, words=words)
        names = given
    else:
        clash = case_clash([name for name, _ in pairs])
        if clash:
            (first, one), (later, other) = (pairs[i] for i in clash)
            raise error(f"{words.label}s {later!r} ({other}) and {first!r} ({one}) differ only "
                        f"in case: one {words.unit} or two? Write one spelling, or name both in "
                        f"{words.flag}")
        names = sorted({name for name, _ in pairs})
    if len(names) < minimum:
        unit = words.unit if len(names) == 1 else words.units
        raise error(f"{train_name}: {len(names)} {unit} ({', '.join(names)}); {words.model} "
                    f"needs at least {minimum}")
    return names


def check_known(pairs, names, from_flag: bool, *, error=UsageError,
                words: Words = CLASSES) -> None:
    """Every (label, where) of `pairs` one of `names`: the model cannot predict another."""
    known = set(names)
    for name, where in pairs:
        if name not in known:
            reason = (f"is not in {words.flag} ({', '.join(names)})" if from_flag else
                      f"was never seen in training (the training {words.label}s are "
                      f"{', '.join(names)}; pass {words.flag} to fix the set)")
            raise error(f"{where}: {words.label} {name!r} {reason}")


def disagreement(given, own) -> str | None:
    """None when `given` agree with a model's `own` names (case aside; placeholders agree with
    any names of their count), else how they differ: "order" (the same names in another order:
    every id would be renamed), "count" or "names"."""
    given, own = [str(n) for n in given], [str(n) for n in own]
    if are_placeholders(own) or are_placeholders(given):
        return None if len(given) == len(own) else "count"
    folded, own_folded = [n.casefold() for n in given], [n.casefold() for n in own]
    if folded == own_folded:
        return None
    if sorted(folded) == sorted(own_folded):
        return "order"
    return "count" if len(given) != len(own) else "names"


@dataclasses.dataclass
class LabelFile:
    """`<folder>/labels.json`: its names (None: no file) and settings."""

    folder: str
    names: list | None = None
    settings: dict = dataclasses.field(default_factory=dict)

    @property
    def path(self) -> str:
        return os.path.join(os.fspath(self.folder), LABELS_FILE)

    @property
    def task_type(self) -> str:
        return self.settings.get("task_type", "classification")

    @classmethod
    def read(cls, folder, error=UsageError) -> LabelFile:
        """The folder's labels.json; one `error` naming it when it is not JSON, not a list of
        names (or an object whose "labels" is one), or a setting has the wrong type."""
        found = cls(os.fspath(folder))
        if not io_utils.exists(found.path):
            return found
        try:
            value = json.loads(io_utils.read_utf8(found.path))
        except json.JSONDecodeError as reason:
            raise error(f"{found.path}: not valid JSON ({reason}); remove it or use another "
                        "--output_dir") from None
        if isinstance(value, dict):
            found.settings = {k: v for k, v in value.items() if k != "labels"}
            value = value.get("labels")
            _check_setting_types(found.settings, found.path, error)
        if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
            raise error(f"{found.path}: expected a JSON list of label names (or an object "
                        "whose \"labels\" is one)")
        found.names = value
        return found

    def for_head(self, num_labels: int, head: str, model: str) -> list | None:
        """The names when they fit `model`'s `head` of `num_labels` outputs; a labels.json
        naming another count (another run's?) is one error naming both."""
        if self.names is None or len(self.names) == num_labels:
            return self.names
        raise UsageError(f"{self.path} names {len(self.names)} labels ({', '.join(self.names)}) "
                         f"but the {head} head of {model} has {num_labels} outputs (another "
                         "run's labels.json?); put back the run's own, or remove it to serve "
                         "class ids")

    def write(self, names, settings: dict | None = None) -> None:
        """Writes labels.json: the names, or an object with them and `settings`."""
        self.names, self.settings = list(names), dict(settings or {})
        value = {"labels": self.names, **self.settings} if self.settings else self.names
        io_utils.write_text_atomically(self.path, json.dumps(value, ensure_ascii=False) + "\n")

    def check_or_write(self, names, write: bool = True, settings: dict | None = None,
                       word: str = "labels") -> None:
        """Writes labels.json, or checks that the one already there names the same labels in
        the same order, and the same task type (a model trained with other labels would serve
        wrong names)."""
        settings = settings or {}
        separator = settings.get("label_separator")
        for name in names if separator else ():
            if separator in name:
                # test_predictions.tsv and the export's `labels` join a set's names with it.
                raise UsageError(f"label {name!r} contains --label_separator {separator!r}: a "
                                 "predicted set holding it could not be told apart from two "
                                 "labels; rename the label or pass another --label_separator")
        if self.names is None:
            if write:
                self.write(names, settings)
            return
        if self.names != list(names):
            raise UsageError(f"{self.path} holds the {word} {self.names} but this run has "
                             f"{list(names)}; use another --output_dir or the same {word} "
                             "(--label_list)")
        now = settings.get("task_type", "classification")
        if self.task_type != now:
            raise UsageError(f"{self.path} was written by a --task_type={self.task_type} run "
                             f"but this run has --task_type={now}; use another --output_dir")


def write_labels(folder, names) -> None:
    """`folder/labels.json` when there are `names` (a converted folder keeps its source's)."""
    if names:
        LabelFile(os.fspath(folder)).write([str(n) for n in names])


def _check_setting_types(settings: dict, path: str, error) -> None:
    """Each setting of labels.json of its JSON type, else one error naming the file and the key
    (a hand-edited `"doc_stride": "auto"` or `"threshold": "high"`)."""
    for key, types in SETTING_TYPES.items():
        value = settings.get(key)
        if value is None or (isinstance(value, types) and not isinstance(value, bool)):
            continue
        kind = "a number" if float in types else "an integer" if int in types else "a string"
        raise error(f"{path}: key {key} must be {kind}, got {json.dumps(value)}")
