"""Running the TFLite files of `albert_tf.serving.tflite` on raw text: what a device app mirrors.

    encoder = LiteEncoder.from_folder("exports/tflite", kind="dynamic_int8")
    encoder.encode(["ALBERT is small."])["pooled_output"]          # [1, H]
    classifier = LiteClassifier.from_folder("out/export/tflite")
    classifier.classify(["a lovely film", "a dull film"])           # label names / class ids

Text is tokenized in Python with `albert_tf.tokenization` (the SentencePiece model or WordPiece
vocabulary written beside the .tflite) and packed as the fine-tuning data is:
`[CLS] a [SEP] (b [SEP])`, zero-padded to the file's sequence length.

The interpreter is `ai_edge_litert`'s when that package is installed (LiteRT, the runtime
TensorFlow now points to), else TensorFlow's own `tf.lite.Interpreter` (deprecated but present
in TF 2.21, same kernels): no extra dependency is needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import warnings

import numpy as np

from albert_tf import tokenization
from albert_tf.tokenization import pack_pair
from albert_tf.errors import InputError
from albert_tf.serving.tflite_file import read_tflite


def _interpreter_class():
    # LiteRT is an optional dependency; TensorFlow only when it is missing, so a device-side
    # runner with LiteRT never imports TensorFlow.
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        import tensorflow as tf

        Interpreter = tf.lite.Interpreter
    return Interpreter


@contextlib.contextmanager
def _native_log_quiet():
    """TFLite's C++ logger says "Created TensorFlow Lite XNNPACK delegate for CPU." on stderr when
    an interpreter first runs, and no Python setting reaches it: the process's stderr goes to
    /dev/null for that call (Python's exceptions are not affected). ALBERT_TF_TRACEBACK=1 keeps
    the line, as it keeps TensorFlow's start-up lines."""
    if os.environ.get("ALBERT_TF_TRACEBACK"):
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class LiteRunner:
    """One .tflite signature; inputs of any batch (the inputs are resized when it changes).
    A file is checked (`tflite_file.read_tflite`) before the interpreter sees it: a damaged
    one is an `InputError` naming it, never a crash of the process."""

    def __init__(self, model_path=None, model_content=None, num_threads=None):
        label = "the TFLite model" if model_path is None else os.fspath(model_path)
        if model_path is not None:
            model_content, signatures = read_tflite(model_path)
            self.outputs = next(iter(signatures.values()))["outputs"]
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*Interpreter is deprecated.*")
                self.interpreter = _interpreter_class()(
                    model_content=model_content, num_threads=num_threads or os.cpu_count())
            self.runner = self.interpreter.get_signature_runner()
            self.input_details = self.runner.get_input_details()
            self.outputs = list(self.runner.get_output_details())
        except (ValueError, RuntimeError) as error:  # what the interpreter says of a bad file
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise InputError(f"{label}: the TFLite runtime cannot run it ({first})") from None
        shape = next(iter(self.input_details.values()))["shape"]
        if len(shape) != 2:
            raise InputError(f"{label}: inputs of shape {list(shape)}; expected "
                             "[batch, max_seq_length] (a file written by albert_tf's export)")
        self.max_seq_length = int(shape[1])

    def __call__(self, **inputs) -> dict:
        feed = {name: np.asarray(inputs[name], np.int32) for name in self.input_details}
        if not getattr(self, "_ran", False):  # the delegate, and its log line, come on the first run
            with _native_log_quiet():
                outputs = self.runner(**feed)
            self._ran = True
        else:
            outputs = self.runner(**feed)
        return {name: np.array(value) for name, value in outputs.items()}


def interpreter_runner(model_path=None, model_content=None, num_threads=None) -> LiteRunner:
    return LiteRunner(model_path, model_content, num_threads)


class _LiteTextModel:
    def __init__(self, tflite_file, spm_model_file=None, vocab_file=None,
                 do_lower_case: bool = True, num_threads=None, metadata=None, open_runner=None):
        self.path = os.fspath(tflite_file)
        # `open_runner(path)`: another runtime's runner of the same ids-in file (an ONNX or
        # OpenVINO one, `serving.runtimes`); by default the TFLite interpreter's.
        self.model = (open_runner(self.path) if open_runner is not None else
                      LiteRunner(self.path, num_threads=num_threads))  # the file checked first
        if not (spm_model_file or vocab_file):
            raise InputError(f"{tflite_file}: a SentencePiece model or WordPiece vocab file is "
                             "needed to tokenize text")
        missing = [name for name in self.OUTPUTS if name not in self.model.outputs]
        if missing:
            raise InputError(f"{self.path}: has the outputs {', '.join(self.model.outputs)}, not "
                             f"{', '.join(missing)}: not a {type(self).__name__} file"
                             f"{_other_kind(self.model.outputs)}")
        self.max_seq_length = self.model.max_seq_length
        self.metadata = metadata or {}
        self.do_lower_case = do_lower_case
        self.spm = bool(spm_model_file)
        self.tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case, spm_model_file)

    @classmethod
    def from_folder(cls, folder, kind: str = "dynamic_int8", name: str | None = None, **kwargs):
        """The `<name>.<kind>.tflite` of a folder written by `export_tflite`, with the tokenizer
        and settings of its `<name>.json`."""
        name = name or cls.FILE_NAME
        folder = find_folder(os.fspath(folder), name)
        meta_path = os.path.join(folder, f"{name}.json")
        meta = read_metadata(meta_path)
        if kind not in meta["files"]:
            raise InputError(f"{meta_path}: no {kind} file (written: "
                             f"{', '.join(meta['files']) or 'none'})")
        joined = {k: os.path.join(folder, meta[k]) for k in ("spm_model_file", "vocab_file")
                  if meta.get(k)}
        return cls(os.path.join(folder, meta["files"][kind]), do_lower_case=meta["do_lower_case"],
                   metadata=meta, **joined, **kwargs)

    def _tokens(self, text):
        if self.spm:  # SentencePiece mode tokenizes as-is: normalise first, as the data code does
            text = tokenization.preprocess_text(text, lower=self.do_lower_case)
        return self.tokenizer.tokenize(text)

    def pack(self, texts, text_pairs=None) -> dict:
        """Raw text (and optional second segments) → the three int32 [B, S] inputs."""
        texts = [texts] if isinstance(texts, str) else list(texts)
        pairs = [None] * len(texts) if text_pairs is None else (
            [text_pairs] if isinstance(text_pairs, str) else list(text_pairs))
        if len(pairs) != len(texts):
            raise InputError(f"{len(texts)} texts but {len(pairs)} text pairs")
        length = self.max_seq_length
        ids = np.zeros((len(texts), length), np.int32)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for row, (text_a, text_b) in enumerate(zip(texts, pairs)):
            tokens_a = self._tokens(text_a)
            tokens_b = self._tokens(text_b) if text_b else []
            tokens, segments = pack_pair(tokens_a, tokens_b, length)
            piece_ids = self.tokenizer.convert_tokens_to_ids(tokens)
            ids[row, :len(piece_ids)] = piece_ids
            mask[row, :len(piece_ids)] = 1
            types[row, :len(segments)] = segments
        return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}

    def run(self, texts, text_pairs=None) -> dict:
        if getattr(self.model, "takes_text", False):  # a text-in ONNX file tokenizes itself
            texts = [texts] if isinstance(texts, str) else list(texts)
            return self.model(texts, text_pairs)
        return self.model(**self.pack(texts, text_pairs))


class LiteEncoder(_LiteTextModel):
    """`encode(texts)` → {"pooled_output" [B,H], "sequence_output" [B,S,H]}."""

    FILE_NAME = "encoder"
    OUTPUTS = ("pooled_output", "sequence_output")

    def encode(self, texts, text_pairs=None) -> dict:
        return self.run(texts, text_pairs)


class LiteEmbedder(_LiteTextModel):
    """`embed(texts)` → L2-normalised [B, H] vectors of an `embedder.<kind>.tflite` file
    (`TextEncoder.export_tflite`: the encoder with its pooling, albert_tf/tasks/embeddings)."""

    FILE_NAME = "embedder"
    OUTPUTS = ("embeddings",)

    def embed(self, texts):
        return self.run(texts)["embeddings"]


class LiteClassifier(_LiteTextModel):
    """`predict(texts)` → probabilities [B,C]; `classify(texts)` → a label name per text (class
    ids when the export has none), or for a multi-label file the set of names at or above its
    threshold; `predict_labels(texts)` → the single most probable label per text.
    A regression file (`regression` in its JSON): `predict` → the score per text [B], and
    `classify` / `predict_labels` are refused (they would name class 0 for every text)."""

    FILE_NAME = "classifier"
    OUTPUTS = ("probabilities",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        shape = (self.model.runner.get_output_details()["probabilities"]["shape"]
                 if isinstance(self.model, LiteRunner) else
                 self.run([""])["probabilities"].shape)  # another runtime: its answer's
        if len(shape) != 2:  # a token classifier's are per piece: [batch, seq, classes]
            raise InputError(f"{self.path}: its probabilities have shape "
                             f"{[int(n) for n in shape]}, one row "
                             "per piece: a token-classifier file, not a text classifier's "
                             f"[batch, classes]; open its export with {_TAGGER}")
        names, columns = self.label_names, int(shape[-1])
        if names is not None and len(names) != columns:
            raise InputError(f"{self.path}: {len(names)} label names in its JSON (key "
                             f"label_names) for {columns} classes")
        regression = self.metadata.get("regression")
        # A file without the key (older, or opened without its JSON): one column is a score,
        # since a softmax over one class would always say 1.
        self.regression = bool(regression) if regression is not None else (
            columns == 1 and not self.multi_label)
        if self.regression and columns != 1:
            raise InputError(f"{self.path}: its JSON says regression (one score) but the file "
                             f"has {columns} outputs per text")

    @property
    def label_names(self):
        return self.metadata.get("label_names")

    @property
    def multi_label(self) -> bool:
        return bool(self.metadata.get("multi_label"))

    def predict(self, texts, text_pairs=None) -> np.ndarray:
        """Probabilities [B,C]; a regression file's score per text [B]."""
        probabilities = self.run(texts, text_pairs)["probabilities"]
        return probabilities[:, 0] if self.regression else probabilities

    def _check_labels(self):
        if self.regression:
            raise InputError(f"{self.path}: a regression model (it predicts a score, not a "
                             "label); use predict(texts) for the scores")

    def _name(self, index: int):
        names = self.label_names
        return names[index] if names else int(index)

    def predict_labels(self, texts, text_pairs=None) -> list:
        """The most probable label of each text (a name, or a class id without names)."""
        self._check_labels()
        return [self._name(i) for i in np.argmax(self.predict(texts, text_pairs), axis=-1)]

    def classify(self, texts, text_pairs=None) -> list:
        """A label per text; a multi-label file: the labels at or above its threshold."""
        self._check_labels()
        if not self.multi_label:
            return self.predict_labels(texts, text_pairs)
        threshold = self.metadata["threshold"]
        return [[self._name(i) for i in np.flatnonzero(row >= threshold)]
                for row in self.predict(texts, text_pairs)]


# What opens a token classifier's export (tags per word, in any format).
_TAGGER = ('albert_tf.serving.predictor.Predictor.open(<its export folder>, format="tflite", '
           '"onnx" or "openvino")')

# An output name that only one kind of file has → what to use for it instead.
_KIND_HINTS = (("pooled_output", "an encoder file: use LiteEncoder"),
               ("probabilities", "a classifier file: use LiteClassifier"),
               ("start_logits", "a SQuAD file: run it with interpreter_runner"))


def _other_kind(outputs) -> str:
    return next((f" ({hint})" for output, hint in _KIND_HINTS if output in outputs), "")


# What each TFLite export's `<name>.json` (a head's TFLITE_NAME) holds, and what opens it.
_RUNNER = "albert_tf.serving.lite.interpreter_runner on its .tflite file"
_OPENERS = {"encoder": ("an encoder", "LiteEncoder.from_folder"),
            "classifier": ("a classifier", "LiteClassifier.from_folder"),
            "token_classifier": ("a token classifier", f"{_TAGGER} (tags per word)"),
            "squad": ("a SQuAD model", f"{_RUNNER} (start and end logits)")}


def _search(folder: str, name: str) -> str | None:
    """The folder holding `<name>.json` (see `find_folder`), or None."""
    for candidate in (folder, os.path.join(folder, "tflite"),
                      os.path.join(folder, name, "tflite")):
        if os.path.isfile(os.path.join(candidate, f"{name}.json")):
            return candidate
        if os.path.isdir(candidate):
            versions = [int(n) for n in os.listdir(candidate) if n.isdigit()
                        and os.path.isfile(os.path.join(candidate, n, f"{name}.json"))]
            if versions:
                return os.path.join(candidate, str(max(versions)))
    return None


def find_folder(folder: str, name: str) -> str:
    """The folder holding `<name>.json`: `folder` itself (a version folder, or an older flat
    one), else the newest version `<n>` in `folder`, `folder/tflite` or `folder/<name>/tflite`
    (an export's TFLite files are versioned with its SavedModel: `<base>/tflite/<n>`). A
    folder holding another head's TFLite files is one error naming them and what opens them."""
    found = _search(folder, name)
    if found is not None:
        return found
    held = [(other, where) for other in _OPENERS if other != name
            for where in [_search(folder, other)] if where is not None]
    if held:
        other, where = held[0]
        what, opener = _OPENERS[other]
        this = _OPENERS.get(name, (None, name))[1].split(".")[0]
        raise InputError(f"{folder} holds {os.path.join(where, other + '.json')} (the TFLite "
                         f"files of {what}), not {name}.json: open it with {opener}, not {this}")
    raise InputError(f"{os.path.join(folder, name + '.json')} not found, nor in a version folder "
                     "under it (write it with export_saved_model.py --tflite or an --export_dir "
                     "run with --tflite)")


def read_metadata(path: str) -> dict:
    """The `<name>.json` export_tflite writes, checked: one InputError naming the file and key."""
    try:
        with open(path, "rb") as reader:
            meta = json.loads(reader.read().decode("utf-8"))
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 text (byte {error.start}); not a TFLite export's "
                         "JSON file") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: not valid JSON ({error.msg}); export the "
                         "TFLite files again") from None
    if not isinstance(meta, dict):
        raise InputError(f"{path}: a JSON {type(meta).__name__}, not the object a TFLite "
                         "export writes")
    files = meta.get("files")
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in files.items()):
        raise InputError(f"{path}: key files must map each kind to its file name")
    if not isinstance(meta.get("do_lower_case"), bool):
        raise InputError(f"{path}: key do_lower_case must be true or false")
    for key in ("spm_model_file", "vocab_file"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise InputError(f"{path}: key {key} must be a file name")
    if not (meta.get("spm_model_file") or meta.get("vocab_file")):
        raise InputError(f"{path}: names no tokenizer file (key spm_model_file or vocab_file)")
    names = meta.get("label_names")
    if names is not None and not (isinstance(names, list) and all(isinstance(n, str)
                                                                   for n in names)):
        raise InputError(f"{path}: key label_names must be a list of names")
    if meta.get("multi_label") is not None and not isinstance(meta["multi_label"], bool):
        raise InputError(f"{path}: key multi_label must be true or false")
    if meta.get("regression") is not None and not isinstance(meta["regression"], bool):
        raise InputError(f"{path}: key regression must be true or false")
    if meta.get("regression") and meta.get("multi_label"):
        raise InputError(f"{path}: keys regression and multi_label are both true; a file is one "
                         "or the other")
    threshold = meta.get("threshold")
    if meta.get("multi_label") and not (isinstance(threshold, (int, float)) and
                                        not isinstance(threshold, bool) and 0 < threshold < 1):
        raise InputError(f"{path}: key threshold must be a number between 0 and 1 (a "
                         "multi-label file chooses the labels at or above it)")
    return meta
