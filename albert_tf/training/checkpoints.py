"""Training checkpoints in an output_dir: save every N steps, keep N, resume from the latest,
initialise from an original TF1 checkpoint or one of ours, keep a copy of the best one."""

from __future__ import annotations

import os
import shutil
import uuid

import tensorflow as tf

from albert_tf.checkpoint import resolve_prefix as resolve_checkpoint

CHECKPOINT_NAME = "model.ckpt"  # files model.ckpt-<step>.{index,data-*}, as the original's
BEST_NAME = "model.ckpt-best"


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
        returns its path, or None when there is none (a fresh run)."""
        latest = self.latest
        if latest is None:
            return None
        self.checkpoint.restore(latest).assert_existing_objects_matched()
        return latest

    def save(self, step=None) -> str | None:
        path = self.manager.save(checkpoint_number=self.step if step is None else step)
        if not self.is_chief:
            shutil.rmtree(self.manager.directory, ignore_errors=True)
            return None
        return path


def is_tf1_checkpoint(prefix) -> bool:
    """True for a checkpoint written by the original code (or `save_tf1_checkpoint`)."""
    names = tf.train.load_checkpoint(os.fspath(prefix)).get_variable_to_shape_map()
    return any(n.endswith("bert/embeddings/word_embeddings") for n in names)


def init_from_checkpoint(model, path, init_from_group0=False):
    """Loads model weights (not optimizer slots, as the original) from an original TF1
    checkpoint or one written by this package's training. Returns a short description."""
    from albert_tf.checkpoint import load_tf1_checkpoint

    prefix = resolve_checkpoint(path)
    if is_tf1_checkpoint(prefix):
        report = load_tf1_checkpoint(model, prefix, init_from_group0=init_from_group0)
        return f"TF1 checkpoint {prefix}: {len(report.loaded)} variables loaded"
    return _init_from_our_checkpoint(model, prefix)


def _init_from_our_checkpoint(model, prefix) -> str:
    """The encoder must be complete in the checkpoint; heads are taken where present.

    A pretraining checkpoint warm-starts a task model whose head it never had, as the original's
    name-based init does; a checkpoint of the same task (predict, export) restores the head too.
    """
    from albert_tf.models import AlbertModel

    encoder = model if isinstance(model, AlbertModel) else model.encoder
    saved = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    if isinstance(model, AlbertModel) and not any(n.startswith("model/embeddings/") for n in saved):
        root = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder))  # ours: task model
    elif isinstance(model, AlbertModel):
        root = tf.train.Checkpoint(model=encoder)  # the checkpoint holds a bare encoder
    else:
        root = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder))
    root.read(prefix).expect_partial().assert_existing_objects_matched()
    heads = [] if isinstance(model, AlbertModel) else _head_names(model, saved)
    if heads:
        tf.train.Checkpoint(model=model).read(prefix).expect_partial()
    return f"checkpoint {prefix}: encoder restored" + (f", heads {heads}" if heads else "")


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
        raise FileNotFoundError(f"{config_file} not found: --albert_directory must be a "
                                f"run_pretraining output_dir")
    if checkpoint_name in (None, "", "latest"):
        prefix = resolve_checkpoint(directory)
    else:
        prefix = resolve_checkpoint(os.path.join(directory, checkpoint_name))
    if is_tf1_checkpoint(prefix):
        raise ValueError(f"{prefix} already has TF1 names; nothing to export")
    model = AlbertPretrainer(AlbertConfig.from_json_file(config_file))
    status = tf.train.Checkpoint(model=model).read(prefix)
    status.expect_partial().assert_existing_objects_matched()
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
        tmp = f"{dst}.tmp-{uuid.uuid4().hex}"
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        copied.append((src, dst))
    return copied


class BestCheckpointKeeper:
    """Keeps `<dir>/model.ckpt-best.*` as a copy of the checkpoint with the best metric seen.

    `update(metric_value, checkpoint_prefix)` copies when the value beats the best so far
    (`higher_is_better`), and returns [(src, dst)] of the files copied. Only files named
    `model.ckpt-best.*` are ever (over)written; nothing is deleted.
    """

    def __init__(self, directory, metric="masked_lm_accuracy", higher_is_better=True,
                 initial=None, name=BEST_NAME):
        self.directory = os.fspath(directory)
        self.metric = metric
        self.higher_is_better = higher_is_better
        self.best = initial if initial is not None else (0.0 if higher_is_better else float("inf"))
        self.prefix = os.path.join(self.directory, name)

    def is_better(self, value) -> bool:
        return value > self.best if self.higher_is_better else value < self.best

    def update(self, value, checkpoint_prefix) -> list[tuple[str, str]]:
        if checkpoint_prefix is None or not self.is_better(value):
            return []
        self.best = value
        return copy_checkpoint(checkpoint_prefix, self.prefix)
