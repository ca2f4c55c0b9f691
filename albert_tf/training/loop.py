"""The generic train/eval loop: `Trainer(runtime, model, optimizer, task, output_dir)`."""

from __future__ import annotations

import math
import os

import tensorflow as tf
from absl import logging

from albert_tf.errors import TrainingError, UsageError
from albert_tf.models.lora import trained_part
from albert_tf.training.checkpoint_files import CheckpointState
from albert_tf.training.health import TrainingHealth
from albert_tf.training.logs import MetricSums, StepLogger
from albert_tf.training.steps import EvalStep, Objective, TrainStep


class NonFiniteLossError(TrainingError):
    """The loss became NaN or infinite; the run stops and writes no new checkpoint."""


class Trainer:
    """Trains `model` with `optimizer` on `task` under `runtime`, checkpointing in `output_dir`.

    Build the model and the optimizer inside `runtime.scope()` before creating the trainer.
    `dataset_fn(input_context)` must return a dataset of *per-replica* batches of feature dicts
    (batch size `input_context.get_per_replica_batch_size(global_batch_size)`, sharded by
    `input_context` when it has several input pipelines).
    """

    def __init__(self, runtime, model, optimizer, task: Objective, output_dir, keep_checkpoint_max=5,
                 write_summaries=True, health: TrainingHealth | None = None):
        self.runtime = runtime
        self.model = model
        self.optimizer = optimizer
        self.task = task
        self.output_dir = os.fspath(output_dir)
        self.keep_checkpoint_max = keep_checkpoint_max
        self.write_summaries = write_summaries and runtime.is_chief
        tf.io.gfile.makedirs(self.output_dir)
        with runtime.scope():
            optimizer.build(model.trainable_variables)
        self.step_builder = TrainStep(runtime, model, optimizer, task)
        self.train_step = self.step_builder  # the callable run once per step (tests wrap it)
        self._eval_step = None
        self.state = None
        self._last_step = None  # train()'s num_train_steps
        # Watches the loss: a run that does not learn says so (`training.health`).
        self.health = health if health is not None else TrainingHealth()

    @property
    def step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    def _make_state(self):
        extra = {"loss_scale": self.step_builder.loss_scale,
                 "loss_scale_good_steps": self.step_builder.good_steps}
        # A LoRA run's checkpoints hold its adapters and head only (`models.lora`).
        return CheckpointState(self.output_dir, trained_part(self.model), self.optimizer,
                               self.keep_checkpoint_max, self.runtime.is_chief,
                               self.runtime.task_id, **extra)

    def _distribute(self, dataset_fn):
        return self.runtime.strategy.distribute_datasets_from_function(dataset_fn)

    def train(self, dataset_fn, global_batch_size, num_train_steps, save_checkpoints_steps=1000,
              log_every_steps=100, initialize=None, on_checkpoint=None):
        """Runs until the step reaches `num_train_steps`, resuming from the latest checkpoint in
        output_dir if any, else calling `initialize(model)` (model weights only, e.g.
        `lambda model: weights.load(model, init_checkpoint)`; it returns a line for the log).
        `on_checkpoint(step, path)` runs after every save (eval hooks, best-checkpoint keeping).
        Returns the last logged values. As with the original's Estimator, a resumed run
        restarts its input pipeline (the position in the data is not part of the checkpoint)."""
        self._check_batch(global_batch_size)
        self._last_step = num_train_steps
        iterator = iter(self._distribute(dataset_fn))
        self.state = self._make_state()
        restored = self.state.restore_latest()
        if restored:
            logging.info("resuming from %s at step %d", restored, self.step)
        elif initialize is not None:
            logging.info("initialised from %s", initialize(self.model))
        logger = StepLogger(self.output_dir, log_every_steps, global_batch_size, num_train_steps,
                            self.step, self.write_summaries)
        last_saved = self.step if restored else None
        last_good = self.step if restored else None
        values = None
        while self.step < num_train_steps:
            loss, metrics, lr, _ = self.train_step(iterator)
            step = self.step
            loss = float(loss)
            if not math.isfinite(loss):
                raise NonFiniteLossError(self.health.non_finite_message(
                    loss, step, float(lr), last_good, last_saved, self.output_dir))
            last_good = step
            self.health.record_loss(loss)
            values = logger.record(step, loss, metrics, lr) or values
            if save_checkpoints_steps and step % save_checkpoints_steps == 0:
                last_saved = self._save(step, on_checkpoint)
        if last_saved != self.step:
            self._save(self.step, on_checkpoint)
        self.health.check_loss()
        return values

    def _save(self, step, on_checkpoint):
        # Before the hooks: an evaluation records what it found.
        self.health.check_loss(final=step >= self._last_step)
        path = self.state.save(step)
        if path:
            logging.info("saved checkpoint %s", path)
        if on_checkpoint is not None:
            on_checkpoint(step, path)
        return step

    def _check_batch(self, global_batch_size):
        check_batch_split(global_batch_size, self.runtime.num_replicas,
                          self.step_builder.accumulation)

    def evaluate(self, dataset_fn, steps):
        """Runs `steps` batches through `task.metric_fn`; returns {name: Σnum/Σden}."""
        if self.task.metric_fn is None:
            raise ValueError("the task has no metric_fn to evaluate")
        if self._eval_step is None:
            self._eval_step = EvalStep(self.runtime, self.model, self.task)
        return evaluate_batches(self._eval_step, iter(self._distribute(dataset_fn)), steps)


def check_batch_split(global_batch_size: int, replicas: int, accumulation: int) -> None:
    """Each replica's share of the batch must split into `accumulation` equal micro-batches
    (the driver checks it before anything is read or written)."""
    parts = int(replicas) * int(accumulation)
    if int(global_batch_size) % parts:
        on = f" on each of {replicas} replicas" if replicas > 1 else ""
        raise UsageError(
            f"--train_batch_size={global_batch_size} cannot be split into "
            f"--gradient_accumulation_steps={accumulation} equal micro-batches{on}: use a "
            f"--train_batch_size that is a multiple of {parts}, or fewer accumulation steps")


def evaluate_batches(eval_step: EvalStep, iterator, steps) -> dict:
    """Runs up to `steps` batches of `iterator` through `eval_step` (fewer when the data ends);
    returns {name: Σnum/Σden}."""
    sums = MetricSums()
    for _ in range(int(steps)):
        try:
            sums.add(eval_step(iterator))
        except (StopIteration, tf.errors.OutOfRangeError):
            break
    return sums.result()
