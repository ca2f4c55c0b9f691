"""Writes a `WeightSource` as an original-style TF1 folder: `model.ckpt-<step>` with the
original's names, `albert_config.json` and the SentencePiece model as `30k-clean.model`."""

from __future__ import annotations

import os
import shutil

import numpy as np

from albert_tf.io_utils import atomic_output
from albert_tf.labels import write_labels
from albert_tf.weights.arrays import encoder_names, require
from albert_tf.weights.model_folder import CONFIG_NAME, VOCAB_NAMES
from albert_tf.weights.tf1_checkpoint import write_tf1_checkpoint
from albert_tf.weights.writers.common import WriteReport, prepare


def write_tf1(source, output, config=None, spm_model_file=None, step: int = 0) -> WriteReport:
    """Writes every TF1-named weight of `source` (encoder and any heads) to the folder `output`
    (which must not exist), atomically. TF1 names are the original's, so any config and head
    is expressible; names that are not TF1 names (another format's leftovers) are reported."""
    prepared = prepare(source, config, spm_model_file)
    require(prepared.arrays, encoder_names(prepared.config), source.path)
    # Other formats' names the readers passed through have dots; TF1 names never do.
    values = {n: v for n, v in prepared.arrays.items() if "." not in n}
    unused = sorted(n for n in prepared.arrays if "." in n)
    values["global_step"] = np.asarray(step, np.int64)
    report = WriteReport(os.fspath(output), "tf1", f"model.ckpt-{step}", prepared.heads, (),
                         unused=unused)
    with atomic_output(output, directory=True) as tmp:
        os.makedirs(tmp)
        write_tf1_checkpoint(values, os.path.join(tmp, f"model.ckpt-{step}"))
        with open(os.path.join(tmp, CONFIG_NAME), "w", encoding="utf-8") as f:
            f.write(prepared.config.to_json_string())
        write_labels(tmp, source.labels)
        if prepared.spm_model_file:
            shutil.copyfile(prepared.spm_model_file, os.path.join(tmp, "30k-clean.model"))
        elif source.vocab_file:  # a WordPiece model (the Chinese ALBERTs): its vocabulary
            name = os.path.basename(source.vocab_file)
            shutil.copyfile(source.vocab_file, os.path.join(
                tmp, name if name in VOCAB_NAMES else "vocab.txt"))
        else:
            report.notes.append("no SentencePiece model or vocabulary (pass --spm_model_file or "
                                "--vocab_file): none copied")
    return report
