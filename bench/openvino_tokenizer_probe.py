"""Raw text inside OpenVINO (issue 48, "raw text in"): is the OpenVINO text → ids graph
(albert_tf/serving/openvino_text.py) id-exact with albert-tf's tokenizer + packing
(serving/runtime_text.pack_texts)?

    python bench/openvino_tokenizer_probe.py
    python bench/openvino_tokenizer_probe.py --wordpiece  # serving/openvino_wordpiece.py's
                                                          # graph (text_graph_probe.wordpiece_probe)

--wordpiece measured (OpenVINO 2026.4.1, TensorFlow imported first, 2026-12-05): the ONNX
probe's 2,575 texts and vocabularies, 10,300 packed rows: every row albert-tf's.

The texts and configurations of bench/onnx_tokenizer_probe.py (bench/text_graph_probe.py runs
the comparison for both): the original's 224 golden cases, the MRPC + SST-2 dev sentences
(1,688) and its made-up hard cases; each model (the fixture spm.model, and spm_digitcomma.model
whose vocabulary holds pieces such as "9,"), cased and uncased, single texts at max_seq_length
128 and pairs (each text with another, long pairs trimmed) at 64; the golden cases also against
the original's golden ids; the texts holding U+0000 apart, through
`runtimes.OpenVinoTextRunner`'s stand-in. It imports TensorFlow first (as a test process does),
so it also shows whether openvino-tokenizers' ops run after it.

Measured (OpenVINO 2026.4.1, openvino-tokenizers 2026.4.1, TensorFlow imported first; 1,981
texts per model, both models, cased and uncased, single and pair: 15,848 packed rows): the same
ids, mask and segment ids on every row, the 224 golden cases the original's ids, cased and
uncased, and the NUL texts too through the stand-in. Also, once, an 8,000-piece unigram model
trained here on the SST-2 and MRPC training text (control symbols [CLS], [SEP], [MASK]) on
these texts and 2,000 QNLI dev sentences: 4,205 texts, cased and uncased, single and pair,
every row the same. openvino-tokenizers' own chain (runtime_text.openvino_sentencepiece_ids,
this file's earlier version) differs on 2 and 78 of 1,912 texts (docs/serving.md).
"""
import argparse
import os
import sys
import tempfile

import tensorflow  # noqa: F401  (first, as in a test process: the ops must run after it)
import numpy as np
import openvino as ov
import openvino_tokenizers  # noqa: F401  (registers the string ops with every Core)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from albert_tf.serving import onnx_text, openvino_text, openvino_wordpiece, runtimes  # noqa: E402
from text_graph_probe import probe, wordpiece_probe  # noqa: E402


def compiled(spm, lower, length):
    model = openvino_text.tokenizer_model(spm, lower, length)
    return ov.Core().compile_model(model, "CPU")


def run_batches(run, texts, pairs, size=250):
    parts = []
    for k in range(0, len(texts), size):
        feed = {"text_a": np.array([t.replace("\x00", runtimes.NUL_STANDIN)
                                    for t in texts[k:k + size]], str),
                "text_b": np.array([t.replace("\x00", runtimes.NUL_STANDIN)
                                    for t in pairs[k:k + size]], str)}
        out = run(feed)
        parts.append([np.asarray(out[name]) for name in onnx_text.OUTPUTS])
    return [np.concatenate(outputs) for outputs in zip(*parts)]


def compiled_wordpiece(vocab, lower, length):
    model = openvino_wordpiece.tokenizer_model(vocab, lower, length)
    return ov.Core().compile_model(model, "CPU")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordpiece", action="store_true")
    if parser.parse_args().wordpiece:
        with tempfile.TemporaryDirectory() as folder:
            wordpiece_probe(compiled_wordpiece, run_batches, folder)
    else:
        probe(compiled, run_batches)
