"""Raw text inside the ONNX and OpenVINO files of a WordPiece model (issue 48, "raw text in":
serving/onnx_wordpiece.py, openvino_wordpiece.py, wordpiece_tables.py): the text → ids graph
gives albert-tf's `FullTokenizer(vocab_file)` + packing on hard cases (CJK, accents, controls,
punctuation, odd whitespace, the final sigma, over-long and uncoverable words, empty text),
cased and uncased, single and pair, in both runtimes; bench/text_graph_probe.py's WordPiece
probe counts every row exact on a subset; an export writes `<head>.text.<kind>.onnx` / `.xml`
files for a WordPiece classifier and token classifier, checked against the Keras model, and
`Predictor` runs the classifier's."""

import importlib.util
import json

import numpy as np
import pytest

from albert_tf import tokenization
from albert_tf.serving import (onnx_text, onnx_wordpiece, openvino_export, openvino_wordpiece,
                               runtime_text, runtimes)
from albert_tf.serving import wordpiece_tables as wt
from albert_tf.serving.predictor import Predictor
from albert_tf.serving.runtime_text import pack_texts
from albert_tf.tasks.token_classification.export import tflite_call
from support.paths import DATA, REPO
from support.text_graphs import (TAGGER_LABELS, TAGGER_LENGTH, assert_tagger_text_export,
                                 assert_text_metadata, spread_classifier, spread_tagger)
from support.wordpiece_vocab import HARD_TEXTS, build_vocab

needs_onnx = pytest.mark.skipif(
    not all(runtimes.available(p) for p in ("tf2onnx", "onnxruntime", "onnxruntime_extensions")),
    reason="needs the [onnx] extra: pip install -e .[onnx]")
needs_openvino = pytest.mark.skipif(
    not all(runtimes.available(p) for p in ("tf2onnx", "onnx", "openvino", "openvino_tokenizers")),
    reason="needs the [openvino] extra: pip install -e .[openvino]")
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data (GLUE, BTC, "
                                                          "WikiText-2)")
_PROBE = importlib.util.spec_from_file_location("text_graph_probe",
                                                REPO / "bench" / "text_graph_probe.py")

TEXTS = HARD_TEXTS + [  # and NULs, the final sigma beside invisible characters, CJK
    "\x00", "ΑΣ\u200dΒ ΑΣ\u00ad ΑΣ\x00 Σ\u200b ΟΔΟΣ,ΣΑΣ.", "豈更 丽丸 〇 々", "zz" * 120,
    "unaffable" * 3, "".join(chr(c) for c in range(33, 127)), "end\x00",
]
PAIRS = TEXTS[5:] + TEXTS[:5]


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("wordpiece") / "vocab.txt"
    build_vocab(path, TEXTS[::2])  # the odd texts' own characters may be [UNK]
    return str(path)


def _differing(got: dict, texts, pairs, length, vocab, lower) -> list:
    want = pack_texts(texts, pairs, length, vocab_file=vocab, do_lower_case=lower)
    rows = np.zeros(len(texts), bool)
    for name in onnx_text.OUTPUTS:
        rows |= (got[name] != want[name]).any(-1)
    return [texts[i] for i in np.flatnonzero(rows)]


def test_tables_classify_as_the_basic_tokenizer_and_hash_every_token_apart(vocab_file):
    assert [wt.char_class(ord(c)) for c in "\x00\u200b\ufffd\ufdd0\x85"] == [wt.DROP] * 5
    assert chr(wt.NUL_STANDIN) == runtimes.NUL_STANDIN  # what the runners send for a NUL
    assert [wt.char_class(ord(c)) for c in " \t\u00a0\u3000\u2028"] == [wt.SPACE] * 5
    assert [wt.char_class(ord(c)) for c in "中\uf900\U00020000ａ한"] == [wt.CJK] * 3 + [wt.NORMAL] * 2
    assert [wt.normalized(c) for c in "ÉİǄﬁΣ"] == ["e", "i", "ǆ", "ﬁ", "Σ"]
    assert [wt.casing(c) for c in "aΣ'\u0301-"] == [wt.CASED, wt.CASED, wt.IGNORABLE,
                                                 wt.IGNORABLE, 0]
    vocab = tokenization.load_vocab(vocab_file)
    keys = wt.vocab_keys(vocab, 200)
    tokens = {("##" if c else "") + "".join(map(chr, p[:n]))
              for c, n, p in zip(keys.continued, keys.lengths, keys.points)}
    assert set(vocab) - tokens == {"x" * 201, "zz" * 120}  # longer than any word can be
    for key, (continued, length) in enumerate(zip(keys.continued, keys.lengths)):
        h = [p if continued else wt.HASH_SEED for p in keys.prefixes]
        for cp in keys.points[key][:length]:
            h = [wt.fold(v, int(cp), base) for v, base in zip(h, keys.bases)]
        bucket = h[0] % len(keys.size)
        at = wt.place(*keys.multiplier[bucket], *h, keys.size[bucket])
        assert keys.slot[keys.offset[bucket] + at] == key
    assert max(keys.bases) * wt.HASH_MOD + 0x110000 < 2**31  # OpenVINO's CPU: int32 math


@needs_onnx
@pytest.mark.parametrize("lower", [True, False])
def test_onnx_graph_gives_albert_tfs_ids(tmp_path, vocab_file, lower):
    """In a fresh process (the string ops cannot run after TensorFlow), single texts at 64 and
    pairs at 24 (trimmed): every row albert-tf's, a NUL through the runner's stand-in."""
    runs = {}
    for length in (64, 24):
        path = tmp_path / f"tokenizer.{length}.onnx"
        path.write_bytes(onnx_wordpiece.tokenizer_model(vocab_file, lower, length)
                         .SerializeToString())
        runs[length] = onnx_text.run_in_fresh_process(
            {"t": path}, length, [(TEXTS, None) if length == 64 else (TEXTS, PAIRS)])["t"][0]
    assert _differing(runs[64], TEXTS, None, 64, vocab_file, lower) == []
    assert _differing(runs[24], TEXTS, PAIRS, 24, vocab_file, lower) == []
    assert (runs[24]["input_mask"].sum(-1) == 24).sum() >= 5  # long pairs were trimmed


def _openvino_run(vocab, lower, length):
    ov = runtimes.load("openvino", "a test")
    return ov.Core().compile_model(openvino_wordpiece.tokenizer_model(vocab, lower, length),
                                   "CPU")


def _openvino_batches(run, texts, pairs, size=500):
    parts = []
    for k in range(0, len(texts), size):
        stand_in = [[t.replace("\x00", runtimes.NUL_STANDIN) for t in side[k:k + size]]
                    for side in (texts, pairs)]
        out = run({"text_a": np.array(stand_in[0], str), "text_b": np.array(stand_in[1], str)})
        parts.append([np.asarray(out[n]) for n in onnx_text.OUTPUTS])
    return [np.concatenate(outputs) for outputs in zip(*parts)]


@needs_openvino
@pytest.mark.parametrize("lower", [True, False])
def test_openvino_graph_gives_albert_tfs_ids(vocab_file, lower):
    run = _openvino_run(vocab_file, lower, 24)
    got = dict(zip(onnx_text.OUTPUTS, _openvino_batches(run, TEXTS, PAIRS)))
    assert _differing(got, TEXTS, PAIRS, 24, vocab_file, lower) == []


@needs_openvino
@needs_data
def test_the_probe_counts_every_row_exact(tmp_path):
    """bench/text_graph_probe.py's WordPiece probe on its 87 hard cases and every 8th of its
    other texts (GLUE dev, tweets, WikiText-2, CJK), a 1,000-token vocab learnt from every
    other one, cased and uncased, single and pair: 1,592 rows, all exact."""
    probe = importlib.util.module_from_spec(_PROBE)
    _PROBE.loader.exec_module(probe)
    texts = probe.wordpiece_texts()
    hard = len(probe.WORDPIECE_HARD) + len(probe.HARD)
    texts = texts[:hard] + texts[hard::8]
    found = probe.wordpiece_probe(_openvino_run, _openvino_batches, tmp_path, texts, size=1000)
    assert (hard, len(texts)) == (87, 398)
    assert found == {True: (796, 796), False: (796, 796)}


@needs_onnx
@needs_openvino
def test_exports_write_wordpiece_text_files_that_predictor_runs(tmp_path, vocab_file):
    writers = openvino_export.extras(spread_classifier(), 16, "float32", "float32",
                                     name="classifier", vocab_file=vocab_file,
                                     label_names=["a", "b", "c"])  # one conversion for both
    for fmt, suffix in (("onnx", "onnx"), ("openvino", "xml")):
        folder = tmp_path / "classifier" / fmt / "1"
        written = writers[fmt](folder)
        assert written["text.float32"] == str(folder / f"classifier.text.float32.{suffix}")
        meta = json.loads((folder / "classifier.json").read_text())
        assert_text_metadata(meta, {"float32": f"classifier.text.float32.{suffix}"},
                             f"{fmt}_wordpiece")
        assert meta["vocab_file"] == "vocab.txt" and "spm_model_file" not in meta
    # OpenVINO's text file runs in this process: Predictor opens it, with the ids file's answers.
    by_text = Predictor.open(tmp_path / "classifier", format="openvino")
    assert isinstance(by_text.model.model, runtimes.OpenVinoTextRunner)
    by_ids = Predictor.open(tmp_path / "classifier", format="openvino", text_in=False)
    assert isinstance(by_ids.model.model, runtimes.OpenVinoRunner)
    np.testing.assert_allclose(by_text.predict(TEXTS, PAIRS), by_ids.predict(TEXTS, PAIRS),
                               atol=1e-6)
    assert by_text.classify(TEXTS) == by_ids.classify(TEXTS)


@needs_onnx
@needs_openvino
def test_token_classifier_exports_tag_wordpiece_text(tmp_path, vocab_file):
    """Each export checks its text file in a fresh process against the Keras model on
    albert-tf's windows of the check texts' 223 words (`assert_tagger_text_export`)."""
    model = spread_tagger()
    writers = openvino_export.extras(model, TAGGER_LENGTH, "float32", "float32",
                                     name="token_classifier", outputs=("probabilities",),
                                     call=tflite_call(model), vocab_file=vocab_file,
                                     label_names=TAGGER_LABELS)
    for fmt, files in (
            ("onnx", ["token_classifier.float32.onnx", "token_classifier.text.float32.onnx"]),
            ("openvino", ["token_classifier.float32.bin", "token_classifier.float32.xml",
                          "token_classifier.text.float32.bin",
                          "token_classifier.text.float32.xml"])):
        folder = tmp_path / fmt
        written = writers[fmt](folder)
        assert_tagger_text_export(folder, written, sorted(files + [
            "token_classifier.json", "vocab.txt"]), files[-1], TAGGER_LABELS,
            runtime_text.NOTES[f"{fmt}_tagger"])
