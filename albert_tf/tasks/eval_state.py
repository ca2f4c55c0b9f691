"""Evaluate each checkpoint, keep the best: the one implementation every task uses.

`best_trial.txt` (`<last evaluated step>:<best step>:<best value>`) records progress, so a re-run
evaluates only newer checkpoints and keeps comparing against the best so far; the best is copied
to `model.ckpt-best` (a copy: nothing is renamed or deleted). How the results file looks is the
task's (`eval_log()`): GLUE's blocks, the SQuAD/RACE runners' lines, pretraining's keys.
Every evaluation's scalar metrics also go to TensorBoard, in `<output_dir>/eval` at the
checkpoint's step, beside the trainer's scalars in `<output_dir>`
(`tensorboard --logdir <output_dir>` shows both).

Whatever the task's layout, every evaluation written to `eval_results.txt` carries the same two
keys, `best_<metric> = <best value so far>` and `best_step = <its step>`, and every task writes
the same `eval_results.json`: `{"metric", "best_<metric>", "best_step", "evaluations": [{
"global_step": ..., <result keys>: ...}, ...]}`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.errors import InputError
from albert_tf.io_utils import write_text_atomically
from albert_tf.training.checkpoint_files import copy_checkpoint
from albert_tf.training.logs import write_scalar
from albert_tf.weights.model_folder import BEST_NAME

STATE_NAME = "best_trial.txt"
SUMMARY_DIR = "eval"
RESULTS_JSON = "eval_results.json"


@dataclasses.dataclass
class EvalState:
    last_step: int = -1
    best_step: int = -1
    best_value: float = float("-inf")

    @classmethod
    def read(cls, path: str) -> "EvalState":
        if not tf.io.gfile.exists(path):
            return cls()
        with tf.io.gfile.GFile(path, "r") as reader:
            text = reader.read().strip()
        try:
            last, best, value = text.split(":")
            return cls(int(last), int(best), float(value))
        except ValueError:
            raise InputError(f"{path}: expected '<last step>:<best step>:<best value>', got "
                             f"{text!r}; delete it to evaluate every checkpoint again") from None

    def write(self, path: str) -> None:
        write_text_atomically(path, f"{self.last_step}:{self.best_step}:{self.best_value}")


class CheckpointEvaluator:
    """`on_checkpoint(step, prefix)` scores the model (which holds that checkpoint) with
    `evaluate()`, keeps the best by `metric` (higher is better) and records the result in `log`.
    """

    def __init__(self, output_dir, evaluate, metric, log, load, is_chief=True,
                 initial_best=float("-inf")):
        self.output_dir = os.fspath(output_dir)
        self.evaluate, self.metric, self.log, self.load = evaluate, metric, log, load
        self.is_chief = is_chief
        self.state_path = os.path.join(self.output_dir, STATE_NAME)
        self.best_prefix = os.path.join(self.output_dir, BEST_NAME)
        self.state = EvalState.read(self.state_path)
        if self.state.best_step < 0:
            self.state.best_value = initial_best
        self.best_result = None
        self.last = None
        self.writer = None
        self.json_path = os.path.join(self.output_dir, RESULTS_JSON)
        self.evaluations = self._earlier_evaluations()
        self.log.start(self)

    def _earlier_evaluations(self) -> list:
        """The evaluations of earlier runs that this one continues (none on a fresh start)."""
        if self.state.last_step < 0 or not tf.io.gfile.exists(self.json_path):
            return []
        try:
            with tf.io.gfile.GFile(self.json_path, "r") as reader:
                evaluations = json.load(reader).get("evaluations", [])
        except (ValueError, AttributeError):
            return []  # not ours (or cut short): this run's evaluations replace it
        return evaluations if isinstance(evaluations, list) else []

    def best_fields(self) -> dict:
        """`best_<metric>` and `best_step` as they stand (none before a best exists)."""
        if not self.metric or self.state.best_step < 0:
            return {}
        return {f"best_{self.metric}": self.state.best_value, "best_step": self.state.best_step}

    def _write_json(self, step, result) -> None:
        values = {k: _plain(v) for k, v in result.items() if np.ndim(v) == 0}
        self.evaluations.append({"global_step": int(step), **values})
        write_text_atomically(self.json_path, json.dumps(
            {"metric": self.metric, **self.best_fields(), "evaluations": self.evaluations},
            indent=1) + "\n")

    def summarize(self, step, result) -> None:
        """The result's numeric scalars as TensorBoard scalars at `step` (chief only)."""
        if not self.is_chief:
            return
        if self.writer is None:
            self.writer = tf.summary.create_file_writer(os.path.join(self.output_dir,
                                                                     SUMMARY_DIR))
        with self.writer.as_default():
            for name, value in result.items():
                if np.ndim(value) == 0 and isinstance(value, (int, float, np.number)) \
                        and not isinstance(value, bool):
                    write_scalar(name, value, int(step))
        self.writer.flush()

    def on_checkpoint(self, step, prefix) -> dict | None:
        if prefix is None or step <= self.state.last_step:
            return None
        result = self.evaluate()
        best_before = self.state.best_value
        value = float(result[self.metric]) if self.metric else float("nan")
        copied = []
        if self.metric and not math.isnan(value) and value > best_before:
            copied = copy_checkpoint(prefix, self.best_prefix) if self.is_chief else []
            self.state.best_step, self.state.best_value = int(step), value
            self.best_result = result
        self.state.last_step = int(step)
        if self.is_chief:
            self.log.record(step, {**result, **self.best_fields()}, best_before, copied)
            self.state.write(self.state_path)
            self._write_json(step, result)
        self.summarize(step, result)
        logging.info("eval at step %d: %s (best %s at step %d)", step,
                     {k: v for k, v in result.items() if np.ndim(v) == 0},
                     self.state.best_value, self.state.best_step)
        self.last = result
        return result

    def evaluate_other(self, step) -> dict:
        """Scores a checkpoint from elsewhere (`--init_checkpoint`): logged, never kept."""
        result = self.evaluate()
        if self.is_chief:
            self.log.record_other(step, {**result, **self.best_fields()}, self.state.best_value)
            self._write_json(step, result)
        self.summarize(step, result)
        self.last = result
        return result

    def finish(self) -> dict:
        return self.log.finish(self) if self.is_chief else (self.last or {})


def _plain(value):
    """A result value as JSON has it (numpy scalars as Python numbers; NaN/inf as strings)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else str(float(value))
    return value if isinstance(value, str) else str(value)
