"""albert_tf.weights.writers.hf: written HF folders hold exactly what transformers saves, read
back to the same model, and configs HF cannot express are refused before anything is written."""

import json

import numpy as np
import pytest

from support.interop import (assert_close, inputs, interop, loaded, odd_config, random_source,
                             run)


@pytest.mark.parametrize("name", ["pretraining", "classifier", "qa"])
def test_written_folder_holds_what_transformers_saved(tmp_path, name):
    from safetensors.numpy import load_file

    from albert_tf.weights import open_source
    from albert_tf.weights.writers.hf import write_hf

    report = write_hf(open_source(interop("hf", name)), tmp_path / "out")
    assert report.left == ()
    theirs = load_file(interop("hf", name, "model.safetensors"))
    ours = load_file(tmp_path / "out" / "model.safetensors")
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        assert ours[key].dtype == value.dtype and ours[key].shape == value.shape, key
        np.testing.assert_array_equal(ours[key], value, err_msg=key)
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    wanted = json.loads(open(interop("hf", name, "config.json")).read())
    wanted.pop("transformers_version")
    assert config == wanted
    assert (tmp_path / "out" / "spiece.model").read_bytes() == \
        open(interop("hf", name, "spiece.model"), "rb").read()


@pytest.mark.parametrize("overrides", [{}, {"embedding_size": 20, "hidden_act": "relu"}])
def test_groups_inner_groups_and_equal_sizes_round_trip(tmp_path, overrides):
    from safetensors.numpy import load_file

    from albert_tf.weights import open_source
    from albert_tf.weights.writers.hf import write_hf
    from albert_tf.models import AlbertPretrainer

    config = odd_config(**overrides)
    source, model = random_source(config)
    report = write_hf(source, tmp_path / "hf")
    assert report.architecture == "AlbertForPreTraining"
    keys = load_file(tmp_path / "hf" / "model.safetensors")
    assert "albert.encoder.albert_layer_groups.1.albert_layers.1.ffn.weight" in keys
    assert not any("albert_layer_groups.2" in k or "albert_layers.2" in k for k in keys)
    if config.embedding_size == config.hidden_size:  # HF needs the projection: identity
        np.testing.assert_array_equal(
            keys["albert.encoder.embedding_hidden_mapping_in.weight"], np.eye(20))
        assert json.loads((tmp_path / "hf" / "config.json").read_text())["hidden_act"] == "relu"
    back = open_source(tmp_path / "hf")
    assert back.config == config
    again, report = loaded(AlbertPretrainer, back)
    assert report.unused == [] and report.missing == []
    feed = {k: v % config.vocab_size if k == "input_ids" else v for k, v in inputs().items()}
    want, got = run(model, feed), run(again, feed)
    for key in ("sequence_output", "pooled_output", "masked_lm_logits", "sentence_order_logits"):
        assert_close(got[key], want[key], key, atol=1e-6)


def test_classifier_labels_and_a_head_hf_has_no_place_for(tmp_path):
    from albert_tf.weights import open_source
    from albert_tf.weights.writers.hf import write_hf
    from albert_tf.models import AlbertClassifier

    source, _ = random_source(odd_config(), AlbertClassifier, num_labels=3)
    source.labels = ["no", "maybe", "yes"]
    source.heads = ("classifier", "mlm")  # as if the source held both: the classifier wins
    source.arrays.update(random_source(odd_config())[0].arrays)
    report = write_hf(source, tmp_path / "hf")
    assert report.architecture == "AlbertForSequenceClassification" and report.left == ("mlm",)
    assert "cls/predictions/output_bias" in report.unused and "left out" in report.describe()
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["id2label"] == {"0": "no", "1": "maybe", "2": "yes"}
    assert open_source(tmp_path / "hf").labels == ["no", "maybe", "yes"]


@pytest.mark.parametrize("overrides, key", [
    ({"share_parameters": "ffn"}, "share_parameters"),
    ({"down_scale_factor": 2}, "down_scale_factor"),
])
def test_what_hf_cannot_express_is_refused_and_nothing_written(tmp_path, overrides, key):
    import dataclasses

    from albert_tf.weights import SourceError, open_source
    from albert_tf.weights.writers.hf import write_hf

    source = open_source(interop("hf", "classifier"))
    source = dataclasses.replace(source, config=source.config.replace(**overrides))
    with pytest.raises(SourceError, match=f"config key {key}=.*nothing was written"):
        write_hf(source, tmp_path / "hf")
    assert list(tmp_path.iterdir()) == []
