"""Checkpoints written by our training (object-graph names: `tf.train.Checkpoint(model=...)`):
telling them from the original's TF1 ones, their step, restoring one into a model, and
exporting one with the original's TF1 names."""

from __future__ import annotations

import os

import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.errors import UsageError
from albert_tf.models import AlbertModel, AlbertPretrainer
from albert_tf.weights.model_folder import CONFIG_NAME, list_checkpoints
from albert_tf.weights.tf1_checkpoint import (CheckpointError, resolve_prefix,
                                              restore_mismatch_error, save_tf1_checkpoint)


def variable_shapes(prefix) -> dict:
    """{variable name: shape} of a checkpoint; one CheckpointError when it cannot be read."""
    try:
        return tf.train.load_checkpoint(os.fspath(prefix)).get_variable_to_shape_map()
    except (tf.errors.OpError, ValueError) as error:  # a damaged or foreign index file
        raise CheckpointError(f"{prefix}: not a readable checkpoint "
                              f"({str(error).splitlines()[0][:200]})") from None


def has_tf1_names(names) -> bool:
    """Whether a checkpoint's variable names are the original's (under any `module/` scope)."""
    return any(n.endswith("bert/embeddings/word_embeddings") for n in names)


def is_tf1_checkpoint(prefix) -> bool:
    """True for a checkpoint written by the original code (or `save_tf1_checkpoint`)."""
    return has_tf1_names(variable_shapes(prefix))


def checkpoint_step(prefix) -> int:
    """The global step stored in a checkpoint: ours (the optimizer's iterations) or a TF1 one
    (`global_step`); 0 when it has none."""
    reader = tf.train.load_checkpoint(os.fspath(prefix))
    for name in reader.get_variable_to_shape_map():
        if name == "global_step" or name.startswith(("optimizer/_iterations/",
                                                      "optimizer/iterations/")):
            return int(reader.get_tensor(name))
    return 0


def restore_ours(model, prefix) -> tuple[str, list]:
    """Restores one of our checkpoints into `model`: the encoder must be complete in the
    checkpoint; heads are taken where present.

    A pretraining checkpoint warm-starts a task model whose head it never had, as the original's
    name-based init does; a checkpoint of the same task (predict, export) restores the head too.
    Returns (description, names of the heads restored).
    """
    encoder = model if isinstance(model, AlbertModel) else model.encoder
    saved = tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    if isinstance(model, AlbertModel) and any(n.startswith("model/embeddings/") for n in saved):
        root = tf.train.Checkpoint(model=encoder)  # the checkpoint holds a bare encoder
    else:
        root = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder))
    try:
        root.read(prefix).expect_partial().assert_existing_objects_matched()
    except (AssertionError, ValueError) as error:
        raise not_this_model(error, model, prefix) from None
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


def not_this_model(error, model, prefix) -> CheckpointError:
    """One line for a checkpoint of ours that does not fit `model`: the variable, both shapes
    and the config key when it is a shape mismatch."""
    return restore_mismatch_error(error, model, prefix) or CheckpointError(
        f"{prefix} does not hold this model (another config or task?): "
        f"{str(error).splitlines()[0][:300]}")


class MissingConfigError(UsageError, FileNotFoundError):
    """The folder given is not a run_pretraining output_dir (no albert_config.json)."""


def export_tf1_checkpoint(albert_directory, export_path, checkpoint_name=None) -> str:
    """Turns a checkpoint written by our training (in a run_pretraining output_dir, which holds
    `albert_config.json`) into a TF1-named one with `bert/*`, `cls/*` and `global_step` and no
    optimizer slots, like the archives the original ships. `checkpoint_name` is a file prefix
    inside the directory (e.g. `model.ckpt-best`, `model.ckpt-5000`); None the one the folder
    serves (`model.ckpt-best`, else the newest: `model_folder.find_checkpoint`); `latest` the
    newest."""
    directory = os.fspath(albert_directory)
    config_file = os.path.join(directory, CONFIG_NAME)
    if not tf.io.gfile.exists(config_file):
        raise MissingConfigError(f"--albert_directory={directory}: albert_config.json not found "
                                 "there (it must be a run_pretraining output_dir)")
    if checkpoint_name in (None, ""):
        prefix = resolve_prefix(directory)
    elif checkpoint_name == "latest":
        saved = list_checkpoints(directory)
        prefix = resolve_prefix(saved[-1][1] if saved else directory)
    else:
        prefix = resolve_prefix(os.path.join(directory, checkpoint_name))
    if is_tf1_checkpoint(prefix):
        raise CheckpointError(f"{prefix} already has TF1 names; nothing to export")
    model = AlbertPretrainer(AlbertConfig.from_json_file(config_file))
    try:
        tf.train.Checkpoint(model=model).read(prefix).expect_partial() \
            .assert_existing_objects_matched()
    except (AssertionError, ValueError) as error:
        raise not_this_model(error, model, prefix) from None
    return save_tf1_checkpoint(model, os.fspath(export_path), checkpoint_step(prefix))
