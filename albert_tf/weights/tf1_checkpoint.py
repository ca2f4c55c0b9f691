"""Reading and writing checkpoints with the original's TF1 variable names (see `tf1_names`)."""

from __future__ import annotations

import dataclasses
import os
import re
import uuid

import numpy as np
import tensorflow as tf

from albert_tf.errors import CheckpointError, CheckpointNotFoundError, UsageError
from albert_tf.models import AlbertModel
from albert_tf.weights import tf1_names as names
from albert_tf.weights.model_folder import find_checkpoint


@dataclasses.dataclass(frozen=True)
class Entry:
    """One model weight with its TF1 name, its shape expressed in config keys, and whether a
    checkpoint must hold it (heads are optional: a pretrained checkpoint has no task head)."""

    name: str
    variable: object
    shape_keys: tuple
    required: bool = True


@dataclasses.dataclass
class LoadReport:
    loaded: list        # TF1 names assigned to model weights
    missing: list       # optional model weights the checkpoint lacked (left at their init)
    unused: list        # checkpoint variables no model weight took (slots and global_step excluded)
    from_group0: list   # names filled from group_0 because of init_from_group0


def _resolve(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _rows(root, rows, prefix="", required=True):
    return [Entry(prefix + name, _resolve(root, attr), shape, required) for name, attr, shape in rows]


def encoder_entries(encoder, required=True) -> list[Entry]:
    """Entries of an `AlbertModel`, in checkpoint order."""
    result = _rows(encoder, names.EMBEDDINGS, required=required)
    if encoder.transformer.embedding_projection is not None:
        result += _rows(encoder, names.PROJECTION, required=required)
    blocks = []
    for g, k in encoder.transformer.attention_keys:
        blocks += _rows(encoder.transformer.attention_for(g, k), names.ATTENTION,
                        names.BLOCK_PREFIX.format(g=g, k=k), required)
    for g, k in encoder.transformer.ffn_keys:
        blocks += _rows(encoder.transformer.ffn_for(g, k), names.FFN,
                        names.BLOCK_PREFIX.format(g=g, k=k), required)
    result += sorted(blocks, key=lambda e: e.name)
    result += _rows(encoder, names.POOLER, required=required)
    return result


def head_rows(model) -> tuple:
    """The name-table rows of the head of `model` (a pretrainer or task model), relative to it:
    the TF1 rows of the heads its class names in `HEADS`, from its `FORMATS` (a subclass keeps
    its parent's)."""
    heads = getattr(type(model), "HEADS", ())
    formats = getattr(type(model), "FORMATS", {})
    if not heads or any(head not in formats for head in heads):
        raise TypeError(f"{type(model).__name__} has no TF1 names: give its class HEADS and "
                        f"FORMATS (see albert_tf.models.formats)")
    return sum((formats[head].tf1 for head in heads), ())


def model_entries(model) -> list[Entry]:
    """Every weight of an `AlbertModel`, `AlbertPretrainer` or task model, with its TF1 name.

    A pretrainer or task model exposes its encoder as `.encoder`; its head's rows come from
    `head_rows`. Head weights are optional when loading (a pretrained checkpoint has none).
    """
    if isinstance(model, AlbertModel):
        return encoder_entries(model)
    return encoder_entries(model.encoder) + _rows(model, head_rows(model), required=False)


def _key_name(key) -> str:
    """The config key or head argument a shape entry is expressed in (`"2*hidden_size"` →
    `hidden_size`)."""
    return key.rpartition("*")[2]


def _key_value(name, model):
    return getattr(model.config, name) if hasattr(model.config, name) else getattr(model, name)


def dimensions(shape_keys, model) -> tuple:
    """A row's shape in numbers for `model`: config keys are read from `model.config`, head
    arguments (`num_labels`) from the model, `"<n>*<key>"` is n times the key's value."""
    result = []
    for key in shape_keys:
        if isinstance(key, int):
            result.append(key)
        else:
            factor = key.rpartition("*")[0]
            result.append(int(factor or 1) * _key_value(_key_name(key), model))
    return tuple(result)


def resolve_prefix(path) -> str:
    """A checkpoint prefix from a prefix or a directory (the one it serves: `find_checkpoint`)."""
    path = os.fspath(path)
    if tf.io.gfile.isdir(path):
        try:
            prefix = find_checkpoint(path, required=False)
        except UsageError as error:  # several checkpoints, none of them chosen
            raise CheckpointNotFoundError(str(error)) from None
        if prefix is None:
            raise CheckpointNotFoundError(f"no checkpoint found in directory {path}")
        return prefix
    if not tf.io.gfile.exists(path + ".index"):
        raise CheckpointNotFoundError(f"checkpoint not found: {path} (no {path}.index)")
    return path


def is_ignored(name) -> bool:
    """Whether a checkpoint entry is never a model weight (step counter, optimizer slots)."""
    return any(p in name for p in names.IGNORED_PATTERNS)


def scope_prefix(ckpt_names) -> str:
    """'' for original checkpoints, 'module/' etc. for ones fine-tuned from a TF-Hub module."""
    if any(n.startswith("bert/") for n in ckpt_names):
        return ""
    for n in ckpt_names:
        match = re.match(r"^(.*/)bert/embeddings/word_embeddings$", n)
        if match:
            return match.group(1)
    return ""


def _group0_name(name):
    return re.sub(r"/group_\d+/", "/group_0/", name)


def _mismatch_error(entry, ckpt_shape, model_shape, model, ckpt_prefix):
    culprits = [_key_name(k) for k, a, b in zip(entry.shape_keys, ckpt_shape, model_shape)
                if isinstance(k, str) and a != b]
    if len(ckpt_shape) != len(model_shape):
        culprits = [_key_name(k) for k in entry.shape_keys if isinstance(k, str)]
    hint = ", ".join(f"config key {k} (model: {_key_value(k, model)})" if hasattr(model.config, k)
                     else f"the {k} this model was built with ({_key_value(k, model)}: its "
                     "labels)" for k in dict.fromkeys(culprits))
    return CheckpointError(
        f"{ckpt_prefix}: variable {entry.name} has shape {list(ckpt_shape)} in the checkpoint but "
        f"{list(model_shape)} in the model; check {hint or 'shapes'}")


def load_tf1_checkpoint(model, ckpt_prefix, init_from_group0: bool = False) -> LoadReport:
    """Assigns the weights of an original (TF1-named) checkpoint to `model`.

    `ckpt_prefix` is a checkpoint prefix or a directory (its latest checkpoint). Encoder weights
    are required; head weights are loaded when present. With `init_from_group0`, a block weight
    whose group is absent from the checkpoint is taken from `group_0` (the original's flag for
    growing a one-group checkpoint into more groups).
    """
    ckpt_prefix = resolve_prefix(ckpt_prefix)
    try:
        reader = tf.train.load_checkpoint(ckpt_prefix)
    except Exception as error:  # a corrupt index raises DataLossError and friends
        raise CheckpointError(f"cannot read checkpoint {ckpt_prefix}: {error}") from None
    return load_tf1_weights(model, reader, ckpt_prefix, init_from_group0)


class ArrayReader:
    """TF1-named numpy arrays behind a checkpoint reader's two methods, so weights converted
    from another format load through the same table and checks as a TF1 checkpoint."""

    def __init__(self, arrays):
        self.arrays = arrays

    def get_variable_to_shape_map(self):
        return {name: list(np.shape(value)) for name, value in self.arrays.items()}

    def get_tensor(self, name):
        return np.asarray(self.arrays[name])


def load_tf1_weights(model, reader, ckpt_prefix, init_from_group0: bool = False) -> LoadReport:
    """`load_tf1_checkpoint` over any reader with `get_variable_to_shape_map` and `get_tensor`
    (a TF checkpoint reader or an `ArrayReader`); `ckpt_prefix` names the source in errors."""
    shapes = reader.get_variable_to_shape_map()
    scope = scope_prefix(shapes)
    config = model.config
    loaded, missing, from_group0, used = [], [], [], set()
    pending = []
    for entry in model_entries(model):
        source = scope + entry.name
        if source not in shapes and init_from_group0 and "/group_" in entry.name:
            fallback = scope + _group0_name(entry.name)
            if fallback in shapes:
                source = fallback
                from_group0.append(entry.name)
        if source not in shapes:
            if entry.required:
                raise CheckpointError(
                    f"{ckpt_prefix}: required variable {entry.name} is missing from the checkpoint"
                    + _missing_hint(entry.name, shapes, config))
            missing.append(entry.name)
            continue
        model_shape = tuple(entry.variable.shape)
        if tuple(shapes[source]) != model_shape:
            raise _mismatch_error(entry, tuple(shapes[source]), model_shape, model, ckpt_prefix)
        pending.append((entry, source))
    for entry, source in pending:  # assign only once everything fits: no half-loaded model
        entry.variable.assign(reader.get_tensor(source).astype(np.float32))
        loaded.append(entry.name)
        used.add(source)
    unused = sorted(n for n in shapes if n not in used and not is_ignored(n))
    return LoadReport(loaded, missing, unused, from_group0)


def _missing_hint(name, ckpt_names, config):
    if "/group_" in name:
        groups = sorted({int(m) for n in ckpt_names for m in re.findall(r"/group_(\d+)/", n)})
        return (f"; the checkpoint has groups {groups} (check num_hidden_groups, inner_group_num, "
                f"share_parameters, or use init_from_group0)")
    if "embedding_hidden_mapping_in" in name:
        return "; the checkpoint has no E→H projection (check embedding_size vs hidden_size)"
    return ""


def tf1_weights(model, global_step=None) -> dict[str, np.ndarray]:
    """{TF1 name: value} for every model weight (plus `global_step` when given)."""
    values = {e.name: np.asarray(e.variable.numpy()) for e in model_entries(model)}
    if global_step is not None:
        values["global_step"] = np.asarray(global_step, dtype=np.int64)
    return values


def write_tf1_checkpoint(values: dict[str, np.ndarray], ckpt_prefix) -> str:
    """Writes a V2 checkpoint holding exactly these names, atomically, plus the `checkpoint` file."""
    ckpt_prefix = os.fspath(ckpt_prefix)
    directory = os.path.dirname(ckpt_prefix) or "."
    tf.io.gfile.makedirs(directory)
    tmp_prefix = f"{ckpt_prefix}.tmp-{uuid.uuid4().hex}"
    keys = sorted(values)
    tensors = [tf.constant(values[k]) for k in keys]
    with tf.device("/cpu:0"):
        tf.raw_ops.SaveV2(prefix=tmp_prefix, tensor_names=keys,
                          shape_and_slices=[""] * len(keys), tensors=tensors)
    for suffix in (".data-00000-of-00001", ".index"):  # the index last: it marks completeness
        tf.io.gfile.rename(tmp_prefix + suffix, ckpt_prefix + suffix, overwrite=True)
    # A relative path keeps the folder movable, like the original's save_relative_paths=True.
    # (TF2's only public writer of the `checkpoint` state file is inside CheckpointManager.)
    tf.compat.v1.train.update_checkpoint_state(directory, os.path.basename(ckpt_prefix))
    return ckpt_prefix


def save_tf1_checkpoint(model, ckpt_prefix, global_step: int = 0) -> str:
    """Writes `model` with the original's names and layouts, readable by the original code."""
    return write_tf1_checkpoint(tf1_weights(model, global_step), ckpt_prefix)


_INCOMPATIBLE = re.compile(r"incompatible tensor with shape \(([\d, ]*)\) when attempting to "
                          r"restore variable with shape \(([\d, ]*)\) and name ([^\s:]+)")


def _shape(text: str) -> tuple:
    return tuple(int(d) for d in text.replace(" ", "").split(",") if d)


def restore_mismatch_error(error: Exception, model, prefix):
    """Our checkpoints restore through tf.train.Checkpoint, whose shape error names neither the
    config key nor the checkpoint: the same one line `load_tf1_checkpoint` gives, or None."""
    match = _INCOMPATIBLE.search(str(error))
    if not match:
        return None
    saved, wanted, name = _shape(match.group(1)), _shape(match.group(2)), match.group(3)
    for entry in model_entries(model):
        if getattr(entry.variable, "path", None) == name:
            return _mismatch_error(entry, saved, wanted, model, prefix)
    return CheckpointError(f"{prefix}: variable {name} has shape {list(saved)} in the checkpoint "
                           f"but {list(wanted)} in the model; check --albert_config_file")
