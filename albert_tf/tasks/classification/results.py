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
  label *name* (the score when regressing).
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
    lines = [f"{key} = {format_value(result[key])}" for key in sorted(result)]
    lines.append(f"best = {format_value(best_before)}")
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


def read_labels(output_dir: str) -> list[str] | None:
    """The label names recorded in `<output_dir>/labels.json`, or None when there is none."""
    path = os.path.join(output_dir, LABELS_FILE)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "r") as reader:
        try:
            labels = json.load(reader)
        except json.JSONDecodeError as error:
            raise UsageError(f"{path}: not valid JSON ({error}); remove it or use another "
                             "--output_dir") from None
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise UsageError(f"{path}: expected a JSON list of label names")
    return labels


def check_or_write_labels(output_dir: str, labels: list[str], write: bool = True) -> None:
    """Writes labels.json, or checks that the one already there names the same labels in the
    same order (a model trained with other labels would serve wrong names)."""
    path = os.path.join(output_dir, LABELS_FILE)
    existing = read_labels(output_dir)
    if existing is not None:
        if existing != list(labels):
            raise UsageError(f"{path} holds the labels {existing} but this run has {list(labels)}; "
                             "use another --output_dir or the same labels (--label_list)")
        return
    if write:
        write_text_atomically(path, json.dumps(list(labels), ensure_ascii=False) + "\n")


def format_label_predictions(guids, predictions, label_names) -> str:
    """`id<TAB>label` then one row per test example (tab-separated, quoted only if needed)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["id", "label"])
    for guid, prediction in zip(guids, predictions):
        label = (str(np.float32(prediction)) if label_names is None
                 else label_names[int(prediction)])
        writer.writerow([guid, label])
    return buffer.getvalue()


def write_label_predictions(output_dir: str, guids, predictions, label_names) -> str:
    path = os.path.join(output_dir, "test_predictions.tsv")
    write_text_atomically(path, format_label_predictions(guids, predictions, label_names))
    return path
