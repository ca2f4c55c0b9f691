"""Raw text inside the OpenVINO files (issue 48, "raw text in", serving/openvino_text.py): the
text → ids graph (openvino-tokenizers' string ops around standard ops that OpenVINO's ONNX
frontend reads) gives albert-tf's tokenizer's packed ids on the golden cases, the GLUE dev
sentences and the hard cases, cased and uncased, single and pair, and an export writes
`<head>.text.<kind>.xml` files that `Predictor` runs, checked against the Keras model."""

import json

import numpy as np
import pytest

from albert_tf.config import AlbertConfig
from albert_tf.errors import InputError
from albert_tf.models import AlbertClassifier
from albert_tf.serving import onnx_export, onnx_text, openvino_export, openvino_text
from albert_tf.serving import runtime_text, runtimes
from albert_tf.serving.predictor import Predictor
from support.configs import GLUE_TINY
from support.glue_texts import glue_dev_texts
from support.hard_texts import HARD
from support.informative import spread_weights
from support.paths import DATA, FIXTURES

pytestmark = pytest.mark.skipif(
    not all(runtimes.available(p) for p in ("tf2onnx", "onnx", "openvino", "openvino_tokenizers")),
    reason="needs the [openvino] extra: pip install -e .[openvino]")
needs_shared = pytest.mark.skipif(not FIXTURES.is_dir() or not DATA.is_dir(),
                                  reason="needs ../shared (fixtures/original and data/glue)")
SPM = FIXTURES / "spm" / "spm.model"
DIGIT_COMMA = FIXTURES / "spm" / "spm_digitcomma.model"
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


def _differ(got, want, texts):
    rows = np.zeros(len(texts), bool)
    for name in onnx_text.OUTPUTS:
        rows |= (got[name] != want[name]).any(-1)
    return [texts[i] for i in np.flatnonzero(rows)]


@needs_shared
def test_the_graph_gives_albert_tfs_ids_on_every_text():
    """The digit-comma model's golden cases, the SST-2 dev sentences and the hard cases
    (1,131 texts), every other one paired with another (long pairs trimmed), after TensorFlow
    in this process: every row albert-tf's, the golden cases the original's own ids."""
    cases = json.loads((FIXTURES / "tokenization" / "tokenization_golden_digitcomma.json")
                       .read_text(encoding="utf-8"))["cases"]
    texts = [c["text"] for c in cases] + glue_dev_texts()[-872:] + HARD + NUL
    assert len(texts) == 1131
    pairs = [text if k % 2 else "" for k, text in enumerate(texts[7:] + texts[:7])]
    got = _run(DIGIT_COMMA, True, 64, texts, pairs)
    want = runtime_text.pack_texts(texts, pairs, 64, spm_model_file=str(DIGIT_COMMA))
    assert _differ(got, want, texts) == []
    ids = got["input_word_ids"]
    fixed = 0
    for row, case in enumerate(cases[::2]):  # single rows: the original's ids
        golden = case["preprocess_text(lower=True)+tokenize"]["ids"][:61]
        assert ids[2 * row][1:len(golden) + 1].tolist() == golden
        fixed += "," in case["text"]
    assert fixed > 10  # digits before commas: the fix-up's pieces
    # The URL whose pieces tie on score: the wheel's "w" + "ww", not the op's "ww" + "w".
    url = texts.index("https://www.example.org/path?x=1&y=2#frag")
    assert ids[url].tolist() == want["input_word_ids"][url].tolist()


@needs_shared
def test_cased_graph_keeps_case_and_strips_accents():
    cases = json.loads((FIXTURES / "tokenization" / "tokenization_golden.json")
                       .read_text(encoding="utf-8"))["cases"]
    texts = [c["text"] for c in cases] + HARD
    got = _run(SPM, False, 128, texts, [""] * len(texts))
    want = runtime_text.pack_texts(texts, None, 128, spm_model_file=str(SPM), do_lower_case=False)
    assert _differ(got, want, texts) == []
    ids, mask = got["input_word_ids"], got["input_mask"]
    for case in cases[:40]:  # against the original's own ids
        row = texts.index(case["text"])
        assert ids[row][1:mask[row].sum() - 1].tolist() == case[
            "preprocess_text(lower=False)+tokenize"]["ids"]


@needs_shared
def test_export_writes_text_files_that_predictor_runs(tmp_path):
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), 3)
    model({"input_ids": np.zeros((1, 16), np.int32),
           "input_mask": np.ones((1, 16), np.int32), "segment_ids": np.zeros((1, 16), np.int32)})
    spread_weights(model, std=0.3)
    folder = tmp_path / "classifier" / "openvino" / "1"
    written = openvino_export.export_openvino(model, folder, 16, "float32,dynamic_int8",
                                              name="classifier", spm_model_file=str(SPM),
                                              label_names=["a", "b", "c"])
    assert sorted(p.name for p in folder.iterdir()) == [
        "classifier.dynamic_int8.bin", "classifier.dynamic_int8.xml", "classifier.float32.bin",
        "classifier.float32.xml", "classifier.json", "classifier.text.dynamic_int8.bin",
        "classifier.text.dynamic_int8.xml", "classifier.text.float32.bin",
        "classifier.text.float32.xml", "spm.model"]
    assert written["text.float32"] == str(folder / "classifier.text.float32.xml")
    meta = json.loads((folder / "classifier.json").read_text())
    assert meta["text_in"] is True and meta["text_inputs"] == ["text_a", "text_b"]
    assert meta["text_files"] == {"float32": "classifier.text.float32.xml",
                                  "dynamic_int8": "classifier.text.dynamic_int8.xml"}
    assert meta["text_in_note"] == runtime_text.NOTES["openvino_text"]
    checked = meta["agreement"]["text"]["float32"]
    assert checked["texts"] == 20 and checked["argmax_agreement"] == 1.0
    assert checked["max_abs_diff"] <= onnx_export.FLOAT32_ATOL
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
    runner = object.__new__(runtimes.OpenVinoTextRunner)  # no model: the texts are checked first
    with pytest.raises(InputError, match=r"^text 1 is not UTF-8 \(byte 0xe9 at offset 3\)$"):
        runner(["fine", "caf\xe9".encode("latin-1")])
    with pytest.raises(InputError, match=r"^text pair 0 is not UTF-8 \(byte 0xff"):
        runner(["fine"], [b"\xff"])
