"""Training checkpoints in an output_dir: save every N steps (never non-finite weights), keep N,
resume from the latest, find the last good one, copy one (the best) aside. Loading weights from
any source into a model is `albert_tf.weights.load`'s."""

from __future__ import annotations

import os
import shutil

import numpy as np
import tensorflow as tf

from albert_tf.errors import CheckpointError, OutputError, TrainingError
from albert_tf.io_utils import atomic_output
from albert_tf.tf_errors import first_line
# The files' names (model.ckpt-<step>, model.ckpt-best) and their listing: the model folder's.
from albert_tf.weights.model_folder import CHECKPOINT_NAME, list_checkpoints


def nonfinite_variables(variables) -> list[str]:
    """Names of the variables holding NaN or ±inf."""
    return [v.path if hasattr(v, "path") else v.name for v in variables
            if not bool(tf.reduce_all(tf.math.is_finite(tf.cast(v, tf.float32))))]


def checkpoint_is_finite(prefix) -> bool:
    """Whether every floating-point tensor in a checkpoint on disk is finite."""
    reader = tf.train.load_checkpoint(os.fspath(prefix))
    for name, dtype in reader.get_variable_to_dtype_map().items():
        if dtype.is_floating and not np.isfinite(reader.get_tensor(name)).all():
            return False
    return True


def last_good_checkpoint(directory, before_step=None):
    """(step, prefix) of the newest checkpoint with finite weights (older than `before_step`)."""
    for step, prefix in reversed(list_checkpoints(directory)):
        if (before_step is None or step < before_step) and checkpoint_is_finite(prefix):
            return step, prefix
    return None


class CheckpointState:
    """A `tf.train.Checkpoint(model, optimizer, [extra])` managed in `directory`.

    The step is the optimizer's `iterations`. On non-chief workers (multi-worker training) the
    files go to a private temporary folder that is removed, as tf.distribute requires every
    worker to take part in saving.
    """

    def __init__(self, directory, model, optimizer, keep_checkpoint_max=5, is_chief=True,
                 task_id=0, **extra):
        self.directory = os.fspath(directory)
        self.is_chief = is_chief
        self.checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, **extra)
        self.optimizer = optimizer
        save_dir = self.directory if is_chief else os.path.join(
            self.directory, f".worker_{task_id}_tmp")
        self.manager = tf.train.CheckpointManager(
            self.checkpoint, save_dir, max_to_keep=keep_checkpoint_max,
            checkpoint_name=CHECKPOINT_NAME)

    @property
    def step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    @property
    def latest(self):
        return tf.train.latest_checkpoint(self.directory)

    def restore_latest(self):
        """Restores model, optimizer slots and step from the latest checkpoint in the directory;
        returns its path, or None when there is none (a fresh run). A checkpoint whose weights
        are not finite is never resumed from: the error names the last good one."""
        latest = self.latest
        if latest is None:
            return None
        try:
            self.checkpoint.restore(latest).assert_existing_objects_matched()
        except (AssertionError, ValueError) as error:
            raise CheckpointError(
                f"{latest} does not fit this model (was --output_dir written by another model "
                f"or task?): {str(error).splitlines()[0]}") from None
        bad = nonfinite_variables(self.checkpoint.model.weights)
        if bad:
            good = last_good_checkpoint(self.directory, before_step=self.step)
            hint = (f"the last good checkpoint is {good[1]} (step {good[0]}): delete the later "
                    f"ones to resume from it" if good else "no earlier checkpoint is finite")
            raise TrainingError(f"{latest} holds non-finite weights ({bad[0]}); not resuming "
                                f"from it; {hint}")
        return latest

    def save(self, step=None) -> str | None:
        """Saves unless a weight is NaN/inf (then TrainingError: nothing is written)."""
        step = self.step if step is None else step
        bad = nonfinite_variables(self.checkpoint.model.weights)
        if bad:
            good = last_good_checkpoint(self.directory) if self.is_chief else None
            raise TrainingError(
                f"weights became non-finite at step {step} ({bad[0]}); no checkpoint written; "
                + (f"the last good checkpoint is {good[1]} (step {good[0]})" if good
                   else "there is no earlier checkpoint"))
        try:
            path = self.manager.save(checkpoint_number=step)
        except tf.errors.OpError as error:  # full disk, file size limit, lost permission
            for leftover in tf.io.gfile.glob(os.path.join(
                    self.manager.directory, f"{CHECKPOINT_NAME}-{step}_temp*")):
                tf.io.gfile.rmtree(leftover)
            latest = self.latest
            raise OutputError(
                f"could not write checkpoint {CHECKPOINT_NAME}-{step} in {self.directory} "
                f"({first_line(error.message).split('; ')[-1]}); the latest complete one is "
                f"{latest or 'none'}") from None
        if not self.is_chief:
            shutil.rmtree(self.manager.directory, ignore_errors=True)
            return None
        return path


def copy_checkpoint(src_prefix, dst_prefix) -> list[tuple[str, str]]:
    """Copies a checkpoint's files (index, data shards, and a .meta if any) to `dst_prefix`,
    each through a temporary name; returns [(src, dst)] per file. Leaves the `checkpoint` state
    file alone, so the manager never sees (or deletes) the copy."""
    directory = os.path.dirname(src_prefix)
    base = os.path.basename(src_prefix)
    copied = []
    suffixes = sorted(n[len(base):] for n in os.listdir(directory)
                      if n.startswith(base + ".") and (".data-" in n or n.endswith((".index", ".meta"))))
    # Data first and the index last: the index marks a complete checkpoint.
    suffixes.sort(key=lambda s: s == ".index")
    for suffix in suffixes:
        src, dst = src_prefix + suffix, dst_prefix + suffix
        with atomic_output(dst) as tmp:
            shutil.copyfile(src, tmp)
        copied.append((src, dst))
    return copied
