"""Token classifier weights in and out of every format: Hugging Face's
`AlbertForTokenClassification` (read from a folder laid out as transformers saves it, written
back with `classifier.*`, no pooler, `id2label`), TF1 names (`token_classifier/...`), and a
run_ner output_dir through `python -m albert_tf.convert` and `--init_checkpoint`."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from support.interop import (assert_close, expected, inputs, interop, loaded, odd_config,
                             random_source, run)
from support.entry_points import run_entry_point

TAGS = ["B-LOC", "B-PER", "I-PER", "O"]


def _hf_token_folder(tmp_path):
    """transformers' classifier fixture as an AlbertForTokenClassification: the same
    `classifier` names and shapes, applied to every position, and no pooler."""
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "hf_token"
    shutil.copytree(interop("hf", "classifier"), folder)
    values = json.loads((folder / "config.json").read_text())
    values["architectures"] = ["AlbertForTokenClassification"]
    values["id2label"] = {"0": "B-PER", "1": "I-PER", "2": "O"}
    (folder / "config.json").write_text(json.dumps(values))
    tensors = {k: v for k, v in load_file(folder / "model.safetensors").items()
               if not k.startswith("albert.pooler.")}
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    return folder, tensors


def test_hf_token_classification_folder_loads_and_gives_its_logits(tmp_path):
    from albert_tf.weights import open_source
    from albert_tf.models import AlbertTokenClassifier

    folder, tensors = _hf_token_folder(tmp_path)
    source = open_source(folder)
    assert source.heads == ("token_classifier",) and source.num_labels == 3
    assert source.labels == ["B-PER", "I-PER", "O"]
    assert "set to zeros" in source.describe()  # the pooler HF's class does not have
    model, report = loaded(AlbertTokenClassifier, source, num_labels=3)
    assert report.missing == [] and report.unused == []
    hidden = expected("hf", "classifier")["last_hidden_state"]
    want = hidden @ tensors["classifier.weight"].T + tensors["classifier.bias"]
    assert_close(run(model, inputs())["logits"], want, "logits")


def test_written_hf_folder_is_an_albert_for_token_classification(tmp_path):
    from safetensors.numpy import load_file

    from albert_tf.weights import open_source
    from albert_tf.weights.writers.hf import write_hf
    from albert_tf.models import AlbertTokenClassifier

    config = odd_config()
    source, model = random_source(config, AlbertTokenClassifier, num_labels=4)
    source.labels = TAGS
    assert source.heads == ("token_classifier",)
    report = write_hf(source, tmp_path / "hf")
    assert report.architecture == "AlbertForTokenClassification" and report.left == ()
    values = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert values["architectures"] == ["AlbertForTokenClassification"]
    assert values["id2label"] == {str(i): t for i, t in enumerate(TAGS)}
    tensors = load_file(tmp_path / "hf" / "model.safetensors")
    assert tensors["classifier.weight"].shape == (4, config.hidden_size)
    assert not any(k.startswith("albert.pooler") for k in tensors)  # HF's class has none
    back = open_source(tmp_path / "hf")
    assert back.heads == ("token_classifier",) and back.labels == TAGS
    again, report = loaded(AlbertTokenClassifier, back, num_labels=4)
    assert report.missing == [] and report.unused == []
    feed = {k: v % config.vocab_size if k == "input_ids" else v for k, v in inputs().items()}
    assert_close(run(again, feed)["logits"], run(model, feed)["logits"], "logits", atol=1e-5)


def test_tf1_names_and_heads():
    from albert_tf.weights import tf1_checkpoint as checkpoint
    from albert_tf.weights.heads import our_heads, tf1_heads
    from albert_tf.models import AlbertTokenClassifier
    from support.configs import tiny_config

    model = AlbertTokenClassifier(tiny_config(), 5)
    names = [e.name for e in checkpoint.model_entries(model) if not e.name.startswith("bert/")]
    assert names == ["token_classifier/output_weights", "token_classifier/output_bias"]
    shapes = {n: list(np.shape(v)) for n, v in checkpoint.tf1_weights(model).items()}
    assert tf1_heads(shapes) == (("token_classifier",), 5)
    # a GLUE classifier's root output_weights is another head, and does not load here
    assert tf1_heads({"output_weights": [3, 16], "output_bias": [3]}) == (("classifier",), 3)
    ours = {f"model/token_output_{n}/.ATTRIBUTES/VARIABLE_VALUE": s
            for n, s in (("weights", [5, 16]), ("bias", [5]))}
    assert our_heads(ours) == (("token_classifier",), 5)


@pytest.fixture(scope="module")
def ner_output_dir(tmp_path_factory):
    """A run_ner output_dir as training leaves it: our checkpoint and labels.json."""
    from albert_tf.models import AlbertTokenClassifier

    folder = tmp_path_factory.mktemp("ner_out")
    config = odd_config()
    source, model = random_source(config, AlbertTokenClassifier, num_labels=4)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), str(folder), 1,
                                         checkpoint_name="model.ckpt")
    manager.save(checkpoint_number=7)
    (folder / "labels.json").write_text(json.dumps(TAGS))
    (folder.parent / "config.json").write_text(json.dumps(config.to_dict()))
    return folder, model, config


def test_output_dir_to_hf_and_tf1_through_the_convert_cli(ner_output_dir, tmp_path):
    from albert_tf.weights import open_source
    from albert_tf.models import AlbertTokenClassifier
    from albert_tf.weights.loading import load as init_from_checkpoint

    folder, model, config = ner_output_dir
    feed = {k: v % config.vocab_size if k == "input_ids" else v for k, v in inputs().items()}
    want = run(model, feed)["logits"]
    for fmt in ("hf", "tf1"):
        done = run_entry_point("-m", ["albert_tf.convert", f"--input={folder}",
                                      f"--output={tmp_path / fmt}", f"--output_format={fmt}",
                                      f"--albert_config_file={folder.parent / 'config.json'}"])
        assert done.returncode == 0, done.stderr[-2000:]
        assert "heads: token_classifier" in done.stdout, done.stdout
        source = open_source(tmp_path / fmt)
        assert source.heads == ("token_classifier",) and source.num_labels == 4
        # Every --init_checkpoint path: the head is loaded, so prediction may use it.
        again = AlbertTokenClassifier(config, 4)
        line = init_from_checkpoint(again, tmp_path / fmt, require_head=True)
        assert "heads loaded: token_classifier" in line
        assert_close(run(again, feed)["logits"], want, f"{fmt} logits", atol=1e-5)
    hf_config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert hf_config["architectures"] == ["AlbertForTokenClassification"]
    assert hf_config["id2label"] == {str(i): t for i, t in enumerate(TAGS)}  # labels.json's


def test_a_pretrained_encoder_is_not_served_as_a_tagger(tmp_path):
    from albert_tf.errors import CheckpointError
    from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
    from albert_tf.models import AlbertModel, AlbertTokenClassifier
    from albert_tf.weights.loading import load as init_from_checkpoint

    config = odd_config()
    prefix = save_tf1_checkpoint(AlbertModel(config), str(tmp_path / "model.ckpt"))
    model = AlbertTokenClassifier(config, 3)
    assert "not in the source" in init_from_checkpoint(model, prefix)  # warm start: fine
    with pytest.raises(CheckpointError, match="no trained head for AlbertTokenClassifier"):
        init_from_checkpoint(model, prefix, require_head=True)
