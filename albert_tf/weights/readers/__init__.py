"""The weight readers, and `open_source`, which picks the one for a path.

Each reader turns one format into a `WeightSource` with the original's TF1 names: `tf1` (TF1
checkpoints, run output_dirs, TF-Hub v1 modules), `hf` (Hugging Face folders), `keras_hub`
(presets). A new format is one module here and one row in `READERS`.
"""

from __future__ import annotations

import json
import os

from albert_tf.errors import UsageError
from albert_tf.weights.model_folder import find_checkpoint
from albert_tf.weights.readers import hf, keras_hub, tf1
from albert_tf.weights.source import SourceError, WeightSource

# (name, detect(path) -> bool, read(path) -> WeightSource), tried in this order. Detectors are
# cheap (they look at file names, not weights); the TF1 checkpoint reader is last because it
# claims any folder with a checkpoint in it.
READERS = (
    ("hf", hf.is_hf_folder, hf.read_hf),
    ("keras_hub", keras_hub.is_preset, keras_hub.read_keras_hub),
    ("tfhub", tf1.is_tfhub_module, tf1.read_tfhub_module),
    ("checkpoint", tf1.is_checkpoint, tf1.read_checkpoint),
)


# What each format is called in a message, and the path that picks it in a folder holding two.
_DESCRIPTIONS = {"hf": "a Hugging Face model", "keras_hub": "a keras-hub preset",
                 "tfhub": "a TF-Hub module", "checkpoint": "a TF1 (or albert_tf) checkpoint"}
# A file inside a folder that names the folder's reader: `<folder>/config.json` (HF, keras-hub),
# `<folder>/tfhub_module.pb`; a checkpoint is named by its prefix.
_FILES = {"config.json": ("hf", "keras_hub"), "tfhub_module.pb": ("tfhub",)}


def _choice(name, path) -> str:
    if name == "checkpoint":
        try:
            return find_checkpoint(path)
        except UsageError:
            return os.path.join(path, "<checkpoint prefix>")
    return os.path.join(path, "tfhub_module.pb" if name == "tfhub" else "config.json")


def open_source(path) -> WeightSource:
    """The `WeightSource` at `path`, whatever format it is in. A folder two readers claim (an HF
    model and a TF1 checkpoint side by side) is refused, naming both and the path that picks
    each: `<folder>/config.json` (HF, keras-hub), `<folder>/tfhub_module.pb`, or the checkpoint
    prefix."""
    path = os.fspath(path)
    folder, base = os.path.split(path)
    if base in _FILES and os.path.isfile(path):
        for name, detect, read in READERS:
            if name in _FILES[base] and detect(folder):
                return read(folder)
    claims = [(name, read) for name, detect, read in READERS if detect(path)]
    if len(claims) > 1:
        (first, _), (second, _) = claims[:2]
        raise SourceError(
            f"{path} holds two formats: {_DESCRIPTIONS[first]} and {_DESCRIPTIONS[second]}; "
            f"point at the one to read: {_choice(first, path)} or {_choice(second, path)}")
    if claims:
        return claims[0][1](path)
    broken = broken_config(path)
    if broken:
        raise SourceError(broken)
    raise SourceError(
        f"{path}: no weights found (expected a TF1 checkpoint prefix or folder, a run's "
        f"output_dir, a Hugging Face ALBERT folder, a keras-hub preset or a TF-Hub module)")


def broken_config(path) -> str | None:
    """What is wrong with a folder's config.json that keeps the HF and keras-hub readers from
    claiming it (truncated, not JSON, not an object), or None."""
    config = os.path.join(path, "config.json")
    if not os.path.isfile(config):
        return None
    try:
        with open(config, "rb") as reader:
            values = json.loads(reader.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        where = f":{error.lineno}" if isinstance(error, json.JSONDecodeError) else ""
        reason = getattr(error, "msg", None) or "not UTF-8 text"
        return (f"{config}{where}: not valid JSON ({reason}; truncated?): the model config of "
                "a Hugging Face or keras-hub folder; nothing was read")
    except OSError as error:
        return f"{config}: cannot read it ({error.strerror or error})"
    if not isinstance(values, dict):
        return (f"{config}: holds a JSON {type(values).__name__}, not the object of a model "
                "config (Hugging Face: model_type; keras-hub: class_name and config)")
    return None
