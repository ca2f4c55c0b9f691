"""The writers, by output format name (what `--output_format` takes): a `WeightSource` back to
an original-style TF1 folder (`tf1`), a Hugging Face folder (`hf`) or a keras-hub preset
(`keras_hub`). What they share is in `common`."""

from __future__ import annotations

import os

from albert_tf.errors import OutputError
from albert_tf.io_utils import check_output_path
from albert_tf.weights.arrays import source_arrays
from albert_tf.weights.heads import heads_of
from albert_tf.weights.readers import open_source
from albert_tf.weights.source import SourceError, WeightSource
from albert_tf.weights.writers.hf import write_hf
from albert_tf.weights.writers.keras_hub import write_keras_hub
from albert_tf.weights.writers.tf1 import write_tf1

WRITERS = {"tf1": write_tf1, "hf": write_hf, "keras_hub": write_keras_hub}
OUTPUT_FORMATS = tuple(WRITERS)


def open_to_write(path) -> WeightSource:
    """The source at `path` with its weights read once (a TF1 checkpoint's too), so its heads
    are named before anything is written. Our own checkpoints are read by the writer, through
    the model and a config that may come from the command line."""
    source = open_source(path)
    if source.arrays is None and source.format != "albert_tf":
        source.arrays = source_arrays(source)
        source.heads = source.heads or heads_of(source.arrays)
    return source


def vocab_file_flag(path) -> str:
    """--vocab_file, checked: the WordPiece vocabulary a converted folder carries."""
    if not os.path.isfile(path):
        raise SourceError(f"--vocab_file {path} does not exist")
    return path


def write(source, output, output_format: str, config=None, spm_model_file=None):
    """Writes `source` to `output` in `output_format` (`tf1`, `hf`, `keras_hub`); returns the
    writer's `WriteReport`."""
    if output_format not in WRITERS:
        raise SourceError(f"--output_format {output_format!r}: known formats are "
                          f"{', '.join(WRITERS)}")
    if os.path.exists(output):  # before reading any weights
        raise OutputError(f"{output} already exists; refusing to replace it")
    check_output_path(output)  # a symbolic link to nothing: named here, not as a temporary
    return WRITERS[output_format](source, output, config=config, spm_model_file=spm_model_file)
