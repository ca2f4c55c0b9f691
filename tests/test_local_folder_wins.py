"""A local folder named like a preset ("albert_base", as a release archive extracts) is the
folder, not the preset: TextClassifier.from_pretrained and TokenClassifier.from_pretrained read
its config, checkpoint and SentencePiece model. Without the folder the name is still refused as a
preset (a configuration without weights)."""

from __future__ import annotations

import os

import pytest

from albert_tf.errors import UsageError
from albert_tf.tasks.classification.text_classifier import TextClassifier
from albert_tf.tasks.token_classification.api import TokenClassifier
from support.configs import GLUE_TINY
from support.released_model import write_model_folder


def test_a_folder_named_albert_base_wins_over_the_preset(tmp_path, monkeypatch, spm_model):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"'albert_base' is a preset: a configuration without"):
        TextClassifier.from_pretrained("albert_base", labels=["no", "yes"])
    (tmp_path / "albert_base").mkdir()
    write_model_folder(tmp_path / "albert_base", spm_model)
    clf = TextClassifier.from_pretrained("albert_base", labels=["no", "yes"],
                                         output_dir=tmp_path / "out")
    # the folder's tiny config (H=32), not the preset's (H=768), and its own tokenizer file
    assert clf.inputs.albert_config.hidden_size == GLUE_TINY["hidden_size"] == 32
    assert os.path.abspath(clf.inputs.spm_model_file) == str(
        tmp_path / "albert_base" / "30k-clean.model")
    assert os.path.abspath(clf.inputs.source.checkpoint_prefix) == str(
        tmp_path / "albert_base" / "model.ckpt-best")
    tagger = TokenClassifier.from_pretrained("albert_base", labels=["O", "B-X", "I-X"],
                                             output_dir=tmp_path / "ner")
    assert tagger.inputs.albert_config.hidden_size == 32
