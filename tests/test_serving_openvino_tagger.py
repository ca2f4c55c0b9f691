"""A token classifier's OpenVINO file that takes raw text (issue 48, serving/openvino_tagger.py):
`token_classifier.text.<kind>.xml` gives what its ONNX text file and the SavedModel's serve_text
give per word (words, tags, tag ids, probabilities, character offsets; padded alike) on the ONNX
tagger test's texts (a sentence of many windows, words without pieces, accents, CJK, odd
whitespace, a NUL, empty and blank text); the export checks it in a fresh process and records it
in token_classifier.json; Predictor tags through it."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.errors import InputError
from albert_tf.run_config import window_stride
from albert_tf.serving import onnx_export, onnx_text, openvino_export, runtime_text, runtimes
from albert_tf.serving.predictor import Predictor
from albert_tf.tasks.token_classification.export import TokenServing, tflite_call
from albert_tf.text import optional as text_optional
from support.paths import FIXTURES
from support.text_graphs import (TAGGER_LABELS, TAGGER_LENGTH, TAGGER_TEXTS,
                                 assert_tagger_text_export, spread_tagger)

pytestmark = [
    pytest.mark.skipif(not all(runtimes.available(p) for p in (
        "tf2onnx", "onnx", "openvino", "openvino_tokenizers", "onnxruntime",
        "onnxruntime_extensions")), reason="needs the [openvino] and [onnx] extras: "
                                           "pip install -e .[openvino,onnx]"),
    pytest.mark.skipif(not FIXTURES.is_dir(), reason="needs ../shared (fixtures/original)")]
SPM = FIXTURES / "spm" / "spm.model"
LENGTH, LABELS, TEXTS = TAGGER_LENGTH, TAGGER_LABELS, TAGGER_TEXTS
NAME = "token_classifier"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model = spread_tagger()
    contents = onnx_export.convert(model, LENGTH, "float32", ("probabilities",),
                                   tflite_call(model))
    root = tmp_path_factory.mktemp("tagger") / NAME
    args = dict(name=NAME, outputs=("probabilities",), call=tflite_call(model),
                spm_model_file=str(SPM), label_names=LABELS, contents=contents)
    written = openvino_export.export_openvino(model, root / "openvino" / "1", LENGTH,
                                              "float32", **args)
    onnx_written = onnx_export.export_onnx(model, root / "onnx" / "1", LENGTH, "float32", **args)
    return model, root, written, onnx_written


def test_the_export_writes_and_checks_the_text_file(exported):
    _, root, written, _ = exported
    assert_tagger_text_export(
        root / "openvino" / "1", written,
        ["spm.model", "token_classifier.float32.bin", "token_classifier.float32.xml",
         "token_classifier.json", "token_classifier.text.float32.bin",
         "token_classifier.text.float32.xml"],
        "token_classifier.text.float32.xml", LABELS, runtime_text.NOTES["openvino_tagger"])


def test_the_file_gives_the_onnx_files_outputs_and_predictor_tags_through_it(exported):
    """The OpenVINO file and the ONNX text file, each in a fresh process (the runtime's string
    ops imported first): the same words, tags, tag ids, offsets and padding, probabilities
    within 1e-5; Predictor (in this process, after TensorFlow) tags through the OpenVINO file
    as the ONNX file tags."""
    model, root, written, onnx_written = exported
    got = onnx_text.run_in_fresh_process({"float32": written["text.float32"]}, LENGTH,
                                         [(TEXTS, None)], fmt="openvino")["float32"][0]
    want = onnx_text.run_in_fresh_process({"float32": onnx_written["text.float32"]}, LENGTH,
                                          [(TEXTS, None)])["float32"][0]
    assert sorted(got) == sorted(want)
    for name in ("words", "tags", "tag_ids", "word_starts", "word_ends"):
        assert got[name].tolist() == want[name].tolist(), name
    assert got["tag_ids"].shape == (9, 40)
    np.testing.assert_allclose(got["probabilities"], want["probabilities"], atol=1e-5)
    words = [[w.replace(runtimes.NUL_STANDIN, "\x00") for w in row if w] for row in got["words"]]
    assert words == [t.split() for t in TEXTS]
    assert len({t for row in got["tags"] for t in row if t}) >= 2  # the tags vary
    tagger = Predictor.open(root, format="openvino")
    assert type(tagger.model).__name__ == "_TextTagger"
    assert tagger.tag(TEXTS) == [[t for t in row if t] for row in want["tags"].tolist()]
    assert tagger.tag([""]) == [[]] and tagger.tag([]) == []
    with pytest.raises(InputError, match=r"token_classifier.text.float32.xml: takes single "
                                         r"texts \(text_a\); text pairs cannot be given"):
        tagger.model.model(TEXTS[:1], ["a pair"])


@pytest.mark.skipif(not text_optional.available(), reason="needs tensorflow-text (serve_text)")
def test_the_file_gives_serve_texts_outputs(exported):
    """Against TokenServing.serve_text (the SavedModel's signature) on the same model."""
    model, _, written, _ = exported
    got = onnx_text.run_in_fresh_process({"float32": written["text.float32"]}, LENGTH,
                                         [(TEXTS, None)], fmt="openvino")["float32"][0]
    serving = TokenServing(model, LENGTH, window_stride(None, LENGTH), LABELS,
                           spm_model_file=str(SPM))
    want = {k: v.numpy() for k, v in serving.serve_text(tf.constant(TEXTS)).items()}
    assert [[w.replace(runtimes.NUL_STANDIN, "\x00") for w in row] for row in
            got["words"].tolist()] == [[w.decode("utf-8") for w in row] for row in want["words"]]
    assert got["tags"].tolist() == [[t.decode("utf-8") for t in row] for row in want["tags"]]
    for name in ("tag_ids", "word_starts", "word_ends"):
        assert got[name].tolist() == want[name].tolist(), name
    np.testing.assert_allclose(got["probabilities"], want["probabilities"], atol=1e-5)
