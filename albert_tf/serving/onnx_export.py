"""ONNX files of an encoder or a model with a head, converted from the function TFLite converts.

`export_onnx(model, folder, max_seq_length, kinds, name=..., ...)` writes
`<folder>/<name>.<kind>.onnx` for each kind in `KINDS` (`float32`, `dynamic_int8`), the
tokenizer file and `<name>.json` (the keys of a TFLite folder's, plus `format`, `text_in` and
`agreement`: see `serving.runtimes`, which runs the files). An export's files are versioned with
its SavedModel: those of `<base>/<n>` are `<base>/onnx/<n>/`, published together (`extras`).

The function converted is `serving.tflite.serving_function`: three int32 [batch,
max_seq_length] inputs (`input_word_ids`, `input_mask`, `input_type_ids`, any batch) → the
head's outputs (float32). tf2onnx freezes each variable into ONE initializer, however many
times the graph reads it, so ALBERT's shared layer is stored once (an ALBERT file is about its
parameter count × 4 bytes, not × the number of layers as an export that unrolls a copy per
pass). `dynamic_int8` is onnxruntime's dynamic quantization of that file (int8 weights of every
MatMul and Gather, activations quantized on the fly).

Each float32 file must reproduce the Keras model within `FLOAT32_ATOL` on sample ids, run by
the runtime itself; what every kind measured (largest difference; for an int8 file the share of
rows whose most probable class agrees with the Keras model's) is written into `<name>.json`.
Nothing is half-written: a failure removes what the call wrote, and inside an export the
stage (`serving.publish`) is never published.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile

import numpy as np
import tensorflow as tf

from albert_tf import io_utils, tokenization
from albert_tf.errors import OutputError
from albert_tf.labels import placeholders
from albert_tf.run_config import RUNTIME_KINDS as KINDS  # noqa: F401
from albert_tf.run_config import parse_runtime_kinds, window_stride
from albert_tf.serving import onnx_tagger, onnx_text, onnx_wordpiece, runtime_text, runtimes
from albert_tf.serving.tflite import (INPUT_NAMES, TFLiteExportError, default_heads,
                                      export_plan, sample_inputs, serving_function)
from albert_tf.tokenization.word_windows import WordPieces

FOLDER = "onnx"
FLOAT32_ATOL = 1e-4
# The heads whose files also come as text-in files (`serving.onnx_text`; a token classifier's
# words in windows: `serving.onnx_tagger`); a SQuAD or multiple-choice head's inputs are not a
# pair.
TAGGER = "token_classifier"
TEXT_HEADS = ("classifier", "encoder", TAGGER)  # a WordPiece vocab's too: onnx_wordpiece
# What a text-in file is checked on when the export is given no texts.
CHECK_TEXTS = ("a lovely, moving film", "Café CRÈME brûlée à Zürich", "ΟΔΟΣ ΣΑΣ", "中文 한국어",
               "1,000 people and 9, 10, 11,", "[CLS] literal [MASK]", "", " \u00a0\t\n ",
               "https://www.example.org/path?x=1&y=2#frag", "word " * 200)
CHECK_PAIRS = ("a second segment", "", "Straße", "x", "y " * 200, "", "z", "  ", "www", "b")
OPSET = 17
# Outputs whose argmax is the prediction (int8 agreement is measured on them).
_SCORES = ("probabilities", "logits", "start_logits", "end_logits", "score")


class RuntimeExportError(TFLiteExportError):
    """A model that does not convert, or a file that does not reproduce the Keras model."""


def parse_kinds(value, flag: str = "--onnx") -> tuple[str, ...]:
    return parse_runtime_kinds(value, flag)


def convert(model, max_seq_length: int, kinds, outputs=None, call=None,
            batch_size=None, flag: str = "--onnx") -> dict[str, bytes]:
    """{kind: .onnx bytes} (float32 is always converted: the int8 file is made from it)."""
    kinds = parse_kinds(kinds, flag)
    tf2onnx = runtimes.load("tf2onnx", flag, "openvino" if flag == "--openvino" else None)
    if outputs is None:
        outputs = default_heads(model)[1]
    serve = serving_function(model, max_seq_length, tuple(outputs), call, batch_size)
    try:
        proto, _ = tf2onnx.convert.from_function(
            serve, input_signature=serve.input_signature, opset=OPSET)
    except Exception as error:  # tf2onnx raises ValueError, KeyError, its own types
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RuntimeExportError(f"{type(model).__name__} does not convert to ONNX: "
                                 f"{first}") from None
    result = {"float32": proto.SerializeToString()}
    if "dynamic_int8" in kinds:
        result["dynamic_int8"] = quantize(result["float32"], flag)
    return result


def quantize(content: bytes, flag: str = "--onnx") -> bytes:
    """onnxruntime's dynamic int8 quantization of a float32 .onnx file's bytes."""
    quantization = runtimes.load("onnxruntime.quantization", f"{flag}=dynamic_int8")
    with tempfile.TemporaryDirectory(prefix="albert_onnx_",
                                     ignore_cleanup_errors=True) as staging:
        source, target = os.path.join(staging, "f.onnx"), os.path.join(staging, "q.onnx")
        with open(source, "wb") as writer:
            writer.write(content)
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # its advice to pre-process, on every call
        try:
            quantization.quantize_dynamic(source, target,
                                          weight_type=quantization.QuantType.QInt8)
        finally:
            root.setLevel(level)
        with open(target, "rb") as reader:
            return reader.read()


def expected(model, max_seq_length, outputs, call, batch_size, inputs) -> dict:
    """The Keras model's outputs on `inputs` (numpy), through the function converted."""
    serve = serving_function(model, max_seq_length, tuple(outputs), call, batch_size)
    return {k: v.numpy() for k, v in serve(**{k: tf.constant(v)
                                               for k, v in inputs.items()}).items()}


def measure(got: dict, want: dict) -> dict:
    """{max_abs_diff, argmax_agreement (on a score output, when there is one)}."""
    result = {"max_abs_diff": max(float(np.max(np.abs(got[k] - want[k]))) for k in want)}
    for name in _SCORES:
        if name in want and want[name].ndim >= 2 and want[name].shape[-1] > 1:
            agree = np.argmax(got[name], -1) == np.argmax(want[name], -1)
            result["argmax_agreement"] = round(float(np.mean(agree)), 6)
            result["rows"] = int(agree.size)
            break
    return result


def check_file(path, run, want, inputs, kind, strict: bool = True) -> dict:
    """Runs a written file and measures it against the Keras model; with `strict`, a float32
    file further than `FLOAT32_ATOL` is an error naming it."""
    got = run(path)(**inputs)
    missing = [name for name in want if name not in got]
    if missing:
        raise RuntimeExportError(f"{path}: has no output {missing[0]!r}")
    found = measure(got, want)
    if strict and kind == "float32" and not found["max_abs_diff"] <= FLOAT32_ATOL:
        raise RuntimeExportError(f"{path}: differs from the Keras model by "
                                 f"{found['max_abs_diff']:.2e} (allowed {FLOAT32_ATOL})")
    return found


def check_inputs(model, max_seq_length: int, batch_size=None) -> dict:
    vocab = getattr(getattr(model, "config", None), "vocab_size", 100)
    return sample_inputs(max_seq_length, vocab, batch=1 if batch_size == 1 else 8)


def refuse_existing(paths) -> None:
    for path in paths:
        if tf.io.gfile.exists(path):
            raise OutputError(f"{path} already exists; an export never replaces a published "
                              "file (write into another folder)")


def text_plan(output_dir, name, kinds, spm_model_file, batch_size=None, vocab_file=None) -> dict:
    """{kind: `<name>.text.<kind>.onnx`} of a head whose files also take text (a
    SentencePiece model or a WordPiece `vocab_file`, a head of `TEXT_HEADS`; a token
    classifier's windows of any batch), else {}."""
    if not (spm_model_file or vocab_file) or name not in TEXT_HEADS or (
            name == TAGGER and batch_size == 1):
        return {}
    return {kind: os.path.join(output_dir, f"{name}.text.{kind}.onnx") for kind in kinds}


def check_text_files(paths, model, max_seq_length, outputs, call, batch_size, spm_model_file,
                     do_lower_case, texts=None, text_pairs=None, fmt: str = "onnx",
                     vocab_file=None) -> dict:
    """Runs each text-in file on raw texts (the export's first 64, else `CHECK_TEXTS` alone
    and with `CHECK_PAIRS`) against the Keras model on albert-tf's tokenizer's ids (what the
    SavedModel's serve_text gives); a float32 file with another label or further than
    `FLOAT32_ATOL` on any text is an error naming it. {kind: measure's answer + texts}."""
    if texts is None:
        groups = [(list(CHECK_TEXTS), None), (list(CHECK_TEXTS), list(CHECK_PAIRS))]
    else:
        groups = [(list(texts)[:64], None if text_pairs is None else list(text_pairs)[:64])]
    parts = []  # (texts, pairs, the Keras model's outputs), one row each for a batch-1 file
    for sample, pairs in groups:
        ids = runtime_text.pack_texts(sample, pairs, max_seq_length, spm_model_file,
                                      None if spm_model_file else vocab_file, do_lower_case)
        step = 1 if batch_size == 1 else len(sample)
        for k in range(0, len(sample), step):
            part = slice(k, k + step)
            parts.append((sample[part], None if pairs is None else pairs[part],
                          expected(model, max_seq_length, outputs, call, batch_size,
                                   {n: v[part] for n, v in ids.items()})))
    want = {n: np.concatenate([p[2][n] for p in parts]) for n in parts[0][2]}
    try:
        runs = onnx_text.run_in_fresh_process(paths, max_seq_length,
                                              [(t, p) for t, p, _ in parts], fmt=fmt)
    except RuntimeError as error:
        raise RuntimeExportError(str(error)) from None
    found = {}
    for kind, path in paths.items():
        got = {n: np.concatenate([g[n] for g in runs[kind]]) for n in want}
        found[kind] = measure(got, want)
        found[kind]["texts"] = int(len(want[outputs[0]]))
        if kind == "float32" and not (found[kind]["max_abs_diff"] <= FLOAT32_ATOL and
                                      found[kind].get("argmax_agreement", 1.0) == 1.0):
            raise RuntimeExportError(f"{path}: differs from the Keras model on raw text by "
                                     f"{found[kind]['max_abs_diff']:.2e} (allowed "
                                     f"{FLOAT32_ATOL}, labels equal)")
    return found


def check_tagger_files(paths, model, max_seq_length, outputs, call, spm_model_file,
                       do_lower_case, label_names, texts=None, fmt: str = "onnx",
                       vocab_file=None) -> dict:
    """`check_text_files` for a token classifier's text-in files (`serving.onnx_tagger`): each
    run on raw texts (the export's first 64, else `CHECK_TEXTS`) in a fresh process against the
    Keras model on albert-tf's windows of their words; a float32 file with another word, offset
    or tag on any text, or further than `FLOAT32_ATOL`, is an error naming it."""
    sample = list(CHECK_TEXTS if texts is None else texts)[:64]
    pieces = WordPieces(tokenization.FullTokenizer(None if spm_model_file else vocab_file,
                                                   do_lower_case, spm_model_file), do_lower_case)
    want = onnx_tagger.reference(
        sample, pieces, max_seq_length, window_stride(None, max_seq_length),
        lambda **ids: expected(model, max_seq_length, outputs, call, None, ids))
    try:
        runs = onnx_text.run_in_fresh_process(paths, max_seq_length, [(sample, None)], fmt=fmt)
    except RuntimeError as error:
        raise RuntimeExportError(str(error)) from None
    found = {}
    for kind, path in paths.items():
        found[kind] = onnx_tagger.compare(runs[kind][0], want, label_names)
        differ = found[kind].pop("differ")
        if kind == "float32" and differ is not None:
            raise RuntimeExportError(f"{path}: gives other words, offsets or tags than the "
                                     f"Keras model on raw text {differ} ({sample[differ]!r})")
        if kind == "float32" and not (found[kind]["max_abs_diff"] <= FLOAT32_ATOL and
                                      found[kind]["argmax_agreement"] == 1.0):
            raise RuntimeExportError(f"{path}: differs from the Keras model on raw text by "
                                     f"{found[kind]['max_abs_diff']:.2e} (allowed "
                                     f"{FLOAT32_ATOL}, tags equal)")
    return found


def write_metadata(model, folder, name, fmt, outputs, max_seq_length, do_lower_case, files,
                   agreement, spm_model_file=None, vocab_file=None, label_names=None,
                   created=None, text_files=None) -> str:
    """Copies the tokenizer file beside the files and writes `<name>.json`; returns its path.
    `text_files`: {kind: file name} of the text-in files beside them (`text_in`: true; a
    token classifier's also `text_outputs` and `doc_stride`)."""
    meta = {"format": fmt, "inputs": list(INPUT_NAMES), "outputs": list(outputs),
            "max_seq_length": int(max_seq_length), "do_lower_case": bool(do_lower_case),
            "text_in": False, "text_in_note": runtime_text.text_in_note(fmt),
            "files": dict(files), "agreement": agreement}
    if text_files:
        meta.update(text_in=True, text_inputs=list(onnx_text.TEXT_INPUTS),
                    text_files=dict(text_files), text_in_note=runtime_text.NOTES[
                        f"{fmt}_text" if spm_model_file else f"{fmt}_wordpiece"])
    if text_files and name == TAGGER:
        meta.update(text_inputs=list(onnx_tagger.TEXT_INPUTS),
                    text_outputs=list(onnx_tagger.TEXT_OUTPUTS),
                    doc_stride=window_stride(None, max_seq_length),
                    text_in_note=runtime_text.NOTES[f"{fmt}_tagger"])
    for key, source in (("spm_model_file", spm_model_file), ("vocab_file", vocab_file)):
        if source:
            source = os.fspath(source)
            target = os.path.join(folder, os.path.basename(source))
            if not tf.io.gfile.exists(target):
                with io_utils.atomic_output(target) as tmp:
                    tf.io.gfile.copy(source, tmp, overwrite=True)
                if created is not None:
                    created.append(target)
            meta[key] = os.path.basename(target)
    passes = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if passes is not None:
        meta["num_hidden_layers"] = int(passes)
    if label_names is not None:
        meta["label_names"] = [str(n) for n in label_names]
    if getattr(model, "multi_label", False):
        meta.update(multi_label=True, threshold=float(model.threshold))
    if getattr(model, "is_regression", False):
        meta["regression"] = True
    path = os.path.join(folder, f"{name}.json")
    io_utils.write_text_atomically(path, json.dumps(meta, indent=2) + "\n")
    if created is not None:
        created.append(path)
    return path


def measure_texts(agreement, paths, open_runner, texts, text_pairs, max_seq_length,
                  spm_model_file, vocab_file, do_lower_case) -> None:
    """Adds each int8 file's agreement with float32 on raw `texts` to `agreement` (see
    `runtime_text.text_agreement`)."""
    if texts is None:
        return
    for kind in [k for k in paths if k.endswith("int8")]:
        found = runtime_text.text_agreement(
            paths, open_runner, list(texts), None if text_pairs is None else list(text_pairs),
            max_seq_length, kind, spm_model_file=spm_model_file,
            vocab_file=None if spm_model_file else vocab_file, do_lower_case=do_lower_case)
        if found is not None:
            agreement[kind]["dev"] = found


def remove(paths) -> None:
    for path in paths:
        if tf.io.gfile.exists(path):
            tf.io.gfile.remove(path)


def export_onnx(model, output_dir, max_seq_length: int, kinds, name: str | None = None,
                outputs=None, call=None, spm_model_file=None, vocab_file=None,
                do_lower_case: bool = True, label_names=None, verify: bool = True,
                batch_size=None, contents=None, texts=None, text_pairs=None) -> dict:
    """Writes `<output_dir>/<name>.<kind>.onnx` for each kind, the tokenizer file and
    `<name>.json`; returns {kind: path, "metadata": path}. Arguments as
    `serving.tflite.export_tflite`'s (`contents`: {kind: bytes} already converted; `texts`
    (+ `text_pairs`): raw texts, a dev set's, on which the int8 file's argmax agreement with
    the float32 file is measured and written as `agreement.dynamic_int8.dev`)."""
    plan = export_plan(model, output_dir, kinds, name, outputs, ".onnx", parse_kinds)
    if plan is None:
        return {}
    kinds, name, outputs, output_dir, paths = plan
    text_paths = text_plan(output_dir, name, kinds, spm_model_file, batch_size, vocab_file)
    tag_names = label_names or (placeholders(model.num_labels) if text_paths and name == TAGGER
                                else None)  # a text-in tagger's tags: HF's LABEL_<i> if none
    refuse_existing([*paths.values(), *text_paths.values(),
                     os.path.join(output_dir, f"{name}.json")])
    runtimes.load("onnxruntime", "--onnx")  # refused before the conversion's work
    if text_paths:
        runtimes.load("onnxruntime_extensions", "--onnx")
    contents = contents or convert(model, max_seq_length, kinds, outputs, call, batch_size)
    inputs = check_inputs(model, max_seq_length, batch_size)
    want = expected(model, max_seq_length, outputs, call, batch_size, inputs)
    created, agreement = [], {}
    try:
        for kind, path in paths.items():
            with io_utils.atomic_output(path) as tmp:
                with tf.io.gfile.GFile(tmp, "wb") as writer:
                    writer.write(contents[kind])
            created.append(path)
            agreement[kind] = check_file(path, runtimes.onnx_runner, want, inputs, kind, verify)
        measure_texts(agreement, paths, runtimes.onnx_runner, texts, text_pairs, max_seq_length,
                      spm_model_file, vocab_file, do_lower_case)
        tokenizer = onnx_text if spm_model_file else onnx_wordpiece  # the same signature
        for kind, path in text_paths.items():
            content = onnx_tagger.with_tagger(
                contents[kind], spm_model_file, do_lower_case, max_seq_length,
                window_stride(None, max_seq_length), tag_names, vocab_file) if name == TAGGER else \
                tokenizer.with_tokenizer(contents[kind], spm_model_file or vocab_file,
                                         do_lower_case, max_seq_length)
            with io_utils.atomic_output(path) as tmp:
                with tf.io.gfile.GFile(tmp, "wb") as writer:
                    writer.write(content)
            created.append(path)
        if text_paths and name == TAGGER:
            agreement["text"] = check_tagger_files(
                text_paths, model, max_seq_length, outputs, call, spm_model_file,
                do_lower_case, tag_names, texts, vocab_file=vocab_file)
        elif text_paths:
            agreement["text"] = check_text_files(
                text_paths, model, max_seq_length, outputs, call, batch_size, spm_model_file,
                do_lower_case, texts, text_pairs, vocab_file=vocab_file)
        written = {kind: path for kind, path in paths.items()}
        written.update({f"text.{kind}": path for kind, path in text_paths.items()})
        written["metadata"] = write_metadata(
            model, output_dir, name, FOLDER, outputs, max_seq_length, do_lower_case,
            {k: os.path.basename(p) for k, p in paths.items()}, agreement, spm_model_file,
            vocab_file, label_names, created,
            {k: os.path.basename(p) for k, p in text_paths.items()})
    except BaseException:
        remove(created)  # all or nothing
        raise
    return written


def writer(model, max_seq_length: int, kinds, **kwargs):
    """`write(folder)` of the ONNX files an export publishes with its SavedModel (as
    `<export_dir>/onnx/<version>`), or None when `kinds` names none."""
    if not parse_kinds(kinds):
        return None
    runtimes.load("onnxruntime", "--onnx")  # refused before any export work
    runtimes.load("tf2onnx", "--onnx")

    def write(folder):
        return export_onnx(model, folder, max_seq_length, kinds, **kwargs)
    return write
