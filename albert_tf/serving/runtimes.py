"""Running the ONNX and OpenVINO files of an export, and loading their optional packages.

    run = onnx_runner("x/classifier/onnx/1/classifier.float32.onnx")
    run(input_word_ids=ids, input_mask=mask, input_type_ids=types)   # {"probabilities": ...}
    run = openvino_runner("x/classifier/openvino/1/classifier.dynamic_int8.xml")

Both return a callable like `serving.lite.LiteRunner`: keyword inputs (int32 [batch,
max_seq_length] arrays of any batch) → {output name: numpy array}, with `.inputs`, `.outputs`
and `.max_seq_length`. `runner(path)` picks the runtime by the file's suffix.

The files (written by `serving.onnx_export` and `serving.openvino_export`) sit in
`<export_dir>/<head>/onnx/<version>/<head>.<kind>.onnx` and
`<export_dir>/<head>/openvino/<version>/<head>.<kind>.xml` (+ `.bin`), with the same
`<head>.json` beside them as a TFLite folder's (`serving.lite.read_metadata` reads it): inputs,
outputs, max_seq_length, do_lower_case, files ({kind: file name}), the tokenizer file,
label_names / multi_label + threshold / regression as the head has them, and in addition
`format` ("onnx" or "openvino"), `text_in` (true: `text_files` ({kind: file name}) take
strings, `text_a` and `text_b`, run by `OnnxTextRunner` / `OpenVinoTextRunner`; false: the files
take ids only: tokenize with the tokenizer file beside them, as `serving.lite` does),
`text_in_note` (what the text files take, or why there are none: `serving.runtime_text`) and
`agreement` ({kind: what the export measured against the
Keras model: max_abs_diff, and for int8 the share of rows whose argmax agrees with float32;
`dynamic_int8.dev`: the int8 file's agreement with float32 on raw dev texts, when the export
was given them}).

The runtimes are optional (`pip install albert-tf[onnx]`, `albert-tf[openvino]`); this module
imports neither TensorFlow nor them until asked, and a missing one is a `MissingDependencyError`
naming the extra.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys

import numpy as np

from albert_tf.errors import InputError, MissingDependencyError

# The package each extra brings → its extra's name.
EXTRA_OF = {"tf2onnx": "onnx", "onnx": "onnx", "onnxruntime": "onnx",
            "onnxruntime.quantization": "onnx", "onnxruntime_extensions": "onnx",
            "openvino": "openvino", "openvino_tokenizers": "openvino"}


def install_line(package: str, extra: str | None = None) -> str:
    return f"pip install albert-tf[{extra or EXTRA_OF[package]}]"


@functools.lru_cache(maxsize=None)
def _try_import(package: str):
    try:
        return importlib.import_module(package), None
    except Exception as error:  # absent, or built against another numpy/protobuf
        return None, error


def available(package: str) -> bool:
    return _try_import(package)[0] is not None


def load(package: str, purpose: str, extra: str | None = None):
    """The module `package`; `MissingDependencyError` naming its extra (or `extra`) when it
    cannot be imported (`purpose`: the flag or call that needs it)."""
    module, error = _try_import(package)
    if module is None:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise MissingDependencyError(f"{purpose} needs {package}, which cannot be imported "
                                     f"({first}): {install_line(package, extra)}")
    return module


def require_utf8(texts, what: str = "text") -> list:
    """`texts` as str; a bytes text that is not UTF-8 is an `InputError` naming its index
    and the first bad byte (the original would silently drop the bytes)."""
    result = []
    for index, text in enumerate(texts):
        if isinstance(text, (bytes, bytearray, np.bytes_)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as error:
                raise InputError(f"{what} {index} is not UTF-8 (byte {bytes(text)[error.start]:#04x}"
                                 f" at offset {error.start})") from None
        result.append(text)
    return result


class _Runner:
    def _finish(self, label, inputs, outputs, shape):
        self.label, self.inputs, self.outputs = label, list(inputs), list(outputs)
        if len(shape) != 2:
            raise InputError(f"{label}: inputs of shape {list(shape)}; expected "
                             "[batch, max_seq_length] (a file written by albert_tf's export)")
        self.max_seq_length = int(shape[1])

    def _feed(self, inputs) -> dict:
        missing = [name for name in self.inputs if name not in inputs]
        if missing:
            raise InputError(f"{self.label}: input {missing[0]!r} not given "
                             f"(it takes {', '.join(self.inputs)})")
        return {name: np.asarray(inputs[name], np.int32) for name in self.inputs}


class OnnxRunner(_Runner):
    """One .onnx file in an onnxruntime session (`num_threads`: intra-op threads; `spinning`
    False: idle threads sleep instead of spinning, kinder to a CPU shared with others)."""

    def __init__(self, path, num_threads=None, spinning: bool = True):
        ort = load("onnxruntime", "running an ONNX file")
        path = os.fspath(path)
        options = ort.SessionOptions()
        if num_threads:
            options.intra_op_num_threads = int(num_threads)
        if not spinning:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime's own error types (Fail, InvalidGraph, ...)
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise InputError(f"{path}: onnxruntime cannot run it ({first})") from None
        inputs = self.session.get_inputs()
        self._finish(path, [i.name for i in inputs], [o.name for o in self.session.get_outputs()],
                     inputs[0].shape)

    def __call__(self, **inputs) -> dict:
        values = self.session.run(self.outputs, self._feed(inputs))
        return dict(zip(self.outputs, values))


def compile_openvino(path: str, num_threads=None, precision: str | None = "f32"):
    """The IR at `path` compiled for the CPU (`precision`: INFERENCE_PRECISION_HINT, None for
    the plugin's own); a file OpenVINO cannot read or compile is an `InputError` naming it."""
    ov = load("openvino", "running an OpenVINO file")
    config = {"INFERENCE_PRECISION_HINT": precision} if precision else {}
    if num_threads:
        config["INFERENCE_NUM_THREADS"] = int(num_threads)
    try:
        core = ov.Core()
        return core.compile_model(core.read_model(path), "CPU", config)
    except Exception as error:  # openvino raises RuntimeError and its own types
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InputError(f"{path}: OpenVINO cannot run it ({first})") from None


class OpenVinoRunner(_Runner):
    """One OpenVINO IR (.xml beside its .bin) compiled for the CPU, in f32 by default
    (`precision`: the plugin's INFERENCE_PRECISION_HINT; None leaves the plugin's own, bf16 on
    a CPU with AMX or AVX-512 BF16: faster, about 3 significant digits)."""

    def __init__(self, path, num_threads=None, precision: str | None = "f32"):
        path = os.fspath(path)
        self.model = compile_openvino(path, num_threads, precision)
        self.request = self.model.create_infer_request()
        inputs = self.model.inputs
        shape = inputs[0].get_partial_shape()
        self._finish(path, [i.get_any_name() for i in inputs],
                     [o.get_any_name() for o in self.model.outputs],
                     [d.get_length() if d.is_static else -1 for d in shape])

    def __call__(self, **inputs) -> dict:
        results = self.request.infer(self._feed(inputs))
        return {output.get_any_name(): np.array(value) for output, value in results.items()}


# What a text-in ONNX file is sent for a NUL: onnxruntime-extensions' string ops read a string
# up to its first NUL, and SentencePiece reads this noncharacter as the same unknown one.
NUL_STANDIN = "\ufdd0"
_EXTENSIONS = "onnxruntime_extensions._extensions_pydll"


def text_ops_safe() -> bool:
    """Whether this process can run onnxruntime-extensions' ops: not when it loaded TensorFlow
    before them (their protobuf and RE2 copies clash: SentencePiece crashes the process, the
    regex split gives whole strings). `import onnxruntime_extensions` first, and both work."""
    names = list(sys.modules)
    # The first of TensorFlow's modules, not "tensorflow" itself: a caller that removes and puts
    # back sys.modules["tensorflow"] (a test's monkeypatch) moves that key to the end.
    first_tf = next((i for i, name in enumerate(names)
                     if name == "tensorflow" or name.startswith("tensorflow.")), None)
    if first_tf is None:
        return True
    return _EXTENSIONS in sys.modules and names.index(_EXTENSIONS) < first_tf


def text_rows(runner, text_a, text_b) -> tuple[list, list]:
    """(texts, text pairs: "" for none) of a call of a text-in file's `runner`, each UTF-8
    (`require_utf8`), as many pairs as texts; pairs for a file without `text_b` (a token
    classifier's sentences) are one error naming the file."""
    texts = require_utf8([text_a] if isinstance(text_a, (str, bytes)) else list(text_a))
    pairs = [""] * len(texts) if text_b is None else require_utf8(
        [text_b] if isinstance(text_b, (str, bytes)) else [p or "" for p in text_b],
        "text pair")
    if len(pairs) != len(texts):
        raise InputError(f"{len(texts)} texts but {len(pairs)} text pairs")
    if text_b is not None and "text_b" not in runner.inputs:
        raise InputError(f"{runner.label}: takes single texts (text_a); text pairs cannot be "
                         "given")
    return texts, pairs


class OnnxTextRunner:
    """A text-in .onnx file (`<head>.text.<kind>.onnx`, `serving.onnx_text`; a token
    classifier's: `serving.onnx_tagger`): keyword inputs `text_a` (+ `text_b`) as lists of
    str → {output name: numpy array}; onnxruntime with onnxruntime-extensions' ops
    registered. `.max_seq_length` is its `<head>.json`'s."""

    takes_text = True

    def __init__(self, path, max_seq_length: int, num_threads=None):
        self.label = path = os.fspath(path)
        if not text_ops_safe():
            raise InputError(f"{path}: a text-in ONNX file cannot run in a process that imported "
                             "TensorFlow before onnxruntime_extensions (their SentencePiece "
                             "and RE2 copies clash); import onnxruntime_extensions first, or "
                             "run its ids file")
        ort = load("onnxruntime", "running an ONNX file")
        extensions = load("onnxruntime_extensions", "running a text-in ONNX file")
        options = ort.SessionOptions()
        options.register_custom_ops_library(extensions.get_library_path())
        if num_threads:
            options.intra_op_num_threads = int(num_threads)
        try:
            self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime's own error types (Fail, InvalidGraph, ...)
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise InputError(f"{path}: onnxruntime cannot run it ({first})") from None
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.outputs = [o.name for o in self.session.get_outputs()]
        self.max_seq_length = int(max_seq_length)

    def __call__(self, text_a, text_b=None) -> dict:
        texts, pairs = text_rows(self, text_a, text_b)
        feed = {"text_a": np.array([t.replace("\x00", NUL_STANDIN) for t in texts], object)}
        if "text_b" in self.inputs:
            feed["text_b"] = np.array([t.replace("\x00", NUL_STANDIN) for t in pairs], object)
        values = self.session.run(self.outputs, feed)
        return dict(zip(self.outputs, values))


def output_name(output) -> str:
    """The name of a compiled IR's output: the one without a "/" where it has one (OpenVINO
    gives an output the names of the values it was merged with, a token classifier's
    `tag_ids` also `tokenizer/ScatterND_865`), else any."""
    names = sorted(output.get_names(), key=lambda n: ("/" in n, n))
    return names[0] if names else output.get_any_name()


class OpenVinoTextRunner:
    """A text-in OpenVINO IR (`<head>.text.<kind>.xml`, `serving.openvino_text`): called as
    `OnnxTextRunner`; openvino-tokenizers imported (it registers its ops with every Core),
    compiled in f32 as `OpenVinoRunner`. `.max_seq_length` is its `<head>.json`'s."""

    takes_text = True

    def __init__(self, path, max_seq_length: int, num_threads=None,
                 precision: str | None = "f32"):
        self.label = path = os.fspath(path)
        load("openvino_tokenizers", "running a text-in OpenVINO file")
        self.model = compile_openvino(path, num_threads, precision)
        self.request = self.model.create_infer_request()
        self.inputs = [i.get_any_name() for i in self.model.inputs]
        self.outputs = [output_name(o) for o in self.model.outputs]
        self.max_seq_length = int(max_seq_length)

    def __call__(self, text_a, text_b=None) -> dict:
        texts, pairs = text_rows(self, text_a, text_b)
        if not texts:  # the CPU plugin cannot run a batch of none: each output with 0 rows
            return {output_name(o): np.zeros(
                [0] + [d.get_length() if d.is_static else 0
                       for d in list(o.get_partial_shape())[1:]],
                o.get_element_type().to_dtype()) for o in self.model.outputs}
        # numpy's str arrays drop a trailing NUL: SentencePiece reads the stand-in as it.
        feed = {"text_a": np.array([t.replace("\x00", NUL_STANDIN) for t in texts], str),
                "text_b": np.array([t.replace("\x00", NUL_STANDIN) for t in pairs], str)}
        results = self.request.infer({n: feed[n] for n in self.inputs})
        return {output_name(output): np.array(value) for output, value in results.items()}


def onnx_runner(path, num_threads=None) -> OnnxRunner:
    return OnnxRunner(path, num_threads)


def openvino_runner(path, num_threads=None) -> OpenVinoRunner:
    return OpenVinoRunner(path, num_threads)


def runner(path, num_threads=None):
    """The runner of an .onnx or OpenVINO .xml file, by its suffix."""
    path = os.fspath(path)
    if path.endswith(".onnx"):
        return onnx_runner(path, num_threads)
    if path.endswith(".xml"):
        return openvino_runner(path, num_threads)
    raise InputError(f"{path}: neither an .onnx file nor an OpenVINO .xml file")
