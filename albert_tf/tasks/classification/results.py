"""GLUE result files in the original's formats, each written through `io_utils.atomic_output`.

* `eval_results.txt`: per evaluated checkpoint, `key = value` lines in sorted key order, then
  `best = <best value before this evaluation>` and a line of 50 `=`.
* `best_trial.txt`: `<last evaluated step>:<best step>:<best value>` (`tasks.eval_state`).
* `test_results.tsv`: per real test example, the class probabilities joined by tabs (the
  single score for STS-B).
* `submit_results.tsv` and the GLUE leaderboard file (`SST-2.tsv`, `MNLI-m.tsv`, `AX.tsv`...):
  header `index<TAB>prediction`, then `<guid><TAB><label string or score>`.

Ours, for every classifier task (GLUE, your own files, texts in memory):
* `labels.json`: the label names in id order, written before training (`albert_tf.labels`); a
  later run on the same output_dir (predict, export) must have the same labels.
* `test_predictions.tsv`: header `id<TAB>label`, then per test row its id and the predicted
  label *name* (the score when regressing; multi-label: the names joined by
  `--label_separator`, empty for none).
"""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import tensorflow as tf

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
