"""OpenVINO IR files (`.xml` + `.bin`) of an encoder or a model with a head, and the writers an
export publishes with its SavedModel.

`export_openvino(model, folder, max_seq_length, kinds, ...)` writes
`<folder>/<name>.<kind>.xml` and `.bin` for each kind, the tokenizer file and `<name>.json`
(`format: "openvino"`; see `serving.runtimes`). Each IR is OpenVINO's reading of the ONNX file
of the same kind (`serving.onnx_export.convert`): the float32 IR keeps float32 weights (no
fp16 compression); the dynamic_int8 IR stores every MatMul and Gather weight as int8 with a
scale per output column (`int8_weights`), which OpenVINO's CPU plugin keeps int8 and
decompresses in its kernels. (OpenVINO's reading of onnxruntime's int8 file was measured and
not taken: it turns MatMulInteger's weights into int32 constants, one per pass: 28 MB for
ALBERT-base, 288 MB in memory.) The ONNX route keeps the shared layer's weights once. Each file is compiled
and run at export, float32 in f32 precision (a CPU with AMX would otherwise run bf16), and
checked against the Keras model as the ONNX files are. A classifier's, a token classifier's
and an encoder's export with a unigram SentencePiece model also writes `<name>.text.<kind>.xml`
(+ `.bin`): the same model taking strings, the tokenizer inside (`serving.openvino_text`; a
token classifier's words, windows and tags: `serving.openvino_tagger`; a WordPiece
`vocab_file`'s tokenizer: `serving.openvino_wordpiece`), run at export in a
fresh process on raw texts against the Keras model on albert-tf's ids or windows
(`onnx_export.check_text_files`, `check_tagger_files`).

`extras(model, max_seq_length, onnx_kinds, openvino_kinds, **kwargs)` → {folder: write} for
`write_saved_model(extras=...)`: the ONNX conversion is made once for both formats.
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile

import numpy as np
import tensorflow as tf

from albert_tf import io_utils
from albert_tf.run_config import parse_openvino_kinds
from albert_tf.labels import placeholders
from albert_tf.run_config import window_stride
from albert_tf.serving import (onnx_export, openvino_int8, openvino_tagger, openvino_text,
                               openvino_wordpiece, runtime_text, runtimes)
from albert_tf.serving.tflite import export_plan

FOLDER = "openvino"
# The heads whose files also come as text-in files (`serving.openvino_text`; a token
# classifier's words in windows: `serving.openvino_tagger`).
TEXT_HEADS = ("classifier", "encoder", onnx_export.TAGGER)
# Weights with fewer values stay float32 (biases' and LayerNorm's are 1-D anyway).
_MIN_INT8 = 4096


def parse_kinds(value) -> tuple[str, ...]:
    return parse_openvino_kinds(value)


def int8_weights(content: bytes) -> bytes:
    """The float32 ONNX file with each 2-D weight of a MatMul or Gather stored as int8 (one
    symmetric scale per output column: per row for a Gather table) behind a DequantizeLinear
    node, which OpenVINO keeps as int8 weights decompressed in its kernels. One node per
    weight, however many passes read it: the shared layer stays stored once."""
    onnx = runtimes.load("onnx", "--openvino=dynamic_int8", "openvino")
    numpy_helper = importlib.import_module("onnx.numpy_helper")
    model = onnx.load_from_string(content)
    graph = model.graph
    weights = {init.name: init for init in graph.initializer if len(init.dims) == 2}
    used = {x for node in graph.node if node.op_type in ("MatMul", "Gather")
            for x in node.input[:1 if node.op_type == "Gather" else 2] if x in weights}
    used = {name for name in used if np.prod(weights[name].dims) >= _MIN_INT8}
    rows = {node.input[0] for node in graph.node if node.op_type == "Gather"}
    nodes = []
    for name in sorted(used):
        value = numpy_helper.to_array(weights[name]).astype(np.float32)
        axis = 0 if name in rows else 1  # the scale's axis: a Gather table's rows, else columns
        scale = np.max(np.abs(value), axis=1 - axis) / 127.0
        scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
        shaped = scale[:, None] if axis == 0 else scale[None, :]
        quantized = np.clip(np.round(value / shaped), -127, 127).astype(np.int8)
        graph.initializer.remove(weights[name])
        graph.initializer.extend([
            numpy_helper.from_array(quantized, name + "/int8"),
            numpy_helper.from_array(scale, name + "/scale"),
            numpy_helper.from_array(np.zeros_like(scale, np.int8), name + "/zero")])
        nodes.append(onnx.helper.make_node(
            "DequantizeLinear", [name + "/int8", name + "/scale", name + "/zero"], [name],
            name=name + "/dequantize", axis=axis))
    for node in reversed(nodes):  # before their readers (the graph is in topological order)
        graph.node.insert(0, node)
    return model.SerializeToString()


def save_ir(content: bytes, xml_path: str) -> list[str]:
    """The ONNX bytes as an IR at `xml_path` (+ its `.bin`), each written atomically; returns
    both paths."""
    ov = runtimes.load("openvino", "--openvino")
    with tempfile.TemporaryDirectory(prefix="albert_openvino_",
                                     ignore_cleanup_errors=True) as staging:
        source = os.path.join(staging, "model.onnx")
        with open(source, "wb") as writer:
            writer.write(content)
        return write_ir(ov.convert_model(source), xml_path)


def write_ir(ir, xml_path: str) -> list[str]:
    """An ov.Model saved at `xml_path` (+ its `.bin`), each written atomically; both paths."""
    ov = runtimes.load("openvino", "--openvino")
    with tempfile.TemporaryDirectory(prefix="albert_openvino_",
                                     ignore_cleanup_errors=True) as staging:
        staged_xml = os.path.join(staging, "model.xml")
        ov.save_model(ir, staged_xml, compress_to_fp16=False)
        bin_path = xml_path[:-len(".xml")] + ".bin"
        written = []
        # The .bin first: a reader opens the .xml, which names its weights.
        for staged, path in ((staged_xml[:-4] + ".bin", bin_path), (staged_xml, xml_path)):
            with io_utils.atomic_output(path) as tmp:
                tf.io.gfile.copy(staged, tmp, overwrite=True)
            written.append(path)
        return written


def text_plan(output_dir, name, kinds, spm_model_file, batch_size=None, vocab_file=None) -> dict:
    """{kind: `<name>.text.<kind>.xml`} of a classifier, a token classifier (its windows of
    any batch) or an encoder with a unigram SentencePiece model (`serving.openvino_text`) or
    a WordPiece `vocab_file` (`serving.openvino_wordpiece`), else {}."""
    if not (spm_model_file or vocab_file) or name not in TEXT_HEADS or (
            spm_model_file and not openvino_text.supported(spm_model_file)) or (
            name == onnx_export.TAGGER and batch_size == 1):
        return {}
    return {kind: os.path.join(output_dir, f"{name}.text.{kind}.xml") for kind in kinds}


def converted_kinds(kinds) -> tuple[str, ...]:
    """The ONNX conversions `kinds` are made from (static_int8 quantizes the float32 one)."""
    return tuple(k for k in onnx_export.KINDS if k in kinds)


def cached_dev_inputs(folder, max_seq_length: int) -> dict | None:
    """The first rows of the dev features a run cached in its folder (`<task>_eval.tf_record`
    beside its `.key.json`) as the files' inputs, or None: what an export of that folder
    calibrates static_int8 on, without the dev texts. A cache packed shorter than
    `max_seq_length` (a run at 64 tokens, an export at 128) is padded, as the texts would be;
    a longer one is passed over (its rows would lose their [SEP])."""
    if not folder or not tf.io.gfile.isdir(folder):
        return None
    for key_path in sorted(tf.io.gfile.glob(os.path.join(folder, "*_eval.tf_record.key.json"))):
        try:
            key = json.loads(tf.io.gfile.GFile(key_path).read())["key"]
            length = int(key.get("max_seq_length", 0))
            if key.get("split") != "dev" or not 0 < length <= max_seq_length:
                continue
            spec = {name: tf.io.FixedLenFeature([length], tf.int64)
                    for name in ("input_ids", "input_mask", "segment_ids")}
            rows = [tf.io.parse_single_example(record, spec) for record in tf.data.TFRecordDataset(
                key_path[:-len(".key.json")]).take(openvino_int8.CALIBRATION_ROWS)]
        except (OSError, ValueError, KeyError, tf.errors.OpError):
            continue  # a cache of another kind or damaged: the check texts calibrate instead
        if rows:
            return {ours: np.pad(np.stack([row[theirs].numpy() for row in rows]).astype(
                np.int32), ((0, 0), (0, max_seq_length - length)))
                for ours, theirs in (("input_word_ids", "input_ids"),
                                     ("input_mask", "input_mask"),
                                     ("input_type_ids", "segment_ids"))}
    return None


def calibration_plan(texts, text_pairs, dev_inputs, tokenizer: bool) -> tuple:
    """(texts, text_pairs, ids or None, what they are) static_int8 calibrates on: the export's
    texts, else the dev features the folder's run cached, else the texts the text files are
    checked on (alone and paired: either kind of model's inputs), else the sample ids (whose
    random words moved 8 % of the demo classifier's answers)."""
    if texts:
        return texts, text_pairs, None, "dev texts"
    if dev_inputs is not None:
        return None, None, dev_inputs, "dev features cached in the model folder"
    if tokenizer:
        return (onnx_export.CHECK_TEXTS * 2,
                ("",) * len(onnx_export.CHECK_TEXTS) + onnx_export.CHECK_PAIRS, None,
                "check texts")
    return None, None, None, "sample ids"


def file_content(kind, contents, inputs, texts, text_pairs, max_seq_length, spm_model_file,
                 vocab_file, do_lower_case, dev_inputs=None) -> tuple[bytes, dict | None]:
    """(the ONNX bytes a kind's IR is read from, what static_int8 was calibrated on: rows,
    source, whether the attention's products are int8, as `openvino_int8.static_int8` leaves
    them float32 unless calibrated on the model's own data)."""
    if kind == "dynamic_int8":
        return int8_weights(contents["float32"]), None
    if kind != openvino_int8.KIND:
        return contents[kind], None
    texts, text_pairs, ids, source = calibration_plan(texts, text_pairs, dev_inputs,
                                                      bool(spm_model_file or vocab_file))
    if texts:
        ids = runtime_text.pack_texts(
            list(texts)[:openvino_int8.CALIBRATION_ROWS],
            None if text_pairs is None else list(text_pairs)[:openvino_int8.CALIBRATION_ROWS],
            max_seq_length, spm_model_file=spm_model_file,
            vocab_file=None if spm_model_file else vocab_file, do_lower_case=do_lower_case)
    rows = openvino_int8.calibration_rows(inputs if ids is None else ids)
    products = source.startswith("dev")
    # The dense layers' int8 from calibration, the embedding tables' as dynamic_int8's.
    content = int8_weights(openvino_int8.static_int8(contents["float32"], rows, products))
    return content, {"rows": len(rows), "on": source, "attention_products_int8": products}


def export_openvino(model, output_dir, max_seq_length: int, kinds, name: str | None = None,
                    outputs=None, call=None, spm_model_file=None, vocab_file=None,
                    do_lower_case: bool = True, label_names=None, verify: bool = True,
                    batch_size=None, contents=None, texts=None, text_pairs=None,
                    dev_inputs=None) -> dict:
    """Writes `<output_dir>/<name>.<kind>.xml`/`.bin` for each kind, the tokenizer file and
    `<name>.json`; returns {kind: xml path, "metadata": path}. Arguments as
    `onnx_export.export_onnx`'s (`contents`: the ONNX {kind: bytes} already converted;
    `texts`: a dev set's, measured as there; `dev_inputs`: a dev set's packed ids, which
    static_int8 calibrates on where there are no texts)."""
    plan = export_plan(model, output_dir, kinds, name, outputs, ".xml", parse_kinds)
    if plan is None:
        return {}
    kinds, name, outputs, output_dir, paths = plan
    text_paths = text_plan(output_dir, name, kinds, spm_model_file, batch_size, vocab_file)
    tagger = bool(text_paths) and name == onnx_export.TAGGER
    text_tokenizer = openvino_text if spm_model_file else openvino_wordpiece  # one signature
    tag_names = label_names or (placeholders(model.num_labels) if tagger else None)
    xml = [*paths.values(), *text_paths.values()]
    onnx_export.refuse_existing([*xml, *(p[:-4] + ".bin" for p in xml),
                                 os.path.join(output_dir, f"{name}.json")])
    runtimes.load("openvino", "--openvino")
    if text_paths:
        runtimes.load("openvino_tokenizers", "--openvino")
    contents = contents or onnx_export.convert(model, max_seq_length, converted_kinds(kinds),
                                               outputs, call, batch_size, flag="--openvino")
    inputs = onnx_export.check_inputs(model, max_seq_length, batch_size)
    want = onnx_export.expected(model, max_seq_length, outputs, call, batch_size, inputs)
    created, agreement = [], {}
    try:
        for kind, path in paths.items():
            content, calibration = file_content(kind, contents, inputs, texts, text_pairs,
                                                max_seq_length, spm_model_file, vocab_file,
                                                do_lower_case, dev_inputs)
            created.extend(save_ir(content, path))
            agreement[kind] = onnx_export.check_file(path, runtimes.openvino_runner, want,
                                                     inputs, kind, verify)
            if calibration:
                agreement[kind]["calibration"] = calibration
            if kind in text_paths:  # the same weights behind openvino-tokenizers' ops
                created.extend(write_ir(openvino_tagger.tagger_model(
                    content, spm_model_file, do_lower_case, max_seq_length,
                    window_stride(None, max_seq_length), tag_names, vocab_file) if tagger else
                    text_tokenizer.text_model(content, spm_model_file or vocab_file,
                                              do_lower_case, max_seq_length), text_paths[kind]))
        onnx_export.measure_texts(agreement, paths, runtimes.openvino_runner, texts, text_pairs,
                                  max_seq_length, spm_model_file, vocab_file, do_lower_case)
        if tagger:
            agreement["text"] = onnx_export.check_tagger_files(
                text_paths, model, max_seq_length, outputs, call, spm_model_file,
                do_lower_case, tag_names, texts, fmt=FOLDER, vocab_file=vocab_file)
        elif text_paths:
            agreement["text"] = onnx_export.check_text_files(
                text_paths, model, max_seq_length, outputs, call, batch_size, spm_model_file,
                do_lower_case, texts, text_pairs, fmt=FOLDER, vocab_file=vocab_file)
        written = dict(paths)
        written.update({f"text.{kind}": path for kind, path in text_paths.items()})
        written["metadata"] = onnx_export.write_metadata(
            model, output_dir, name, FOLDER, outputs, max_seq_length, do_lower_case,
            {k: os.path.basename(p) for k, p in paths.items()}, agreement, spm_model_file,
            vocab_file, label_names, created,
            {k: os.path.basename(p) for k, p in text_paths.items()})
    except BaseException:
        onnx_export.remove(created)  # all or nothing
        raise
    return written


def require(onnx_kinds=None, openvino_kinds=None) -> tuple[tuple, tuple]:
    """The kinds `--onnx` and `--openvino` name, checked, and the packages they need loaded:
    a missing one is one `MissingDependencyError` naming its extra, before any work."""
    onnx_kinds = onnx_export.parse_kinds(onnx_kinds)
    openvino_kinds = parse_kinds(openvino_kinds)
    if onnx_kinds or openvino_kinds:
        runtimes.load("tf2onnx", "--onnx" if onnx_kinds else "--openvino",
                      None if onnx_kinds else "openvino")
    if onnx_kinds:
        runtimes.load("onnxruntime", "--onnx")
    if openvino_kinds:
        runtimes.load("openvino", "--openvino")
    return onnx_kinds, openvino_kinds


def extras(model, max_seq_length: int, onnx_kinds=None, openvino_kinds=None, **kwargs) -> dict:
    """{folder: write(folder)} of the ONNX and OpenVINO files an export publishes with its
    SavedModel ({} when neither names a kind); a missing runtime is refused here, before any
    export work. `kwargs` as `export_onnx`'s."""
    onnx_kinds, openvino_kinds = require(onnx_kinds, openvino_kinds)
    if not (onnx_kinds or openvino_kinds):
        return {}
    cache = {}

    def contents():  # one conversion for both formats, made when the first is written
        if not cache:
            kinds = converted_kinds(set(onnx_kinds) | set(openvino_kinds))
            cache.update(onnx_export.convert(model, max_seq_length, kinds, kwargs.get("outputs"),
                                             kwargs.get("call"), kwargs.get("batch_size")))
        return cache

    result = {}
    dev_inputs = kwargs.pop("dev_inputs", None)  # OpenVINO's static_int8 alone reads them
    if onnx_kinds:
        result[onnx_export.FOLDER] = lambda folder: onnx_export.export_onnx(
            model, folder, max_seq_length, onnx_kinds, contents=contents(), **kwargs)
    if openvino_kinds:
        result[FOLDER] = lambda folder: export_openvino(
            model, folder, max_seq_length, openvino_kinds, contents=contents(),
            dev_inputs=dev_inputs, **kwargs)
    return result
