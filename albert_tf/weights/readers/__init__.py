"""The weight readers, and `open_source`, which picks the one for a path.

Each reader turns one format into a `WeightSource` with the original's TF1 names: `tf1` (TF1
checkpoints, run output_dirs, TF-Hub v1 modules), `hf` (Hugging Face folders), `keras_hub`
(presets). A new format is one module here and one row in `READERS`.
"""

from __future__ import annotations

import os

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


def open_source(path) -> WeightSource:
    """The `WeightSource` at `path`, whatever format it is in (the first reader that claims it)."""
    path = os.fspath(path)
    for _, detect, read in READERS:
        if detect(path):
            return read(path)
    raise SourceError(
        f"{path}: no weights found (expected a TF1 checkpoint prefix or folder, a run's "
        f"output_dir, a Hugging Face ALBERT folder, a keras-hub preset or a TF-Hub module)")
