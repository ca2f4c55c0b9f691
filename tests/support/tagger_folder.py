"""A fine-tuned tagger's folder made in a test (spread weights, its config, tokenizer and tag
names) and a tiny CoNLL file to train on: the start of the run_ner distillation and LoRA runs."""

from __future__ import annotations

import json
import shutil

from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertTokenClassifier
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.informative import spread_weights

TAGS = ["B-X", "I-X", "O"]


def tagger_folder(tmp_path, spm_model, config: dict):
    """(the folder, its train file): `config` as the folder's albert_config.json."""
    folder = tmp_path / "tagger"
    folder.mkdir()
    (folder / "albert_config.json").write_text(json.dumps(config))
    shutil.copy(spm_model, folder / "30k-clean.model")
    (folder / "labels.json").write_text(json.dumps(TAGS))
    model = AlbertTokenClassifier(AlbertConfig(**config), len(TAGS))
    spread_weights(model, seed=2, std=0.1)
    save_tf1_checkpoint(model, str(folder / "model.ckpt-best"))
    train = tmp_path / "train.txt"
    train.write_text("Alice\tB-X\nsaw\tO\nBob\tB-X\nLee\tI-X\n\nhe\tO\nran\tO\n\n")
    return folder, train
