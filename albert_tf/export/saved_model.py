"""Writing SavedModels atomically into TF Serving's `<base>/<version>/` layout."""

from __future__ import annotations

import os
import shutil
import uuid

import tensorflow as tf


def versioned_dir(base_path, version: int | None = None) -> str:
    """`<base_path>/<version>`; without a version, one past the highest existing one (from 1)."""
    base_path = os.fspath(base_path)
    if version is None:
        existing = [int(d) for d in (os.listdir(base_path) if os.path.isdir(base_path) else [])
                    if d.isdigit()]
        version = max(existing, default=0) + 1
    return os.path.join(base_path, str(int(version)))


def write_saved_model(module: tf.Module, export_dir, signatures: dict) -> str:
    """Saves to a temporary sibling folder, then renames: TF Serving polls the base path and
    must never see a half-written version folder."""
    export_dir = os.fspath(export_dir)
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    if os.path.exists(export_dir):
        raise FileExistsError(f"export folder already exists: {export_dir}")
    tmp = os.path.join(parent, f".tmp-{os.path.basename(export_dir)}-{uuid.uuid4().hex[:8]}")
    try:
        tf.saved_model.save(module, tmp, signatures=signatures)
        os.replace(tmp, export_dir)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp)
    return export_dir


def track_captured_variables(root, functions) -> None:
    """Attaches the tf.Variables the traced functions capture, as TF-Hub's reusable-SavedModel
    attributes (`variables` includes dropout RNG states).

    They must be the captured variables themselves: Keras variables are wrappers, and saving
    the wrappers gives a SavedModel whose graph the TF1-style loader of TF Serving and
    `saved_model_cli run` cannot initialise ("Could not find variable").
    """
    trainable, every = {}, {}
    for fn in functions:
        trainable.update((id(v), v) for v in fn.trainable_variables)
        every.update((id(v), v) for v in fn.variables)
    root.variables = list(every.values())
    root.trainable_variables = list(trainable.values())
    root.non_trainable_variables = [v for k, v in every.items() if k not in trainable]
    root.regularization_losses = []
