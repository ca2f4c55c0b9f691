"""A token classifier's ONNX file that takes raw text (issue 48, serving/onnx_tagger.py):
`token_classifier.text.<kind>.onnx` gives what the SavedModel's serve_text gives per word
(words, tags, tag ids, probabilities, character offsets; padded alike), on sentences longer
than one window, words without pieces, accents, CJK, odd whitespace, a NUL and empty text;
the export checks it against the Keras model and refuses a file that windows otherwise;
Predictor tags through it in a process that can run it, as through the ids file."""

import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.errors import InputError
from albert_tf.run_config import window_stride
from albert_tf.serving import onnx_export, onnx_tagger, runtime_text, runtimes
from albert_tf.serving.predictor import Predictor
from albert_tf.tasks.token_classification.export import TokenServing, tflite_call
from albert_tf.text import optional as text_optional
from support.paths import FIXTURES, REPO
from support.text_graphs import (TAGGER_LABELS, TAGGER_LENGTH, TAGGER_TEXTS,
                                 assert_tagger_text_export, spread_tagger)

pytestmark = [
    pytest.mark.skipif(not all(runtimes.available(p) for p in
                               ("tf2onnx", "onnxruntime", "onnxruntime_extensions")),
                       reason="needs the [onnx] extra: pip install -e .[onnx]"),
    pytest.mark.skipif(not FIXTURES.is_dir(), reason="needs ../shared (fixtures/original)")]
SPM = FIXTURES / "spm" / "spm.model"
LENGTH, LABELS, TEXTS = TAGGER_LENGTH, TAGGER_LABELS, TAGGER_TEXTS
_FRESH = """import json, sys
import onnxruntime_extensions
from albert_tf.errors import InputError
from albert_tf.serving import runtimes
from albert_tf.serving.predictor import Predictor
root, path, texts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = runtimes.OnnxTextRunner(path, 16)(texts)
tagger = Predictor.open(root, format="onnx")
assert type(tagger.model).__name__ == "_TextTagger"
try:
    runtimes.OnnxTextRunner(path, 16)(texts[:1], ["a pair"])
    refused = None
except InputError as error:
    refused = str(error)
import numpy as np
import onnxruntime as ort
options = ort.SessionOptions()  # as docs/serving.md runs it
options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
words, tags = ort.InferenceSession(path, options).run(
    ["words", "tags"], {"text_a": np.array(["Ada met Babbage"], object)})
print(json.dumps([{k: v.tolist() for k, v in out.items()}, tagger.tag(texts), refused,
                  [words.tolist(), tags.tolist()], tagger.tag([""]), tagger.tag([])]))
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model = spread_tagger()
    contents = onnx_export.convert(model, LENGTH, "float32", ("probabilities",),
                                   tflite_call(model))
    root = tmp_path_factory.mktemp("tagger") / "token_classifier"
    written = onnx_export.export_onnx(
        model, root / "onnx" / "1", LENGTH, "float32", name="token_classifier",
        outputs=("probabilities",), call=tflite_call(model), spm_model_file=str(SPM),
        label_names=LABELS, contents=contents)
    return model, contents, root, written


def test_the_export_writes_and_checks_the_text_file(exported):
    _, _, root, written = exported
    assert_tagger_text_export(
        root / "onnx" / "1", written, ["spm.model", "token_classifier.float32.onnx",
                                       "token_classifier.json",
                                       "token_classifier.text.float32.onnx"],
        "token_classifier.text.float32.onnx", LABELS, runtime_text.NOTES["onnx_tagger"])


@pytest.mark.skipif(not text_optional.available(), reason="needs tensorflow-text (serve_text)")
def test_the_file_gives_serve_texts_outputs_and_predictor_tags_through_it(exported):
    """Against TokenServing.serve_text (tensorflow-text's ops, the SavedModel's signature) on
    the same model: the words str.split() gives, every per-word output, its padding and its
    shape; Predictor's tags through the file (a fresh process that imports
    onnxruntime_extensions first) equal its tags through the ids file (tokenized in Python,
    here)."""
    model, _, root, written = exported
    done = subprocess.run([sys.executable, "-c", _FRESH, str(root), written["text.float32"],
                           json.dumps(TEXTS)], capture_output=True, text=True, timeout=300,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    got, tags, refused, raw, empty, none = json.loads(done.stdout)
    assert raw[0] == [["Ada", "met", "Babbage"]] and len(raw[1][0]) == 3
    assert empty == [[]] and none == []
    serving = TokenServing(model, LENGTH, window_stride(None, LENGTH), LABELS,
                           spm_model_file=str(SPM))
    want = {k: v.numpy() for k, v in serving.serve_text(tf.constant(TEXTS)).items()}
    words = [[w.decode("utf-8") for w in row] for row in want["words"]]
    assert [[w.replace(runtimes.NUL_STANDIN, "\x00") for w in row] for row in got["words"]] \
        == words
    # str.split()'s words (tensorflow-text's WhitespaceTokenizer, which serve_text used before,
    # gave "a\u00a0b" as "a\xc2" and "b", and kept "one\x1ftwo" whole).
    assert [[w for w in row if w] for row in words] == [t.split() for t in TEXTS]
    assert [len(t.split()) for t in TEXTS] == [8, 40, 0, 0, 5, 3, 4, 2, 2]
    assert got["tags"] == [[t.decode("utf-8") for t in row] for row in want["tags"]]
    for name in ("tag_ids", "word_starts", "word_ends"):
        assert got[name] == want[name].tolist(), name
    np.testing.assert_allclose(got["probabilities"], want["probabilities"], atol=1e-5)
    assert len({t for row in got["tags"] for t in row if t}) >= 2  # the tags vary
    assert tags == [[t for t in row if t] for row in got["tags"]]
    by_ids = Predictor.open(root, format="onnx")
    assert type(by_ids.model).__name__ == "_IdsTagger"
    assert by_ids.tag(TEXTS) == tags
    assert refused.endswith("token_classifier.text.float32.onnx: takes single texts (text_a); "
                            "text pairs cannot be given")
    with pytest.raises(InputError, match=r"token_classifier.text.float32.onnx: a text-in ONNX "
                                         r"file cannot run in a process that imported"):
        Predictor.open(root, format="onnx", text_in=True)


def test_the_reference_tags_each_word_in_its_home_window():
    """onnx_tagger.reference by hand: 5 one-piece words in windows of 3 pieces, 1 apart
    (starts 0, 1, 2): word k's home is the window where it sits in the middle, the first
    for word 0 and the last for word 4."""
    class Pieces:
        cls_id, sep_id = 1, 2

        def __call__(self, word):
            return [int(word)]

    seen = {}

    def run(input_word_ids, input_mask, input_type_ids):
        seen["ids"] = input_word_ids.tolist()
        window, position = np.arange(3)[:, None, None], np.arange(5)[None, :, None]
        return {"probabilities": np.broadcast_to(window * 10.0 + position, (3, 5, 4))}

    found = onnx_tagger.reference(["10 11  12 13 14"], Pieces(), 5, 1, run)[0]
    assert seen["ids"] == [[1, 10, 11, 12, 2], [1, 11, 12, 13, 2], [1, 12, 13, 14, 2]]
    # (window, position) of words 0-4: (0, 1), (0, 2), (1, 2), (2, 2), (2, 3).
    assert found["probabilities"][:, 0].tolist() == [1, 2, 12, 22, 23]
    assert found["word_starts"] == [0, 3, 7, 10, 13] and found["word_ends"] == [2, 5, 9, 12, 15]


def test_the_export_refuses_a_file_that_windows_otherwise(exported, tmp_path, monkeypatch):
    """A text file built with another stride than the one the export checks: one error naming
    the file, and nothing left in the folder."""
    model, contents, _, _ = exported
    build = onnx_tagger.with_tagger
    monkeypatch.setattr(onnx_export.onnx_tagger, "with_tagger",
                        lambda content, spm, lower, length, stride, names, *vocab:
                        build(content, spm, lower, length, stride + 2, names, *vocab))
    folder = tmp_path / "onnx" / "1"
    with pytest.raises(onnx_export.RuntimeExportError,
                       match=r"token_classifier.text.float32.onnx: (gives other words, offsets "
                             r"or tags|differs from the Keras model on raw text)"):
        onnx_export.export_onnx(model, folder, LENGTH, "float32", name="token_classifier",
                                outputs=("probabilities",), call=tflite_call(model),
                                spm_model_file=str(SPM), label_names=LABELS, contents=contents)
    assert sorted(p.name for p in folder.iterdir()) == []
