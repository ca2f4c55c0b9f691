"""Training checkpoints in an output_dir: save every N steps, keep N, resume from the latest,
initialise from an original TF1 checkpoint or one of ours, copy one (the best) aside."""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import tensorflow as tf

from albert_tf.checkpoint import CheckpointError
from albert_tf.checkpoint import resolve_prefix as resolve_checkpoint
from albert_tf.errors import OutputError, TrainingError, UsageError
from albert_tf.tf_errors import first_line
from albert_tf.io_utils import atomic_output

CHECKPOINT_NAME = "model.ckpt"  # files model.ckpt-<step>.{index,data-*}, as the original's
BEST_NAME = "model.ckpt-best"
_STEP_INDEX = re.compile(r"^model\.ckpt-(\d+)\.index$")


def list_checkpoints(directory) -> list[tuple[int, str]]:
    """(step, prefix) of every `model.ckpt-<step>` in `directory`, by step (`-best` excluded)."""
    directory = os.fspath(directory)
    if not tf.io.gfile.isdir(directory):
        return []
    found = []
    for name in tf.io.gfile.listdir(directory):
        match = _STEP_INDEX.match(name)
        if match:
            found.append((int(match.group(1)), os.path.join(directory, name[:-len(".index")])))
    return sorted(found)


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


def is_tf1_checkpoint(prefix) -> bool:
    """True for a checkpoint written by the original code (or `save_tf1_checkpoint`)."""
    try:
        names = tf.train.load_checkpoint(os.fspath(prefix)).get_variable_to_shape_map()
    except (tf.errors.OpError, ValueError) as error:  # a damaged or foreign index file
        raise CheckpointError(f"{prefix}: not a readable checkpoint "
                              f"({str(error).splitlines()[0][:200]})") from None
    return any(n.endswith("bert/embeddings/word_embeddings") for n in names)


# The head names of `convert.source.HEADS` each model class carries (by class name, so a
# subclass keeps its parent's).
MODEL_HEADS = {"AlbertPretrainer": ("mlm", "sop"), "AlbertClassifier": ("classifier",),
               "AlbertSquadV1": ("squad_v1",), "AlbertSquadV2": ("squad_v2",),
               "AlbertMultipleChoice": ("multiple_choice",)}


def model_heads(model) -> tuple:
    for cls in type(model).__mro__:
        if cls.__name__ in MODEL_HEADS:
            return MODEL_HEADS[cls.__name__]
    return ()


def init_from_checkpoint(model, path, init_from_group0=False, require_head=False):
    """Loads model weights (not optimizer slots, as the original) from any weight source
    `convert.open_source` reads: an original TF1 checkpoint, a TF-Hub v1 module, one written by
    this package's training, or converted arrays (Hugging Face, keras-hub). Returns one line
    saying what was loaded and what was left (heads of the source the model has no use for,
    heads of the model the source lacks).

    `require_head=True` (prediction and export): a task model whose head the checkpoint does
    not hold (a pretraining checkpoint) is refused rather than used with an untrained head.
    """
    from albert_tf.checkpoint import ArrayReader, load_tf1_checkpoint, load_tf1_weights
    from albert_tf.convert.source import WeightSource, open_source

    source = path if isinstance(path, WeightSource) else open_source(path)
    if source.arrays is not None or source.format != "albert_tf":
        if source.arrays is not None:
            report = load_tf1_weights(model, ArrayReader(source.arrays), source.path,
                                      init_from_group0)
        else:
            report = load_tf1_checkpoint(model, source.checkpoint_prefix, init_from_group0)
        heads = [] if not _has_head(model) else [
            h for h in model_heads(model) if _head_loaded(h, report.loaded)]
        description = f"{source.describe()}: {len(report.loaded)} variables loaded"
        if report.from_group0:
            description += f" ({len(report.from_group0)} from group_0)"
    else:
        description, attributes = _init_from_our_checkpoint(model, source.checkpoint_prefix)
        heads = list(model_heads(model)) if attributes else []
    wanted = model_heads(model) if _has_head(model) else ()
    left = [h for h in source.heads if h not in wanted and not
            (h == "classifier" and "multiple_choice" in wanted)]
    missing = [h for h in wanted if h not in heads]
    description += (f"; heads loaded: {', '.join(heads) or 'none'}"
                    + (f"; not used: {', '.join(left)}" if left else "")
                    + (f"; not in the source (left at their init): {', '.join(missing)}"
                       if missing else ""))
    if require_head and not heads and _has_head(model):
        raise CheckpointError(
            f"{source.path} holds no trained head for {type(model).__name__} (it is a "
            f"pretraining checkpoint): train first (--do_train) or pass a fine-tuned "
            f"--init_checkpoint")
    return description


def _head_loaded(head, loaded) -> bool:
    prefixes = {"mlm": ("cls/predictions/",), "sop": ("cls/seq_relationship/",),
                "classifier": ("output_",), "multiple_choice": ("output_",),
                "squad_v1": ("cls/squad/",), "squad_v2": ("start_logits/", "end_logits/",
                                                          "answer_class/")}[head]
    return any(n.startswith(prefixes) for n in loaded)


def _has_head(model) -> bool:
    from albert_tf.models import AlbertModel

    return not isinstance(model, AlbertModel)


def _init_from_our_checkpoint(model, prefix):
    """The encoder must be complete in the checkpoint; heads are taken where present.

    A pretraining checkpoint warm-starts a task model whose head it never had, as the original's
    name-based init does; a checkpoint of the same task (predict, export) restores the head too.
    Returns (description, names of the heads restored).
    """
    from albert_tf.models import AlbertModel

    encoder = model if isinstance(model, AlbertModel) else model.encoder
    saved = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    if isinstance(model, AlbertModel) and any(n.startswith("model/embeddings/") for n in saved):
        root = tf.train.Checkpoint(model=encoder)  # the checkpoint holds a bare encoder
    else:
        root = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder))
    try:
        root.read(prefix).expect_partial().assert_existing_objects_matched()
    except (AssertionError, ValueError) as error:
        raise _not_this_model(error, model, prefix) from None
    heads = [] if isinstance(model, AlbertModel) else _head_names(model, saved)
    if heads:
        tf.train.Checkpoint(model=model).read(prefix).expect_partial()
    return f"checkpoint {prefix}: encoder restored", heads


def _head_names(model, saved) -> list:
    """Attributes of `model` besides its encoder that the checkpoint has values for."""
    found = set()
    for name in saved:
        parts = name.split("/")
        if len(parts) > 2 and parts[0] == "model" and parts[1] != "encoder" and hasattr(model, parts[1]):
            found.add(parts[1])
    return sorted(found)


def checkpoint_step(prefix) -> int:
    """The global step stored in a checkpoint: ours (the optimizer's iterations) or a TF1 one
    (`global_step`); 0 when it has none."""
    reader = tf.train.load_checkpoint(os.fspath(prefix))
    for name in reader.get_variable_to_shape_map():
        if name == "global_step" or name.startswith(("optimizer/_iterations/",
                                                      "optimizer/iterations/")):
            return int(reader.get_tensor(name))
    return 0


def _not_this_model(error, model, prefix) -> CheckpointError:
    """One line for a checkpoint of ours that does not fit `model`: the variable, both shapes
    and the config key when it is a shape mismatch."""
    from albert_tf.checkpoint import restore_mismatch_error

    return restore_mismatch_error(error, model, prefix) or CheckpointError(
        f"{prefix} does not hold this model (another config or task?): "
        f"{str(error).splitlines()[0][:300]}")


class MissingConfigError(UsageError, FileNotFoundError):
    """The folder given is not a run_pretraining output_dir (no albert_config.json)."""


def export_tf1_checkpoint(albert_directory, export_path, checkpoint_name=None) -> str:
    """Turns a checkpoint written by our training (in a run_pretraining output_dir, which holds
    `albert_config.json`) into a TF1-named one with `bert/*`, `cls/*` and `global_step` and no
    optimizer slots, like the archives the original ships. `checkpoint_name` is a file prefix
    inside the directory (e.g. `model.ckpt-best`, `model.ckpt-5000`) or None/`latest`."""
    from albert_tf.checkpoint import save_tf1_checkpoint
    from albert_tf.config import AlbertConfig
    from albert_tf.models import AlbertPretrainer

    directory = os.fspath(albert_directory)
    config_file = os.path.join(directory, "albert_config.json")
    if not tf.io.gfile.exists(config_file):
        raise MissingConfigError(f"--albert_directory={directory}: albert_config.json not found "
                                 "there (it must be a run_pretraining output_dir)")
    if checkpoint_name in (None, "", "latest"):
        prefix = resolve_checkpoint(directory)
    else:
        prefix = resolve_checkpoint(os.path.join(directory, checkpoint_name))
    if is_tf1_checkpoint(prefix):
        raise CheckpointError(f"{prefix} already has TF1 names; nothing to export")
    model = AlbertPretrainer(AlbertConfig.from_json_file(config_file))
    try:
        tf.train.Checkpoint(model=model).read(prefix).expect_partial() \
            .assert_existing_objects_matched()
    except (AssertionError, ValueError) as error:
        raise _not_this_model(error, model, prefix) from None
    return save_tf1_checkpoint(model, os.fspath(export_path), checkpoint_step(prefix))


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
