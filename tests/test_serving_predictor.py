"""Predictor: one class opens a classifier's or an encoder's export as a SavedModel, TFLite, ONNX
or OpenVINO file and gives the same answers (probabilities within 1e-4, the same label names)
on texts and text pairs."""

import os

import numpy as np
import pytest

from albert_tf.errors import InputError
from albert_tf.serving import runtimes
from albert_tf.serving.predictor import FORMATS, Predictor
from support.interop import interop

LENGTH = 16
TEXTS = ["The quick brown fox jumps over the lazy dog.", "ALBERT shares its layers.",
         "Héllo, WORLD — 1,234 times!", ""]
PAIRS = ["A fox.", "", "Who said it?", "Nothing."]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from albert_tf.source_export import export_source

    formats = ["saved_model", "tflite"] + [f for f, package in (("onnx", "onnxruntime"),
                                                                ("openvino", "openvino"))
                                           if runtimes.available(package)]
    if os.environ.get("ALBERT_TF_CI"):  # CI installs the [onnx] and [openvino] extras
        assert formats == list(FORMATS), f"runtimes missing: only {formats}"
    root = tmp_path_factory.mktemp("predictor") / "x"
    export_source(interop("hf", "classifier"), root, max_seq_length=LENGTH, verify=False,
                  tflite="float32", onnx="float32" if "onnx" in formats else None,
                  openvino="float32" if "openvino" in formats else None)
    return root, formats


def test_a_classifier_answers_alike_in_every_format(exported):
    root, formats = exported
    answers = {}
    for fmt in formats:
        predictor = Predictor.open(root / "classifier", format=fmt)
        answers[fmt] = (predictor.predict(TEXTS), predictor.predict(TEXTS, PAIRS),
                        predictor.predict_labels(TEXTS), predictor.classify(TEXTS, PAIRS),
                        predictor.predict_labels(TEXTS, PAIRS))
    single, pairs, labels, classes, pair_labels = answers["saved_model"]
    # The texts' probabilities differ (so a format that mixes texts up cannot agree), and the
    # pairs' differ from the single texts'.
    assert np.abs(single[:, None] - single[None]).max(-1)[~np.eye(4, dtype=bool)].min() > 1e-3
    assert np.abs(pairs[:3] - single[:3]).max() > 1e-3
    names = Predictor.open(root / "classifier", format="tflite").model.label_names
    assert names and labels == [names[i] for i in single.argmax(-1)]  # the export's names
    for fmt in formats[1:]:
        got = answers[fmt]
        np.testing.assert_allclose(got[0], single, atol=1e-4, err_msg=fmt)
        np.testing.assert_allclose(got[1], pairs, atol=1e-4, err_msg=fmt)
        assert got[2] == labels and got[3] == classes and got[4] == pair_labels, fmt


def test_an_encoder_answers_alike_in_every_format(exported):
    root, formats = exported
    outputs = {fmt: Predictor.open(root / "encoder", format=fmt).encode(TEXTS, PAIRS)
               for fmt in formats if fmt != "openvino" or (root / "encoder" / fmt).is_dir()}
    want = outputs.pop("saved_model")
    assert want["pooled_output"].shape[0] == 4 and want["sequence_output"].shape[1] == LENGTH
    for fmt, got in outputs.items():
        for key in ("pooled_output", "sequence_output"):
            np.testing.assert_allclose(got[key], want[key], atol=1e-4, err_msg=f"{fmt} {key}")


def test_wrong_calls_name_the_export(exported):
    root, _ = exported
    with pytest.raises(InputError, match="format='pytorch': not one of saved_model, tflite"):
        Predictor.open(root / "classifier", format="pytorch")
    with pytest.raises(InputError, match="encode is for an encoder export; this is a classifier one"):
        Predictor.open(root / "classifier", format="tflite").encode(["a"])
    with pytest.raises(InputError, match="no SavedModel"):
        Predictor.open(root / "nothing")
