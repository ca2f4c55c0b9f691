"""albert_tf.weights.writers.keras_hub: written presets have keras-hub's own layout, read back to
the same model, and what keras-hub cannot express is refused before anything is written."""

import json

import h5py
import numpy as np
import pytest

from support.interop import (assert_close, inputs, interop, loaded, odd_config, random_source,
                             run)


def _layout(path):
    entries = {}
    with h5py.File(path, "r") as handle:
        def visit(name, item):
            entries[name] = ((item.shape, str(item.dtype), item[()].tobytes())
                             if isinstance(item, h5py.Dataset) else dict(item.attrs))
        handle.visititems(visit)
    return entries


@pytest.mark.parametrize("name, files", [
    ("backbone", ["model.weights.h5"]),
    ("classifier", ["model.weights.h5", "task.weights.h5"]),
])
def test_written_preset_is_what_keras_hub_saved(tmp_path, name, files):
    from albert_tf.weights import open_source
    from albert_tf.weights.writers.keras_hub import write_keras_hub

    write_keras_hub(open_source(interop("keras_hub", name)), tmp_path / "out")  # keeps its 20
    for file in files:
        assert _layout(tmp_path / "out" / file) == _layout(interop("keras_hub", name, file)), file
    for file in ["config.json", "tokenizer.json"] + (
            ["task.json", "preprocessor.json"] if name == "classifier" else []):
        assert json.loads((tmp_path / "out" / file).read_text()) == \
            json.load(open(interop("keras_hub", name, file))), file
    metadata = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert metadata["parameter_count"] == json.load(
        open(interop("keras_hub", name, "metadata.json")))["parameter_count"]
    assert (tmp_path / "out" / "assets" / "tokenizer" / "vocabulary.spm").read_bytes() == \
        open(interop("keras_hub", name, "assets", "tokenizer", "vocabulary.spm"), "rb").read()


@pytest.mark.parametrize("overrides", [{}, {"embedding_size": 20}])
def test_groups_inner_groups_and_equal_sizes_round_trip(tmp_path, overrides):
    from albert_tf.weights import open_source
    from albert_tf.weights.writers.keras_hub import write_keras_hub
    from albert_tf.models import AlbertClassifier

    config = odd_config(**overrides)
    source, model = random_source(config, AlbertClassifier, num_labels=5)
    report = write_keras_hub(source, tmp_path / "kh", spm_model_file=interop(
        "keras_hub", "backbone", "assets", "tokenizer", "vocabulary.spm"))
    assert report.architecture == "AlbertTextClassifier"
    names = {key: attrs.get("name") for key, attrs in _layout(tmp_path / "kh" / "model.weights.h5")
             .items() if key.endswith("/vars") and key.count("/") == 2}
    assert names["layers/transformer_encoder/vars"] == "group_0_inner_layer_0"
    assert names["layers/transformer_encoder_1/vars"] == "group_0_inner_layer_1"
    assert names["layers/transformer_encoder_3/vars"] == "group_1_inner_layer_1"
    assert "layers/transformer_encoder_4/vars" not in names
    layout = _layout(tmp_path / "kh" / "model.weights.h5")  # keras' own numbering of these
    assert layout["layers/transformer_encoder_3/_self_attention_layer/_softmax/vars"] == \
        {"name": "softmax_3"}
    back = open_source(tmp_path / "kh")
    assert back.config == config.replace(initializer_range=0.02) and back.num_labels == 5
    again, report = loaded(AlbertClassifier, back, num_labels=5)
    assert report.unused == [] and report.missing == []
    feed = {k: v % config.vocab_size if k == "input_ids" else v for k, v in inputs().items()}
    want, got = run(model, feed), run(again, feed)
    assert_close(got["logits"], want["logits"], "logits", atol=1e-6)
    assert_close(model.encoder(feed)["sequence_output"], again.encoder(feed)["sequence_output"],
                 "sequence_output", atol=1e-6)


@pytest.fixture(scope="module")
def small_source():
    return random_source(odd_config(num_hidden_groups=1, inner_group_num=1))[0]


@pytest.mark.parametrize("overrides, key", [
    ({"hidden_act": "relu"}, "hidden_act"),
    ({"net_structure_type": 1}, "net_structure_type"),
    ({"share_parameters": "attention"}, "share_parameters"),
    ({"num_hidden_groups": 4}, "num_hidden_groups"),
    ({"attention_probs_dropout_prob": 0.1}, "attention_probs_dropout_prob"),
])
def test_what_keras_hub_cannot_express_is_refused_and_nothing_written(tmp_path, small_source,
                                                                     overrides, key):
    import dataclasses

    from albert_tf.weights import SourceError
    from albert_tf.weights.writers.keras_hub import write_keras_hub

    source = dataclasses.replace(small_source, config=small_source.config.replace(**overrides))
    with pytest.raises(SourceError, match=f"config key {key}.*nothing was written"):
        write_keras_hub(source, tmp_path / "kh")
    assert list(tmp_path.iterdir()) == []


def test_mlm_head_becomes_a_masked_lm_task_and_reads_back(tmp_path):
    from albert_tf.weights import open_source
    from albert_tf.weights.writers.keras_hub import write_keras_hub

    source = open_source(interop("hf", "pretraining"))
    report = write_keras_hub(source, tmp_path / "kh")
    assert report.architecture == "AlbertMaskedLM" and report.heads == ("mlm",)
    assert report.left == ("sop",) and "epsilon" in report.describe()
    assert json.loads((tmp_path / "kh" / "task.json").read_text())["class_name"] == "AlbertMaskedLM"
    layout = _layout(tmp_path / "kh" / "task.weights.h5")
    assert layout["layers/masked_lm_head/vars"] == {"name": "mlm_head"}
    assert layout["layers/masked_lm_head/_intermediate_dense/vars/0"][0] == (32, 16)
    back = open_source(tmp_path / "kh")
    assert back.heads == ("mlm",) and any("epsilon" in note for note in back.notes)
    for name, value in source.arrays.items():
        if name.startswith("cls/predictions/"):
            np.testing.assert_array_equal(back.arrays[name], value, err_msg=name)
