"""A LoRA run's folder (`--lora_rank`): its checkpoints hold only the adapters and the head
(`models.lora.trained_part`), and `lora.json` points at the base they were trained on:

    {"base": "<the base checkpoint's prefix>", "digest": "sha256:<...>", "rank": 8,
     "targets": ["query", "value", "word_embeddings"], "word_rank": 1,
     "trainable_parameters": ..., "parameters": ...,
     "adapter": {"file": "lora_adapter", "dtype": "float16", "tensors": ..., "numbers": ...,
                 "bytes": ..., "step": ..., "from": "model.ckpt-best", "from_digest": ...}}

"adapter" is the file to ship beside the base (`lora_adapter`): the trained weights alone as
float16, written at the end of every run that trains or evaluates in the folder from the
checkpoint the folder serves, again when that checkpoint changed (`keep_adapter`). A folder
holding the run's checkpoints serves those (float32); one holding only the adapter serves it.

A folder written before the word table had an adapter has no "word_rank": it loads without one.

The digest is the sha256 of the base's .index file followed by the sizes of its .data files:
a base rewritten in place (another checkpoint under the same name) no longer matches. Every
load of the folder's checkpoints loads the base first, checks it, then the adapters.
"""

from __future__ import annotations

import hashlib
import json
import os

import tensorflow as tf

from albert_tf.errors import CheckpointError, UsageError
from albert_tf.io_utils import atomic_output
from albert_tf.models.lora import (TARGETS, WORD_RANK, enable_lora, lora_rank, trained_part,
                                   word_lora_rank)
from albert_tf.weights.lora_adapter import ADAPTER_NAME, read_adapter, write_adapter
from albert_tf.weights.model_folder import find_checkpoint
from albert_tf.weights.our_checkpoints import checkpoint_step

LORA_FILE = "lora.json"


def base_digest(prefix: str) -> str | None:
    """sha256 of `<prefix>.index` then the sizes of `<prefix>.data-*`; None when it is missing."""
    index = f"{prefix}.index"
    if not os.path.isfile(index):
        return None
    digest = hashlib.sha256()
    with open(index, "rb") as file:
        digest.update(file.read())
    for path in sorted(tf.io.gfile.glob(f"{prefix}.data-*")):
        digest.update(f"{os.path.basename(path)}:{os.path.getsize(path)};".encode())
    return f"sha256:{digest.hexdigest()}"


def record_path(prefix: str) -> str:
    return os.path.join(os.path.dirname(os.fspath(prefix)), LORA_FILE)


def read_record(prefix: str) -> dict | None:
    """The lora.json beside a checkpoint, None when there is none (not a LoRA run's)."""
    path = record_path(prefix)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def check_base(record: dict, path: str) -> str:
    """The base prefix lora.json names, after checking it is there and unchanged."""
    base = record["base"]
    digest = base_digest(base)
    if digest is None:
        raise CheckpointError(f"{path}: its base checkpoint {base} is missing (the adapters "
                              "need the base they were trained on)")
    if digest != record["digest"]:
        raise CheckpointError(f"{path}: its base checkpoint {base} changed since the adapters "
                              f"were trained ({record['digest'][:19]}..., now {digest[:19]}...)")
    return base


def write_record(output_dir: str, base: str, rank: int, counts: tuple[int, int],
                 word_rank: int = WORD_RANK) -> dict:
    """Writes lora.json at a run's start; a run resumed in the same folder must use the same
    base and ranks (else one error naming the file)."""
    path = os.path.join(output_dir, LORA_FILE)
    record = {"base": os.path.abspath(base), "digest": base_digest(base), "rank": int(rank),
              "targets": list(TARGETS) + (["word_embeddings"] if word_rank else []),
              "word_rank": int(word_rank), "trainable_parameters": counts[0],
              "parameters": counts[1]}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as file:
            old = json.load(file)
        if (old.get("base"), old.get("digest"), old.get("rank"), old.get("word_rank", 0)) != (
                record["base"], record["digest"], record["rank"], record["word_rank"]):
            raise UsageError(f"{path}: this folder's adapters were trained with rank "
                             f"{old.get('rank')} (word table {old.get('word_rank', 0)}) on "
                             f"{old.get('base')}; this run's are rank {rank} (word table "
                             f"{word_rank}) on {record['base']}: use another --output_dir")
        return old
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8") as file:
        json.dump(record, file, indent=2)
        file.write("\n")
    return record


def start_lora(model, base: str, rank: int, load_base, word_rank: int | None = None) -> None:
    """A LoRA training run's model: the base loaded (`load_base(model)`), then frozen with
    adapters (the word table's of rank `word_rank`, None: `WORD_RANK`); the model remembers
    its base so later loads in the run skip reading it again."""
    load_base(model)
    enable_lora(model, rank, WORD_RANK if word_rank is None else int(word_rank))
    object.__setattr__(model, "_lora_base_digest", base_digest(base))


def restore_lora(model, prefix: str, record: dict, load_base) -> tuple[str, list]:
    """Loads a LoRA run's checkpoint: the base named in lora.json (checked; `load_base(model,
    base)`) unless the model already holds it, then its adapters and head."""
    path = record_path(prefix)
    base = check_base(record, path)
    rank, word_rank = lora_rank(model), int(record.get("word_rank", 0))
    if not rank:
        load_base(model, base)
        enable_lora(model, record["rank"], word_rank)
        object.__setattr__(model, "_lora_base_digest", record["digest"])
    elif (rank != int(record["rank"]) or word_lora_rank(model) != word_rank
          or getattr(model, "_lora_base_digest", None) != record["digest"]):
        raise CheckpointError(f"{path}: adapters of rank {record['rank']} on {base}, but this "
                              f"model has rank-{rank} adapters on another base")
    if os.path.basename(prefix) == ADAPTER_NAME:  # the float16 file a run ships
        read_adapter(model, prefix)
        return (f"adapter {prefix}: rank-{record['rank']} adapters and head on base {base}",
                ["head"])
    try:
        tf.train.Checkpoint(model=trained_part(model)).read(prefix).expect_partial() \
            .assert_existing_objects_matched()
    except (AssertionError, ValueError) as error:
        raise CheckpointError(f"{prefix}: not this model's adapters and head "
                              f"({str(error).splitlines()[0][:200]})") from None
    return (f"checkpoint {prefix}: rank-{record['rank']} adapters and head on base {base}",
            ["head"])


def keep_adapter(output_dir: str, load_served) -> dict | None:
    """A LoRA run's output_dir: its adapter file written from the checkpoint the folder serves
    (`load_served(prefix)` loads it and returns the model) when it is missing or that checkpoint
    changed since; lora.json's "adapter" records it. None for another folder, or one without
    the run's checkpoints (a shipped adapter)."""
    path = os.path.join(output_dir, LORA_FILE)
    prefix = find_checkpoint(output_dir, required=False) if os.path.isfile(path) else None
    if not prefix or os.path.basename(prefix) == ADAPTER_NAME:
        return None
    with open(path, encoding="utf-8") as file:
        record = json.load(file)
    source = {"from": os.path.basename(prefix), "from_digest": base_digest(prefix)}
    adapter = os.path.join(output_dir, ADAPTER_NAME)
    entry = record.get("adapter") or {}
    if all(entry.get(key) == value for key, value in source.items()) \
            and os.path.isfile(f"{adapter}.index"):
        return entry
    record["adapter"] = {**write_adapter(load_served(prefix), adapter, checkpoint_step(prefix)),
                         **source}
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8") as file:
        json.dump(record, file, indent=2)
        file.write("\n")
    return record["adapter"]
