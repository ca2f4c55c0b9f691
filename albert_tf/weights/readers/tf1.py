"""Reader for TF1 checkpoints (the original's, a TF-Hub v1 module's variables) and ours."""

from __future__ import annotations

import os

import tensorflow as tf

from albert_tf.convert.source import WeightSource, register_reader
from albert_tf.model_folder import SPM_NAMES, VOCAB_NAMES, first_file


def _is_checkpoint(path: str) -> bool:
    if tf.io.gfile.exists(path + ".index"):
        return True
    if not tf.io.gfile.isdir(path):
        return False
    # A released archive has model.ckpt-best.* but no `checkpoint` state file.
    return tf.train.latest_checkpoint(path) is not None or any(
        name.endswith(".index") for name in tf.io.gfile.listdir(path))


def _is_tfhub_module(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "tfhub_module.pb"))


def read_checkpoint(path: str) -> WeightSource:
    """A checkpoint prefix or folder: the original's TF1 names (`format="tf1"`) are read lazily
    by the loader from `checkpoint_prefix`; ours (`format="albert_tf"`) likewise. Config and
    tokenizer files are taken from the folder when it has them (a run's output_dir)."""
    from albert_tf.model_folder import find_checkpoint
    from albert_tf.training.checkpoints import is_tf1_checkpoint, resolve_checkpoint

    prefix = find_checkpoint(path) if tf.io.gfile.isdir(path) else resolve_checkpoint(path)
    shapes = _variable_shapes(prefix)
    folder = path if tf.io.gfile.isdir(path) else os.path.dirname(prefix) or "."
    config = None
    config_file = os.path.join(folder, "albert_config.json")
    if tf.io.gfile.exists(config_file):
        from albert_tf.config import AlbertConfig
        config = AlbertConfig.from_json_file(config_file)
    tf1 = is_tf1_checkpoint(prefix)
    heads, num_labels = tf1_heads(shapes) if tf1 else our_heads(shapes)
    return WeightSource(
        path=path, format="tf1" if tf1 else "albert_tf", config=config,
        checkpoint_prefix=prefix, heads=heads, num_labels=num_labels,
        spm_model_file=first_file(folder, SPM_NAMES), vocab_file=first_file(folder, VOCAB_NAMES))


def _variable_shapes(prefix) -> dict:
    from albert_tf.checkpoint import CheckpointError

    try:
        return tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    except (tf.errors.OpError, ValueError) as error:  # a damaged or foreign index file
        raise CheckpointError(f"{prefix}: not a readable checkpoint "
                              f"({str(error).splitlines()[0][:200]})") from None


def tf1_heads(shapes) -> tuple[tuple, int | None]:
    """(heads, classifier label count) of TF1 variable names (any `module/`-like scope).

    A root `output_weights` of shape [n, H] is a classifier with n labels. RACE's multiple-choice
    head is also a root [1, H] `output_weights`: by names and shapes it cannot be told from a
    one-label (regression) classifier, so it is reported as `classifier` with 1 label (it still
    loads into run_race's model, which takes the same names)."""
    names = {n.split("/", 1)[1] if n.startswith("module/") else n: s for n, s in shapes.items()}
    heads, num_labels = [], None
    if any(n.startswith("cls/predictions/") for n in names):
        heads.append("mlm")
    if any(n.startswith("cls/seq_relationship/") for n in names):
        heads.append("sop")
    if "output_weights" in names and len(names["output_weights"]) == 2:
        heads.append("classifier")
        num_labels = int(names["output_weights"][0])
    if any(n.startswith("cls/squad/") for n in names):
        heads.append("squad_v1")
    if any(n.startswith("start_logits/") for n in names) and \
            any(n.startswith("answer_class/") for n in names):
        heads.append("squad_v2")
    return tuple(heads), num_labels


def our_heads(shapes) -> tuple[tuple, int | None]:
    """(heads, classifier label count) of one of our training checkpoints (object-graph names:
    `model/<attribute>/...`, the head's weights being the task model's own attributes).

    Object-graph names keep attributes, not classes: a root `output_weights` [n, H] is reported
    as a classifier with n labels, although run_squad's v1 head ([2, H]) and run_race's ([1, H])
    have the same attribute; each still loads into its own task's model."""
    attrs = {}
    for name, shape in shapes.items():
        parts = name.split("/")
        if len(parts) > 2 and parts[0] == "model" and parts[1] != "encoder":
            attrs.setdefault(parts[1], shape)
    heads, num_labels = [], None
    if "masked_lm" in attrs:
        heads.append("mlm")
    if "sentence_order" in attrs:
        heads.append("sop")
    if "output_weights" in attrs and len(attrs["output_weights"]) == 2:
        heads.append("classifier")
        num_labels = int(attrs["output_weights"][0])
    if any(a.startswith("answer_dense") for a in attrs):
        heads.append("squad_v2")
    return tuple(heads), num_labels


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


register_reader("tfhub", _is_tfhub_module, read_tfhub_module)
register_reader("checkpoint", _is_checkpoint, read_checkpoint)
