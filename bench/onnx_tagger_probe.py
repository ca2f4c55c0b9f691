"""A token classifier's text-in ONNX file (issue 48, albert_tf/serving/onnx_tagger.py) against the
Keras model on albert-tf's own windows of the same texts (onnx_tagger.reference, what
Predictor's ids path and run_ner.py's features compute): does every text give the same words,
character offsets and tags, and how far apart are the probabilities?

    python bench/onnx_tagger_probe.py [--openvino]

`--openvino`: the same for the OpenVINO file (albert_tf/serving/openvino_tagger.py,
`token_classifier.text.<kind>.xml`), run in a fresh process that imports openvino-tokenizers.

Texts: the tokenizer probes' (text_graph_probe.py: the original's 224 golden cases, the 1,688
MRPC and SST-2 dev sentences, its made-up hard cases and the texts holding a NUL, sent as U+FDD0
by the runner). Each SentencePiece model (spm.model cased, spm_digitcomma.model uncased) under a
tiny token classifier with spread weights, max_seq_length 16 (windows of 14 pieces, 7 apart:
most sentences span several), the file run in a fresh process (onnxruntime-extensions first).

Measured 2026-12-05 13:42 UTC (onnxruntime 1.32, onnxruntime-extensions 0.15.2, 2-core VM at
load 1.3): 1,984 texts, 36,311 words per model: every word, offset and tag equal on both models,
the probabilities within 1.55e-6; 6-8 s to run the file on all of them in batches of 200.
`--openvino`, 2026-12-05 14:21 UTC (OpenVINO 2026.4, load 0.4-1.2): the same 1,984 texts and
36,311 words per model: every word, offset and tag equal on both models, the probabilities
within 1.31e-6; 1.6 s to run the file.
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from text_graph_probe import FIXTURES, HARD, NUL, glue_texts  # noqa: E402
from albert_tf import tokenization  # noqa: E402
from albert_tf.config import AlbertConfig  # noqa: E402
from albert_tf.models import AlbertTokenClassifier  # noqa: E402
from albert_tf.serving import (onnx_export, onnx_tagger, onnx_text, openvino_tagger,  # noqa: E402
                               runtimes)
from albert_tf.tasks.token_classification.export import tflite_call  # noqa: E402
from albert_tf.tokenization.word_windows import WordPieces  # noqa: E402

LENGTH, STRIDE, LABELS = 16, 7, list("OBIES")
CONFIG = dict(vocab_size=1500, embedding_size=16, hidden_size=32, num_hidden_layers=1,
              num_attention_heads=4, intermediate_size=37, max_position_embeddings=64)


def probe(spm_name: str, golden: str, lower: bool, folder: str, fmt: str = "onnx") -> None:
    spm = str(FIXTURES / "spm" / spm_name)
    cases = json.loads((FIXTURES / "tokenization" / golden).read_text(encoding="utf-8"))["cases"]
    texts = [c["text"] for c in cases] + glue_texts() + HARD + NUL
    model = AlbertTokenClassifier(AlbertConfig(**CONFIG), len(LABELS), dropout_prob=0.0)
    model({"input_ids": np.zeros((1, LENGTH), np.int32)})
    rng = np.random.default_rng(7)
    for variable in model.weights:
        if "gamma" not in variable.path:
            variable.assign(rng.normal(0.0, 0.3, variable.shape).astype(np.float32))
    call = tflite_call(model)
    content = onnx_export.convert(model, LENGTH, "float32", ("probabilities",), call)["float32"]
    if fmt == "openvino":
        ov = runtimes.load("openvino", "--openvino")
        path = os.path.join(folder, f"{spm_name}.tagger.xml")
        ov.save_model(openvino_tagger.tagger_model(content, spm, lower, LENGTH, STRIDE, LABELS),
                      path, compress_to_fp16=False)
    else:
        path = os.path.join(folder, f"{spm_name}.tagger.onnx")
        with open(path, "wb") as writer:
            writer.write(onnx_tagger.with_tagger(content, spm, lower, LENGTH, STRIDE, LABELS))
    pieces = WordPieces(tokenization.FullTokenizer(None, lower, spm), lower)
    want = onnx_tagger.reference(texts, pieces, LENGTH, STRIDE, lambda **ids: onnx_export.expected(
        model, LENGTH, ("probabilities",), call, None, ids))
    groups = [(texts[k:k + 200], None) for k in range(0, len(texts), 200)]
    start = time.perf_counter()
    runs = onnx_text.run_in_fresh_process({"file": path}, LENGTH, groups, fmt=fmt)["file"]
    seconds = time.perf_counter() - start
    differ, worst, agree, words = [], 0.0, 0.0, 0
    for k, ((chunk, _), got) in enumerate(zip(groups, runs)):
        rows = want[200 * k:200 * k + len(chunk)]
        for row, text in enumerate(chunk):  # one text at a time: every differing text named
            one = {name: value[row:row + 1] for name, value in got.items()}
            found = onnx_tagger.compare(one, rows[row:row + 1], LABELS)
            if found["differ"] is not None:
                differ.append(text)
            worst = max(worst, found["max_abs_diff"])
            agree += found["argmax_agreement"] * found["rows"]
            words += found["rows"]
    print(f"{fmt} {spm_name} ({'uncased' if lower else 'cased'}): {len(texts)} texts, "
          f"{words} words, "
          f"{len(differ)} texts with another word, offset or tag {differ[:5]}; tags agree "
          f"{agree / words:.6f}; largest probability difference {worst:.2e}; the file's run "
          f"{seconds:.1f} s (a fresh process, batches of 200)")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="albert_tagger_probe_") as folder:
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--openvino", action="store_true",
                            help="the OpenVINO file (openvino_tagger.py), not the ONNX one")
        fmt = "openvino" if parser.parse_args().openvino else "onnx"
        probe("spm.model", "tokenization_golden.json", False, folder, fmt)
        probe("spm_digitcomma.model", "tokenization_golden_digitcomma.json", True, folder, fmt)


if __name__ == "__main__":
    main()
