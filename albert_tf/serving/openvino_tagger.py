"""Raw text inside a token classifier's OpenVINO file: `token_classifier.text.<kind>.xml`
(+ `.bin`), giving what its ONNX text file gives (`serving.onnx_tagger`: the same inputs,
outputs and padding).

    model = tagger_model(ids_onnx_bytes, spm_model_file, do_lower_case, max_seq_length,
                         stride, label_names)   # an ov.Model: text_a → words, tags, ...

1. `text_a` unpacked (openvino-tokenizers' StringTensorUnpack); the graph cuts its bytes into
   UTF-8 characters and splits words where `str.split()` does: a character is whitespace when
   its bytes are those of a code point `str.isspace` holds (no regex op); the character
   offsets are counted there;
2. the words, and one more ("a") after them, through `serving.openvino_text`'s normalisation
   and SentencePiece steps (its side `word`);
3. `onnx_tagger.homes` and `onnx_tagger.per_word` (the windows, each word's home window, the
   padded outputs); `words` and `tags` are StringTensorPack's of byte spans (the words' bytes
   copied in order; for each slot its own copy of the label names).
"""

from __future__ import annotations

import numpy as np

from albert_tf.serving import (onnx_tagger, onnx_wordpiece, openvino_text, openvino_wordpiece,
                               runtimes)
from albert_tf.serving.onnx_graph import Builder

SIDE, WORD, INTERNAL = "text_a", "word", "tagger"
# str.split()'s whitespace, each as its UTF-8 bytes read little-end first (all 1-3 bytes).
SPACE_KEYS = np.array([int.from_bytes(chr(c).encode("utf-8"), "little")
                       for c in range(0x110000) if chr(c).isspace()], np.int64)


def _i64(g: Builder, value):
    return g.op("Cast", [value], to=g.onnx.TensorProto.INT64)


def _int32(g: Builder, value):
    return g.op("Cast", [value], to=g.onnx.TensorProto.INT32)


def words(g: Builder, batch):
    """(byte begin, byte end, text, first character, character after) of each word of the
    `text_a` holes' texts, and the texts' bytes."""
    data, owner = openvino_text.span_bytes(g, _i64(g, f"{SIDE}/begins"),
                                           _i64(g, f"{SIDE}/ends"), f"{SIDE}/chars")
    first, after = openvino_text.characters(g, data)
    rows = g.op("Gather", [owner, first])
    padded = g.op("Concat", [_i64(g, data), g.i64(0, 0, 0)], axis=0)
    length = g.op("Sub", [after, first])
    key = g.op("Gather", [padded, first])
    for k in (1, 2):
        byte = g.op("Gather", [padded, g.op("Add", [first, g.i64(k)])])
        used = _i64(g, g.op("Greater", [length, g.i64(k)]))
        key = g.op("Add", [key, g.op("Mul", [g.op("Mul", [byte, g.i64(1 << 8 * k)]), used])])
    hits = _i64(g, g.op("Equal", [g.op("Unsqueeze", [key, g.i64(1)]),
                                  g.const(SPACE_KEYS.reshape(1, -1))]))
    space = g.op("ReduceMax", [hits], axes=[1], keepdims=0)
    word = g.op("Equal", [space, g.i64(0)])
    one, other = g.i64(1), g.i64(-1)
    before = g.op("Concat", [one, g.op("Slice", [space, g.i64(0), g.i64(-1)])], axis=0)
    before_row = g.op("Concat", [other, g.op("Slice", [rows, g.i64(0), g.i64(-1)])], axis=0)
    after_space = g.op("Concat", [g.op("Slice", [space, g.i64(1), g.i64(1 << 62)]), one], axis=0)
    after_row = g.op("Concat", [g.op("Slice", [rows, g.i64(1), g.i64(1 << 62)]), other], axis=0)

    def marks(neighbour_space, neighbour_row):
        edge = g.op("Or", [g.op("Equal", [neighbour_space, one]),
                           g.op("Not", [g.op("Equal", [neighbour_row, rows])])])
        return g.op("Reshape", [g.op("NonZero", [g.op("And", [word, edge])]), g.i64(-1)])

    starts, ends = marks(before, before_row), marks(after_space, after_row)
    w_rows = g.op("Gather", [rows, starts])
    counts = g.counts(rows, batch)
    text_first = g.op("Gather", [g.op("Sub", [g.op("CumSum", [counts, g.scalar(0)]), counts]),
                                 w_rows])
    return (g.op("Gather", [first, starts]), g.op("Gather", [after, ends]), w_rows,
            g.op("Sub", [starts, text_first]),
            g.op("Add", [g.op("Sub", [ends, text_first]), one]), data)


def _ascending(g: Builder, begins, ends, data):
    """(begins, ends int32 [B, W], bytes) of the byte spans `begins`..`ends` ([B, W], of
    `data`) copied one after another: StringTensorPack takes spans in ascending order."""
    shape = g.op("Shape", [begins])
    flat_begins, flat_ends = (g.op("Reshape", [_i64(g, v), g.i64(-1)]) for v in (begins, ends))
    chars, _ = openvino_text.span_bytes(g, flat_begins, flat_ends, data)
    lengths = g.op("Sub", [flat_ends, flat_begins])
    stops = g.op("CumSum", [lengths, g.scalar(0)])
    return (_int32(g, g.op("Reshape", [g.op("Sub", [stops, lengths]), shape])),
            _int32(g, g.op("Reshape", [stops, shape])), chars)


def tagger_model(content: bytes, spm_model_file, do_lower_case: bool, max_seq_length: int,
                 stride: int, label_names, vocab_file=None):
    """A token classifier's ids-in ONNX bytes (output `probabilities`) as an ov.Model taking
    `text_a` and giving `onnx_tagger.TEXT_OUTPUTS` (see the module; without `spm_model_file`,
    each word's bytes through `serving.openvino_wordpiece` with `vocab_file`)."""
    onnx = runtimes.load("onnx", openvino_text.PURPOSE, "openvino")
    ov = runtimes.load("openvino", openvino_text.PURPOSE)
    tokenizers = runtimes.load("openvino_tokenizers", openvino_text.PURPOSE, "openvino")
    opset = runtimes.load("openvino.opset14", openvino_text.PURPOSE, "openvino")
    g = Builder(onnx)
    batch = g.op("Shape", [f"{SIDE}/begins"])
    begins, ends, w_rows, w_starts, w_ends, data = words(g, batch)
    number = g.op("Shape", [begins])
    size = g.op("Shape", [data])
    # One word more ("a"), dropped after, as in `onnx_tagger.with_tagger`: a batch of texts
    # without words still gives SentencePiece a word.
    spans = [g.op("Concat", [begins, size], axis=0),
             g.op("Concat", [ends, g.op("Add", [size, g.i64(1)])], axis=0),
             g.op("Concat", [data, g.const(np.array([ord("a")], np.uint8))], axis=0)]
    all_words = g.op("Shape", [spans[0]])
    if spm_model_file:
        parts, sp_model, strings = openvino_text.graph_parts(spm_model_file, do_lower_case)
        for name, value in zip(("begins", "ends", "chars"), spans):
            g.op("Identity", [value], [f"{WORD}/{name}"])
        openvino_text.normalized_bytes(g, parts, WORD, all_words)
        ids, p_rows, p_counts = openvino_text.searched(g, parts, WORD, all_words)
    else:
        strings = {"proto": b"\0", "vocab": None, "table": []}
        ids, p_rows, p_counts, sp_model = onnx_wordpiece.word_pieces(
            g, vocab_file, do_lower_case, lambda _: openvino_wordpiece.decoded(g, *spans),
            all_words)
    where = onnx_tagger.homes(g, ids, p_rows, p_counts, number, w_rows, batch, sp_model,
                              max_seq_length, stride)
    front = len(g.nodes)
    minus, zero = np.array([-1], np.int32), np.array([0], np.int32)
    out = onnx_tagger.per_word(g, where, w_rows, g.counts(w_rows, batch), batch, {
        "word_starts": (_int32(g, w_starts), minus), "word_ends": (_int32(g, w_ends), minus),
        "word_begins": (_int32(g, begins), zero), "word_end_bytes": (_int32(g, ends), zero)})
    label_begins, label_lengths, label_bytes = openvino_text.utf8_table(
        [str(t) for t in label_names])
    padding = g.op("Less", [out["tag_ids"], g.const(np.array(0, np.int32))])
    # Each slot's name in a copy of all the names of its own (spans in ascending order, without
    # `_ascending`: its byte copy of the names, after the ids model, gave other values in the
    # ids model's first LayerNorm in OpenVINO 2026.4's CPU plugin: 0.39 off on one text).
    index = g.op("Max", [_i64(g, out["tag_ids"]), g.i64(0)])
    slots = g.op("Reshape", [g.op("Size", [index]), g.i64(1)])
    block = g.op("Mul", [g.op("Reshape", [g.arange(slots), g.op("Shape", [index])]),
                         g.i64(len(label_bytes))])
    tag_begins = g.op("Add", [block, g.op("Gather", [g.const(label_begins), index])])
    tag_ends = g.op("Add", [tag_begins, g.op("Where", [
        padding, g.i64(0), g.op("Gather", [g.const(label_lengths), index])])])
    values = {name: out[name] for name in onnx_tagger.TEXT_OUTPUTS if name in out}
    begin, end, chars = _ascending(g, out["word_begins"], out["word_end_bytes"], data)
    values.update({f"{INTERNAL}/word_begins": begin, f"{INTERNAL}/word_ends": end,
                   f"{INTERNAL}/word_bytes": chars,
                   f"{INTERNAL}/tag_begins": _int32(g, tag_begins),
                   f"{INTERNAL}/tag_ends": _int32(g, tag_ends),
                   f"{INTERNAL}/tag_bytes": g.op("Tile", [g.const(label_bytes), slots])})
    for name, value in values.items():
        g.op("Identity", [value], [name])
    info = onnx.helper.make_tensor_value_info
    inputs, feeds = openvino_text.declared(onnx, SIDE, openvino_text.HOLES[:3], ())
    word_inputs, word_feeds = openvino_text.declared(onnx, WORD, openvino_text.HOLES[3:]) \
        if spm_model_file else ([], [])
    feeds = [*word_feeds, *onnx_tagger.output_infos(onnx, [n for n in values if "/" not in n]),
             *(info(n, onnx.TensorProto.UINT8 if n.endswith("_bytes") else
                    onnx.TensorProto.INT32, None)
                    for n in values if "/" in n)]
    merged = onnx_tagger.spliced(onnx, content, g.nodes[:front], g.nodes[front:],
                                 g.initializers, [*inputs, *word_inputs], feeds)
    results, texts, feed = openvino_text.stitched(merged, strings, do_lower_case, (SIDE,),
                                                  (WORD,) if spm_model_file else (),
                                                  (INTERNAL,))
    by_name = {}
    for r in results:  # each output by its own name alone (the runners read any name)
        name = next(n for n in r.input_value(0).get_names() if n in onnx_tagger.TEXT_OUTPUTS)
        r.input_value(0).get_tensor().set_names({name})
        r.output(0).get_tensor().set_names({name})
        by_name[name] = r
    plain = tokenizers._get_opset_factory("opset15")
    for name in ("words", "tags"):
        packed = plain.create("StringTensorPack", [
            feed[f"{INTERNAL}/{name[:-1]}_{part}"] for part in ("begins", "ends", "bytes")
        ]).outputs()[0]
        packed.set_names({name})
        by_name[name] = opset.result(packed)
    result = ov.Model([by_name[n] for n in onnx_tagger.TEXT_OUTPUTS], texts, "albert_tagger")
    result.validate_nodes_and_infer_types()
    return result
