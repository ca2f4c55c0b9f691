"""Raw text inside an ONNX file for a WordPiece model (a `vocab_file`, the original's Chinese
ALBERT models): the text → ids graph, id-exact with albert-tf's `FullTokenizer(vocab_file)`
and packing, as `serving.onnx_text` is for SentencePiece.

    graph = tokenizer_model(vocab_file, do_lower_case, max_seq_length)
    text_file = with_tokenizer(ids_file_bytes, vocab_file, do_lower_case, max_seq_length)

Everything after the code points is standard numeric ops (`pieces`, which OpenVINO's ONNX
frontend reads too: `serving.openvino_wordpiece`), on the tables of
`serving.wordpiece_tables`:

1. each code point's class, casing and normalisation entry (a two-level table lookup); the
   dropped characters out; when lower-casing, the final sigmas (the nearest character before
   and after that is not case-ignorable, within the row), each character expanded into its
   normalised code points;
2. words: runs of characters between spaces, a punctuation character or a CJK ideograph's
   characters a word of their own;
3. for every character and every length up to the longest token, the window's hash (with "##"
   before it past a word's first character), looked up in a perfect hash of the vocabulary
   and checked code point by code point: the longest token at each place;
4. the greedy walk (a Loop over all words at once): from each word's start, the longest token,
   then on from its end; a word that a walk cannot cover, or of more than 200 characters, is
   [UNK]; then `onnx_text.pack`.

The ONNX file reads the code points of its strings with onnxruntime-extensions'
StringRegexSplitWithOffsets ("(?s)(.)") and a LabelEncoder of every character of planes 0-3
and 14 and of the vocabulary (any other is unknown: NORMAL, in no token). A NUL is sent as
`runtimes.NUL_STANDIN` (the string ops stop at a NUL), which the tables drop as NUL is.
"""

from __future__ import annotations

import numpy as np

from albert_tf.serving import onnx_text, runtimes
from albert_tf.serving import wordpiece_tables as wt
from albert_tf.serving.onnx_graph import Builder
from albert_tf.tokenization.wordpiece import (MAX_INPUT_CHARS_PER_WORD, UNK_TOKEN,
                                              WORDPIECE_SPECIAL_TOKENS, load_vocab)

PURPOSE = "raw text in ONNX"


class Tables:
    """The graph's constants, made once for both texts."""

    def __init__(self, g: Builder, vocab, lower: bool):
        codes, lengths, starts, data = wt.char_codes(bool(lower))
        self.lower = bool(lower)
        self.pages = [g.const(a) for a in wt.paged(codes)]
        self.out_pages = [g.const(a) for a in wt.paged(wt.out_codes())]
        self.lengths, self.starts, self.data = (g.const(a) for a in (lengths, starts, data))
        keys = self.keys = wt.vocab_keys(vocab, MAX_INPUT_CHARS_PER_WORD)
        self.multiplier, self.offset, self.size, self.slot, self.ids, self.key_lengths = (
            g.const(a) for a in (keys.multiplier, keys.offset, keys.size, keys.slot, keys.ids,
                                 keys.lengths))
        self.continued = g.const(keys.continued)
        self.points = g.const(keys.points)
        self.unk, self.cls, self.sep = (vocab[t] for t in (UNK_TOKEN, "[CLS]", "[SEP]"))


def lookup(g: Builder, pages, cp):
    """The paged table's value (int64) at each code point (int64; below 0: U+10FFFF's)."""
    cp = g.op("Where", [g.op("Less", [cp, g.scalar(0)]), g.scalar(wt.LAST), cp])
    page = g.op("Gather", [pages[0], g.op("Div", [cp, g.scalar(wt.PAGE)])])
    at = g.op("Add", [g.op("Mul", [page, g.scalar(wt.PAGE)]), _mod(g, [cp, g.scalar(
        wt.PAGE)])])
    return g.op("Cast", [g.op("Gather", [pages[1], at])], to=g.onnx.TensorProto.INT64)


def _mod(g: Builder, operands):
    """a mod b of two non-negative int64 values as Sub, Div and Mul: OpenVINO's CPU plugin
    computes Mod in float32 (568462 * 997 mod 1048573 came out 527168, not 527194)."""
    a, b = operands
    return g.op("Sub", [a, g.op("Mul", [g.op("Div", [a, b]), b])])


def _shifted(g: Builder, value, fill):
    """value[j - 1] at j (`fill` at 0)."""
    return g.op("Concat", [fill, g.op("Slice", [value, g.i64(0), g.i64(-1)])], axis=0)


def _is(g: Builder, value, number):
    return g.op("Equal", [value, g.scalar(number)])


def _final_sigma(g: Builder, cp, rows, case):
    """bool [N]: each character's sigma is final (CPython's Final_Sigma rule within a row)."""
    plain = g.op("Not", [_is(g, case, wt.IGNORABLE)])
    count = g.op("Cast", [plain], to=g.onnx.TensorProto.INT64)
    inclusive = g.op("CumSum", [count, g.scalar(0)])
    before = g.op("Sub", [inclusive, count])
    where = g.op("Compress", [g.arange(g.op("Shape", [cp])), plain], axis=0)
    total = g.op("Shape", [where])

    def cased_at(index, exists):
        j = g.op("Gather", [where, index])
        same = g.op("Equal", [g.op("Gather", [rows, j]), rows])
        return g.op("And", [exists, g.op("And", [same, _is(g, g.op("Gather", [case, j]),
                                                           wt.CASED)])])
    previous = cased_at(g.op("Max", [g.op("Sub", [before, g.i64(1)]), g.i64(0)]),
                        g.op("Greater", [before, g.i64(0)]))
    following = cased_at(g.op("Min", [inclusive, g.op("Sub", [total, g.i64(1)])]),
                         g.op("Less", [inclusive, total]))
    return g.op("And", [previous, g.op("Not", [following])])


def _expanded(g: Builder, t: Tables, cp, rows):
    """(code points, row, source character, from a CJK character, a space) of the kept
    characters' normalised outputs."""
    code = lookup(g, t.pages, cp)
    kind = _mod(g, [code, g.scalar(4)])
    keep = g.op("Not", [_is(g, kind, wt.DROP)])
    cp, rows, code, kind = (g.op("Compress", [v, keep], axis=0) for v in (cp, rows, code, kind))
    if not t.lower:
        space = g.op("Or", [_is(g, kind, wt.SPACE), _is(g, lookup(g, t.out_pages, cp),
                                                          wt.SPACE)])
        return cp, rows, g.arange(g.op("Shape", [cp])), _is(g, kind, wt.CJK), space
    case = _mod(g, [g.op("Div", [code, g.scalar(4)]), g.scalar(4)])
    entry = g.op("Div", [code, g.scalar(16)])
    sigma = g.op("Where", [_final_sigma(g, cp, rows, case), g.scalar(0x3C2), g.scalar(0x3C3)])
    cp = g.op("Where", [_is(g, cp, wt.SIGMA), sigma, cp])
    count = g.op("Gather", [t.lengths, entry])
    stops = g.op("CumSum", [count, g.scalar(0)])
    offsets = g.op("Concat", [g.i64(0), stops], axis=0)
    total = g.op("Slice", [offsets, g.i64(-1), g.i64(np.iinfo(np.int64).max)])
    owner = g.row_ids(offsets, total)
    place = g.op("Sub", [g.arange(total), g.op("Gather", [g.op("Sub", [stops, count]), owner])])
    own_entry = g.op("Gather", [entry, owner])
    mapped = g.op("Gather", [t.data, g.op("Add", [g.op("Gather", [t.starts, own_entry]), place])])
    out = g.op("Where", [g.op("Greater", [own_entry, g.scalar(0)]), mapped,
                         g.op("Gather", [cp, owner])])
    own_kind = g.op("Gather", [kind, owner])
    space = g.op("Or", [_is(g, own_kind, wt.SPACE), _is(g, lookup(g, t.out_pages, out),
                                                          wt.SPACE)])
    return out, g.op("Gather", [rows, owner]), owner, _is(g, own_kind, wt.CJK), space


def _words(g: Builder, t: Tables, cp, rows):
    """(code points [J], row [J], starts a word [J]) of the words' characters."""
    cp, rows, source, cjk, space = _expanded(g, t, cp, rows)
    spaces = g.op("CumSum", [g.op("Cast", [space], to=g.onnx.TensorProto.INT64), g.scalar(0)])
    keep = g.op("Not", [space])
    cp, rows, source, cjk, spaces = (g.op("Compress", [v, keep], axis=0)
                                     for v in (cp, rows, source, cjk, spaces))
    punct = _is(g, lookup(g, t.out_pages, cp), wt.PUNCT)
    false = g.const(np.array([False]))
    start = g.op("Not", [g.op("Equal", [rows, _shifted(g, rows, g.i64(-1))])])
    for cut in (g.op("Not", [g.op("Equal", [spaces, _shifted(g, spaces, g.i64(-1))])]), punct,
                _shifted(g, punct, false),
                g.op("And", [g.op("Or", [cjk, _shifted(g, cjk, false)]), g.op(
                    "Not", [g.op("Equal", [source, _shifted(g, source, g.i64(-1))])])])):
        start = g.op("Or", [start, cut])
    return cp, rows, start


def _longest(g: Builder, t: Tables, cp, word_end, start):
    """(length, id) of the longest token at each character (0: none)."""
    keys = t.keys
    last = g.op("Sub", [g.op("Shape", [cp]), g.i64(1)])
    here = g.arange(g.op("Shape", [cp]))
    h = [g.op("Where", [start, g.scalar(wt.HASH_SEED), g.scalar(p)]) for p in keys.prefixes]
    hashes, valid, window = [[], []], [], []
    for k in range(keys.width):
        at = g.op("Add", [here, g.scalar(k)])
        char = g.op("Gather", [cp, g.op("Min", [at, last])])
        window.append(g.op("Unsqueeze", [char, g.i64(1)]))
        for n, base in enumerate(keys.bases):
            h[n] = _mod(g, [g.op("Add", [g.op("Mul", [h[n], g.scalar(base)]), g.op(
                "Add", [char, g.scalar(1)])]), g.scalar(wt.HASH_MOD)])
            hashes[n].append(g.op("Unsqueeze", [h[n], g.i64(1)]))
        valid.append(g.op("Unsqueeze", [g.op("Less", [at, word_end]), g.i64(1)]))
    first, second, valid = (g.op("Concat", v, axis=1) for v in (*hashes, valid))  # [J, K]
    window = g.op("Unsqueeze", [g.op("Concat", window, axis=1), g.i64(1)])     # [J, 1, K]
    bucket = _mod(g, [first, g.scalar(len(keys.size))])
    a, c = (g.op("Gather", [g.op("Gather", [t.multiplier, g.scalar(n)], axis=1), bucket])
            for n in (0, 1))
    place = _mod(g, [g.op("Add", [
        _mod(g, [g.op("Mul", [a, second]), g.scalar(wt.HASH_MOD)]),
        _mod(g, [g.op("Mul", [c, first]), g.scalar(wt.HASH_MOD)])]),
        g.op("Gather", [t.size, bucket])])
    key = g.op("Gather", [t.slot, g.op("Add", [g.op("Gather", [t.offset, bucket]), place])])
    found = g.op("GreaterOrEqual", [key, g.scalar(0)])
    key = g.op("Max", [key, g.scalar(0)])
    sizes = np.arange(1, keys.width + 1, dtype=np.int64)
    inside = np.arange(keys.width)[None, :] < sizes[:, None]                   # [K, K]
    want = g.op("Where", [g.const(inside[None]), window, g.scalar(-2)])        # [J, K, K]
    points = g.op("Cast", [g.op("Gather", [t.points, key])], to=g.onnx.TensorProto.INT64)
    same = g.op("ReduceMin", [g.op("Cast", [g.op("Equal", [points, want])],
                                   to=g.onnx.TensorProto.INT32)], axes=[2], keepdims=0)
    match = g.op("And", [g.op("And", [found, valid]), g.op("And", [
        g.op("Equal", [g.op("Gather", [t.key_lengths, key]), g.const(sizes[None])]),
        g.op("Equal", [g.op("Gather", [t.continued, key]), g.op("Unsqueeze", [
            g.op("Not", [start]), g.i64(1)])])])])
    match = g.op("And", [match, g.op("Equal", [same, g.const(np.array(1, np.int32))])])
    length = g.op("ReduceMax", [g.op("Where", [match, g.const(sizes[None]), g.scalar(0)])],
                  axes=[1], keepdims=1)
    chosen = g.op("GatherElements", [key, g.op("Max", [g.op("Sub", [length, g.i64(1)]),
                                                      g.i64(0)])], axis=1)
    return (g.op("Squeeze", [length, g.i64(1)]),
            g.op("Squeeze", [g.op("Gather", [t.ids, chosen]), g.i64(1)]))


def _walk_body(g: Builder, lengths, ids, end):
    """Loop body: each word's next token from `at` (state), the walk ending at `end`."""
    body = Builder(g.onnx, g.prefix + "walk/", g)
    i64, boolean = g.onnx.TensorProto.INT64, g.onnx.TensorProto.BOOL
    alive = body.op("Less", ["at", end])
    here = body.op("Min", ["at", body.op("Sub", [body.op("Shape", [lengths]), body.i64(1)])])
    step = body.op("Gather", [lengths, here])
    ok = body.op("And", [alive, body.op("Greater", [step, body.scalar(0)])], ["ok"])
    body.op("And", [alive, body.op("Not", [ok])], ["bad"])
    body.op("Gather", [ids, here], ["token"])
    after = body.op("Where", [ok, body.op("Add", ["at", step]), end], ["at_out"])
    body.op("Greater", [body.op("ReduceMax", [body.op("Cast", [body.op(
        "Less", [after, end])], to=i64)], keepdims=0), body.scalar(0)], ["more"])
    info = g.helper.make_tensor_value_info
    # No dim name: onnxruntime takes a name for one size, and the two texts' walks have
    # others (it reused a [1] buffer for a [255] value).
    one = [None]
    return body.body("walk", [info("step", i64, []), info("go", boolean, []),
                              info("at", i64, one)],
                     [info("more", boolean, []), info("at_out", i64, one),
                      info("token", i64, one), info("ok", boolean, one),
                      info("bad", boolean, one)])


def pieces(g: Builder, t: Tables, cp, rows, batch):
    """(ids, row of each, count per row [batch]) of WordPiece on the texts' code points (`cp`
    int64 [C], below 0 for a character in no table and no token; `rows` [C])."""
    cp = g.op("Concat", [cp, g.i64(ord("a"))], axis=0)  # a dummy row: never an empty batch
    rows = g.op("Concat", [rows, batch], axis=0)
    cp, rows, start = _words(g, t, cp, rows)
    total = g.op("Shape", [cp])
    first = g.op("Compress", [g.arange(total), start], axis=0)
    end = g.op("Concat", [g.op("Slice", [first, g.i64(1), g.i64(np.iinfo(np.int64).max)]),
                          total], axis=0)
    word_end = g.op("Gather", [end, g.op("Sub", [g.op("CumSum", [g.op(
        "Cast", [start], to=g.onnx.TensorProto.INT64), g.scalar(0)]), g.i64(1)])])
    length, token = _longest(g, t, cp, word_end, start)
    chars = g.op("Sub", [end, first])
    too_long = g.op("Greater", [chars, g.scalar(MAX_INPUT_CHARS_PER_WORD)])
    trips = g.op("Add", [g.op("ReduceMax", [chars], keepdims=0), g.scalar(1)])
    at = g.op("Where", [too_long, end, first])
    _, tokens, ok, bad = g.op("Loop", [trips, g.const(np.array(True)), at], 4,
                              body=_walk_body(g, length, token, end))            # [S, W]
    unknown = g.op("Or", [too_long, g.op("Cast", [g.op("ReduceMax", [g.op(
        "Cast", [bad], to=g.onnx.TensorProto.INT32)], axes=[0], keepdims=0)],
        to=g.onnx.TensorProto.BOOL)])
    step = g.op("Unsqueeze", [g.arange(g.op("Slice", [g.op("Shape", [ok]), g.i64(0),
                                                       g.i64(1)])), g.i64(1)])
    lone = g.op("And", [unknown, g.op("Equal", [step, g.scalar(0)])])          # [S, W]
    kept = g.op("Or", [g.op("And", [ok, g.op("Not", [unknown])]), lone])
    value = g.op("Where", [unknown, g.scalar(t.unk), tokens])
    word_rows = g.op("Expand", [g.op("Gather", [rows, first]), g.op("Shape", [ok])])
    flat = [g.op("Reshape", [g.op("Transpose", [v], perm=[1, 0]), g.i64(-1)])
            for v in (value, word_rows, kept)]
    ids, rows = (g.op("Compress", [v, flat[2]], axis=0) for v in flat[:2])
    real = g.op("Less", [rows, batch])
    ids, rows = (g.op("Compress", [v, real], axis=0) for v in (ids, rows))
    return ids, rows, g.counts(rows, batch)


class Specials:
    """The ids `onnx_tagger.homes` asks a SentencePiece model for, of a WordPiece vocab."""

    def __init__(self, vocab):
        self.vocab = vocab

    def unk_id(self) -> int:
        return self.vocab[UNK_TOKEN]

    def PieceToId(self, piece: str) -> int:  # noqa: N802 - SentencePiece's name
        return self.vocab[piece]


def word_pieces(g: Builder, vocab_file, lower: bool, cp_rows, number):
    """(ids, word of each, count per word, `Specials`) of a token classifier's `number` words;
    `cp_rows(vocab)` gives their (code points, word of each)."""
    vocab = load_vocab(vocab_file, WORDPIECE_SPECIAL_TOKENS)
    cp, rows = cp_rows(vocab)
    return (*pieces(g, Tables(g, vocab, lower), cp, rows, number), Specials(vocab))


def code_points(g: Builder, texts, vocab):
    """(code point [C], row [C]) of [N] strings (onnxruntime-extensions' split, see the
    module)."""
    chars, rows = g.chars(texts)
    known = sorted(set(wt.code_points()) | {ord(c) for t in vocab for c in t})
    cp = g.op("LabelEncoder", [chars], domain="ai.onnx.ml",
              keys_strings=[chr(c).encode("utf-8") for c in known],
              values_int64s=known, default_int64=-1)
    return cp, rows


def tokenizer_graph(vocab_file, do_lower_case: bool, max_seq_length: int):
    """(nodes, initializers, inputs, outputs) of the text → ids graph (see the module)."""
    onnx = runtimes.load("onnx", PURPOSE)
    g = Builder(onnx)
    vocab = load_vocab(vocab_file, WORDPIECE_SPECIAL_TOKENS)
    t = Tables(g, vocab, do_lower_case)
    batch = g.op("Shape", ["text_a"])
    text_b = g.op("Expand", ["text_b", batch])
    # Both texts' characters through one table (its 266,000 keys once in the file).
    cp, rows = code_points(g, g.op("Concat", ["text_a", text_b], axis=0), vocab)
    second = g.op("GreaterOrEqual", [rows, batch])
    found = []
    for keep, shift in ((g.op("Not", [second]), g.i64(0)), (second, batch)):
        found.append(pieces(g, t, g.op("Compress", [cp, keep], axis=0), g.op("Sub", [
            g.op("Compress", [rows, keep], axis=0), shift]), batch))
    onnx_text.pack(g, found[0], found[1], t.cls, t.sep, max_seq_length, batch)
    helper, string = onnx.helper, onnx.TensorProto.STRING
    inputs = [helper.make_tensor_value_info("text_a", string, ["batch"]),
              helper.make_tensor_value_info("text_b", string, ["batch_b"])]
    return g.nodes, g.initializers, inputs, onnx_text.outputs_info(onnx, max_seq_length)


def tokenizer_model(vocab_file, do_lower_case: bool, max_seq_length: int):
    """The text → ids graph as a ModelProto of its own."""
    return onnx_text.standalone(tokenizer_graph(vocab_file, do_lower_case, max_seq_length),
                                "albert_wordpiece")


def with_tokenizer(content: bytes, vocab_file, do_lower_case: bool, max_seq_length: int) -> bytes:
    """An ids-in .onnx file's bytes → the same model taking `text_a` (+ `text_b`) strings."""
    nodes, initializers, inputs, _ = tokenizer_graph(vocab_file, do_lower_case, max_seq_length)
    return onnx_text.merged(content, nodes, initializers, inputs)
