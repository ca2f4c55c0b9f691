"""Reader for TF1 checkpoints (the original's, a TF-Hub v1 module's variables) and ours."""

from __future__ import annotations

import os

import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.labels import LabelFile
from albert_tf.models import AlbertMultipleChoice
from albert_tf.weights.heads import labelled_heads, our_heads, tf1_heads
from albert_tf.weights.model_folder import (CONFIG_NAME, SPM_NAMES, VOCAB_NAMES, first_file,
                                            read_lengths)
from albert_tf.weights.our_checkpoints import has_tf1_names, variable_shapes
from albert_tf.weights.source import WeightSource, problem_type
from albert_tf.weights.stable import open_stable
from albert_tf.weights.tf1_checkpoint import resolve_prefix


MULTIPLE_CHOICE = AlbertMultipleChoice.HEAD_ID


def is_checkpoint(path: str) -> bool:
    if tf.io.gfile.exists(path + ".index"):
        return True
    if not tf.io.gfile.isdir(path):
        return False
    # A released archive has model.ckpt-best.* but no `checkpoint` state file.
    return tf.train.latest_checkpoint(path) is not None or any(
        name.endswith(".index") for name in tf.io.gfile.listdir(path))


def is_tfhub_module(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "tfhub_module.pb"))


def read_checkpoint(path: str) -> WeightSource:
    """A checkpoint prefix or folder: the original's TF1 names (`format="tf1"`) are read lazily
    by the loader from `checkpoint_prefix`; ours (`format="albert_tf"`) likewise. Config and
    tokenizer files are taken from the folder when it has them (a run's output_dir)."""
    if tf.io.gfile.isdir(path):  # its newest checkpoint, which a run may rotate away meanwhile
        prefix, shapes = open_stable(path, variable_shapes)
    else:
        prefix = resolve_prefix(path)
        shapes = variable_shapes(prefix)
    folder = path if tf.io.gfile.isdir(path) else os.path.dirname(prefix) or "."
    config = None
    config_file = os.path.join(folder, CONFIG_NAME)
    if tf.io.gfile.exists(config_file):
        config = AlbertConfig.from_json_file(config_file)
    tf1 = has_tf1_names(shapes)
    heads, num_labels = tf1_heads(shapes) if tf1 else our_heads(shapes)
    # A multiple-choice head's weights are a one-label classifier's by name and shape: a RACE
    # run's labels.json says which (task_type multiple_choice), so its folder serves as RACE.
    if LabelFile.read(folder).task_type == MULTIPLE_CHOICE and num_labels == 1:
        heads = type(heads)(MULTIPLE_CHOICE if h == "classifier" else h for h in heads)
    # The label (or tag) names of our run (its labels.json), or of a folder converted from one.
    labelled = [head for head in heads if head in labelled_heads()]
    labels = LabelFile.read(folder).for_head(num_labels, labelled[0], prefix) if labelled else None
    return WeightSource(
        path=path, format="tf1" if tf1 else "albert_tf", config=config,
        checkpoint_prefix=prefix, heads=heads, num_labels=num_labels, labels=labels,
        problem_type=problem_type(folder) if "classifier" in heads else None,
        spm_model_file=first_file(folder, SPM_NAMES), vocab_file=first_file(folder, VOCAB_NAMES),
        sequence_length=read_lengths(folder).get("max_seq_length"))  # its run's, if recorded


def read_tfhub_module(path: str) -> WeightSource:
    """A TF-Hub v1 module folder: its variables are a TF1 checkpoint under `module/` (the loader
    strips the scope), its SentencePiece model sits in `assets/`."""
    assets = os.path.join(path, "assets")
    source = read_checkpoint(os.path.join(path, "variables", "variables"))
    source.path, source.format = path, "tfhub"
    source.spm_model_file = first_file(assets, SPM_NAMES) or _any_spm(assets)
    source.vocab_file = first_file(assets, VOCAB_NAMES)
    return source


def _any_spm(folder):
    if not os.path.isdir(folder):
        return None
    models = sorted(n for n in os.listdir(folder) if n.endswith(".model"))
    return os.path.join(folder, models[0]) if len(models) == 1 else None
