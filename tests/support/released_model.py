"""A released-style model folder (albert_config.json, a TF1 checkpoint, 30k-clean.model) with a
tiny random pretrained model, and real passages to classify (Austen and Melville, ../shared)."""

import json
import re
import shutil

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY
from support.informative import spread_weights


def passages(path, count, skip=40) -> list:
    """`count` paragraphs of 15-60 words from a book, after the first `skip`."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return [p for p in paragraphs[skip:] if 15 <= len(p.split()) <= 60][:count]


def write_model_folder(folder, spm_model, spread_seed=None):
    """The layout of a released archive in `folder`, with a tiny random pretrained model; with
    `spread_seed`, its weights spread (support/informative.py) so that different texts get
    different outputs, for tests that compare two serving paths."""
    (folder / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    shutil.copy(spm_model, folder / "30k-clean.model")
    model = AlbertPretrainer(AlbertConfig(**GLUE_TINY))
    if spread_seed is not None:
        spread_weights(model, seed=spread_seed)
    save_tf1_checkpoint(model, str(folder / "model.ckpt-best"))
    return folder
