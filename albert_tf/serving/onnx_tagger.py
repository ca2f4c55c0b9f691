"""Raw text inside a token classifier's ONNX file: `token_classifier.text.<kind>.onnx`.

    content = with_tagger(ids_file_bytes, spm_model_file, do_lower_case, max_seq_length,
                          stride, label_names)

The file takes `text_a` (string [batch]: sentences, as the SavedModel's `serve_text` takes
them) and gives its per-word outputs, padded per row as there: `words`, `tags` [B, W] strings
(""), `tag_ids` [B, W] int32 (-1), `probabilities` [B, W, C] float32 (0), `word_starts` /
`word_ends` [B, W] int32 character offsets (code points; -1). In the graph, after
`serving.onnx_text`'s normalisation and SentencePiece (the same nodes, run on each word):

1. words: the text split at whitespace (Python's `str.split()`:
   `word_windows.SPLIT_PATTERN`); each word tokenized on its own, one unknown piece for a
   word without pieces (`tokenization.word_windows.WordPieces`);
2. each text's pieces in windows of `max_seq_length - 2`, `stride` apart, `[CLS] ... [SEP]`
   (`word_windows.windows`), all windows of the batch through the ids model at once;
3. each word's tag at its first piece in the window where it has the most context, the
   earlier window on a tie (`word_windows.home_window`).

The export checks it against the Keras model on albert-tf's windows (`reference`). The
SavedModel's entity outputs (decoded from the tags) are not in the file.
"""

from __future__ import annotations

import re

import numpy as np

from albert_tf.serving import onnx_text, onnx_wordpiece, runtimes
from albert_tf.serving.onnx_graph import CONTRIB, Builder
from albert_tf.tokenization.word_windows import SPLIT_PATTERN, text_windows

WHITESPACE = f"({SPLIT_PATTERN})"  # the split op finds each delimiter by its one group
TEXT_INPUTS = ("text_a",)
TEXT_OUTPUTS = ("words", "tags", "tag_ids", "probabilities", "word_starts", "word_ends")
_WINDOWS = "tagger/window_probabilities"  # the ids model's own `probabilities`, renamed


def _windows(g: Builder, flat, total, n, max_seq_length, stride, cls_id, sep_id):
    """(window_first [B], windows per text [B]) with the three ids inputs of every window
    (`word_windows.windows` of each text's `n` pieces in `flat`, starting at row starts)."""
    length, step = g.i64(max_seq_length - 2), g.i64(stride)
    over = g.op("Sub", [g.op("Add", [g.op("Sub", [n, length]), step]), g.i64(1)])
    count = g.op("Where", [g.op("Greater", [n, length]),
                           g.op("Add", [g.op("Div", [over, step]), g.i64(1)]), g.i64(1)])
    ends = g.op("CumSum", [count, g.scalar(0)])
    first = g.op("Sub", [ends, count])
    windows = g.op("ReduceSum", [count], keepdims=1)
    row = g.row_ids(g.op("Concat", [g.i64(0), ends], axis=0), windows)
    start = g.op("Mul", [g.op("Sub", [g.arange(windows), g.op("Gather", [first, row])]), step])
    size = g.op("Unsqueeze", [g.op("Min", [length, g.op("Sub", [g.op("Gather", [n, row]),
                                                                start])]), g.i64(1)])
    text_start = g.op("Sub", [g.op("CumSum", [n, g.scalar(0)]), n])
    j = g.op("Unsqueeze", [g.arange(g.i64(max_seq_length)), g.i64(0)])
    at = g.op("Add", [g.op("Unsqueeze", [g.op("Add", [g.op("Gather", [text_start, row]), start]),
                                         g.i64(1)]), g.op("Sub", [j, g.i64(1)])])
    at = g.op("Min", [g.op("Max", [at, g.i64(0)]), total])
    padded = g.op("Concat", [flat, g.i64(0)], axis=0)
    inside = g.op("And", [g.op("GreaterOrEqual", [j, g.i64(1)]), g.op("LessOrEqual", [j, size])])
    ids = g.op("Where", [inside, g.op("Gather", [padded, at]), g.i64(0)])
    ids = g.op("Where", [g.op("Equal", [j, g.i64(0)]), g.i64(cls_id), ids])
    end = g.op("Add", [size, g.i64(1)])
    ids = g.op("Where", [g.op("Equal", [j, end]), g.i64(sep_id), ids])
    int32, shape = g.onnx.TensorProto.INT32, g.i64(-1, max_seq_length)
    # [windows, max_seq_length] with the length known (OpenVINO's ids model gave other values
    # where it was not).
    ids = g.op("Reshape", [ids, shape])
    g.op("Cast", [ids], ["input_word_ids"], to=int32)
    g.op("Cast", [g.op("Reshape", [g.op("LessOrEqual", [j, end]), shape])], ["input_mask"],
         to=int32)
    g.op("Cast", [g.op("Mul", [ids, g.i64(0)])], ["input_type_ids"], to=int32)
    return first, count


def _homes(g: Builder, first, n, window_first, count, w_rows, stride, max_seq_length):
    """[N, 2] (window, position) of each word's tag (`word_windows.home_window`); `first`:
    the place of each word's first piece in its text."""
    most = g.op("ReduceMax", [count], keepdims=1)
    ks = g.op("Unsqueeze", [g.arange(most), g.i64(0)])
    at = g.op("Unsqueeze", [first, g.i64(1)])
    starts = g.op("Mul", [ks, g.i64(stride)])
    sizes = g.op("Min", [g.i64(max_seq_length - 2), g.op("Sub", [g.op("Unsqueeze", [
        g.op("Gather", [n, w_rows]), g.i64(1)]), starts])])
    stop = g.op("Add", [starts, sizes])
    inside = g.op("And", [g.op("And", [g.op("Less", [ks, g.op("Unsqueeze", [
        g.op("Gather", [count, w_rows]), g.i64(1)])]), g.op("GreaterOrEqual", [at, starts])]),
        g.op("Less", [at, stop])])
    score = g.op("Min", [g.op("Sub", [at, starts]), g.op("Sub", [g.op("Sub", [stop, g.i64(1)]),
                                                                 at])])
    key = g.op("Add", [g.op("Mul", [score, most]), g.op("Sub", [g.op("Sub", [most, g.i64(1)]),
                                                                ks])])
    key = g.op("Cast", [g.op("Where", [inside, key, g.i64(-1)])], to=g.onnx.TensorProto.DOUBLE)
    home = g.op("ArgMax", [key], axis=1, keepdims=0)
    return g.pairs(g.op("Add", [g.op("Gather", [window_first, w_rows]), home]),
                   g.op("Add", [g.op("Sub", [first, g.op("Mul", [home, g.i64(stride)])]),
                                g.i64(1)]))


def _char_offsets(g: Builder, texts, batch, w_rows, w_begins, w_ends):
    """(start, end) code-point offsets of each word from its byte offsets: a table of every
    text's character starts (and its end) by byte, one slot per byte."""
    chars, begins, ends, offsets = g.op("StringRegexSplitWithOffsets", [
        texts, g.const("(?s)(.)"), g.const("(?s)(.)")], 4, CONTRIB)
    rows = g.row_ids(offsets, g.op("Shape", [chars]))
    counts = g.counts(rows, batch)
    size = g.op("ScatterElements", [g.fill(batch, 0), rows, g.op("Sub", [ends, begins])],
                axis=0, reduction="add")
    slots = g.op("Add", [size, g.i64(1)])
    base = g.op("Sub", [g.op("CumSum", [slots, g.scalar(0)]), slots])
    table = g.op("ScatterElements", [
        g.fill(g.op("ReduceSum", [slots], keepdims=1), 0),
        g.op("Add", [g.op("Gather", [base, rows]), begins]), g.positions(rows, counts)], axis=0)
    table = g.op("ScatterElements", [table, g.op("Add", [base, size]), counts], axis=0)
    word_base = g.op("Gather", [base, w_rows])
    return tuple(g.op("Cast", [g.op("Gather", [table, g.op("Add", [word_base, b])])],
                      to=g.onnx.TensorProto.INT32) for b in (w_begins, w_ends))


def homes(g: Builder, ids, p_rows, p_counts, number, w_rows, batch, sp_model,
          max_seq_length: int, stride: int):
    """[N, 2] (window, position) in `_WINDOWS` of each word's tag, after the ids model's three
    inputs of every window: `ids`, `p_rows`, `p_counts` the pieces of `number` words and of one
    word more after them (dropped here), `w_rows` each word's text."""
    real = g.op("Less", [p_rows, number])
    ids, p_rows = (g.op("Compress", [v, real], axis=0) for v in (ids, p_rows))
    p_counts = g.op("Slice", [p_counts, g.i64(0), number])
    counts = g.op("Max", [p_counts, g.i64(1)])  # a word without pieces: one unknown piece
    w_first = g.op("Sub", [g.op("CumSum", [counts, g.scalar(0)]), counts])
    total = g.op("ReduceSum", [counts], keepdims=1)
    flat = g.op("ScatterElements", [
        g.fill(total, sp_model.unk_id()),
        g.op("Add", [g.op("Gather", [w_first, p_rows]), g.positions(p_rows, p_counts)]), ids],
        axis=0)
    n = g.op("ScatterElements", [g.fill(batch, 0), w_rows, counts], axis=0, reduction="add")
    first = g.op("Sub", [w_first, g.op("Gather", [g.op("Sub", [
        g.op("CumSum", [n, g.scalar(0)]), n]), w_rows])])
    window_first, count = _windows(g, flat, total, n, max_seq_length, stride,
                                   sp_model.PieceToId("[CLS]"), sp_model.PieceToId("[SEP]"))
    return _homes(g, first, n, window_first, count, w_rows, stride, max_seq_length)


def per_word(g: Builder, where, w_rows, w_counts, batch, values: dict) -> dict:
    """{output: name} of the per-word outputs, padded per row: `probabilities` and `tag_ids`
    (from `_WINDOWS` at `where`) and `values` ({output: (value [N], pad)}, int32)."""
    probabilities = g.op("GatherND", [_WINDOWS, where])  # [N, C]
    tag_ids = g.op("ArgMax", [probabilities], axis=-1, keepdims=0)
    width = g.op("ReduceMax", [w_counts], keepdims=1)
    shape = g.op("Concat", [batch, width], axis=0)
    at = g.pairs(w_rows, g.positions(w_rows, w_counts))
    classes = g.op("Slice", [g.op("Shape", [_WINDOWS]), g.i64(2), g.i64(3)])
    int32 = np.array([-1], np.int32)
    values = {"tag_ids": (g.op("Cast", [tag_ids], to=g.onnx.TensorProto.INT32), int32),
              "tag_index": (tag_ids, np.array([0], np.int64)), **values}
    out = {name: g.op("ScatterND", [g.op("Expand", [g.const(pad), shape]), at, value])
           for name, (value, pad) in values.items()}
    out["probabilities"] = g.op("ScatterND", [g.op("Expand", [
        g.const(np.array([0], np.float32)), g.op("Concat", [batch, width, classes], axis=0)]),
        at, probabilities])
    return out


def spliced(onnx, content: bytes, front, back, initializers, inputs, outputs) -> bytes:
    """The ids model (`content`, output `probabilities` renamed `_WINDOWS`) between the
    nodes `front` (which make its inputs) and `back` (which read its windows), giving
    `outputs` (value infos) alone."""
    model = onnx.load_from_string(content)
    if "probabilities" not in [o.name for o in model.graph.output]:
        raise ValueError("the ONNX file has no probabilities output")
    for node in model.graph.node:  # the ids model's output becomes the windows' values
        node.output[:] = [_WINDOWS if o == "probabilities" else o for o in node.output]
        node.input[:] = [_WINDOWS if i == "probabilities" else i for i in node.input]
    for info in model.graph.value_info:
        if info.name == "probabilities":
            info.name = _WINDOWS
    model.graph.node.extend(back)
    del model.graph.output[:]
    return onnx_text.merged(model.SerializeToString(), front, initializers, inputs, outputs)


def output_infos(onnx, names=TEXT_OUTPUTS) -> list:
    """The value infos of the file's outputs `names`."""
    string, floating = onnx.TensorProto.STRING, onnx.TensorProto.FLOAT
    types = {"words": string, "tags": string, "probabilities": floating}
    return [onnx.helper.make_tensor_value_info(
        name, types.get(name, onnx.TensorProto.INT32),
        ["batch", "words", "classes"][:3 if name == "probabilities" else 2]) for name in names]


def with_tagger(content: bytes, spm_model_file, do_lower_case: bool, max_seq_length: int,
                stride: int, label_names, vocab_file=None) -> bytes:
    """A token classifier's ids-in .onnx bytes (output `probabilities` [B, S, C]) → the file
    that takes `text_a` strings and gives tags per word (see the module; without
    `spm_model_file`, each word through `serving.onnx_wordpiece` with `vocab_file`)."""
    onnx = runtimes.load("onnx", "raw text in ONNX")
    g = Builder(onnx)
    texts, batch = "text_a", g.op("Shape", ["text_a"])
    words, w_begins, w_ends, offsets = g.op("StringRegexSplitWithOffsets", [
        texts, g.const(WHITESPACE), g.const("")], 4, CONTRIB)
    w_rows = g.row_ids(offsets, g.op("Shape", [words]))
    w_counts = g.counts(w_rows, batch)
    # One word more, dropped after: onnxruntime-extensions' SentencePiece op crashes the
    # process on an empty batch (a batch of texts without words).
    number = g.op("Shape", [words])
    padded = g.op("Concat", [words, g.const(["a"])], axis=0)
    if spm_model_file:
        sp_model, proto, fixup, search = onnx_text.model_parts(spm_model_file)
        ids, p_rows, p_counts = onnx_text.pieces(g, onnx_text.normalized(
            g, padded, do_lower_case), proto, fixup, search)
    else:
        ids, p_rows, p_counts, sp_model = onnx_wordpiece.word_pieces(
            g, vocab_file, do_lower_case, lambda v: onnx_wordpiece.code_points(g, padded, v),
            g.op("Shape", [padded]))
    where = homes(g, ids, p_rows, p_counts, number, w_rows, batch, sp_model, max_seq_length,
                  stride)
    before = len(g.nodes)
    starts, ends = _char_offsets(g, texts, batch, w_rows, w_begins, w_ends)
    pad = np.array([-1], np.int32)
    out = per_word(g, where, w_rows, w_counts, batch,
                   {"word_starts": (starts, pad), "word_ends": (ends, pad)})
    out["words"] = g.op("ScatterND", [g.op("Expand", [g.const([""]), g.op("Shape", [
        out["tag_ids"]])]), g.pairs(w_rows, g.positions(w_rows, w_counts)), words])
    out["tags"] = g.op("Gather", [g.const([str(t) for t in label_names] + [""]), g.op(
        "Where", [g.op("Less", [out["tag_ids"], g.const(np.array(0, np.int32))]),
                  g.i64(len(label_names)), out["tag_index"]])])
    for name in TEXT_OUTPUTS:
        g.op("Identity", [out[name]], [name])
    inputs = [onnx.helper.make_tensor_value_info("text_a", onnx.TensorProto.STRING, ["batch"])]
    return spliced(onnx, content, g.nodes[:before], g.nodes[before:], g.initializers, inputs,
                   output_infos(onnx))


def window_inputs(records) -> dict:
    """The three int32 ids inputs of `word_windows` records."""
    return {name: np.array([r[key] for r in records], np.int32)
            for name, key in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                              ("input_type_ids", "segment_ids"))}


def reference(texts, pieces, max_seq_length: int, stride: int, run) -> list:
    """Per text, {words, tag_ids, probabilities, word_starts, word_ends} (numpy) of albert-tf's
    windows of its words (`word_windows.text_windows` over `pieces`, a `WordPieces`) run
    through `run` (the three ids inputs → {"probabilities"}): what a text-in file must give."""
    records, homes = text_windows(texts, pieces, max_seq_length, stride)
    out = run(**window_inputs(records)) if records else {}
    result = []
    for text, home in zip(texts, homes):
        found = np.array([out["probabilities"][k, at] for k, at in home], np.float32)
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        result.append({"words": text.split(), "probabilities": found,
                       "tag_ids": np.argmax(found, -1) if home else np.zeros(0, np.int64),
                       "word_starts": [s for s, _ in spans], "word_ends": [e for _, e in spans]})
    return result


def compare(got: dict, want: list, label_names) -> dict:
    """{max_abs_diff, argmax_agreement, rows (words), texts, differ (the first text whose words,
    offsets, tags or padding differ, else None)} of a text-in file's outputs on the texts."""
    worst, agree, words, differ = 0.0, 0, 0, None
    for row, expected in enumerate(want):
        w = len(expected["words"])
        words += w
        if got["tag_ids"].shape[1] < w:
            differ = row if differ is None else differ
            continue
        tag_ids = got["tag_ids"][row]
        # The runner sends NUL_STANDIN for a NUL (the string ops stop at a NUL).
        same = ([str(x).replace(runtimes.NUL_STANDIN, "\x00") for x in got["words"][row][:w]]
                == expected["words"] and
                list(got["word_starts"][row][:w]) == expected["word_starts"] and
                list(got["word_ends"][row][:w]) == expected["word_ends"] and
                list(got["tags"][row][:w]) == [str(label_names[t]) for t in tag_ids[:w]] and
                (tag_ids[w:] == -1).all() and (got["probabilities"][row][w:] == 0).all())
        if w:
            worst = max(worst, float(np.max(np.abs(got["probabilities"][row][:w] -
                                                   expected["probabilities"]))))
            agree += int(np.sum(tag_ids[:w] == expected["tag_ids"]))
        if not same and differ is None:
            differ = row
    return {"max_abs_diff": worst, "argmax_agreement": round(agree / max(words, 1), 6),
            "rows": words, "texts": len(want), "differ": differ}
