"""Raw text inside an ONNX file: the text → ids graph, id-exact with albert-tf's tokenizer.

    graph = tokenizer_model(spm_model_file, do_lower_case, max_seq_length)   # text_a, text_b →
    # input_word_ids, input_mask, input_type_ids (int32 [batch, max_seq_length])
    text_file = with_tokenizer(ids_file_bytes, spm_model_file, do_lower_case, max_seq_length)

The graph (tables: `serving.onnx_text_tables`) runs standard ops and onnxruntime-extensions'
string ops, so a file needs `onnxruntime` + `onnxruntime_extensions` and nothing else:

1. each text split into its characters (StringRegexSplitWithOffsets, "(?s)(.)"), each mapped
   through the normalisation table (ai.onnx.ml LabelEncoder; a character the table does not
   hold keeps itself), joined back (StringJoin); when lower-casing, the final-sigma rewrite
   (StringRegexReplace);
2. SentencepieceTokenizer with the model file itself (the SentencePiece library's own
   normaliser), its pieces searched again with the wheel's tie-break (`serving.onnx_unigram`);
3. the original's digit-comma fix-up as an id table (Gather, the -1 padding dropped);
4. `tokenization.pack_pair`'s packing: `[CLS] a [SEP] (b [SEP])`, longest-first truncation
   (B on ties), segment ids and mask, zero-padded to max_seq_length. `text_b` is [batch] or
   [1] (one value for every row: [""] for single texts); an empty or whitespace-only `text_b`
   packs a single text, as `runtime_text.pack_texts` does.

Measured (bench/onnx_tokenizer_probe.py): the ids of albert-tf's tokenizer on 1,981 texts, two
models, cased and uncased, single and pair, but one limit: onnxruntime-extensions' string ops
read a string up to its first NUL, so a text holding U+0000 is cut there
(`runtimes.OnnxTextRunner` sends `runtimes.NUL_STANDIN` in its place, which SentencePiece
reads as the same unknown character).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from albert_tf.serving import onnx_unigram, runtimes
from albert_tf.serving.onnx_graph import CONTRIB, Builder
from albert_tf.serving.onnx_text_tables import (SIGMA, UNCHANGED, char_table, digit_comma_table,
                                                final_sigma_pattern)
from albert_tf.tokenization.sentencepiece import load_sentencepiece

TEXT_INPUTS = ("text_a", "text_b")
# A fresh process runs the files: onnxruntime-extensions' SentencePiece op crashes, and its
# regex split gives whole strings, in a process that loaded TensorFlow before it (their
# protobuf and RE2 copies clash); imported first, both work.
# OpenVINO's text-in files (`serving.openvino_text`) run there too: {format: (the package
# imported first, its runner in `serving.runtimes`)}.
FRESH_RUNNERS = {"onnx": ("onnxruntime_extensions", "OnnxTextRunner"),
                 "openvino": ("openvino_tokenizers", "OpenVinoTextRunner")}
_FRESH = """import importlib, json, sys
job = json.load(open(sys.argv[1], encoding="utf-8"))
importlib.import_module(job["first"])
import numpy as np
from albert_tf.serving import runtimes
out = {}
for kind, path in job["paths"].items():
    run = getattr(runtimes, job["runner"])(path, job["max_seq_length"])
    for k, (texts, pairs) in enumerate(job["groups"]):
        for name, value in run(texts, pairs).items():  # strings as numpy's, not pickled
            out[f"{kind}::{k}::{name}"] = value.astype(str) if value.dtype == object else value
np.savez(sys.argv[2], **out)
assert "tensorflow" not in sys.modules
"""
OUTPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def normalized(g: Builder, texts, lower: bool):
    """[N] strings → the same, normalised as `preprocess_text` (whitespace left for
    SentencePiece to squeeze)."""
    chars, rows = g.chars(texts)
    table = char_table(lower)
    mapped = g.op("LabelEncoder", [chars], domain="ai.onnx.ml", keys_strings=list(table),
                  values_strings=list(table.values()), default_string=UNCHANGED)
    unchanged = g.op("Expand", [g.const([UNCHANGED]), g.op("Shape", [mapped])])
    same = g.op("StringEqual", [mapped, unchanged], domain=CONTRIB)
    joined = g.join_rows(g.op("Where", [same, chars, mapped]), rows, g.op("Shape", [texts]))
    if lower:
        joined = g.op("StringRegexReplace", [joined, g.const(final_sigma_pattern()),
                                             g.const("\\1\u03c2\\2")], domain=CONTRIB)
        joined = g.op("StringRegexReplace", [joined, g.const(SIGMA), g.const("\u03c3")],
                      domain=CONTRIB)
    return joined


def pieces(g: Builder, texts, proto, fixup, search):
    """(ids [T] int64, row of each [T], count per row [N]) of SentencePiece (the wheel's
    segmentation: `onnx_unigram.search`), then the digit-comma fix-up."""
    defaults = [g.const(np.array([0], np.int64)), g.const(np.array([0.0], np.float32))]
    defaults += [g.const(np.array([False])) for _ in range(4)]
    ids, offsets = g.op("SentencepieceTokenizer", [texts, *defaults], 2, CONTRIB, model=proto)
    ids = g.op("Cast", [ids], to=g.onnx.TensorProto.INT64)
    rows = g.row_ids(offsets, g.op("Shape", [ids]))
    batch = g.op("Shape", [texts])
    if search is not None:
        ids, rows = search(g, ids, rows, batch)
    return fixed(g, ids, rows, batch, fixup)


def fixed(g: Builder, ids, rows, batch, fixup):
    """(ids, rows, count per row) after the digit-comma fix-up (`fixup`: its id table)."""
    if fixup.shape[1] > 1:
        table = g.op("Gather", [g.const(fixup.astype(np.int64)), ids])
        keep = g.op("Reshape", [g.op("GreaterOrEqual", [table, g.i64(0)]), g.i64(-1)])
        ids = g.op("Compress", [g.op("Reshape", [table, g.i64(-1)]), keep], axis=0)
        rows = g.op("Expand", [g.op("Unsqueeze", [rows, g.i64(1)]), g.op("Shape", [table])])
        rows = g.op("Compress", [g.op("Reshape", [rows, g.i64(-1)]), keep], axis=0)
    return ids, rows, g.counts(rows, batch)


def place(g: Builder, ids, rows, counts, keep_count, first):
    """ScatterND indices [K, 2] and ids [K] of the kept pieces: row, `first[row]` + j."""
    j = g.positions(rows, counts)
    keep = g.op("Less", [j, g.op("Gather", [keep_count, rows])])
    where = g.pairs(rows, g.op("Add", [j, g.op("Gather", [first, rows])]))
    return g.op("Compress", [where, keep], axis=0), g.op("Compress", [ids, keep], axis=0)


def model_parts(spm_model_file):
    """(the SentencePiece model, its proto, the digit-comma table, the unigram search) that
    `pieces` takes (the token classifier's graph, `serving.onnx_tagger`, takes them too)."""
    sp_model = load_sentencepiece(spm_model_file)
    proto = sp_model.serialized_model_proto()
    return (sp_model, proto, digit_comma_table(sp_model),
            onnx_unigram.searcher(proto, spm_model_file))


def tokenizer_graph(spm_model_file, do_lower_case: bool, max_seq_length: int):
    """(nodes, initializers, inputs, outputs) of the text → ids graph (see the module)."""
    onnx = runtimes.load("onnx", "raw text in ONNX")
    g = Builder(onnx)
    sp_model, proto, fixup, search = model_parts(spm_model_file)
    cls_id, sep_id = sp_model.PieceToId("[CLS]"), sp_model.PieceToId("[SEP]")
    text_b = g.op("Expand", ["text_b", g.op("Shape", ["text_a"])])
    a_ids, a_rows, a_counts = pieces(g, normalized(g, "text_a", do_lower_case), proto, fixup,
                                     search)
    b_ids, b_rows, b_counts = pieces(g, normalized(g, text_b, do_lower_case), proto, fixup,
                                     search)
    pack(g, (a_ids, a_rows, a_counts), (b_ids, b_rows, b_counts), cls_id, sep_id,
         max_seq_length, g.op("Shape", ["text_a"]))
    helper, string = onnx.helper, onnx.TensorProto.STRING
    inputs = [helper.make_tensor_value_info("text_a", string, ["batch"]),
              helper.make_tensor_value_info("text_b", string, ["batch_b"])]
    return g.nodes, g.initializers, inputs, outputs_info(onnx, max_seq_length)


def outputs_info(onnx, max_seq_length: int):
    return [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.INT32,
                                               ["batch", max_seq_length]) for n in OUTPUTS]


def pack(g: Builder, a, b, cls_id: int, sep_id: int, max_seq_length: int, batch) -> None:
    """`OUTPUTS` of the two texts' pieces (`a`, `b`: ids, row of each, count per row) as
    `tokenization.pack_pair` packs them; `batch`: int64 [1]."""
    (a_ids, a_rows, a_counts), (b_ids, b_rows, b_counts) = a, b
    # tokenization.pack_pair's lengths (onnx_text_tables.truncated_lengths).
    budget = max_seq_length - 3
    pair_a = g.op("Min", [a_counts, g.op("Max", [g.op("Sub", [g.i64(budget), b_counts]),
                                                 g.i64((budget + 1) // 2)])])
    pair_b = g.op("Min", [b_counts, g.op("Sub", [g.i64(budget), pair_a])])
    has_b = g.op("Greater", [b_counts, g.i64(0)])
    keep_a = g.op("Where", [has_b, pair_a, g.op("Min", [a_counts, g.i64(max_seq_length - 2)])])
    keep_b = g.op("Where", [has_b, pair_b, g.i64(0)])
    second = g.op("Greater", [keep_b, g.i64(0)])
    b_first = g.op("Add", [keep_a, g.i64(2)])
    total = g.op("Add", [b_first, g.op("Where", [second, g.op("Add", [keep_b, g.i64(1)]),
                                                 g.i64(0)])])
    a_where, a_kept = place(g, a_ids, a_rows, a_counts, keep_a,
                            g.op("Expand", [g.i64(1), g.op("Shape", [keep_a])]))
    b_where, b_kept = place(g, b_ids, b_rows, b_counts, keep_b, b_first)
    row = g.arange(batch)

    def at(column, ids):
        return g.pairs(row, column), ids

    cls_where, cls = at(g.op("Mul", [row, g.i64(0)]), g.op("Expand", [g.i64(cls_id), batch]))
    sep_where, sep = at(g.op("Add", [keep_a, g.i64(1)]), g.op("Expand", [g.i64(sep_id), batch]))
    end_where, end = at(g.op("Sub", [total, g.i64(1)]), sep)
    end_where = g.op("Compress", [end_where, second], axis=0)
    end = g.op("Compress", [end, second], axis=0)
    where = g.op("Concat", [cls_where, sep_where, end_where, a_where, b_where], axis=0)
    values = g.op("Concat", [cls, sep, end, a_kept, b_kept], axis=0)
    zeros = g.fill(g.op("Concat", [batch, g.i64(max_seq_length)], axis=0), 0)
    int32 = g.onnx.TensorProto.INT32
    g.op("Cast", [g.op("ScatterND", [zeros, where, values])], ["input_word_ids"], to=int32)
    column = g.op("Unsqueeze", [g.arange(g.i64(max_seq_length)), g.i64(0)])
    inside = g.op("Less", [column, g.op("Unsqueeze", [total, g.i64(1)])])
    g.op("Cast", [inside], ["input_mask"], to=int32)
    in_b = g.op("And", [inside, g.op("GreaterOrEqual",
                                     [column, g.op("Unsqueeze", [b_first, g.i64(1)])])])
    g.op("Cast", [in_b], ["input_type_ids"], to=int32)


OPSETS = {"": 17, "ai.onnx.ml": 2, CONTRIB: 1}


def tokenizer_model(spm_model_file, do_lower_case: bool, max_seq_length: int):
    """The text → ids graph as a ModelProto of its own."""
    return standalone(tokenizer_graph(spm_model_file, do_lower_case, max_seq_length))


def standalone(parts, name: str = "albert_tokenizer"):
    """A ModelProto of a text graph's (nodes, initializers, inputs, outputs)."""
    onnx = runtimes.load("onnx", "raw text in ONNX")
    nodes, initializers, inputs, outputs = parts
    graph = onnx.helper.make_graph(nodes, name, inputs, outputs, initializers)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(d, v)
                                                        for d, v in OPSETS.items()])


def with_tokenizer(content: bytes, spm_model_file, do_lower_case: bool,
                   max_seq_length: int) -> bytes:
    """An ids-in .onnx file's bytes → the same model taking `text_a` (+ `text_b`) strings."""
    nodes, initializers, inputs, _ = tokenizer_graph(spm_model_file, do_lower_case,
                                                     max_seq_length)
    return merged(content, nodes, initializers, inputs)


def merged(content: bytes, nodes, initializers, inputs, outputs=()) -> bytes:
    """An ids-in .onnx file's bytes with a graph (`nodes`, `initializers`, `inputs`) that
    makes its inputs put before it (`outputs`: more of its values to output)."""
    onnx = runtimes.load("onnx", "raw text in ONNX")
    model = onnx.load_from_string(content)
    graph = model.graph
    ids_inputs = [i.name for i in graph.input]
    if sorted(ids_inputs) != sorted(OUTPUTS):
        raise ValueError(f"the ONNX file takes {ids_inputs}, not {list(OUTPUTS)}")
    merged = onnx.helper.make_graph(list(nodes) + list(graph.node), graph.name, inputs,
                                    list(graph.output) + list(outputs), list(initializers) +
                                    list(graph.initializer), value_info=list(graph.value_info))
    opsets = {o.domain: o.version for o in model.opset_import}
    for domain, version in OPSETS.items():
        opsets.setdefault(domain, version)
    result = onnx.helper.make_model(merged, opset_imports=[onnx.helper.make_opsetid(d, v)
                                                           for d, v in opsets.items()])
    result.ir_version = model.ir_version
    return result.SerializeToString()


def run_in_fresh_process(paths: dict, max_seq_length: int, groups, timeout: int = 600,
                         fmt: str = "onnx") -> dict:
    """{kind: [{output: array} per group]} of each text-in file (`paths`: {kind: path}) on
    `groups` ([(texts, pairs or None)]), run in a fresh Python process that imports
    onnxruntime-extensions (`fmt` "openvino": openvino-tokenizers) and never TensorFlow (see
    `_FRESH`)."""
    first, runner = FRESH_RUNNERS[fmt]
    with tempfile.TemporaryDirectory(prefix="albert_onnx_text_") as folder:
        job, result = os.path.join(folder, "job.json"), os.path.join(folder, "out.npz")
        with open(job, "w", encoding="utf-8") as writer:
            json.dump({"first": first, "runner": runner,
                       "paths": {k: os.fspath(p) for k, p in paths.items()},
                       "max_seq_length": int(max_seq_length),
                       "groups": [[list(t), None if p is None else list(p)]
                                  for t, p in groups]}, writer)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root, *filter(None, [os.environ.get("PYTHONPATH")])]))
        done = subprocess.run([sys.executable, "-c", _FRESH, job, result], capture_output=True,
                              text=True, timeout=timeout, env=env)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"running {', '.join(map(str, paths.values()))} in a fresh "
                               f"process failed: {last}")
        found = {kind: [{} for _ in groups] for kind in paths}
        with np.load(result, allow_pickle=False) as data:
            for key in data.files:
                kind, group, name = key.split("::")
                found[kind][int(group)][name] = data[key]
        return found
