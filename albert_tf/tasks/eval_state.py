"""Evaluate each checkpoint, keep the best: the one implementation every task uses.

`best_trial.txt` (`<last evaluated step>:<best step>:<best value>`) records progress, so a re-run
evaluates only newer checkpoints and keeps comparing against the best so far; the best is copied
to `model.ckpt-best` (a copy: nothing is renamed or deleted). How the results file looks is the
task's (`eval_log()`): GLUE's blocks, the SQuAD/RACE runners' lines, pretraining's keys.
Every evaluation's scalar metrics also go to TensorBoard, in `<output_dir>/eval` at the
checkpoint's step, beside the trainer's scalars in `<output_dir>`
(`tensorboard --logdir <output_dir>` shows both).
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.errors import InputError
from albert_tf.io_utils import write_text_atomically
from albert_tf.training.checkpoint_files import BEST_NAME, copy_checkpoint
from albert_tf.training.logs import write_scalar

STATE_NAME = "best_trial.txt"
SUMMARY_DIR = "eval"


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
        self.log.start(self)

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
            self.log.record(step, result, best_before, copied)
            self.state.write(self.state_path)
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
            self.log.record_other(step, result, self.state.best_value)
        self.summarize(step, result)
        self.last = result
        return result

    def finish(self) -> dict:
        return self.log.finish(self) if self.is_chief else (self.last or {})
