"""Pretraining (masked LM + sentence order) as a `Task` (what `run_pretraining.py` runs).

The output_dir describes its model in `albert_config.json` (export_checkpoints.py and later
evaluations rebuild the model from it). A restart with another config is refused before anything
is written, naming the keys that differ. `--do_eval` scores the latest checkpoint (or
`--init_checkpoint` in an eval-only run) over `--max_eval_steps` batches and writes
`eval_results.txt` with the original's keys.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.data.pretraining_dataset import (check_pretraining_files, dataset_fn,
                                                describe_read_error, input_files)
from albert_tf.errors import UsageError
from albert_tf.io_utils import write_text_atomically
from albert_tf.models import AlbertPretrainer
from albert_tf.tasks.base import Task, check_model_inputs
from albert_tf.tasks.driver import Driver
from albert_tf.tasks.eval_log import EvalLog
from albert_tf.tasks.pretraining.objective import pretraining_objective
from albert_tf.tasks.pretraining.config import PretrainingRunConfig
from albert_tf.training.loop import evaluate_batches
from albert_tf.training.steps import EvalStep
from albert_tf.weights.model_folder import check_or_write_config



def format_eval_results(results: dict) -> list[str]:
    """`key = value` lines in sorted key order, values printed as the original's float32
    (a word, such as `health = not_learning`, as it is)."""
    lines = []
    for key in sorted(results):
        value = results[key]
        text = (str(int(value)) if key == "global_step" else
                value if isinstance(value, str) else str(np.float32(value)))
        lines.append(f"{key} = {text}")
    return lines


class PretrainingEvalLog(EvalLog):
    """eval_results.txt as the original writes it: the sorted keys, with a `saved <src> to <dst>`
    line per file copied to `model.ckpt-best` right after `global_step`."""

    def __init__(self, output_dir):
        self.path = os.path.join(output_dir, "eval_results.txt")
        self.result = {}

    def record(self, step, result, best_before, copied):
        # The keys every task's results carry (best_<metric>, best_step) follow the original's.
        best = {k: v for k, v in result.items() if k.startswith("best_")}
        self.result = {"global_step": int(step),
                       **{k: v for k, v in result.items() if k not in best}}
        lines = []
        for line in format_eval_results(self.result):
            lines.append(line)
            if line.startswith("global_step"):
                lines += [f"saved {src} to {dst}" for src, dst in copied]
        lines += [f"{k} = {v}" for k, v in best.items()]
        for line in lines:
            logging.info("  %s", line)
        write_text_atomically(self.path, "\n".join(lines) + "\n")

    def finish(self, evaluator):
        return self.result


class PretrainingTask(Task):
    best_metric = "masked_lm_accuracy"
    best_initial_value = 0.0  # as the original: an accuracy of 0 is never kept as best
    evaluate_during_training = False  # the original scores the latest checkpoint once

    def __init__(self, config: PretrainingRunConfig, inputs=None):
        super().__init__(config, inputs)
        config = self.config  # the filled copy (the caller's is left as given)
        given = config.flags_given
        if given is not None and config.do_eval and "do_train" not in given:
            # The original also trains here (its --do_train defaults to true): docs/differences.md.
            config.do_train = False
            logging.info("--do_eval without --do_train: evaluating only, no training (pass "
                         "--do_train to train first, as the original's default did)")
        self.validate()
        self.albert_config = config.load_albert_config()
        self.files = input_files(config.input_file)
        check_model_inputs(self.albert_config, config.max_seq_length)
        # Before the first step: lengths that do not fit the flags, ids outside the vocabulary.
        check_pretraining_files(self.files, config.max_seq_length, config.max_predictions_per_seq,
                                self.albert_config.vocab_size)
        self.runtime = None  # set by the driver: evaluation runs under its strategy
        self._eval_step = None

    def validate(self):
        cfg = self.config
        cfg.require("albert_config_file", "input_file", "output_dir")
        if not cfg.do_train and not cfg.do_eval:
            raise UsageError("At least one of `do_train` or `do_eval` must be True.")
        if not cfg.sentence_order_loss_weight >= 0:
            raise UsageError("--sentence_order_loss_weight must be >= 0 (0 trains the masked LM "
                             f"alone), got {cfg.sentence_order_loss_weight}")
        if cfg.masked_lm_budget:
            raise UsageError("--masked_lm_budget is not supported: the original never "
                             "implemented on-the-fly masking (its model reads the masked_lm_* "
                             "features)")
        super().validate()

    def prepare_output_dir(self, is_chief):
        """Refuses an output_dir whose albert_config.json describes another model; writes it
        otherwise (before any checkpoint, so the folder always says what its checkpoints hold)."""
        check_or_write_config(self.config.output_dir, self.albert_config,
                              self.config.albert_config_file, is_chief)

    def build_model(self):
        return AlbertPretrainer(self.albert_config)

    def objective(self):
        return pretraining_objective(self.config.sentence_order_loss_weight)

    def train_dataset_fn(self):
        cfg = self.config
        return dataset_fn(self.files, cfg.max_seq_length, cfg.max_predictions_per_seq,
                          cfg.schedule.train_batch_size, True, seed=cfg.shuffle_seed)

    @property
    def does_evaluate(self):
        return bool(self.config.do_eval)

    @property
    def does_predict(self):
        return False

    def evaluate(self, model) -> dict:
        cfg = self.config
        if self._eval_step is None:
            self._eval_step = EvalStep(self.runtime, model, self.objective())
        data = self.runtime.strategy.distribute_datasets_from_function(
            dataset_fn(self.files, cfg.max_seq_length, cfg.max_predictions_per_seq,
                       cfg.schedule.eval_batch_size, False))
        return evaluate_batches(self._eval_step, iter(data), cfg.max_eval_steps)

    def eval_log(self):
        return PretrainingEvalLog(self.config.output_dir)

    def describe_error(self, error):
        return describe_read_error(error, self.files)


def run_pretraining(config: PretrainingRunConfig, runtime=None) -> dict:
    """Trains and/or evaluates as the original script; returns the eval results (or {})."""
    return Driver.create(PretrainingTask, config, runtime).run().get("eval") or {}
