"""TFLite files of an encoder or a model with a head: TFLite builtin ops only.

`export_tflite(model, output_dir, max_seq_length, kinds, name=...)` writes
`<output_dir>/<name>.<kind>.tflite` for each kind in `KINDS`, plus the tokenizer file and a
small `<name>.json` (inputs, outputs, sequence length, tokenizer, label names; `multi_label` and
`threshold`, or `regression`, for such a head) that a device
app (or `albert_tf.serving.lite`) reads beside it. An export's files are versioned with its
SavedModel: those of `<base>/<n>` are `<base>/tflite/<n>/`, published together (`extras`). Inputs are `input_word_ids`, `input_mask`,
`input_type_ids` int32 [1, max_seq_length]; the batch dimension is left dynamic, so an
interpreter can resize the inputs to any batch. Every file is converted with
`supported_ops=[TFLITE_BUILTINS]` alone (a model needing Flex/select-TF ops fails to convert
rather than produce a file the plain LiteRT runtime cannot run), then read back and checked.

The conversion goes through a temporary single-signature SavedModel: converting a concrete
function of a Keras 3 model directly keeps its variables as resource variables (VAR_HANDLE /
READ_VARIABLE ops, unset in the file), while the SavedModel route freezes them into constants.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

from albert_tf import io_utils
from albert_tf.errors import AlbertError, OutputError
# The kinds are checked with the flags, before TensorFlow loads; re-exported under their names here.
from albert_tf.run_config import TFLITE_KINDS as KINDS  # noqa: F401
from albert_tf.run_config import parse_tflite_kinds as parse_kinds  # noqa: F401
from albert_tf.models import HEAD_CLASSES, AlbertModel, AlbertPretrainer
from albert_tf.serving.lite import interpreter_runner
from albert_tf.serving.saved_model import (SAVE_OPTIONS, ServingModule, track_captured_variables,
                                           tracing_for_save)

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
# The TFLite files of the SavedModel `<base>/<n>` are published with it as `<base>/tflite/<n>`.
FOLDER = "tflite"
# A float32 file must reproduce the Keras model; 1e-4 leaves room for TFLite's own kernels.
FLOAT32_ATOL = 1e-4


class TFLiteExportError(AlbertError, ValueError):
    """A model that does not convert to TFLite builtin ops, or a file that does not check."""


def default_heads(model) -> tuple[str, tuple[str, ...]]:
    """(file name, output names) of a model's TFLite form, as its class names them
    (`TFLITE_NAME`, `TFLITE_OUTPUTS`: the encoder, the pretrainer's encoder, classifier, SQuAD
    v1.1, token classifier)."""
    cls = type(model)
    if getattr(cls, "TFLITE_OUTPUTS", ()):
        return cls.TFLITE_NAME, tuple(cls.TFLITE_OUTPUTS)
    with_tflite = [c.__name__ for c in (AlbertModel, *HEAD_CLASSES) if c.TFLITE_OUTPUTS]
    raise TFLiteExportError(
        f"no TFLite export for a {cls.__name__} (models with one: {', '.join(with_tflite)}; "
        "SQuAD v2's beam search needs dynamic shapes)")


def export_plan(model, output_dir, kinds, name, outputs, suffix: str, parse=None):
    """What an export of `kinds` writes, or None when it writes nothing: (kinds, file name,
    output names, output_dir, {kind: path}), the name and outputs the model's class gives
    (`default_heads`) where not given; `parse`: the flag's kinds parser (TFLite's by default)."""
    kinds = (parse or parse_kinds)(kinds)
    if not kinds:
        return None
    if name is None or outputs is None:
        default_name, default_outputs = default_heads(model)
        name, outputs = name or default_name, outputs or default_outputs
    output_dir = os.fspath(output_dir)
    return kinds, name, outputs, output_dir, {
        kind: os.path.join(output_dir, f"{name}.{kind}{suffix}") for kind in kinds}


def _default_call(model):
    net = model.encoder if isinstance(model, AlbertPretrainer) else model

    def call(input_word_ids, input_mask, input_type_ids):
        return net({"input_ids": input_word_ids, "input_mask": input_mask,
                    "segment_ids": input_type_ids}, training=False)
    return call


def serving_function(model, max_seq_length: int, outputs, call=None, batch_size=None):
    """The tf.function converted: three int32 [batch_size, max_seq_length] inputs → `outputs`.
    `call(input_word_ids, input_mask, input_type_ids)` → dict (default: our models' call)."""
    call = call or _default_call(model)
    shape = [batch_size, int(max_seq_length)]

    def serve(input_word_ids, input_mask, input_type_ids):
        result = call(input_word_ids, input_mask, input_type_ids)
        missing = [name for name in outputs if name not in result]
        if missing:
            raise TFLiteExportError(f"the model has no output {missing[0]!r} "
                                    f"(it has {', '.join(sorted(result))})")
        return {name: tf.cast(result[name], tf.float32) for name in outputs}
    return tf.function(serve, autograph=False, input_signature=[
        tf.TensorSpec(shape, tf.int32, name=name) for name in INPUT_NAMES])


def _configure(converter, kind):
    """Sets `converter` up for `kind` (one converter serves every kind: loading the SavedModel
    is a good part of a small model's conversion)."""
    converter.target_spec.supported_ops = {tf.lite.OpsSet.TFLITE_BUILTINS}
    converter.optimizations = set()  # the converter's defaults, reset for each kind
    converter.target_spec.supported_types = set()
    if kind == "float16":
        converter.optimizations = {tf.lite.Optimize.DEFAULT}
        converter.target_spec.supported_types = {tf.float16}
    elif kind == "dynamic_int8":
        # Dynamic-range quantization: int8 weights, activations quantized on the fly.
        converter.optimizations = {tf.lite.Optimize.DEFAULT}
    return converter


def operators(content: bytes) -> dict[str, bool]:
    """{operator name: is custom} of a .tflite flatbuffer: builtin names, or a custom op's own
    name (a Flex op reads `Flex<TF op>`), read from the file's operator codes."""
    from tensorflow.lite.python import schema_py_generated as schema
    from tensorflow.lite.tools import flatbuffer_utils

    builtin = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    found = {}
    for code in flatbuffer_utils.read_model_from_bytearray(bytearray(content)).operatorCodes:
        value = max(code.builtinCode, code.deprecatedBuiltinCode)
        if value == schema.BuiltinOperator.CUSTOM:
            custom = code.customCode
            found[custom.decode() if isinstance(custom, bytes) else str(custom)] = True
        else:
            found[builtin.get(value, str(value))] = False
    return dict(sorted(found.items()))


def check_builtin_only(content: bytes, path: str) -> list[str]:
    """The file's operator names; an error naming any op that is not a TFLite builtin."""
    found = operators(content)
    custom = [name for name, is_custom in found.items() if is_custom]
    if custom:
        raise TFLiteExportError(f"{path}: needs ops outside the TFLite builtins: {', '.join(custom)}")
    return list(found)


def sample_inputs(max_seq_length: int, vocab_size: int, batch: int = 2, seed: int = 0) -> dict:
    """Token ids with a padded second row: the inputs every check runs."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, vocab_size, (batch, max_seq_length)).astype(np.int32)
    mask = np.ones_like(ids)
    mask[-1, max_seq_length // 2:] = 0
    types = np.zeros_like(ids)
    types[:, max_seq_length // 3:] = 1
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}


def _check_float32(path, content, serve, inputs):
    runner = interpreter_runner(model_content=content)
    got = runner(**inputs)
    want = serve(**{k: tf.constant(v) for k, v in inputs.items()})
    for name, value in want.items():
        error = float(np.max(np.abs(got[name] - value.numpy())))
        if not error <= FLOAT32_ATOL:
            raise TFLiteExportError(f"{path}: {name} differs from the Keras model by {error:.2e} "
                                    f"(allowed {FLOAT32_ATOL})")


def convert(model, max_seq_length: int, kinds, outputs=None, call=None,
            batch_size=None) -> dict[str, bytes]:
    """{kind: .tflite bytes}, builtin ops only (see the module docstring)."""
    kinds = parse_kinds(kinds)
    if outputs is None:
        outputs = default_heads(model)[1]
    serve = serving_function(model, max_seq_length, tuple(outputs), call, batch_size)
    root = ServingModule()
    root.serve = serve
    with tracing_for_save():  # the one trace the save below reuses
        track_captured_variables(root, [serve.get_concrete_function()])
    with tempfile.TemporaryDirectory(prefix="albert_tflite_",
                                     ignore_cleanup_errors=True) as staging:
        tf.saved_model.save(root, staging, signatures={"serving_default": serve},
                            options=SAVE_OPTIONS)
        result = {}
        converter = tf.lite.TFLiteConverter.from_saved_model(staging)
        for kind in kinds:
            try:
                result[kind] = _configure(converter, kind).convert()
            except Exception as error:  # the converter raises ConverterError and friends
                first = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise TFLiteExportError(f"{type(model).__name__} does not convert to TFLite "
                                        f"builtin ops ({kind}): {first}") from None
        return result


def export_tflite(model, output_dir, max_seq_length: int, kinds, name: str | None = None,
                  outputs=None, call=None, spm_model_file=None, vocab_file=None,
                  do_lower_case: bool = True, label_names=None, verify: bool = True,
                  batch_size=None) -> dict:
    """Writes `<output_dir>/<name>.<kind>.tflite` for each kind (each through
    `io_utils.atomic_output`), the tokenizer file and `<name>.json`; returns {kind: path} plus
    "metadata". `model`: our encoder/pretrainer, classifier or SQuAD v1.1 model, or any Keras
    model with `name`, `outputs` and `call` given (e.g. another library's heads).
    `verify`: the float32 file (when written) must match the Keras model within 1e-4.
    A file of that name already in `output_dir` is refused before any work (a published file
    is never replaced); a failure removes what this call wrote. The exports write into a fresh
    version folder instead (`writer`, `<export_dir>/tflite/<version>`)."""
    plan = export_plan(model, output_dir, kinds, name, outputs, ".tflite")
    if plan is None:
        return {}
    kinds, name, outputs, output_dir, paths = plan
    tokenizer = [(key, os.fspath(source)) for key, source in
                 (("spm_model_file", spm_model_file), ("vocab_file", vocab_file)) if source]
    # The tokenizer file may be shared with another model's files in the folder (the same bytes).
    tokenizer = [(key, source, os.path.join(output_dir, os.path.basename(source)))
                 for key, source in tokenizer]
    shared = {target for _, source, target in tokenizer if _same_file(source, target)}
    planned = [*paths.values()] + [
        os.path.join(output_dir, f"{name}.json")] + [target for *_, target in tokenizer]
    for path in planned:
        if path not in shared and tf.io.gfile.exists(path):
            raise OutputError(f"{path} already exists; an export never replaces a published "
                              "file (write into another folder)")
    contents = convert(model, max_seq_length, kinds, outputs, call, batch_size)
    written, op_names, created = {}, {}, []
    try:
        for kind, content in contents.items():
            path = os.path.join(output_dir, f"{name}.{kind}.tflite")
            op_names[kind] = check_builtin_only(content, path)
            if verify and kind == "float32":
                config = getattr(model, "config", None)
                vocab = getattr(config, "vocab_size", 100)
                inputs = sample_inputs(max_seq_length, vocab, batch=1 if batch_size == 1 else 2)
                _check_float32(path, content, serving_function(
                    model, max_seq_length, tuple(outputs), call, batch_size), inputs)
            with io_utils.atomic_output(path) as tmp:
                with tf.io.gfile.GFile(tmp, "wb") as writer:
                    writer.write(content)
            created.append(path)
            written[kind] = path
        metadata = {"inputs": list(INPUT_NAMES), "outputs": list(outputs),
                    "max_seq_length": int(max_seq_length), "do_lower_case": bool(do_lower_case),
                    "files": {k: os.path.basename(p) for k, p in written.items()},
                    "operators": op_names}
        for key, source, target in tokenizer:
            if target not in shared:
                with io_utils.atomic_output(target) as tmp:
                    tf.io.gfile.copy(source, tmp, overwrite=True)
                created.append(target)
            metadata[key] = os.path.basename(target)
        passes = getattr(getattr(model, "config", None), "num_hidden_layers", None)
        if passes is not None:  # the passes of the shared layer this file runs
            metadata["num_hidden_layers"] = int(passes)
        if label_names is not None:
            metadata["label_names"] = [str(n) for n in label_names]
        if getattr(model, "multi_label", False):  # sigmoids: a reader chooses a set of labels
            metadata.update(multi_label=True, threshold=float(model.threshold))
        if getattr(model, "is_regression", False):  # its one column is a score, not a class
            metadata["regression"] = True
        written["metadata"] = os.path.join(output_dir, f"{name}.json")
        io_utils.write_text_atomically(written["metadata"], json.dumps(metadata, indent=2) + "\n")
    except BaseException:
        for path in created:  # all or nothing
            if tf.io.gfile.exists(path):
                tf.io.gfile.remove(path)
        raise
    return written


def _same_file(source, target) -> bool:
    if not tf.io.gfile.exists(target):
        return False
    with tf.io.gfile.GFile(source, "rb") as a, tf.io.gfile.GFile(target, "rb") as b:
        return a.read() == b.read()


def writer(model, max_seq_length: int, kinds, **kwargs):
    """`write(folder)` of the TFLite files an export publishes with its SavedModel (as
    `<export_dir>/tflite/<version>`, see `write_saved_model(extras=...)`), or None when
    `kinds` names none. `kwargs` as `export_tflite`'s."""
    if not parse_kinds(kinds):
        return None

    def write(folder):
        return export_tflite(model, folder, max_seq_length, kinds, **kwargs)
    return write


def extras(model, max_seq_length: int, kinds, **kwargs) -> dict:
    """{FOLDER: write} for `write_saved_model(extras=...)`; {} without kinds."""
    write = writer(model, max_seq_length, kinds, **kwargs)
    return {FOLDER: write} if write else {}
