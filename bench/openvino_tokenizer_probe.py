"""Raw text inside OpenVINO (issue 48, item "raw text in"): how close openvino-tokenizers' ops
come to albert-tf's SentencePiece ids. Not wired into the exports yet; this measures it.

    python bench/openvino_tokenizer_probe.py

The graph: StringTensorUnpack -> NormalizeUnicode(NFKD) -> strip accents (regex) -> CaseFold
-> squeeze whitespace (regex) -> StringTensorPack -> SentencepieceTokenizer (the .model bytes as
a constant). Compared, per text, with the original's golden ids (224 fixture cases each) and
albert-tf's Python tokenizer (MRPC dev sentences, SST-2 dev), for the plain fixture vocabulary
and the one holding digit-comma pieces. Measured (OpenVINO 2026.4, 1,912 texts each): plain,
2 differ (a URL: two pieces in swapped order, a SentencePiece score tie broken otherwise than
the wheel); digit-comma, 78 differ (the original's digit-comma fix-up, a piece ending in
digit + "," encoded again without its comma, has no op).
"""
import csv
import json
import os

import numpy as np
import openvino as ov
from openvino import opset14 as opset, Type, PartialShape
from openvino_tokenizers.tokenizer_pipeline import NormalizeUnicode, RegexNormalizationStep, CaseFoldStep, _get_factory, _get_opset_factory
from albert_tf.tokenization import FullTokenizer
from albert_tf.tokenization.text_rules import preprocess_text
SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")
F = os.path.join(SHARED, "fixtures", "original") + "/"
DATA = os.path.join(SHARED, "data", "glue")
def build(spm):
    inp = opset.parameter(PartialShape(["?"]), Type.string, name="text")
    x = _get_opset_factory("opset15").create("StringTensorUnpack", inp.outputs()).outputs()
    for step in (NormalizeUnicode("NFKD"), RegexNormalizationStep.strip_accents_regex(), CaseFoldStep(),
                 RegexNormalizationStep(r"\s+", " "), RegexNormalizationStep(r"^ | $", "")):
        x = step.get_ov_subgraph(x)
    packed = _get_opset_factory("opset15").create("StringTensorPack", x).outputs()
    sp = opset.constant(np.frombuffer(open(spm, "rb").read(), np.uint8))
    tok = _get_factory().create("SentencepieceTokenizer", [sp.output(0), *packed], {"add_bos": False, "add_eos": False, "reverse": False, "alpha": 1, "nbest_size": 1})
    idx, vals, shape = tok.outputs()
    return ov.Core().compile_model(ov.Model([idx, vals], [inp], "t"), "CPU")
texts = []
for name in ("MRPC/dev.tsv",):
    for row in csv.reader(open(os.path.join(DATA, name), encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE):
        texts += row[3:5]
texts = texts[2:]
texts += [l.split("\t")[0] for l in open(os.path.join(DATA, "SST-2", "dev.tsv"), encoding="utf-8").read().splitlines()[1:]]
for tag, spm, gold in (("plain", "spm/spm.model", "tokenization/tokenization_golden.json"), ("digitcomma", "spm/spm_digitcomma.model", "tokenization/tokenization_golden_digitcomma.json")):
    g = json.load(open(F + gold))
    cases = [(c["text"], c["preprocess_text(lower=True)+tokenize"]["ids"]) for c in g["cases"]]
    ft = FullTokenizer(None, True, F + spm)
    allt = [t for t, _ in cases] + texts
    want = [ids for _, ids in cases] + [ft.convert_tokens_to_ids(ft.tokenize(preprocess_text(t, lower=True))) for t in texts]
    c = build(F + spm)
    r = c([np.array(allt)])
    idx, vals = list(r.values())
    got = [[] for _ in allt]
    for (row, _), v in zip(idx, vals): got[row].append(int(v))
    bad = [(t, g_, w) for t, g_, w in zip(allt, got, want) if g_ != w]
    print(tag, "texts", len(allt), "differ", len(bad))
    for t, g_, w in bad[:4]: print("  ", repr(t[:80]), g_[:12], w[:12])
