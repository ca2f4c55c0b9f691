"""Raw text inside OpenVINO (issue 48, "raw text in"): is the OpenVINO text → ids graph
(albert_tf/serving/openvino_text.py) id-exact with albert-tf's tokenizer + packing
(serving/runtime_text.pack_texts)?

    python bench/openvino_tokenizer_probe.py

The texts and configurations of bench/onnx_tokenizer_probe.py: the original's 224 golden
cases, the MRPC + SST-2 dev sentences (1,688) and its made-up hard cases; each model (the
fixture spm.model, and spm_digitcomma.model whose vocabulary holds pieces such as "9,"), cased
and uncased, single texts at max_seq_length 128 and pairs (each text with another, long pairs
trimmed) at 64; the golden cases also against the original's golden ids; the texts holding
U+0000 apart, through `runtimes.OpenVinoTextRunner`'s stand-in. It imports TensorFlow first (as
a test process does), so it also shows whether openvino-tokenizers' ops run after it.

Measured (OpenVINO 2026.4.1, openvino-tokenizers 2026.4.1, TensorFlow imported first; 1,981
texts per model, both models, cased and uncased, single and pair: 15,848 packed rows): the same
ids, mask and segment ids on every row, the 224 golden cases the original's ids, cased and
uncased, and the NUL texts too through the stand-in. Also, once, an 8,000-piece unigram model
trained here on the SST-2 and MRPC training text (control symbols [CLS], [SEP], [MASK]) on
these texts and 2,000 QNLI dev sentences: 4,205 texts, cased and uncased, single and pair,
every row the same. openvino-tokenizers' own chain (runtime_text.openvino_sentencepiece_ids,
this file's earlier version) differs on 2 and 78 of 1,912 texts (docs/serving.md).
"""
import json
import os
import pathlib
import sys
import time

import tensorflow  # noqa: F401  (first, as in a test process: the ops must run after it)
import numpy as np
import openvino as ov
import openvino_tokenizers  # noqa: F401  (registers the string ops with every Core)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from albert_tf.serving import onnx_text, openvino_text, runtime_text, runtimes  # noqa: E402

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures" / "original"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_tokenizer_probe import HARD, NUL, glue_texts  # noqa: E402


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


def differing(run, spm, lower, texts, pairs, length):
    got = run_batches(run, texts, pairs)
    want = runtime_text.pack_texts(texts, pairs, length, spm_model_file=spm, do_lower_case=lower)
    rows = np.zeros(len(texts), bool)
    for name, value in zip(onnx_text.OUTPUTS, got):
        rows |= (value != want[name]).any(-1)
    return [i for i in np.flatnonzero(rows)]


def probe():
    total = 0
    for model_name, golden in (("spm.model", "tokenization_golden.json"),
                               ("spm_digitcomma.model", "tokenization_golden_digitcomma.json")):
        spm = str(FIXTURES / "spm" / model_name)
        cases = json.loads((FIXTURES / "tokenization" / golden).read_text("utf-8"))["cases"]
        texts = [c["text"] for c in cases] + glue_texts() + HARD
        shifted = texts[7:] + texts[:7]
        for lower in (True, False):
            start = time.time()
            runs = {length: compiled(spm, lower, length) for length in (64, 128, 512)}
            built = time.time() - start
            bad_single = differing(runs[128], spm, lower, texts, [""] * len(texts), 128)
            bad_pair = differing(runs[64], spm, lower, texts, shifted, 64)
            key = f"preprocess_text(lower={lower})+tokenize"
            ids, mask = run_batches(runs[512], [c["text"] for c in cases],
                                    [""] * len(cases))[:2]
            bad_golden = [c["text"] for c, row, m in zip(cases, ids, mask)
                          if row[1:int(m.sum()) - 1].tolist() != c[key]["ids"]]
            bad_nul = differing(runs[128], spm, lower, NUL, [""] * len(NUL), 128)
            total += len(texts) * 2
            print(f"{model_name} lower={lower}: {len(texts)} texts; differ single "
                  f"{len(bad_single)}, pair {len(bad_pair)}, golden {len(bad_golden)} of "
                  f"{len(cases)}; NUL texts {len(bad_nul)} of {len(NUL)} "
                  f"(built in {built:.1f} s, {time.time() - start:.1f} s in all)")
            for i in bad_single[:5] + bad_pair[:5]:
                print("   ", repr(texts[i][:80]), "|", repr(shifted[i][:40]))
            for text in bad_golden[:5]:
                print("    golden", repr(text[:80]))
    print(f"{total} packed rows compared")


if __name__ == "__main__":
    probe()
