"""GLUE result files in the original's formats, each written through `io_utils.atomic_output`.

* `eval_results.txt`: per evaluated checkpoint, `key = value` lines in sorted key order, then
  `best = <best value before this evaluation>` and a line of 50 `=`.
* `best_trial.txt`: `<last evaluated step>:<best step>:<best value>` (`tasks.eval_state`).
* `test_results.tsv`: per real test example, the class probabilities joined by tabs (the
  single score for STS-B).
* `submit_results.tsv` and the GLUE leaderboard file (`SST-2.tsv`, `MNLI-m.tsv`, `AX.tsv`...):
  header `index<TAB>prediction`, then `<guid><TAB><label string or score>`.

Ours, for every classifier task (GLUE, your own files, texts in memory):
* `labels.json`: the label names in id order, written before training; a later run on the
  same output_dir (predict, export) must have the same labels.
* `test_predictions.tsv`: header `id<TAB>label`, then per test row its id and the predicted
  label *name* (the score when regressing; multi-label: the names joined by
  `--label_separator`, empty for none).
"""

from __future__ import annotations

import csv
import io
import json
import os

import numpy as np
import tensorflow as tf

from albert_tf.errors import UsageError
from albert_tf.io_utils import write_text_atomically
from albert_tf.tasks.classification.processors import LEADERBOARD_NAMES


def format_value(value) -> str:
    """As the original's `str()` of what the Estimator returned: numpy float32 scalars print
    their shortest form, arrays print numpy's summary."""
    if isinstance(value, (float, np.floating)):
        return str(np.float32(value))
    return str(value)


def eval_block(result: dict, best_before) -> str:
    """The original's block (sorted keys, `best = <best before this evaluation>`, 50 `=`), with
    the keys every task's results end with (`best_<metric>`, `best_step`: after this one) before
    the `=` line."""
    best = [key for key in result if key.startswith("best_")]
    lines = [f"{key} = {format_value(result[key])}" for key in sorted(result) if key not in best]
    lines.append(f"best = {format_value(best_before)}")
    lines += [f"{key} = {format_value(result[key])}" for key in best]
    lines.append("=" * 50)
    return "\n".join(lines) + "\n"


def append_eval_results(path: str, result: dict, best_before) -> None:
    """Adds one evaluation's block (rewrites the whole file through a temporary name)."""
    previous = ""
    if tf.io.gfile.exists(path):
        with tf.io.gfile.GFile(path, "r") as reader:
            previous = reader.read()
    write_text_atomically(path, previous + eval_block(result, best_before))


def format_test_results(probabilities) -> str:
    rows = np.asarray(probabilities).reshape(len(probabilities), -1)
    return "".join("\t".join(str(np.float32(p)) for p in row) + "\n" for row in rows)


def format_submit_results(guids, predictions, label_list) -> str:
    lines = ["index\tprediction"]
    for guid, prediction in zip(guids, predictions):
        if label_list == [None]:
            lines.append(f"{guid}\t{str(np.float32(prediction))}")
        else:
            lines.append(f"{guid}\t{label_list[int(prediction)]}")
    return "\n".join(lines) + "\n"


def write_predictions(output_dir: str, task_name: str, guids, probabilities, predictions,
                      label_list) -> dict:
    """Writes test_results.tsv, submit_results.tsv and the leaderboard file; returns the paths.

    Only real examples are passed in; the line count is checked as the original asserts it.
    """
    if not len(guids) == len(probabilities) == len(predictions):
        raise ValueError(f"{len(guids)} test examples but {len(probabilities)} probabilities and "
                         f"{len(predictions)} predictions")
    submit = format_submit_results(guids, predictions, label_list)
    paths = {"test_results": os.path.join(output_dir, "test_results.tsv"),
             "submit_results": os.path.join(output_dir, "submit_results.tsv"),
             "leaderboard": os.path.join(output_dir, LEADERBOARD_NAMES[task_name] + ".tsv")}
    write_text_atomically(paths["test_results"], format_test_results(probabilities))
    write_text_atomically(paths["submit_results"], submit)
    write_text_atomically(paths["leaderboard"], submit)
    return paths


LABELS_FILE = "labels.json"


def _read_labels_file(output_dir: str):
    path = os.path.join(output_dir, LABELS_FILE)
    if not tf.io.gfile.exists(path):
        return path, None
    with tf.io.gfile.GFile(path, "r") as reader:
        try:
            return path, json.load(reader)
        except json.JSONDecodeError as error:
            raise UsageError(f"{path}: not valid JSON ({error}); remove it or use another "
                             "--output_dir") from None


# The settings labels.json may record beside the names, and the JSON type of each.
SETTING_TYPES = {"task_type": (str,), "label_separator": (str,), "long_document": (str,),
                 "window_pooling": (str,), "threshold": (int, float), "doc_stride": (int,)}


def check_setting_types(settings: dict, path: str) -> None:
    """Each setting of labels.json of its JSON type, else one error naming the file and the key
    (a hand-edited `"doc_stride": "auto"` or `"threshold": "high"`)."""
    for key, types in SETTING_TYPES.items():
        value = settings.get(key)
        if value is None or (isinstance(value, types) and not isinstance(value, bool)):
            continue
        kind = "a number" if float in types else "an integer" if int in types else "a string"
        raise UsageError(f"{path}: key {key} must be {kind}, got {json.dumps(value)}")


def read_label_file(output_dir: str) -> tuple[list[str] | None, dict]:
    """(label names, settings) of `<output_dir>/labels.json`: a JSON list of names (a
    single-label classifier reading the first window, as always), or an object with `labels`
    and the settings the classifier was trained with (`task_type`, `threshold`,
    `label_separator`, `long_document`, `doc_stride`, `window_pooling`). (None, {}) when there
    is no file."""
    path, value = _read_labels_file(output_dir)
    if value is None:
        return None, {}
    settings = {}
    if isinstance(value, dict):
        settings = {k: v for k, v in value.items() if k != "labels"}
        value = value.get("labels")
        check_setting_types(settings, path)
    if not isinstance(value, list) or not all(isinstance(label, str) for label in value):
        raise UsageError(f"{path}: expected a JSON list of label names (or an object whose "
                         "\"labels\" is one)")
    return value, settings


def read_labels(output_dir: str) -> list[str] | None:
    """The label names recorded in `<output_dir>/labels.json`, or None when there is none."""
    return read_label_file(output_dir)[0]


def check_or_write_labels(output_dir: str, labels: list[str], write: bool = True,
                          settings: dict | None = None) -> None:
    """Writes labels.json, or checks that the one already there names the same labels in the
    same order, and the same task type (a model trained with other labels would serve wrong
    names). `settings` (multi-label, long documents) make it an object (`read_label_file`)."""
    path = os.path.join(output_dir, LABELS_FILE)
    separator = (settings or {}).get("label_separator")
    for name in labels if separator else ():
        if separator in name:
            # test_predictions.tsv and the export's `labels` join a set's names with it.
            raise UsageError(f"label {name!r} contains --label_separator {separator!r}: a "
                             "predicted set holding it could not be told apart from two labels; "
                             "rename the label or pass another --label_separator")
    existing, recorded = read_label_file(output_dir)
    if existing is not None:
        if existing != list(labels):
            raise UsageError(f"{path} holds the labels {existing} but this run has {list(labels)}; "
                             "use another --output_dir or the same labels (--label_list)")
        was = recorded.get("task_type", "classification")
        now = (settings or {}).get("task_type", "classification")
        if was != now:
            raise UsageError(f"{path} was written by a --task_type={was} run but this run has "
                             f"--task_type={now}; use another --output_dir")
        return
    if write:
        value = {"labels": list(labels), **settings} if settings else list(labels)
        write_text_atomically(path, json.dumps(value, ensure_ascii=False) + "\n")


def format_label_predictions(guids, predictions, label_names, separator: str = ",") -> str:
    """`id<TAB>label` then one row per test example (tab-separated, quoted only if needed); a
    multi-label prediction (a 0/1 row per example) is its names joined by `separator`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["id", "label"])
    for guid, prediction in zip(guids, predictions):
        if label_names is None:
            label = str(np.float32(prediction))
        elif np.ndim(prediction):
            label = separator.join(name for name, on in zip(label_names, prediction) if on)
        else:
            label = label_names[int(prediction)]
        writer.writerow([guid, label])
    return buffer.getvalue()


def write_label_predictions(output_dir: str, guids, predictions, label_names,
                            separator: str = ",") -> str:
    path = os.path.join(output_dir, "test_predictions.tsv")
    write_text_atomically(path, format_label_predictions(guids, predictions, label_names,
                                                         separator))
    return path
