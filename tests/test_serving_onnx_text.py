"""Raw text inside the ONNX files (issue 48, "raw text in", serving/onnx_text.py): the text → ids
graph gives albert-tf's tokenizer's packed ids on the golden cases, the GLUE dev sentences and
made-up hard cases (a model with digit-comma pieces, lower-cased; single and pair rows), a NUL
is what the ops cannot read, and an export writes `<head>.text.<kind>.onnx` files that
`Predictor` runs, checked against the Keras model."""

import json
import subprocess
import sys

import numpy as np
import pytest

from albert_tf.errors import InputError
from albert_tf.serving import onnx_export, onnx_text, runtimes
from albert_tf.serving.onnx_text_tables import truncated_lengths
from albert_tf.serving.predictor import Predictor
from albert_tf.tokenization import pack_pair
from support.paths import DATA, FIXTURES, REPO
from support.text_graphs import (assert_refuses_non_utf8, check_cased_singles,
                                 check_uncased_pairs, export_checked)

pytestmark = pytest.mark.skipif(
    not all(runtimes.available(p) for p in ("tf2onnx", "onnxruntime", "onnxruntime_extensions")),
    reason="needs the [onnx] extra: pip install -e .[onnx]")
needs_shared = pytest.mark.skipif(not FIXTURES.is_dir() or not DATA.is_dir(),
                                  reason="needs ../shared (fixtures/original and data/glue)")


def _run(tmp_path, spm, lower, length, texts, pairs, size=500):
    """The tokenizer graph's outputs, run in a fresh process (see onnx_text._FRESH)."""
    path = tmp_path / f"tokenizer.{length}.{lower}.onnx"
    path.write_bytes(onnx_text.tokenizer_model(spm, lower, length).SerializeToString())
    groups = [(texts[k:k + size], pairs[k:k + size]) for k in range(0, len(texts), size)]
    parts = onnx_text.run_in_fresh_process({"t": path}, length, groups)["t"]
    return {n: np.concatenate([p[n] for p in parts]) for n in onnx_text.OUTPUTS}


def test_truncation_in_closed_form_is_pack_pairs_loop():
    for length in range(4, 14):
        for len_a in range(12):
            for len_b in range(12):
                tokens, _ = pack_pair(["a"] * len_a, ["b"] * len_b, length)
                assert (tokens.count("a"), tokens.count("b")) == tuple(
                    int(n) for n in truncated_lengths(len_a, len_b, length))


@needs_shared
def test_the_graph_gives_albert_tfs_ids_on_every_text(tmp_path):
    """The golden cases, the SST-2 dev sentences and the hard cases (1,128 texts), every other
    one paired with another (long pairs trimmed), in one session: every row albert-tf's, and
    the golden cases the original's own ids (a NUL through the runner's stand-in: the ops
    themselves stop at it)."""
    texts = check_uncased_pairs(lambda *args: _run(tmp_path, *args))[0]
    assert len(texts) == 1128 and "null\x00char" in texts


@needs_shared
def test_cased_graph_keeps_case_and_strips_accents(tmp_path):
    check_cased_singles(lambda *args: _run(tmp_path, *args))


@needs_shared
def test_export_writes_text_files_that_predictor_runs(tmp_path):
    export_checked(onnx_export.export_onnx, tmp_path / "classifier" / "onnx" / "1", [
        "classifier.dynamic_int8.onnx", "classifier.float32.onnx", "classifier.json",
        "classifier.text.dynamic_int8.onnx", "classifier.text.float32.onnx", "spm.model"],
        "onnx", "onnx_text")
    # In this process (TensorFlow loaded first) Predictor opens the ids file; in one that
    # imports onnxruntime_extensions first, the text file: the same answers.
    by_ids = Predictor.open(tmp_path / "classifier", format="onnx")
    assert isinstance(by_ids.model.model, runtimes.OnnxRunner)
    with pytest.raises(InputError, match=r"classifier.text.float32.onnx: a text-in ONNX file "
                                         r"cannot run in a process that imported TensorFlow"):
        Predictor.open(tmp_path / "classifier", format="onnx", text_in=True)
    texts, pairs = list(onnx_export.CHECK_TEXTS), list(onnx_export.CHECK_PAIRS)
    code = ("import json, sys\n"
            "import onnxruntime_extensions\n"
            "from albert_tf.serving import runtimes\n"
            "from albert_tf.serving.predictor import Predictor\n"
            "texts, pairs = json.loads(sys.argv[2])\n"
            "p = Predictor.open(sys.argv[1], format='onnx')\n"
            "assert isinstance(p.model.model, runtimes.OnnxTextRunner)\n"
            "print(json.dumps([p.predict(texts).tolist(), p.predict(texts, pairs).tolist(),\n"
            "                  p.classify(texts), p.classify(texts, pairs)]))\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "classifier"),
                           json.dumps([texts, pairs])], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    single, paired, single_labels, paired_labels = json.loads(done.stdout)
    np.testing.assert_allclose(single, by_ids.predict(texts), atol=1e-6)
    np.testing.assert_allclose(paired, by_ids.predict(texts, pairs), atol=1e-6)
    assert single_labels == by_ids.classify(texts)
    assert paired_labels == by_ids.classify(texts, pairs)


def test_the_text_runner_refuses_bytes_that_are_not_utf8_before_running():
    # No session: the texts are checked first.
    assert_refuses_non_utf8(object.__new__(runtimes.OnnxTextRunner))
