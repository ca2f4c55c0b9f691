"""python -m albert_tf.weights (and its old name, python -m albert_tf.convert): reads any source,
writes the format asked for, says what it read and left; what the target cannot express is one
error line and nothing written."""

import json
import shutil

import pytest

from support.entry_points import run_entry_point
from support.interop import interop


def _convert(*args, module="albert_tf.convert"):
    return run_entry_point("-m", [module, *args])


@pytest.fixture(scope="module")
def relu_tf1_folder(tmp_path_factory):
    """An original-style TF1 folder of a relu ALBERT (made from the HF fixture's weights)."""
    from albert_tf.weights import open_source
    from albert_tf.weights.writers.tf1 import write_tf1

    tmp = tmp_path_factory.mktemp("relu")
    shutil.copytree(interop("hf", "pretraining"), tmp / "hf")
    values = json.loads((tmp / "hf" / "config.json").read_text())
    values["hidden_act"] = "relu"
    (tmp / "hf" / "config.json").write_text(json.dumps(values))
    write_tf1(open_source(tmp / "hf"), tmp / "tf1")
    return tmp / "tf1"


def test_relu_checkpoint_to_keras_hub_is_refused_by_key(relu_tf1_folder, tmp_path):
    result = _convert(f"--input={relu_tf1_folder}", f"--output={tmp_path / 'kh'}",
                      "--output_format=keras_hub", module="albert_tf.weights")
    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "hidden_act='relu'" in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_relu_checkpoint_to_hf_says_what_it_read_and_wrote(relu_tf1_folder, tmp_path):
    result = _convert(f"--input={relu_tf1_folder}", f"--output={tmp_path / 'hf'}",
                      "--output_format=hf")
    assert result.returncode == 0, result.stderr
    assert f"read tf1 weights from {relu_tf1_folder} (heads: mlm, sop)" in result.stdout
    assert "wrote hf AlbertForPreTraining" in result.stdout and "(heads: mlm, sop)" in result.stdout
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["hidden_act"] == "relu" and config["architectures"] == ["AlbertForPreTraining"]
