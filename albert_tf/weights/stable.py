"""Reading the checkpoint of a folder a run is still training in.

A training run keeps only its newest checkpoints: the one a reader picked in its folder (the
`checkpoint` file's newest) can be removed while it is being read, and TensorFlow then says
only "Unsuccessful TensorSliceReader constructor ... model.ckpt-32". `read_stable(source, read)`
runs `read(source)`; when the checkpoint it was reading has gone and the source is a folder, it
moves the source to the folder's newest checkpoint and reads once more. When that fails too, the
error says that a run is still writing the folder.
"""

from __future__ import annotations

import os
import re

import tensorflow as tf
from absl import logging

from albert_tf.errors import CheckpointError, UsageError
from albert_tf.weights.model_folder import find_checkpoint

_STEP = re.compile(r"-(\d+)$")
# A file gone between listing and reading: TensorFlow's NotFoundError (or another of its
# runtime errors: its restore ops report a missing file in more than one way), our
# CheckpointError wrapping one, an OSError. Whether the checkpoint vanished decides; any other
# error is raised as it was.
_READ_ERRORS = (CheckpointError, tf.errors.OpError, OSError)


def vanished(prefix) -> bool:
    """True when the checkpoint at `prefix` (its index or every data file) is no longer there."""
    if not prefix:
        return False
    prefix = os.fspath(prefix)
    return not (tf.io.gfile.exists(prefix + ".index") and tf.io.gfile.glob(prefix + ".data-*"))


def in_progress_error(folder, prefix) -> CheckpointError:
    return CheckpointError(
        f"{folder}: its checkpoint {os.path.basename(prefix)} was removed while it was being "
        "read: a run is still training in this folder (it keeps only its newest checkpoints); "
        "export when the run has ended, or copy one checkpoint out and pass its prefix")


def _step(prefix) -> int | None:
    match = _STEP.search(os.fspath(prefix))
    return int(match.group(1)) if match else None


def newest_prefix(folder, gone) -> str:
    """The folder's newest checkpoint now, when it is a later one than `gone` and complete;
    else the error saying that a run is still writing the folder."""
    try:
        prefix = find_checkpoint(folder)
    except UsageError:
        raise in_progress_error(folder, gone) from None
    old, new = _step(gone), _step(prefix)
    if (os.path.abspath(prefix) == os.path.abspath(gone) or vanished(prefix)
            or (old is not None and new is not None and new <= old)):
        raise in_progress_error(folder, gone)
    return prefix


def read_stable(source, read):
    """`read(source)`, retried once on the newest checkpoint of `source.path` (a folder) when the
    checkpoint being read was removed meanwhile (`source.checkpoint_prefix` moves there)."""
    try:
        return read(source)
    except _READ_ERRORS:
        gone = source.checkpoint_prefix
        if not (gone and vanished(gone)):
            raise
        folder = source.path
        if not tf.io.gfile.isdir(folder):
            raise in_progress_error(os.path.dirname(os.fspath(gone)) or ".", gone) from None
        source.checkpoint_prefix = newest_prefix(folder, gone)
    logging.warning("%s was removed while it was being read (a run is still training in %s); "
                    "reading %s instead", gone, folder, source.checkpoint_prefix)
    try:
        return read(source)
    except _READ_ERRORS:
        if vanished(source.checkpoint_prefix):
            raise in_progress_error(folder, source.checkpoint_prefix) from None
        raise


def open_stable(folder, read_prefix):
    """`read_prefix(prefix)` of the folder's checkpoint (`find_checkpoint`), once more on the
    newest one when it was removed between being found and being read. Returns (prefix, result)."""
    prefix = find_checkpoint(folder)
    try:
        return prefix, read_prefix(prefix)
    except _READ_ERRORS:
        if not vanished(prefix):
            raise
    prefix = newest_prefix(folder, prefix)
    try:
        return prefix, read_prefix(prefix)
    except _READ_ERRORS:
        if vanished(prefix):
            raise in_progress_error(folder, prefix) from None
        raise
