"""Raw text inside ONNX (issue 48, "raw text in"): is the ONNX text → ids graph
(albert_tf/serving/onnx_text.py) id-exact with albert-tf's tokenizer + packing
(serving/runtime_text.pack_texts)?

    python bench/onnx_tokenizer_probe.py            # the graph, every text, both models
    python bench/onnx_tokenizer_probe.py --hf_json  # the earlier attempt, HfJsonTokenizer
    python bench/onnx_tokenizer_probe.py --wordpiece  # a WordPiece vocab's graph
                                                      # (serving/onnx_wordpiece.py)

--wordpiece (text_graph_probe.wordpiece_probe): the tokenizer probe's texts, WordPiece's own
hard cases, tweets, WikiText-2 lines and made-up CJK texts, with a vocab learnt from every
other text (uncased, then cased), single at 128 and paired at 64; a NUL sent as
runtimes.NUL_STANDIN, which the graph drops as the tokenizer drops a NUL. Measured
(onnxruntime 1.32, onnxruntime-extensions 0.15.2, 2026-12-05): 2,575 texts, a 3,201-token
uncased and a 3,158-token cased vocabulary (1,197 and 722 [UNK] pieces, 195 texts past 128
pieces), 10,300 packed rows: every row albert-tf's, 16 s in all at load 1.

Texts (bench/text_graph_probe.py, which runs the comparison): the original's 224 golden cases,
the MRPC + SST-2 dev sentences (1,688) and made-up hard cases (accents, CJK, Hangul, odd
whitespace, control characters, literal "[CLS]", empty and whitespace-only text, Greek final
sigma, digits with commas, the URL whose pieces tie on score). Each model (the fixture
spm.model, and spm_digitcomma.model whose vocabulary holds pieces such as "9,"), cased and
uncased, single texts at max_seq_length 128 and pairs (each text with another, long pairs
trimmed) at 64, all in one batch per run; the golden cases also against the original's golden
ids. Texts holding U+0000 are measured apart: onnxruntime-extensions' string ops read a string
up to its first NUL.

Measured (onnxruntime 1.32, onnxruntime-extensions 0.15.2; 1,981 texts per model, both
models, cased and uncased, single and pair: 15,848 packed rows): the same ids, mask and segment
ids on every row but those holding a NUL ("null\\x00char", a golden case: 1 single and 2 pair
rows per configuration); the 223 other golden cases equal the original's ids, cased and
uncased. onnxruntime-extensions' string ops read a string up to its first NUL, so the file
cannot see what follows one (`runtimes.OnnxTextRunner` sends U+FDD0 in its place, which
SentencePiece treats as the same unknown character).
Without the search of serving/onnx_unigram.py, SentencepieceTokenizer's own segmentation
differs on 2 more texts per configuration: a tie of exactly equal path scores broken the
other way ("www" after "://" or "." as "ww" + "w", the wheel's "w" + "ww":
"https://www.example.org/path?x=1&y=2#frag", "www www.www").

The earlier attempt (--hf_json: HfJsonTokenizer given a tokenizer.json with NFKD,
StripAccents, Lowercase and the model's Unigram scores) gave other ids on 939 of 1,912 texts:
upper case kept, "[CLS]" read as a special token, whitespace-only text not empty.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import onnxruntime as ort
from onnxruntime_extensions import get_library_path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from albert_tf.serving import onnx_text, onnx_wordpiece, runtimes  # noqa: E402
from text_graph_probe import FIXTURES, glue_texts, probe, wordpiece_probe  # noqa: E402


def session(model):
    options = ort.SessionOptions()
    options.register_custom_ops_library(get_library_path())
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def run_batches(run, texts, pairs, size=250):
    """The graph's outputs on the texts, `size` rows a run (the search's [rows, characters,
    piece length] windows stay small)."""
    parts = [run.run(None, {"text_a": np.array(texts[k:k + size], object),
                            "text_b": np.array(pairs[k:k + size], object)})
             for k in range(0, len(texts), size)]
    return [np.concatenate(outputs) for outputs in zip(*parts)]


def build(spm, lower, length):
    return session(onnx_text.tokenizer_model(spm, lower, length))


def hf_json_probe():
    """The earlier attempt: HfJsonTokenizer on a tokenizer.json (see the module)."""
    import sentencepiece as spmlib
    from onnx import TensorProto, helper
    from onnxruntime_extensions import make_onnx_model

    from albert_tf.tokenization import FullTokenizer
    from albert_tf.tokenization.text_rules import preprocess_text
    spm = str(FIXTURES / "spm" / "spm.model")
    sp = spmlib.SentencePieceProcessor(model_file=spm)
    vocab = [[sp.IdToPiece(i), sp.GetScore(i)] for i in range(sp.GetPieceSize())]
    normalizers = [{"type": "Strip", "strip_left": True, "strip_right": True},
                   {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
                   {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": {"type": "Sequence", "normalizers": normalizers},
            "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                              "prepend_scheme": "always", "split": False},
            "post_processor": None, "decoder": None,
            "model": {"type": "Unigram", "unk_id": sp.unk_id(), "vocab": vocab,
                      "byte_fallback": False}}
    node = helper.make_node("HfJsonTokenizer", ["str"], ["ids"], domain="ai.onnx.contrib",
                            tokenizer_config=json.dumps({"tokenizer_class":
                                                         "XLMRobertaTokenizer"}),
                            tokenizer_vocab=json.dumps(spec))
    graph = helper.make_graph([node], "t", [helper.make_tensor_value_info(
        "str", TensorProto.STRING, ["N"])], [helper.make_tensor_value_info(
            "ids", TensorProto.INT64, ["N", "M"])])
    run = session(make_onnx_model(graph))
    cases = json.loads((FIXTURES / "tokenization" / "tokenization_golden.json").read_text(
        "utf-8"))["cases"]
    texts = [c["text"] for c in cases] + glue_texts()
    tokenizer = FullTokenizer(None, True, spm)
    want = [c["preprocess_text(lower=True)+tokenize"]["ids"] for c in cases] + [
        tokenizer.convert_tokens_to_ids(tokenizer.tokenize(preprocess_text(t, lower=True)))
        for t in texts[len(cases):]]
    bad = 0
    for text, ids in zip(texts, want):
        try:
            out = run.run(None, {"str": np.array([text])})[0]
            got = (out[0] if out.ndim == 2 else out).tolist()
        except Exception as error:  # the op refuses some texts outright
            got = str(error)[:80]
        bad += got != ids
    print(len(texts), "texts, differ", bad)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hf_json", action="store_true")
    parser.add_argument("--wordpiece", action="store_true")
    args = parser.parse_args()
    if args.wordpiece:
        with tempfile.TemporaryDirectory() as folder:
            wordpiece_probe(lambda *a: session(onnx_wordpiece.tokenizer_model(*a)),
                            lambda run, texts, pairs: run_batches(run, *(
                                [t.replace("\x00", runtimes.NUL_STANDIN) for t in side]
                                for side in (texts, pairs))), folder)
    else:
        hf_json_probe() if args.hf_json else probe(build, run_batches)
