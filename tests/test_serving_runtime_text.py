"""Raw text and the ONNX / OpenVINO files (issue 48): why the OpenVINO text files search the
SentencePiece op's pieces again (openvino-tokenizers' own chain measured against albert-tf's ids
on 1,912 texts: 2 and 78 differing texts; serving/openvino_text.py, test_serving_openvino_text.py),
the note each `<head>.json` carries, a text that is not UTF-8 refused in one error naming it,
and the int8 file's agreement with float32 on raw dev texts, written at export."""

import json
import sys
import types

import numpy as np
import pytest

from albert_tf.config import AlbertConfig
from albert_tf.errors import InputError
from albert_tf.models import AlbertClassifier
from albert_tf.serving import onnx_export, runtime_text, runtimes
from albert_tf.serving.lite import LiteClassifier
from albert_tf.serving.predictor import Predictor
from albert_tf.tokenization import FullTokenizer
from albert_tf.tokenization.text_rules import preprocess_text
from support.configs import GLUE_TINY
from support.informative import spread_weights
from support.glue_texts import glue_dev_texts
from support.paths import DATA, FIXTURES

needs_shared = pytest.mark.skipif(not FIXTURES.is_dir() or not DATA.is_dir(),
                                  reason="needs ../shared (fixtures/original and data/glue)")
SPM = FIXTURES / "spm" / "spm.model"


@needs_shared
@pytest.mark.skipif(not runtimes.available("openvino_tokenizers"),
                    reason="needs the [openvino] extra: pip install -e .[openvino]")
@pytest.mark.parametrize("spm, golden, differ", [
    ("spm.model", "tokenization_golden.json", 2),
    ("spm_digitcomma.model", "tokenization_golden_digitcomma.json", 78)])
def test_openvino_tokenizer_ops_differ_on_the_texts_the_note_names(spm, golden, differ):
    """The golden cases (accents, CJK, odd whitespace, empty text, ...) and the GLUE dev
    sentences through NFKD, marks dropped, case folding and SentencepieceTokenizer inside
    OpenVINO, against the original's golden ids and albert-tf's tokenizer."""
    cases = json.loads((FIXTURES / "tokenization" / golden).read_text(encoding="utf-8"))["cases"]
    texts = [c["text"] for c in cases] + glue_dev_texts()
    tokenizer = FullTokenizer(None, True, str(FIXTURES / "spm" / spm))
    want = [c["preprocess_text(lower=True)+tokenize"]["ids"] for c in cases] + [
        tokenizer.convert_tokens_to_ids(tokenizer.tokenize(preprocess_text(t, lower=True)))
        for t in texts[len(cases):]]
    got = runtime_text.openvino_sentencepiece_ids(str(FIXTURES / "spm" / spm), texts)
    bad = [text for text, g, w in zip(texts, got, want) if g != w]
    assert len(texts) == 1912 and len(bad) == differ
    if differ == 2:  # a score tie: the same pieces, two of them swapped
        assert all("https://www.example.org/path?x=1&y=2#frag" in text for text in bad)
        assert [sorted(g) == sorted(w) for g, w in zip(got, want) if g != w] == [True, True]
    else:  # the URL's tie, and 77 texts holding a digit followed by a comma
        comma = [t for t in bad if any(a.isdigit() and b == "," for a, b in zip(t, t[1:]))]
        assert len(comma) == 77
        assert [t for t in bad if t not in comma] == ["https://www.example.org/path?x=1&y=2#frag"]


def test_text_ops_are_unsafe_after_tensorflow_even_when_its_key_was_put_back(monkeypatch):
    """The check that keeps onnxruntime-extensions' SentencePiece from crashing a process that
    loaded TensorFlow first: a test (test_cli.py) that removes and restores sys.modules'
    "tensorflow" moves that key after the extensions' own, which once crashed CI's worker."""
    tensorflow = sys.modules["tensorflow"]
    assert not runtimes.text_ops_safe()  # this process imported TensorFlow at its start
    monkeypatch.setitem(sys.modules, runtimes._EXTENSIONS,
                        sys.modules.get(runtimes._EXTENSIONS, types.ModuleType("stand-in")))
    monkeypatch.delitem(sys.modules, "tensorflow")
    monkeypatch.setitem(sys.modules, "tensorflow", tensorflow)
    assert list(sys.modules).index("tensorflow") > list(sys.modules).index(runtimes._EXTENSIONS)
    assert not runtimes.text_ops_safe()


def test_a_text_that_is_not_utf8_is_one_error_naming_it():
    assert runtime_text.require_utf8(["é", "é".encode("utf-8")]) == ["é", "é"]
    with pytest.raises(InputError, match=r"^text 1 is not UTF-8 \(byte 0xff at offset 2\)$"):
        runtime_text.require_utf8(["fine", b"ab\xffcd"])
    with pytest.raises(InputError, match=r"^text pair 0 is not UTF-8"):
        runtime_text.pack_texts(["a"], [b"\xc3"], 8, spm_model_file=str(SPM))


@needs_shared
def test_pack_texts_gives_the_originals_ids_packed():
    cases = json.loads((FIXTURES / "tokenization" / "tokenization_golden.json").read_text(
        encoding="utf-8"))["cases"]
    case = next(c for c in cases if c["text"] == "crème brûlée")
    ids = case["preprocess_text(lower=True)+tokenize"]["ids"]
    tokenizer = FullTokenizer(None, True, str(SPM))
    cls, sep = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    packed = runtime_text.pack_texts(["crème brûlée", "Café"], ["a", None], 16,
                                     spm_model_file=str(SPM))
    row = [cls, *ids, sep, *tokenizer.convert_tokens_to_ids(["▁a"]), sep]
    assert packed["input_word_ids"][0].tolist() == row + [0] * (16 - len(row))
    assert packed["input_type_ids"][0].tolist() == [0] * (len(ids) + 2) + [1, 1] + [0] * (
        16 - len(row))
    assert packed["input_mask"][1].sum() == 2 + len(tokenizer.tokenize("cafe"))


@needs_shared
@pytest.mark.skipif(not all(runtimes.available(p) for p in ("tf2onnx", "onnxruntime")),
                    reason="needs the [onnx] extra: pip install -e .[onnx]")
def test_export_writes_the_note_and_int8_agreement_on_raw_texts(tmp_path):
    model = AlbertClassifier(AlbertConfig(**GLUE_TINY), 3)
    model({"input_ids": np.zeros((1, 16), np.int32),
           "input_mask": np.ones((1, 16), np.int32), "segment_ids": np.zeros((1, 16), np.int32)})
    spread_weights(model, std=0.3)
    texts = glue_dev_texts()[:120]
    folder = tmp_path / "classifier" / "onnx" / "1"
    onnx_export.export_onnx(model, folder, 16, "float32,dynamic_int8", name="classifier",
                            spm_model_file=str(SPM), texts=texts)
    meta = json.loads((folder / "classifier.json").read_text())
    assert meta["text_in"] is True and meta["text_in_note"] == runtime_text.NOTES["onnx_text"]
    found = meta["agreement"]["dynamic_int8"]["dev"]
    # The same texts one by one through serving.lite's own tokenization and each file.
    labels = {}
    for kind in ("float32", "dynamic_int8"):
        lite = LiteClassifier.from_folder(folder, kind=kind, name="classifier",
                                          open_runner=runtimes.onnx_runner)
        labels[kind] = np.array([lite.predict([text])[0].argmax() for text in texts])
    share = float(np.mean(labels["float32"] == labels["dynamic_int8"]))
    assert found == {"texts": 120, "batch": 1, "argmax_agreement": round(share, 6)}
    assert 0.5 < share < 1  # a spread tiny model's int8 file flips some answers

    # Raw text through Predictor: UTF-8 bytes are text, other bytes one error naming the text.
    predictor = Predictor.open(tmp_path / "classifier", format="onnx", kind="float32")
    assert predictor.predict_labels([texts[0], texts[1].encode("utf-8")]) == [
        int(labels["float32"][0]), int(labels["float32"][1])]
    with pytest.raises(InputError, match=r"^text 1 is not UTF-8 \(byte 0xe9 at offset 3\)$"):
        predictor.classify(["fine", "caf\xe9".encode("latin-1")])
    with pytest.raises(InputError, match=r"^text pair 0 is not UTF-8"):
        predictor.predict(["fine"], [b"\xff"])
