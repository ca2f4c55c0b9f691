"""What readers and writers of every format share: the E→H projection when E == H, the pooler
some formats lack, and a source's TF1-named arrays whatever it was read from."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.models import HEAD_CLASSES, AlbertModel, AlbertPretrainer
from albert_tf.weights import tf1_names as names
from albert_tf.weights.heads import labelled_heads
from albert_tf.weights.our_checkpoints import restore_ours
from albert_tf.weights.source import SourceError
from albert_tf.weights.stable import read_stable
from albert_tf.weights.tf1_checkpoint import is_ignored, scope_prefix, tf1_weights

PROJECTION_KERNEL, PROJECTION_BIAS = (row[0] for row in names.PROJECTION)
POOLER_KERNEL, POOLER_BIAS = (row[0] for row in names.POOLER)


def drop_identity_projection(arrays: dict, config, label: str) -> None:
    """HF and keras-hub always hold an E→H projection; the original (and our model) has none
    when embedding_size == hidden_size. An identity projection (what our writers emit then) is
    dropped; any other cannot be expressed and is refused, naming the config key."""
    if config.embedding_size != config.hidden_size or PROJECTION_KERNEL not in arrays:
        return
    kernel, bias = arrays[PROJECTION_KERNEL], arrays.get(PROJECTION_BIAS)
    identity = np.eye(config.hidden_size, dtype=np.float32)
    if (kernel.shape == identity.shape and np.allclose(kernel, identity, atol=1e-6)
            and (bias is None or np.allclose(bias, 0.0, atol=1e-6))):
        del arrays[PROJECTION_KERNEL]
        arrays.pop(PROJECTION_BIAS, None)
        return
    raise SourceError(
        f"{label}: embedding_size == hidden_size ({config.hidden_size}) but the weights hold a "
        f"trained embedding_hidden_mapping_in projection, which an ALBERT model with equal sizes "
        f"does not have (config key embedding_size)")


def identity_projection(config) -> dict:
    """The E→H projection HF and keras-hub need when our model has none (E == H): identity."""
    return {PROJECTION_KERNEL: np.eye(config.hidden_size, dtype=np.float32),
            PROJECTION_BIAS: np.zeros((config.hidden_size,), np.float32)}


def fill_pooler(arrays: dict, config) -> tuple:
    """Zeros for a pooler the source lacks (our encoder always has one); the names filled."""
    if POOLER_KERNEL in arrays:
        return ()
    h = config.hidden_size
    arrays[POOLER_KERNEL] = np.zeros((h, h), np.float32)
    arrays[POOLER_BIAS] = np.zeros((h,), np.float32)
    return (POOLER_KERNEL, POOLER_BIAS)


def source_arrays(source) -> dict:
    """{TF1 name: float32 array} of a `WeightSource`: its arrays, or every model variable of
    its TF1 checkpoint with the TF-Hub `module/` scope stripped (slots and step left out).
    Our own training checkpoints are read through the model (`albert_tf_arrays`)."""
    if source.arrays is not None:
        return dict(source.arrays)
    # A run still training in the folder may rotate the checkpoint away: read the newest then.
    return read_stable(source, _checkpoint_arrays)


def _checkpoint_arrays(source) -> dict:
    if source.format == "albert_tf":
        return albert_tf_arrays(source)
    reader = tf.train.load_checkpoint(source.checkpoint_prefix)
    shapes = reader.get_variable_to_shape_map()
    scope = scope_prefix(shapes)
    return {n[len(scope):]: np.asarray(reader.get_tensor(n), np.float32) for n in shapes
            if n.startswith(scope) and not is_ignored(n)}


def albert_tf_arrays(source) -> dict:
    """One of our training checkpoints as TF1 arrays: the encoder, plus the pretraining heads
    or a head sized by labels (a classifier, a token classifier) when the checkpoint has them
    (span heads are not converted)."""
    if source.config is None:
        raise SourceError(f"{source.path}: needs an ALBERT config (--albert_config_file)")
    saved = tf.train.load_checkpoint(source.checkpoint_prefix).get_variable_to_shape_map()
    if any(n.startswith("model/masked_lm/") for n in saved):
        model = AlbertPretrainer(source.config)
    else:
        # A run_classifier or run_ner output_dir: its head goes along (a root [n, H] head is a
        # classifier's, whichever task trained it; see heads.our_heads).
        model = _labelled_model(source)
        if model is None:
            model = AlbertModel(source.config)
    restore_ours(model, source.checkpoint_prefix)
    return {k: v.astype(np.float32) for k, v in tf1_weights(model).items()}


def _labelled_model(source):
    """The model of the head sized by labels that `source` holds, or None. A model has one head,
    so at most one of them is held."""
    if not source.num_labels:
        return None
    labelled = labelled_heads()
    for cls in HEAD_CLASSES:
        if cls.HEAD_ID in labelled and cls.HEAD_ID in source.heads:
            return cls(source.config, source.num_labels)
    return None


def _expected_rows(config):
    """(TF1 name, shape keys) of every encoder and pretraining-head weight for `config`."""
    rows = [(n, s) for n, _, s in names.EMBEDDINGS + names.POOLER + names.PRETRAINING_HEADS]
    if config.embedding_size != config.hidden_size:
        rows += [(n, s) for n, _, s in names.PROJECTION]
    for g in range(config.num_hidden_groups):
        for k in range(config.inner_group_num):
            prefix = names.BLOCK_PREFIX.format(g=g, k=k)
            rows += [(prefix + n, s) for n, _, s in names.ATTENTION + names.FFN]
    return rows


def check_shapes(arrays: dict, config, label: str) -> None:
    """Every weight `arrays` holds for this config has the config's shape; a mismatch names the
    variable, both shapes and the config key (a wrong --albert_config_file)."""
    for name, keys in _expected_rows(config):
        if name not in arrays:
            continue
        wanted = tuple(k if isinstance(k, int) else
                       int(k.rpartition("*")[0] or 1) * getattr(config, k.rpartition("*")[2])
                       for k in keys)
        have = tuple(np.shape(arrays[name]))
        if have != wanted:
            culprits = [k.rpartition("*")[2] for k, a, b in zip(keys, have, wanted)
                        if isinstance(k, str) and a != b] or [k for k in keys if isinstance(k, str)]
            hint = ", ".join(f"config key {k} ({getattr(config, k)})" for k in dict.fromkeys(culprits))
            raise SourceError(f"{label}: variable {name} has shape {list(have)} in the source but "
                              f"{list(wanted)} for the config; check {hint}")


def require(arrays: dict, wanted, label: str) -> None:
    """Refuses (naming the first) when a weight the target format needs is absent."""
    missing = [n for n in wanted if n not in arrays]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise SourceError(f"{label}: the source has no {missing[0]}{more}; check "
                          f"num_hidden_groups and inner_group_num in the config")


def encoder_names(config) -> list:
    """TF1 names of the encoder weights `config` implies."""
    return [n for n, _ in _expected_rows(config) if not n.startswith("cls/")]
