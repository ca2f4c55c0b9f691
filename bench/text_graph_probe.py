"""What the raw-text probes (onnx_tokenizer_probe.py, openvino_tokenizer_probe.py, and the
texts for onnx_tagger_probe.py) share: their texts, and the comparison of a text → ids graph's
packed outputs with albert-tf's tokenizer + packing (serving/runtime_text.pack_texts).

`probe(build, run_batches)` runs the comparison: each model (the fixture spm.model, and
spm_digitcomma.model whose vocabulary holds pieces such as "9,"), cased and uncased, single
texts at max_seq_length 128 and pairs (each text with another, long pairs trimmed) at 64; the
golden cases also against the original's golden ids, unpacked (at 512); the texts holding
U+0000 apart. `build(spm, lower, length)` gives the runtime's graph, `run_batches(run, texts,
pairs)` its outputs in onnx_text.OUTPUTS' order.
"""
import csv
import json
import os
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from albert_tf.serving import onnx_text, runtime_text  # noqa: E402

SHARED = pathlib.Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures" / "original"

HARD = [
    "", " ", "\t\n", "\u00a0", "\u3000\u3000", "a\u00a0b\u3000c\td\ne\rf\x0bg\x0ch", "x\x1cy\x85z",
    "line\u2028sep\u2029para", "zero\u200bwidth", "  lead and trail  ", "ctrl\x01\x07\x1b\x7fend",
    "[CLS]", "[MASK] and [SEP]", "[cls] lower", "<unk> <pad>", "▁▁piece", "Café CRÈME Brûlée",
    "ÀÉÎÕÜ àéîõü Ññ Çç", "e\u0301 a\u0300 combining", "\u0301\u0300 marks alone", "¨a ´b ¸c",
    "ΟΔΟΣ", "ΣΑΣ ΣΑΣ.", "Σ", "ΑΣ'Σ", "ΑΣ'ΣΒ", "ΑΣΣ", "Σ. ΑΣ, ΒΣ!", "\U0001d6ba\U0001d6f4 ΑΣ",
    "ὈΔΥΣΣΕΎΣ", "İstanbul ıi İI", "Straße STRASSE", "ǅ ǈ ǋ titlecase", "ﬁ ﬂ ﬃ ligatures",
    "½ ¼ ¾ x² ₃", "①②③ ⑩", "Ｆｕｌｌ ｗｉｄｔｈ", "ｶﾀｶﾅ half", "中文字符，标点。", "日本語のテキスト",
    "한국어 문장 가나다", "ㄱㄴㄷ jamo", "مرحبا", "שלום", "हिन्दी", "ไทย", "😀 👍🏽 🇺🇸 👨‍👩‍👧",
    "1,000", "1,000,000.5", "9, 10, 11,", "$1,999, or 2,000,", "a1,b2,c3,", "year 1990, and 2000,",
    "12,345 people, 67,890 cars", "https://www.example.org/path?x=1&y=2#frag",
    "www www.www", "Ω ℃ ℉ Å K", "ǲ ǳ", "ꙋ Ꙋ", "\ufeffbom", "\ufffd replacement",
    "tab\tsep\tvalues", "many     spaces", "\n\n\n", "a" * 300, "word " * 80,
    "Dvořák's Mötley Crüe Ærøskøbing Łódź", "Ёлка ЁЛКА", "ΆΈΉΊΌΎΏ άέήίόύώ ΐΰ",
]
NUL = ["a\x00b", "\x00", "end\x00"]


def glue_texts():
    texts = []
    with open(SHARED / "data" / "glue" / "MRPC" / "dev.tsv", encoding="utf-8", newline="") as r:
        for row in list(csv.reader(r, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]:
            texts += row[3:5]
    with open(SHARED / "data" / "glue" / "SST-2" / "dev.tsv", encoding="utf-8") as r:
        texts += [line.split("\t")[0] for line in r.read().splitlines()[1:]]
    return texts


def differing(run_batches, run, spm, lower, texts, pairs, length):
    """The rows whose ids, mask or segment ids differ from albert-tf's."""
    got = run_batches(run, texts, pairs)
    want = runtime_text.pack_texts(texts, pairs, length, spm_model_file=spm, do_lower_case=lower)
    rows = np.zeros(len(texts), bool)
    for name, value in zip(onnx_text.OUTPUTS, got):
        rows |= (value != want[name]).any(-1)
    return [i for i in np.flatnonzero(rows)]


def probe(build, run_batches):
    total = 0
    for model_name, golden in (("spm.model", "tokenization_golden.json"),
                               ("spm_digitcomma.model", "tokenization_golden_digitcomma.json")):
        spm = str(FIXTURES / "spm" / model_name)
        cases = json.loads((FIXTURES / "tokenization" / golden).read_text("utf-8"))["cases"]
        texts = [c["text"] for c in cases] + glue_texts() + HARD
        shifted = texts[7:] + texts[:7]
        for lower in (True, False):
            start = time.time()
            runs = {length: build(spm, lower, length) for length in (64, 128, 512)}
            built = time.time() - start
            bad_single = differing(run_batches, runs[128], spm, lower, texts, [""] * len(texts),
                                   128)
            bad_pair = differing(run_batches, runs[64], spm, lower, texts, shifted, 64)
            # The golden cases against the original's own ids, unpacked.
            key = f"preprocess_text(lower={lower})+tokenize"
            ids, mask = run_batches(runs[512], [c["text"] for c in cases],
                                    [""] * len(cases))[:2]
            bad_golden = [c["text"] for c, row, m in zip(cases, ids, mask)
                          if row[1:int(m.sum()) - 1].tolist() != c[key]["ids"]]
            bad_nul = differing(run_batches, runs[128], spm, lower, NUL, [""] * len(NUL), 128)
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
