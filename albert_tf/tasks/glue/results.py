"""GLUE result files in the original's formats, each written through `io_utils.atomic_output`.

* `eval_results.txt`: per evaluated checkpoint, `key = value` lines in sorted key order, then
  `best = <best value before this evaluation>` and a line of 50 `=`.
* `best_trial.txt`: `<last evaluated step>:<best step>:<best value>` (`tasks.eval_state`).
* `test_results.tsv`: per real test example, the class probabilities joined by tabs (the
  single score for STS-B).
* `submit_results.tsv` and the GLUE leaderboard file (`SST-2.tsv`, `MNLI-m.tsv`, `AX.tsv`...):
  header `index<TAB>prediction`, then `<guid><TAB><label string or score>`.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from albert_tf.io_utils import write_text_atomically
from albert_tf.tasks.glue.processors import LEADERBOARD_NAMES


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
