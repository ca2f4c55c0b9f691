"""--max_seq_length left out of a command line: the model folder's max_position_embeddings when
shorter than the original's default (512), so a demo folder made for 128 positions fine-tunes
without the flag; given, it keeps the original's behaviour (checked against the model)."""

from __future__ import annotations

import pytest

from albert_tf.errors import UsageError
from albert_tf.tasks.classification.config import ClassifierRunConfig
from albert_tf.weights.run_inputs import check_model_inputs, resolve_inputs
from support.configs import GLUE_TINY
from support.released_model import write_model_folder


def _config(folder, tmp_path, given, **values):
    return ClassifierRunConfig.from_flat(dict(
        task_name="tsv", init_checkpoint=str(folder), output_dir=str(tmp_path / "out"),
        flags_given=given, **values))


def test_left_out_takes_the_models_positions_given_stays(tmp_path, spm_model):
    folder = write_model_folder(tmp_path, spm_model)
    assert GLUE_TINY["max_position_embeddings"] == 64
    command = frozenset({"task_name", "init_checkpoint", "output_dir"})
    left_out = _config(folder, tmp_path, command)
    assert left_out.max_seq_length == 512  # the original's default, before the model is read
    filled = resolve_inputs(left_out, head="classifier").run_config(left_out)
    assert filled.max_seq_length == 64
    # shorter than the model's positions: kept
    shorter = _config(folder, tmp_path, command | {"max_seq_length"}, max_seq_length=32)
    assert resolve_inputs(shorter, head="classifier").run_config(shorter).max_seq_length == 32
    # given and too long: kept, and refused as the original refuses it
    given = _config(folder, tmp_path, command | {"max_seq_length"})
    inputs = resolve_inputs(given, head="classifier")
    kept = inputs.run_config(given)
    assert kept.max_seq_length == 512
    with pytest.raises(UsageError, match=r"--max_seq_length \(512\) exceeds the model's "
                                         r"max_position_embeddings \(64\)"):
        check_model_inputs(inputs.albert_config, kept.max_seq_length)
    # built in Python (no command line): as given
    python = _config(folder, tmp_path, None)
    assert resolve_inputs(python, head="classifier").run_config(python).max_seq_length == 512
