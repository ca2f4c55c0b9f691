"""What a pretrained model folder holds (the released archives' layout): its checkpoint and its
tokenizer file."""

from __future__ import annotations

import os
import re

import tensorflow as tf

from albert_tf.errors import UsageError

# Files looked for in a model folder, in order (the released archives' names first).
SPM_NAMES = ("30k-clean.model", "spiece.model", "spm.model")
VOCAB_NAMES = ("vocab_chinese.txt", "vocab.txt")
_STEP = re.compile(r"^model\.ckpt-(\d+)\.index$")


def find_checkpoint(folder: str) -> str:
    """The checkpoint prefix in a model folder: the one its `checkpoint` file names, else
    `model.ckpt-best`, else the highest `model.ckpt-<step>`, else its only `*.index`."""
    latest = tf.train.latest_checkpoint(folder)
    if latest:
        return latest
    names = sorted(os.listdir(folder))
    if "model.ckpt-best.index" in names:
        return os.path.join(folder, "model.ckpt-best")
    steps = sorted((int(m.group(1)), n[:-len(".index")]) for n in names if (m := _STEP.match(n)))
    if steps:
        return os.path.join(folder, steps[-1][1])
    indexes = [n[:-len(".index")] for n in names if n.endswith(".index")]
    if len(indexes) == 1:
        return os.path.join(folder, indexes[0])
    raise UsageError(
        f"{folder}: no checkpoint found" if not indexes else
        f"{folder}: several checkpoints ({', '.join(indexes)}); pass the prefix of one as path")


def first_file(folder: str, names) -> str | None:
    for name in names:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None
