"""Predictor: one class opens a classifier's, a token classifier's or an encoder's export as a
SavedModel, TFLite, ONNX or OpenVINO file and gives the same answers (probabilities within 1e-4,
the same label names, the same tags per word) on texts and text pairs."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.errors import InputError
from albert_tf.models import AlbertTokenClassifier
from albert_tf.serving.predictor import FORMATS, Predictor
from albert_tf.source_export import export_source
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import SPM_VOCAB_SIZE, tiny_config
from support.informative import spread_weights
from support import hf_exports
from support.hf_exports import runtime_formats, shared_hf_export

LENGTH = 16  # the token classifier's export (the shared export's is hf_exports.LENGTH)
TEXTS = ["The quick brown fox jumps over the lazy dog.", "ALBERT shares its layers.",
         "Héllo, WORLD — 1,234 times!", ""]
PAIRS = ["A fox.", "", "Who said it?", "Nothing."]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The session's export of transformers' classifier in every format (support/hf_exports)."""
    formats = ["saved_model", "tflite"] + runtime_formats()
    if os.environ.get("ALBERT_TF_CI"):  # CI installs the [onnx] and [openvino] extras
        assert formats == list(FORMATS), f"runtimes missing: only {formats}"
    _, root = shared_hf_export(tmp_path_factory)
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
    assert want["pooled_output"].shape[0] == 4 and want["sequence_output"].shape[1] == hf_exports.LENGTH
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


def test_a_token_classifier_tags_alike_as_savedmodel_and_tflite(spm_model, tmp_path):
    """A token classifier's folder exported: the TFLite file's tags per word (run_ner's windows
    in Python) equal the SavedModel's serve_text tags, a sentence longer than one window
    among them."""
    config = tiny_config(vocab_size=SPM_VOCAB_SIZE)
    model = AlbertTokenClassifier(config, 3)
    model({"input_ids": tf.zeros([1, LENGTH], tf.int32)})
    spread_weights(model, std=0.5)
    folder = tmp_path / "ner"
    save_tf1_checkpoint(model, folder / "model.ckpt-1", 1)
    (folder / "labels.json").write_text(json.dumps(["O", "B-PER", "I-PER"]))
    config.to_json_file(folder / "albert_config.json")
    export_source(str(folder), tmp_path / "x", str(folder / "albert_config.json"), spm_model,
                  max_seq_length=LENGTH, verify=False, tflite="float32")
    texts = ["Ada Lovelace met Charles Babbage in London .",
             " ".join(f"word{i} Smith" for i in range(12)), ""]
    saved = Predictor.open(tmp_path / "x" / "token_classifier").tag(texts)
    lite = Predictor.open(tmp_path / "x" / "token_classifier", format="tflite").tag(texts)
    assert [len(t) for t in saved] == [8, 24, 0]
    assert len({tag for row in saved for tag in row}) >= 2  # the tags vary
    assert lite == saved
