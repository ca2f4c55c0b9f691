"""A LoRA run's adapter file: what a user ships beside the base (`lora_base`).

    lora_adapter.index, lora_adapter.data-00000-of-00001

A checkpoint bundle of the weights the run trained (the adapters and the head, no optimizer
slots) as float16, under the names the run's checkpoints give them (`model/output_weights/...`,
so the readers tell its heads as theirs), plus `global_step`. LoRA's weights are small numbers:
float16 halves the file and the outputs move by about 1e-4 (docs/compression.md). A weight whose
values float16 cannot hold (beyond ±65,504) stays float32. Reading casts back to the model's
dtype. The run's own checkpoints stay float32 with the optimizer's slots, to resume from.
"""

from __future__ import annotations

import collections
import os
import uuid

import keras
import numpy as np
import tensorflow as tf

from albert_tf.errors import CheckpointError
from albert_tf.models.lora import trained_part

ADAPTER_NAME = "lora_adapter"
DTYPE = "float16"
_STEP = "global_step"


def _escape(name: str) -> str:
    """A checkpoint's escaping of one object-graph name ("." doubled, "/" as ".S")."""
    return name.replace(".", "..").replace("/", ".S")


def trained_variables(model) -> dict:
    """{checkpoint name: variable} of the float weights a LoRA model's checkpoints hold
    (`tf.train.Checkpoint(model=trained_part(model))`): each named by its first path in a
    breadth-first walk of the object graph, as the checkpoint names it."""
    found, seen = {}, set()
    queue = collections.deque([("model", trained_part(model))])
    while queue:
        path, node = queue.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, (tf.Variable, keras.Variable)):
            if tf.as_dtype(node.dtype).is_floating:
                found[f"{path}/.ATTRIBUTES/VARIABLE_VALUE"] = node
            continue
        children = getattr(node, "_trackable_children", None)
        for name, child in (children("checkpoint") if children else {}).items():
            queue.append((f"{path}/{_escape(name)}", child))
    return found


def _stored(value: np.ndarray) -> np.ndarray:
    """float16 when it holds the value (finite where the value is), else float32."""
    small = value.astype(np.float16)
    return small if np.array_equal(np.isfinite(small), np.isfinite(value)) else value


def write_adapter(model, prefix: str, step: int) -> dict:
    """Writes `prefix`.index/.data (the index last: a reader finds it whole or not at all) and
    returns lora.json's "adapter" entry: file, dtype, tensors, numbers, bytes, step."""
    values = {key: _stored(np.asarray(variable.numpy(), np.float32))
              for key, variable in trained_variables(model).items()}
    values[_STEP] = np.asarray(step, np.int64)
    keys = sorted(values)
    tmp = f"{prefix}.tmp-{uuid.uuid4().hex}"
    with tf.device("/cpu:0"):
        tf.raw_ops.SaveV2(prefix=tmp, tensor_names=keys, shape_and_slices=[""] * len(keys),
                          tensors=[tf.constant(values[key]) for key in keys])
    size = 0
    for suffix in (".data-00000-of-00001", ".index"):
        tf.io.gfile.rename(tmp + suffix, prefix + suffix, overwrite=True)
        size += tf.io.gfile.stat(prefix + suffix).length
    wide = [key.split("/.ATTRIBUTES")[0] for key in keys if values[key].dtype == np.float32]
    return {"file": os.path.basename(prefix), "dtype": DTYPE, "tensors": len(keys) - 1,
            "numbers": sum(int(values[k].size) for k in keys if k != _STEP), "bytes": size,
            "step": int(step), **({"float32": wide} if wide else {})}


def read_adapter(model, prefix: str) -> None:
    """Puts an adapter file's weights into a LoRA model (its adapters enabled): every weight
    its checkpoints hold must be there with its shape, else one error naming the file; nothing
    is assigned until all are read."""
    try:
        reader = tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as error:
        raise CheckpointError(f"{prefix}: not a readable adapter file "
                              f"({str(error).splitlines()[0][:200]})") from None
    shapes = reader.get_variable_to_shape_map()
    values = []
    for key, variable in trained_variables(model).items():
        name = key.split("/.ATTRIBUTES")[0]
        if key not in shapes:
            raise CheckpointError(f"{prefix}: not this model's adapters and head (no {name})")
        if tuple(shapes[key]) != tuple(variable.shape):
            raise CheckpointError(f"{prefix}: {name} has shape {list(shapes[key])}, this "
                                  f"model's {list(variable.shape)}")
        values.append((variable, reader.get_tensor(key)))
    for variable, value in values:
        variable.assign(tf.cast(value, variable.dtype))
