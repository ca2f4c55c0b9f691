"""Checks that a trained run's output_dir is usable alone (`--init_checkpoint=<it>` and nothing
else): it holds its model config, its tokenizer file with the casing, and its label names."""

from __future__ import annotations

import json

from albert_tf.config import AlbertConfig
from albert_tf.weights.readers import open_source
from albert_tf.weights.resolve import resolve_model_files


def assert_self_contained(output_dir, albert_config, tokenizer_file, labels=None,
                          do_lower_case=True) -> None:
    """`albert_config`: the config dict (or AlbertConfig) the run used; `tokenizer_file`: the
    SentencePiece model it was given; `labels`: the label names it recorded (None: no head with
    labels)."""
    if isinstance(albert_config, dict):
        albert_config = AlbertConfig(**albert_config)
    files = resolve_model_files(init_checkpoint=str(output_dir))  # no other flag given
    assert files.albert_config.to_dict() == albert_config.to_dict()
    with open(files.spm_model_file, "rb") as held, open(tokenizer_file, "rb") as given:
        assert held.read() == given.read()
    assert files.spm_model_file.startswith(str(output_dir))
    settings = json.loads((output_dir / "tokenizer_config.json").read_text())
    assert settings["do_lower_case"] is do_lower_case
    assert (output_dir / settings["spm_model_file"]).is_file()
    if labels is not None:
        assert open_source(str(output_dir)).labels == labels
