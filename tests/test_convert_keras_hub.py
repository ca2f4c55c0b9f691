"""albert_tf.convert.keras_hub: keras-hub presets load into our models and give keras-hub's
own outputs (fixtures saved by keras-hub 0.32)."""

import json
import shutil

import numpy as np
import pytest

from support.interop import assert_close, expected, inputs, interop, loaded, run


def _source(name):
    from albert_tf.convert import open_source

    return open_source(interop("keras_hub", name))


def test_backbone_preset_gives_keras_hub_outputs():
    from albert_tf.models import AlbertModel

    source = _source("backbone")
    assert source.format == "keras_hub" and source.heads == ()
    assert source.config.hidden_act == "gelu" and source.config.intermediate_size == 37
    assert source.spm_model_file.endswith("vocabulary.spm") and source.do_lower_case is False
    model, report = loaded(AlbertModel, source)
    assert report.missing == [] and report.unused == []
    out, want = run(model, inputs()), expected("keras_hub", "backbone")
    assert_close(out["sequence_output"], want["sequence_output"], "sequence_output")
    assert_close(out["pooled_output"], want["pooled_output"], "pooled_output")


def test_text_classifier_preset_gives_keras_hub_logits():
    from albert_tf.models import AlbertClassifier

    source = _source("classifier")
    assert source.heads == ("classifier",) and source.num_labels == 4
    model, report = loaded(AlbertClassifier, source, num_labels=4)
    assert report.missing == [] and report.unused == []
    assert_close(run(model, inputs())["logits"], expected("keras_hub", "classifier")["logits"],
                 "logits")


def test_other_classes_are_refused_by_name(tmp_path):
    from albert_tf.convert import SourceError, open_source

    folder = tmp_path / "preset"
    shutil.copytree(interop("keras_hub", "backbone"), folder)
    values = json.loads((folder / "config.json").read_text())
    values["class_name"] = "BertBackbone"
    (folder / "config.json").write_text(json.dumps(values))
    with pytest.raises(SourceError, match="class_name is 'BertBackbone'"):
        open_source(folder)
