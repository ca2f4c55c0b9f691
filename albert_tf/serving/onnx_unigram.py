"""SentencePiece's unigram search again in ONNX ops, with the sentencepiece wheel's tie-break.

onnxruntime-extensions' SentencepieceTokenizer (like tensorflow-text's op) keeps another of
two exactly equal-scoring segmentations than the wheel that albert-tf's tokenizer uses: "www"
after "://" or "." comes out "ww" + "w", the wheel's "w" + "ww". Whether two paths tie depends
on the float32 sum of every piece before, so no local rewrite is exact; as
`text.unigram.UnigramSearch` does in TensorFlow, the op's pieces are only the normalised text
here, searched again as the wheel searches it: the best float32 path score at each end
position, a tie going to the piece that starts first (the longest).

The op's pieces are cut into units at each unknown piece (a run of characters no piece
covers, which no other path covers either): each known stretch is searched, each unknown piece
kept. A first, dummy unit (dropped at the end) keeps every loop non-empty.
"""

from __future__ import annotations

import numpy as np

from albert_tf.serving.onnx_graph import CONTRIB, Builder
from albert_tf.text.unigram import read_unigram_vocab

# The text an unknown unit is searched as: one character that only the unknown piece matches.
UNKNOWN_MARK = "\ufdd0"


def searcher(model_proto: bytes, model_file):
    """`search(g, ids, rows, batch) → (ids, rows)` for a unigram model, else None (the op's
    own segmentation is kept: BPE, word, char, byte fallback)."""
    found = tables(model_proto, model_file)
    if found is None:
        return None

    def search(g: Builder, ids, rows, batch):
        return _search(g, ids, rows, *found)
    return search


def tables(model_proto: bytes, model_file):
    """(vocab, score of each id, piece string of each id) of a unigram model, else None."""
    vocab = read_unigram_vocab(model_proto, str(model_file))
    if vocab is None:
        return None
    size = max(max(vocab.ids), vocab.unknown_id) + 1
    scores = np.full(size, -np.inf, np.float32)
    scores[list(vocab.ids)] = vocab.scores
    scores[vocab.unknown_id] = vocab.unknown_score
    strings = [""] * size
    for piece, index in zip(vocab.pieces, vocab.ids):
        strings[index] = piece
    return vocab, scores, strings


def cuts(g: Builder, ids, rows, unknown_id):
    """(ids [T+1] with the dummy first, unit of each [T+1], count of units [1], row of each
    unit [U]): a unit starts at each unknown piece, after one, and at each row's start."""
    ids = g.op("Concat", [g.i64(unknown_id), ids], axis=0)
    rows = g.op("Concat", [g.i64(0), rows], axis=0)
    unknown = g.op("Equal", [ids, g.i64(unknown_id)])
    after = g.op("Concat", [g.const(np.array([True])),
                            g.op("Slice", [unknown, g.i64(0), g.i64(-1)])], axis=0)
    previous_row = g.op("Concat", [g.i64(-1), g.op("Slice", [rows, g.i64(0), g.i64(-1)])], axis=0)
    starts = g.op("Or", [g.op("Or", [unknown, after]),
                         g.op("Not", [g.op("Equal", [rows, previous_row])])])
    unit = g.op("Sub", [g.op("CumSum", [g.op("Cast", [starts], to=g.onnx.TensorProto.INT64),
                                        g.scalar(0)]), g.i64(1)])
    count = g.op("ReduceSum", [g.op("Cast", [starts], to=g.onnx.TensorProto.INT64)], keepdims=1)
    first = g.op("Compress", [g.arange(g.op("Shape", [ids])), starts], axis=0)
    return ids, unit, count, g.op("Gather", [rows, first])


def _units(g: Builder, ids, rows, unknown_id, strings):
    """(text [U], row [U]) of the units: the dummy, then each row's stretches of known pieces
    and each unknown piece, in order."""
    ids, unit, count, unit_rows = cuts(g, ids, rows, unknown_id)
    unknown = g.op("Equal", [ids, g.i64(unknown_id)])
    text = g.op("Where", [unknown, g.const([UNKNOWN_MARK]),
                          g.op("Gather", [g.const(np.array(strings, object)), ids])])
    return g.join_rows(text, unit, count), unit_rows, count


def _forward_body(g: Builder, width: int):
    """Scan body: state `recent` [U, K] (the best score at end e-1-k), inputs the scores and
    ids of the pieces ending at e [U, K] → new state, the chosen piece's length and id [U]."""
    body = Builder(g.onnx, g.prefix + "forward/", g)
    f32, i64 = g.onnx.TensorProto.FLOAT, g.onnx.TensorProto.INT64
    candidates = body.op("Add", ["recent", "score"])
    best = body.op("ReduceMax", [candidates], axes=[1], keepdims=1)
    index = body.op("Where", [body.op("Equal", [candidates, best]),
                              body.const(np.arange(width, dtype=np.int64)[None, :]),
                              body.i64(-1)])
    chosen = body.op("ReduceMax", [index], axes=[1], keepdims=1)  # a tie: the longest piece
    body.op("Concat", [best, body.op("Slice", ["recent", body.i64(0), body.i64(width - 1),
                                                body.i64(1)])], ["recent_out"], axis=1)
    body.op("Squeeze", [body.op("Add", [chosen, body.i64(1)]), body.i64(1)], ["length"])
    body.op("Squeeze", [body.op("GatherElements", ["piece", chosen], axis=1), body.i64(1)],
            ["chosen_id"])
    info = g.helper.make_tensor_value_info
    wide, one = ["units", width], ["units"]
    return body.body("forward", [info("recent", f32, wide), info("score", f32, wide),
                                 info("piece", i64, wide)],
                     [info("recent_out", f32, wide), info("length", i64, one),
                      info("chosen_id", i64, one)])


def _backward_body(g: Builder, lengths, ids):
    """Loop body: from each unit's end, step back one chosen piece (lengths, ids: [L+1, U])."""
    body = Builder(g.onnx, g.prefix + "backward/", g)
    i64, boolean = g.onnx.TensorProto.INT64, g.onnx.TensorProto.BOOL
    alive = body.op("Greater", ["end", body.i64(0)])
    at = body.op("Unsqueeze", ["end", body.i64(0)])
    step = body.op("Squeeze", [body.op("GatherElements", [lengths, at], axis=0), body.i64(0)])
    body.op("Squeeze", [body.op("GatherElements", [ids, at], axis=0), body.i64(0)], ["found"])
    body.op("Identity", [alive], ["kept"])
    end = body.op("Where", [alive, body.op("Sub", ["end", step]), body.i64(0)], ["end_out"])
    body.op("Greater", [body.op("ReduceMax", [end], keepdims=0), body.scalar(0)], ["more"])
    info = g.helper.make_tensor_value_info
    one = ["units"]
    return body.body("backward", [info("step", i64, []), info("go", boolean, []),
                                  info("end", i64, one)],
                     [info("more", boolean, []), info("end_out", i64, one),
                      info("found", i64, one), info("kept", boolean, one)])


def _search(g: Builder, ids, rows, vocab, scores, strings):
    width = vocab.max_piece_chars
    text, unit_rows, count = _units(g, ids, rows, vocab.unknown_id, strings)
    chars, owner = g.chars(text)
    lengths = g.counts(owner, count)
    dense = g.dense(chars, owner, lengths, count, g.const([""]))      # [U, L]
    span = g.op("Shape", [dense])
    units, columns = (g.op("Slice", [span, g.i64(k), g.i64(k + 1)]) for k in (0, 1))
    padded = g.op("Concat", [g.op("Expand", [g.const([[""]]), g.op("Concat", [
        units, g.i64(width - 1)], axis=0)]), dense], axis=1)
    windows, text_k = [], None
    for size in range(1, width + 1):  # window k: the piece of `size` characters ending at e
        start = width - size
        char = g.op("Slice", [padded, g.i64(start), g.op("Add", [columns, g.i64(start)]),
                              g.i64(1)])
        text_k = char if text_k is None else g.op("StringConcat", [char, text_k],
                                                  domain=CONTRIB)
        windows.append(g.op("Unsqueeze", [text_k, g.i64(2)]))
    windows = g.op("Concat", windows, axis=2)                          # [U, L, K]
    found = g.op("LabelEncoder", [windows], domain="ai.onnx.ml",
                 keys_strings=[*vocab.pieces, UNKNOWN_MARK],
                 values_int64s=[*vocab.ids, vocab.unknown_id], default_int64=-1)
    return choose(g, found, lengths, units, columns, unit_rows, vocab, scores)


def choose(g: Builder, found, lengths, units, columns, unit_rows, vocab, scores):
    """(ids, rows) of the best paths: `found` int64 [U, L, K] is the piece id (-1: none) of
    the window of k+1 characters ending at each unit's character e, `lengths` [U] each unit's
    characters, `units` / `columns` [1] U and L, `unit_rows` [U] each unit's row."""
    width = vocab.max_piece_chars
    end = g.op("Reshape", [g.arange(columns), g.i64(1, -1, 1)])
    size = g.const(np.arange(1, width + 1, dtype=np.int64).reshape(1, 1, -1))
    fits = g.op("And", [g.op("GreaterOrEqual", [g.op("Sub", [end, size]), g.i64(-1)]),
                        g.op("Less", [end, g.op("Reshape", [lengths, g.i64(-1, 1, 1)])])])
    found = g.op("Where", [fits, found, g.i64(-1)])
    # No one-character piece at a position: that character is an unknown piece.
    unknown = g.op("And", [g.op("And", [fits, g.op("Less", [found, g.i64(0)])]),
                           g.op("Equal", [size, g.i64(1)])])
    found = g.op("Where", [unknown, g.i64(vocab.unknown_id), found])
    score = g.op("Where", [g.op("GreaterOrEqual", [found, g.i64(0)]),
                           g.op("Gather", [g.const(scores), g.op("Max", [found, g.i64(0)])]),
                           g.const(np.array(-np.inf, np.float32))])
    recent = g.op("Concat", [g.fill(g.op("Concat", [units, g.i64(1)], axis=0), 0.0, np.float32),
                             g.fill(g.op("Concat", [units, g.i64(width - 1)], axis=0),
                                    -np.inf, np.float32)], axis=1)
    _, chosen_length, chosen_id = g.op(
        "Scan", [recent, g.op("Transpose", [score], perm=[1, 0, 2]),
                 g.op("Transpose", [found], perm=[1, 0, 2])], 3,
        body=_forward_body(g, width), num_scan_inputs=2)                # [L, U] each
    zero_row = g.fill(g.op("Concat", [g.i64(1), units], axis=0), 0)
    step_lengths = g.op("Concat", [zero_row, chosen_length], axis=0)    # [L+1, U]: end 0 first
    step_ids = g.op("Concat", [zero_row, chosen_id], axis=0)
    trips = g.op("Add", [g.op("Squeeze", [columns]), g.scalar(1)])
    _, found, kept = g.op("Loop", [trips, g.const(np.array(True)), lengths], 3,
                          body=_backward_body(g, step_lengths, step_ids))  # [S, U]
    steps = g.op("Slice", [g.op("Shape", [found]), g.i64(0), g.i64(1)])
    backwards = g.op("Sub", [g.op("Sub", [steps, g.i64(1)]), g.arange(steps)])
    found = g.op("Reshape", [g.op("Transpose", [g.op("Gather", [found, backwards])]),
                             g.i64(-1)])
    kept = g.op("Reshape", [g.op("Transpose", [g.op("Gather", [kept, backwards])]), g.i64(-1)])
    owner = g.op("Reshape", [g.op("Expand", [g.op("Unsqueeze", [g.arange(units), g.i64(1)]),
                                             g.op("Concat", [units, steps], axis=0)]),
                             g.i64(-1)])
    kept = g.op("And", [kept, g.op("Greater", [owner, g.i64(0)])])    # the dummy unit dropped
    return (g.op("Compress", [found, kept], axis=0),
            g.op("Gather", [unit_rows, g.op("Compress", [owner, kept], axis=0)]))
