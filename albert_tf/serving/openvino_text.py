"""Raw text inside an OpenVINO file: the text → ids graph of `<head>.text.<kind>.xml`, id-exact
with albert-tf's tokenizer, as `serving.onnx_text` is for ONNX.

    model = text_model(ids_onnx_bytes, spm_model_file, do_lower_case, max_seq_length)
    # an ov.Model: text_a, text_b (strings) → the ids file's outputs

The numbers are an ONNX graph of standard ops (OpenVINO's ONNX frontend reads it with the ids
model after it, `onnx_text.merged`); the strings are openvino-tokenizers' ops, put in where the
graph has a hole (an input of the same name) with OpenVINO's graph API:

1. `StringTensorUnpack`: each text as byte spans; the graph cuts them into UTF-8 characters,
   `VocabEncoder` finds each in the normalisation table (`onnx_text_tables.char_table`), the
   graph joins their normalised bytes back; when lower-casing, `RegexNormalization` rewrites
   the final sigmas (`onnx_text_tables.final_sigma_pattern`), then the other "Σ";
2. `SentencepieceTokenizer` with the model file (the SentencePiece library's own normaliser);
   its pieces are searched again with the wheel's tie-break (`onnx_unigram.choose`): the
   graph writes each unit's text as bytes and each window of characters as a byte span,
   `VocabEncoder` looks the windows up among the pieces;
3. the digit-comma fix-up and the packing: `onnx_text.fixed`, `onnx_text.pack`.

A file needs `openvino` and `openvino_tokenizers` (imported: it registers the ops).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

from albert_tf.serving import onnx_text, onnx_unigram, runtimes
from albert_tf.serving.onnx_graph import Builder
from albert_tf.serving.onnx_text_tables import (SIGMA, char_table, digit_comma_table,
                                                final_sigma_pattern)
from albert_tf.tokenization.sentencepiece import load_sentencepiece

SIDES = onnx_text.TEXT_INPUTS
PURPOSE = "raw text in OpenVINO"
_END = np.iinfo(np.int64).max
# Each side's holes: (name, ONNX element type name, shape) of the values openvino-tokenizers'
# ops give.
HOLES = (("begins", "INT32", ["n"]), ("ends", "INT32", ["n"]), ("chars", "UINT8", ["m"]),
         ("table", "INT32", ["c"]), ("sp_indices", "INT64", ["k", 2]), ("sp_ids", "INT32", ["k"]),
         ("found", "INT32", ["w"]))
# The values the graph gives those ops.
FEEDS = (("char_begins", "INT32"), ("char_ends", "INT32"), ("bytes", "UINT8"),
         ("norm_begins", "INT32"), ("norm_ends", "INT32"), ("norm_chars", "UINT8"),
         ("window_begins", "INT32"), ("window_ends", "INT32"), ("piece_bytes", "UINT8"))


@dataclass
class Parts:
    """What the graph is built from: the normalisation table's values and the pieces as
    `utf8_table`s, the unigram search's tables (vocab, scores, strings), the digit-comma
    table."""
    values: tuple
    pieces: tuple
    search: tuple
    fixup: np.ndarray


def utf8_table(strings):
    """(begin [n] int64, length [n] int64, bytes uint8) of strings laid end to end."""
    encoded = [s.encode("utf-8") for s in strings]
    lengths = np.array([len(e) for e in encoded], np.int64)
    begins = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    data = np.frombuffer(b"".join(encoded) or b"\0", np.uint8).copy()
    return begins, lengths, data


def span_bytes(g: Builder, begins, ends, data):
    """(bytes [M] uint8, owner of each byte [M]): the byte spans (int64 [n]) of `data`, one
    after another."""
    lengths = g.op("Sub", [ends, begins])
    stops = g.op("CumSum", [lengths, g.scalar(0)])
    offsets = g.op("Concat", [g.i64(0), stops], axis=0)
    total = g.op("Slice", [offsets, g.i64(-1), g.i64(_END)])
    owner = g.row_ids(offsets, total)
    start = g.op("Sub", [stops, lengths])
    at = g.op("Add", [g.op("Sub", [g.arange(total), g.op("Gather", [start, owner])]),
                      g.op("Gather", [begins, owner])])
    return g.op("Gather", [data, at]), owner


def characters(g: Builder, data):
    """(begin, end) int64 [C]: the UTF-8 characters of `data` (uint8 [M], valid UTF-8)."""
    value = g.op("Cast", [data], to=g.onnx.TensorProto.INT32)
    lead = g.op("Or", [g.op("Less", [value, g.const(np.array(128, np.int32))]),
                       g.op("GreaterOrEqual", [value, g.const(np.array(192, np.int32))])])
    begin = g.op("Reshape", [g.op("NonZero", [lead]), g.i64(-1)])
    end = g.op("Concat", [g.op("Slice", [begin, g.i64(1), g.i64(_END)]),
                          g.op("Shape", [data])], axis=0)
    return begin, end


def _out(g: Builder, value, name, to=None):
    """`value` as the graph's output `name` (cast to ONNX type `to`)."""
    if to is None:
        return g.op("Identity", [value], [name])
    return g.op("Cast", [value], [name], to=getattr(g.onnx.TensorProto, to))


def _i64(g: Builder, name):
    return g.op("Cast", [name], to=g.onnx.TensorProto.INT64)


def normalized_bytes(g: Builder, parts: Parts, side: str, batch):
    """The side's texts through the normalisation table: feeds `char_*` and `bytes` (for the
    table's `VocabEncoder`, hole `table`), gives `norm_*` (the normalised texts' spans)."""
    begins, ends = (g.op("Expand", [_i64(g, f"{side}/{n}"), batch]) for n in ("begins", "ends"))
    data, owner = span_bytes(g, begins, ends, f"{side}/chars")
    first, after = characters(g, data)
    row = g.op("Gather", [owner, first])
    _out(g, first, f"{side}/char_begins", "INT32")
    _out(g, after, f"{side}/char_ends", "INT32")
    _out(g, data, f"{side}/bytes")
    found = _i64(g, f"{side}/table")
    known = g.op("GreaterOrEqual", [found, g.i64(0)])
    index = g.op("Max", [found, g.i64(0)])
    value_begin, value_length, value_bytes = parts.values
    start = g.op("Where", [known, g.op("Add", [g.op("Gather", [g.const(value_begin), index]),
                                               g.op("Shape", [data])]), first])
    length = g.op("Where", [known, g.op("Gather", [g.const(value_length), index]),
                            g.op("Sub", [after, first])])
    pool = g.op("Concat", [data, g.const(value_bytes)], axis=0)
    out, _ = span_bytes(g, start, g.op("Add", [start, length]), pool)
    row_length = g.op("ScatterElements", [g.fill(batch, 0), row, length], axis=0,
                      reduction="add")
    stops = g.op("CumSum", [row_length, g.scalar(0)])
    _out(g, g.op("Sub", [stops, row_length]), f"{side}/norm_begins", "INT32")
    _out(g, stops, f"{side}/norm_ends", "INT32")
    _out(g, out, f"{side}/norm_chars")


def searched(g: Builder, parts: Parts, side: str, batch):
    """(ids, rows, count per row) of the side's SentencePiece pieces (holes `sp_*`) searched
    again: feeds `window_*` and `piece_bytes` (for the pieces' `VocabEncoder`, hole `found`)."""
    vocab, scores, _ = parts.search
    rows = g.op("Gather", [f"{side}/sp_indices", g.scalar(0)], axis=1)
    ids, unit, count, unit_rows = onnx_unigram.cuts(g, _i64(g, f"{side}/sp_ids"), rows,
                                                    vocab.unknown_id)
    piece_begin, piece_length, piece_bytes = parts.pieces
    begins = g.op("Gather", [g.const(piece_begin), ids])
    data, owner = span_bytes(g, begins, g.op("Add", [begins, g.op("Gather", [
        g.const(piece_length), ids])]), g.const(piece_bytes))
    first, after = characters(g, data)
    char_unit = g.op("Gather", [g.op("Gather", [unit, owner]), first])
    lengths = g.counts(char_unit, count)
    zero = g.i64(0)
    dense_first = g.dense(first, char_unit, lengths, count, zero)       # [U, L]
    dense_after = g.dense(after, char_unit, lengths, count, zero)
    span = g.op("Shape", [dense_first])
    units, columns = (g.op("Slice", [span, g.i64(k), g.i64(k + 1)]) for k in (0, 1))
    width = vocab.max_piece_chars
    padded = g.op("Concat", [g.fill(g.op("Concat", [units, g.i64(width - 1)], axis=0), 0),
                             dense_first], axis=1)
    starts = []
    for size in range(1, width + 1):  # window k: the piece of `size` characters ending at e
        begin = width - size
        starts.append(g.op("Unsqueeze", [g.op("Slice", [padded, g.i64(begin), g.op(
            "Add", [columns, g.i64(begin)]), g.i64(1)]), g.i64(2)]))
    starts = g.op("Concat", starts, axis=2)                             # [U, L, K]
    ends = g.op("Expand", [g.op("Unsqueeze", [dense_after, g.i64(2)]), g.op("Shape", [starts])])
    end = g.op("Reshape", [g.arange(columns), g.i64(1, -1, 1)])
    size = g.const(np.arange(1, width + 1, dtype=np.int64).reshape(1, 1, -1))
    fits = g.op("And", [g.op("GreaterOrEqual", [g.op("Sub", [end, size]), g.i64(-1)]),
                        g.op("Less", [end, g.op("Reshape", [lengths, g.i64(-1, 1, 1)])])])
    starts = g.op("Where", [fits, starts, ends])  # a window that does not fit: empty
    _out(g, g.op("Reshape", [starts, g.i64(-1)]), f"{side}/window_begins", "INT32")
    _out(g, g.op("Reshape", [ends, g.i64(-1)]), f"{side}/window_ends", "INT32")
    _out(g, data, f"{side}/piece_bytes")
    found = g.op("Reshape", [_i64(g, f"{side}/found"), g.op("Shape", [starts])])
    ids, rows = onnx_unigram.choose(g, found, lengths, units, columns, unit_rows, vocab, scores)
    return onnx_text.fixed(g, ids, rows, batch, parts.fixup)


def supported(spm_model_file) -> bool:
    """Whether the model's text-in files can be made: a unigram model (BPE, word, char and
    byte-fallback ones keep ids-in files)."""
    proto = load_sentencepiece(spm_model_file).serialized_model_proto()
    return onnx_unigram.tables(proto, spm_model_file) is not None


def graph_parts(spm_model_file, do_lower_case: bool):
    """(Parts, the SentencePiece model, `strings`: what the string ops take — the model's
    proto, its vocab, the normalisation table's keys)."""
    sp_model = load_sentencepiece(spm_model_file)
    proto, fixup = sp_model.serialized_model_proto(), digit_comma_table(sp_model)
    search = onnx_unigram.tables(proto, spm_model_file)
    if search is None:
        raise ValueError(f"{spm_model_file}: not a unigram SentencePiece model (BPE, word, char "
                         "or byte fallback): its OpenVINO files take ids")
    vocab, _, strings = search
    table = char_table(bool(do_lower_case))
    strings = [onnx_unigram.UNKNOWN_MARK if i == vocab.unknown_id else s
               for i, s in enumerate(strings)]
    parts = Parts(utf8_table(table.values()), utf8_table(strings), search, fixup)
    return parts, sp_model, {"proto": proto, "vocab": vocab, "table": list(table)}


def declared(onnx, side: str, holes=HOLES, feeds=FEEDS) -> tuple[list, list]:
    """(inputs, outputs): value infos of a side's holes and feeds."""
    info = onnx.helper.make_tensor_value_info
    return ([info(f"{side}/{name}", getattr(onnx.TensorProto, kind), shape)
             for name, kind, shape in holes],
            [info(f"{side}/{name}", getattr(onnx.TensorProto, kind), [f"{side}/{name}"])
             for name, kind in feeds])


def skeleton(spm_model_file, do_lower_case: bool, max_seq_length: int):
    """(nodes, initializers, inputs, feeds, strings) of the numeric graph (see the module);
    `strings`: what the string ops take (`graph_parts`)."""
    onnx = runtimes.load("onnx", PURPOSE, "openvino")
    parts, sp_model, strings = graph_parts(spm_model_file, do_lower_case)
    g = Builder(onnx)
    batch = g.op("Shape", [f"{SIDES[0]}/begins"])
    found = []
    for side in SIDES:
        normalized_bytes(g, parts, side, batch)
        found.append(searched(g, parts, side, batch))
    onnx_text.pack(g, found[0], found[1], sp_model.PieceToId("[CLS]"),
                   sp_model.PieceToId("[SEP]"), max_seq_length, batch)
    inputs, feeds = [], []
    for side in SIDES:
        side_inputs, side_feeds = declared(onnx, side)
        inputs += side_inputs
        feeds += side_feeds
    return g.nodes, g.initializers, inputs, feeds, strings


def _strings(ov, values):
    """openvino-tokenizers' unpacked string constant (begins, ends, chars) of `values`."""
    begins, lengths, data = utf8_table(values)
    opset = runtimes.load("openvino.opset14", PURPOSE, "openvino")
    return [opset.constant(begins.astype(np.int32)).output(0),
            opset.constant((begins + lengths).astype(np.int32)).output(0),
            opset.constant(data).output(0)]


def _regex(factory, opset, spans, pattern: str, replace: str):
    consts = [opset.constant(np.frombuffer(t.encode("utf-8"), np.uint8)).output(0)
              for t in (pattern, replace)]
    return factory.create("RegexNormalization", [*spans, *consts],
                          {"global_replace": True}).outputs()


def text_model(content: bytes, spm_model_file, do_lower_case: bool, max_seq_length: int):
    """The ids-in ONNX file's bytes (`content`) as an ov.Model taking `text_a`, `text_b`."""
    ov = runtimes.load("openvino", PURPOSE)
    nodes, initializers, inputs, feeds, parts = skeleton(spm_model_file, do_lower_case,
                                                         max_seq_length)
    outputs, texts, _ = stitched(onnx_text.merged(content, nodes, initializers, inputs, feeds),
                                 parts, do_lower_case, SIDES, SIDES)
    result = ov.Model(outputs, texts, "albert_text")
    result.validate_nodes_and_infer_types()
    return result


def stitched(merged: bytes, parts: dict, do_lower_case: bool, raw_sides, token_sides,
             internal=()):
    """(results, text parameters, {feed name: its value}) of the ONNX graph `merged` (its
    holes and feeds as `skeleton`'s) read by OpenVINO with openvino-tokenizers' ops in its
    holes: each of `raw_sides` a string parameter unpacked into `<side>/begins|ends|chars`,
    each of `token_sides` normalised and tokenized (see the module). The results are the
    graph's outputs but the feeds (names under a side or `internal`)."""
    ov = runtimes.load("openvino", PURPOSE)
    tokenizers = runtimes.load("openvino_tokenizers", PURPOSE, "openvino")
    opset = runtimes.load("openvino.opset14", PURPOSE, "openvino")
    factory, plain = tokenizers._get_factory(), tokenizers._get_opset_factory("opset15")
    with tempfile.TemporaryDirectory(prefix="albert_openvino_text_",
                                     ignore_cleanup_errors=True) as staging:
        source = os.path.join(staging, "model.onnx")
        with open(source, "wb") as writer:
            writer.write(merged)
        model = ov.Core().read_model(source)
    holes = {p.get_friendly_name(): p for p in model.get_parameters()}
    feed = {r.get_friendly_name(): r.input_value(0) for r in model.get_results()}
    feed.update({name: r.input_value(0) for r in model.get_results()
                 for name in r.input_value(0).get_names()})
    prefixes = tuple(f"{p}/" for p in (*raw_sides, *token_sides, *internal))
    outputs = [r for r in model.get_results()
               if not any(n.startswith(prefixes) for n in r.input_value(0).get_names())]

    def fill(name, value):
        hole = holes[name]
        if value.get_element_type() != hole.get_element_type():
            value = opset.convert(value, hole.get_element_type()).output(0)
        hole.output(0).replace(value)

    texts = []
    for side in raw_sides:
        text = opset.parameter(ov.PartialShape([-1]), ov.Type.string, name=side)
        text.output(0).set_names({side})
        texts.append(text)
        unpacked = plain.create("StringTensorUnpack", text.outputs()).outputs()
        for name, value in zip(("begins", "ends", "chars"), unpacked):
            fill(f"{side}/{name}", value)
    vocab = parts["vocab"]
    sp_model = opset.constant(np.frombuffer(parts["proto"], np.uint8)).output(0)
    for side in token_sides:
        table = factory.create("VocabEncoder", [
            *(feed[f"{side}/{n}"] for n in ("char_begins", "char_ends", "bytes")),
            *_strings(ov, parts["table"]),
            opset.constant(np.arange(len(parts["table"]), dtype=np.int32)).output(0),
            opset.constant(np.array(-1, np.int32)).output(0)]).outputs()[0]
        fill(f"{side}/table", table)
        spans = [feed[f"{side}/{n}"] for n in ("norm_begins", "norm_ends", "norm_chars")]
        if do_lower_case:
            spans = _regex(factory, opset, spans, final_sigma_pattern(), "$1\u03c2$2")
            spans = _regex(factory, opset, spans, SIGMA, "\u03c3")
        packed = plain.create("StringTensorPack", spans).outputs()
        indices, ids, _ = factory.create(
            "SentencepieceTokenizer", [sp_model, *packed],
            {"add_bos": False, "add_eos": False, "reverse": False, "alpha": 1.0,
             "nbest_size": 1}).outputs()
        fill(f"{side}/sp_indices", indices)
        fill(f"{side}/sp_ids", ids)
        found = factory.create("VocabEncoder", [
            *(feed[f"{side}/{n}"] for n in ("window_begins", "window_ends", "piece_bytes")),
            *_strings(ov, [*vocab.pieces, onnx_unigram.UNKNOWN_MARK]),
            opset.constant(np.array([*vocab.ids, vocab.unknown_id], np.int32)).output(0),
            opset.constant(np.array(-1, np.int32)).output(0)]).outputs()[0]
        fill(f"{side}/found", found)
    return outputs, texts, feed


def ids_passed_on(max_seq_length: int) -> bytes:
    """An ids "model" giving its three inputs as outputs: the text graph alone after it."""
    onnx = runtimes.load("onnx", PURPOSE, "openvino")
    values = onnx_text.outputs_info(onnx, max_seq_length)
    graph = onnx.helper.make_graph([], "ids", values, values)
    return onnx.helper.make_model(graph, opset_imports=[
        onnx.helper.make_opsetid("", onnx_text.OPSETS[""])]).SerializeToString()


def tokenizer_model(spm_model_file, do_lower_case: bool, max_seq_length: int):
    """The text → ids graph alone as an ov.Model: `text_a`, `text_b` → `onnx_text.OUTPUTS`."""
    return text_model(ids_passed_on(max_seq_length), spm_model_file, do_lower_case,
                      max_seq_length)
