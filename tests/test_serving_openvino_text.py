"""Raw text inside the OpenVINO files (issue 48, "raw text in", serving/openvino_text.py): the
text → ids graph (openvino-tokenizers' string ops around standard ops that OpenVINO's ONNX
frontend reads) gives albert-tf's tokenizer's packed ids on the golden cases, the GLUE dev
sentences and the hard cases, cased and uncased, single and pair, and an export writes
`<head>.text.<kind>.xml` files that `Predictor` runs, checked against the Keras model."""

import numpy as np
import pytest

from albert_tf.serving import onnx_export, onnx_text, openvino_export, openvino_text, runtimes
from albert_tf.serving.predictor import Predictor
from support.paths import DATA, FIXTURES
from support.text_graphs import (assert_refuses_non_utf8, check_cased_singles,
                                 check_uncased_pairs, export_checked)

pytestmark = pytest.mark.skipif(
    not all(runtimes.available(p) for p in ("tf2onnx", "onnx", "openvino", "openvino_tokenizers")),
    reason="needs the [openvino] extra: pip install -e .[openvino]")
needs_shared = pytest.mark.skipif(not FIXTURES.is_dir() or not DATA.is_dir(),
                                  reason="needs ../shared (fixtures/original and data/glue)")
NUL = ["null\x00char", "\x00", "end\x00"]


def _run(spm, lower, length, texts, pairs, size=500):
    """The tokenizer graph's outputs in this process (TensorFlow imported first)."""
    ov = runtimes.load("openvino", "a test")
    compiled = ov.Core().compile_model(openvino_text.tokenizer_model(str(spm), lower, length),
                                       "CPU")
    parts = []
    for k in range(0, len(texts), size):
        stand_in = [[t.replace("\x00", runtimes.NUL_STANDIN) for t in group[k:k + size]]
                    for group in (texts, pairs)]
        out = compiled({"text_a": np.array(stand_in[0], str),
                        "text_b": np.array(stand_in[1], str)})
        parts.append({n: np.asarray(out[n]) for n in onnx_text.OUTPUTS})
    return {n: np.concatenate([p[n] for p in parts]) for n in onnx_text.OUTPUTS}


@needs_shared
def test_the_graph_gives_albert_tfs_ids_on_every_text():
    """The digit-comma model's golden cases, the SST-2 dev sentences and the hard cases
    (1,131 texts), every other one paired with another (long pairs trimmed), after TensorFlow
    in this process: every row albert-tf's, the golden cases the original's own ids."""
    texts, got, want = check_uncased_pairs(_run, NUL)
    assert len(texts) == 1131
    ids = got["input_word_ids"]
    # The URL whose pieces tie on score: the wheel's "w" + "ww", not the op's "ww" + "w".
    url = texts.index("https://www.example.org/path?x=1&y=2#frag")
    assert ids[url].tolist() == want["input_word_ids"][url].tolist()


@needs_shared
def test_cased_graph_keeps_case_and_strips_accents():
    check_cased_singles(_run)


@needs_shared
def test_export_writes_text_files_that_predictor_runs(tmp_path):
    export_checked(openvino_export.export_openvino, tmp_path / "classifier" / "openvino" / "1", [
        "classifier.dynamic_int8.bin", "classifier.dynamic_int8.xml", "classifier.float32.bin",
        "classifier.float32.xml", "classifier.json", "classifier.text.dynamic_int8.bin",
        "classifier.text.dynamic_int8.xml", "classifier.text.float32.bin",
        "classifier.text.float32.xml", "spm.model"], "xml", "openvino_text")
    # The text file and the ids file (tokenized in Python) give the same answers.
    by_text = Predictor.open(tmp_path / "classifier", format="openvino")
    assert isinstance(by_text.model.model, runtimes.OpenVinoTextRunner)
    by_ids = Predictor.open(tmp_path / "classifier", format="openvino", text_in=False)
    assert isinstance(by_ids.model.model, runtimes.OpenVinoRunner)
    texts, pairs = list(onnx_export.CHECK_TEXTS), list(onnx_export.CHECK_PAIRS)
    np.testing.assert_allclose(by_text.predict(texts), by_ids.predict(texts), atol=1e-6)
    np.testing.assert_allclose(by_text.predict(texts, pairs), by_ids.predict(texts, pairs),
                               atol=1e-6)
    assert by_text.classify(texts, pairs) == by_ids.classify(texts, pairs)
    # One text pair for every row (the docs' [""]), and no texts at all.
    run = by_text.model.model
    np.testing.assert_allclose(
        next(iter(run.request.infer({"text_a": np.array(texts),
                                     "text_b": np.array([""])}).values())),
        by_ids.predict(texts), atol=1e-6)
    assert run([])["probabilities"].shape == (0, 3)


def test_the_text_runner_refuses_bytes_that_are_not_utf8_before_running():
    # No model: the texts are checked first.
    assert_refuses_non_utf8(object.__new__(runtimes.OpenVinoTextRunner))
