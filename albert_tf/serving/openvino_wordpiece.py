"""Raw text inside an OpenVINO file for a WordPiece model: `<head>.text.<kind>.xml` taking
`text_a`, `text_b` strings, id-exact with albert-tf's `FullTokenizer(vocab_file)` and packing.

    model = text_model(ids_onnx_bytes, vocab_file, do_lower_case, max_seq_length)

openvino-tokenizers' `StringTensorUnpack` gives each text's UTF-8 bytes (stitched in as
`serving.openvino_text.stitched` does for SentencePiece); the rest is one ONNX graph of
standard ops that OpenVINO's ONNX frontend reads with the ids model after it: the bytes
decoded into code points, then `serving.onnx_wordpiece.pieces` (the basic tokenizer, the
vocabulary's perfect hash, the greedy walk) and `onnx_text.pack`. A file needs `openvino` and
`openvino_tokenizers` (imported: it registers the ops).
"""

from __future__ import annotations

import numpy as np

from albert_tf.serving import onnx_text, onnx_wordpiece, openvino_text, runtimes
from albert_tf.serving.onnx_graph import Builder
from albert_tf.tokenization.wordpiece import WORDPIECE_SPECIAL_TOKENS, load_vocab

SIDES = onnx_text.TEXT_INPUTS
PURPOSE = "raw text in OpenVINO"
HOLES = openvino_text.HOLES[:3]  # begins, ends, chars: StringTensorUnpack's outputs
# What the UTF-8 lead byte of a character of n bytes holds above its bits.
_LEAD = np.array([0, 0, 192, 224, 240], np.int64)


def code_points(g: Builder, side: str, batch):
    """(code point [C], row [C]) of the side's texts from their bytes (valid UTF-8)."""
    begins, ends = (g.op("Expand", [g.op("Cast", [f"{side}/{n}"], to=g.onnx.TensorProto.INT64),
                                    batch]) for n in ("begins", "ends"))
    return decoded(g, begins, ends, f"{side}/chars")


def decoded(g: Builder, begins, ends, chars):
    """(code point [C], span of each [C]) of the byte spans (int64 [n]) of `chars` (uint8)."""
    data, owner = openvino_text.span_bytes(g, begins, ends, chars)
    first, after = openvino_text.characters(g, data)
    value = g.op("Cast", [data], to=g.onnx.TensorProto.INT64)
    size = g.op("Sub", [after, first])
    cp = g.op("Sub", [g.op("Gather", [value, first]), g.op("Gather", [g.const(_LEAD), size])])
    last = g.op("Sub", [g.op("Shape", [data]), g.i64(1)])
    for k in range(1, 4):
        more = g.op("Gather", [value, g.op("Min", [g.op("Add", [first, g.scalar(k)]), last])])
        cp = g.op("Where", [g.op("Less", [g.scalar(k), size]), g.op("Add", [
            g.op("Mul", [cp, g.scalar(64)]), g.op("Sub", [more, g.scalar(128)])]), cp])
    return cp, g.op("Gather", [owner, first])


def skeleton(vocab_file, do_lower_case: bool, max_seq_length: int):
    """(nodes, initializers, inputs) of the numeric graph, its inputs the sides' holes."""
    onnx = runtimes.load("onnx", PURPOSE, "openvino")
    vocab = load_vocab(vocab_file, WORDPIECE_SPECIAL_TOKENS)
    g = Builder(onnx)
    t = onnx_wordpiece.Tables(g, vocab, do_lower_case)
    batch = g.op("Shape", [f"{SIDES[0]}/begins"])
    found = [onnx_wordpiece.pieces(g, t, *code_points(g, side, batch), batch) for side in SIDES]
    onnx_text.pack(g, found[0], found[1], t.cls, t.sep, max_seq_length, batch)
    inputs = [i for side in SIDES for i in openvino_text.declared(onnx, side, HOLES, ())[0]]
    return g.nodes, g.initializers, inputs


def text_model(content: bytes, vocab_file, do_lower_case: bool, max_seq_length: int):
    """The ids-in ONNX file's bytes (`content`) as an ov.Model taking `text_a`, `text_b`."""
    ov = runtimes.load("openvino", PURPOSE)
    nodes, initializers, inputs = skeleton(vocab_file, do_lower_case, max_seq_length)
    outputs, texts, _ = openvino_text.stitched(
        onnx_text.merged(content, nodes, initializers, inputs),
        {"proto": b"\0", "vocab": None, "table": []}, do_lower_case, SIDES, ())
    result = ov.Model(outputs, texts, "albert_wordpiece")
    result.validate_nodes_and_infer_types()
    return result


def tokenizer_model(vocab_file, do_lower_case: bool, max_seq_length: int):
    """The text → ids graph alone as an ov.Model: `text_a`, `text_b` → `onnx_text.OUTPUTS`."""
    return text_model(openvino_text.ids_passed_on(max_seq_length), vocab_file, do_lower_case,
                      max_seq_length)
