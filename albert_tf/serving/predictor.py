"""`Predictor`: one class opens any export of a classifier, a token classifier or an encoder,
whatever its runtime.

    classifier = Predictor.open("exports/classifier")                    # the SavedModel
    classifier = Predictor.open("exports/classifier", format="onnx", kind="dynamic_int8")
    classifier.classify(["a lovely film"]), classifier.predict_labels(...), classifier.predict(...)
    tagger = Predictor.open("exports/token_classifier", format="tflite")
    tagger.tag(["Ada Lovelace met Babbage"])   # [["B-PER", "I-PER", "O", "B-PER"]]
    encoder = Predictor.open("exports/encoder", format="tflite")
    encoder.encode(["ALBERT is small."])     # {"pooled_output" [B, H], "sequence_output" [B, S, H]}

`path` is an export's folder for one head (`<export_dir>/<name>`, or one of its version
folders); `format` picks the runtime: "saved_model" (default), "tflite", "onnx" or "openvino",
whose files an export publishes beside its SavedModel (`<name>/<format>/<version>/`, with
`<name>.json`). The answers are the same in every format (up to the kind's rounding): label
names from the export, a multi-label classifier's set of names, a regressor's score.

* SavedModel: the raw-text signatures, tokenized in the graph — a classifier's `serve_text`
  (and `serve_pair` for text pairs), a token classifier's `serve_text` (tags per word), an
  encoder's ids signature fed by the preprocessing export beside it
  (`<export_dir>/preprocessing/<version>`).
* ONNX: a classifier's, a token classifier's or an encoder's text-in file
  (`<name>.text.<kind>.onnx`, tokenized inside the file: `serving.onnx_text`; a token
  classifier's words, windows and tags too: `serving.onnx_tagger`) where the export wrote one
  and this process can run it (onnxruntime_extensions imported before TensorFlow:
  `runtimes.text_ops_safe`), else its ids file; `text_in=True` / `False` chooses.
* OpenVINO: a classifier's, a token classifier's or an encoder's text-in file
  (`<name>.text.<kind>.xml`, `serving.openvino_text`; a token classifier's:
  `serving.openvino_tagger`) where the export wrote one (openvino-tokenizers' ops run in a
  process that imported TensorFlow), else its ids file; `text_in=False` chooses the ids file.
* TFLite, ONNX, OpenVINO: ids-in files, the text tokenized in Python with the tokenizer file
  beside them (`serving.lite`, over the runtime's runner: `serving.runtimes`); a token
  classifier's words in run_ner.py's windows, each word tagged at its first piece in the window
  where it has the most context (`tokenization.word_windows`).
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.errors import InputError
from albert_tf.run_config import window_stride
from albert_tf.serving import runtimes
from albert_tf.serving.lite import (LiteClassifier, LiteEncoder, LiteRunner, find_folder,
                                    read_metadata)
from albert_tf.serving.onnx_tagger import window_inputs
from albert_tf.serving.runtime_text import as_text
from albert_tf.tokenization.word_windows import WordPieces, text_windows

FORMATS = ("saved_model", "tflite", "onnx", "openvino")
_LITE = {"classifier": LiteClassifier, "encoder": LiteEncoder}


def _versions(base: str) -> list:
    return sorted(int(n) for n in os.listdir(base) if n.isdigit() and
                  os.path.isfile(os.path.join(base, n, "saved_model.pb")))


def saved_model_folder(path: str) -> tuple[str, str]:
    """(the export's base folder, its SavedModel version folder: `path` itself when it is one,
    else the newest version under it)."""
    if os.path.isfile(os.path.join(path, "saved_model.pb")):
        return os.path.dirname(os.path.abspath(path)), path
    versions = _versions(path) if os.path.isdir(path) else []
    if not versions:
        raise InputError(f"{path}: no SavedModel (saved_model.pb) in it or in a version folder "
                         "under it (write it with export_saved_model.py)")
    return path, os.path.join(path, str(versions[-1]))


def _join_separator(signature) -> str:
    """The `separator` of the string join in a signature's graph (its functions included): what
    a multi-label export's `labels` output joins the chosen names with (the ids signature
    `serving_default`: no tokenizer's joins beside it); "," when none."""
    graph = signature.graph.as_graph_def()
    nodes = [*graph.node, *(node for function in graph.library.function
                            for node in function.node_def)]
    found = [node.attr["separator"].s for node in nodes
             if node.op == "UnsortedSegmentJoin" and node.attr["separator"].s]
    return found[0].decode("utf-8") if found else ","


class _SavedModelClassifier:
    """A classifier SavedModel's raw-text signatures, as `LiteClassifier`'s calls."""

    def __init__(self, folder: str):
        self.path = folder
        self.loaded = tf.saved_model.load(folder)
        signatures = self.loaded.signatures
        if "serve_text" not in signatures:
            raise InputError(f"{folder}: no serve_text signature (exported without a tokenizer "
                             "file?): open its TFLite, ONNX or OpenVINO files instead")
        self.single = signatures["serve_text"]
        takes_pairs = "text_b" in self.single.structured_input_signature[1]
        self.pair = signatures["serve_pair"] if "serve_pair" in signatures else (
            self.single if takes_pairs else None)
        if takes_pairs:  # run_classifier's export of a pair task: text_b required
            self.single = None
        self._separator = None

    @property
    def separator(self) -> str:
        """The separator a multi-label export joins its chosen names with (run_classifier's
        --label_separator): the one its graph's join records, "," when none is found."""
        if self._separator is None:
            self._separator = _join_separator(self.loaded.signatures["serving_default"])
        return self._separator

    def outputs(self, texts, text_pairs=None) -> dict:
        texts = [texts] if isinstance(texts, str) else list(texts)
        if text_pairs is None and self.single is not None:
            result = self.single(text_a=tf.constant(texts))
        elif self.pair is not None:
            pairs = [text_pairs] if isinstance(text_pairs, str) else list(text_pairs or
                                                                          [""] * len(texts))
            if len(pairs) != len(texts):
                raise InputError(f"{len(texts)} texts but {len(pairs)} text pairs")
            result = self.pair(text_a=tf.constant(texts),
                               text_b=tf.constant([p or "" for p in pairs]))
        else:
            raise InputError(f"{self.path}: serves single texts; text_pairs cannot be given")
        return {k: v.numpy() for k, v in result.items()}


class _SavedModelEncoder:
    """An encoder SavedModel fed by the preprocessing export beside it."""

    def __init__(self, folder: str, base: str):
        version = os.path.basename(folder)
        preprocessing = os.path.join(os.path.dirname(base), "preprocessing", version)
        if not os.path.isfile(os.path.join(preprocessing, "saved_model.pb")):
            raise InputError(f"{folder}: takes ids, and there is no {preprocessing} to tokenize "
                             "text for it (export_saved_model.py writes both from a folder "
                             "with a tokenizer)")
        self.encoder = tf.saved_model.load(folder).signatures["serving_default"]
        signatures = tf.saved_model.load(preprocessing).signatures
        self.single, self.pair = signatures["serving_default"], signatures["serve_pair"]

    def encode(self, texts, text_pairs=None) -> dict:
        texts = [texts] if isinstance(texts, str) else list(texts)
        if text_pairs is None:
            ids = self.single(text=tf.constant(texts))
        else:
            pairs = [text_pairs] if isinstance(text_pairs, str) else list(text_pairs)
            ids = self.pair(text_a=tf.constant(texts),
                            text_b=tf.constant([p or "" for p in pairs]))
        out = self.encoder(**ids)
        return {k: out[k].numpy() for k in ("pooled_output", "sequence_output")}


class _SavedModelTagger:
    """A token classifier SavedModel's `serve_text`: tags per whitespace-separated word."""

    def __init__(self, folder: str):
        self.path = folder
        signatures = tf.saved_model.load(folder).signatures
        if "serve_text" not in signatures:
            raise InputError(f"{folder}: no serve_text signature (exported without a tokenizer "
                             "file?): open its TFLite, ONNX or OpenVINO files instead")
        self.serve = signatures["serve_text"]

    def tag(self, texts) -> list:
        out = self.serve(text=tf.constant(texts))["tags"].numpy()
        return [[t.decode("utf-8") for t in row[:len(text.split())]]
                for row, text in zip(out, texts)]


class _IdsTagger:
    """A token classifier's ids-in file (TFLite, ONNX, OpenVINO) on whitespace-separated words:
    run_ner.py's windows and home-window rule (`tokenization.word_windows`) in Python."""

    def __init__(self, folder: str, kind: str, open_runner, num_threads=None):
        meta_path = os.path.join(folder, "token_classifier.json")
        meta = read_metadata(meta_path)
        if kind not in meta["files"]:
            raise InputError(f"{meta_path}: no {kind} file (written: "
                             f"{', '.join(meta['files']) or 'none'})")
        self.path = os.path.join(folder, meta["files"][kind])
        self.model = (open_runner(self.path) if open_runner is not None else
                      LiteRunner(self.path, num_threads=num_threads))
        files = {k: os.path.join(folder, meta[k]) if meta.get(k) else None
                 for k in ("spm_model_file", "vocab_file")}
        tokenizer = tokenization.FullTokenizer(files["vocab_file"], meta["do_lower_case"],
                                               files["spm_model_file"])
        self.pieces = WordPieces(tokenizer, meta["do_lower_case"])
        self.length = self.model.max_seq_length
        self.stride = window_stride(None, self.length)  # export_saved_model's windows
        self.names = meta.get("label_names")

    def tag(self, texts) -> list:
        records, homes = text_windows(texts, self.pieces, self.length, self.stride)
        if not records:
            return [[] for _ in texts]
        probabilities = self.model(**window_inputs(records))["probabilities"]
        return [[self.names[best] if self.names else best
                 for best in (int(np.argmax(probabilities[k, at])) for k, at in home)]
                for home in homes]


class _TextTagger:
    """A token classifier's text-in ONNX or OpenVINO file (`serving.onnx_tagger`,
    `serving.openvino_tagger`): the words, windows and tags inside the file; its tag names
    (or, where the export has none, tag ids) per word."""

    def __init__(self, folder: str, runner):
        self.model = runner  # the format's text runner (runtimes.OnnxTextRunner, ...)
        self.names = read_metadata(os.path.join(folder, "token_classifier.json")).get(
            "label_names")

    def tag(self, texts) -> list:
        if not texts:
            return []
        out = self.model(texts)
        return [[str(tag) if self.names else int(i) for tag, i in zip(tags, ids) if i >= 0]
                for tags, ids in zip(out["tags"], out["tag_ids"])]


# The runners of the text-in files, by format.
_TEXT_RUNNERS = {"onnx": runtimes.OnnxTextRunner, "openvino": runtimes.OpenVinoTextRunner}


def _text_file(folder: str, head: str, kind: str):
    """(path, max_seq_length) of the text-in file of `kind` in `folder`, or None."""
    meta = read_metadata(os.path.join(folder, f"{head}.json"))
    name = (meta.get("text_files") or {}).get(kind) if meta.get("text_in") else None
    return None if name is None else (os.path.join(folder, name), meta["max_seq_length"])


class Predictor:
    """One head's export in one runtime: `classify` / `predict_labels` / `predict` for a
    classifier, `tag` for a token classifier, `encode` for an encoder (see the module)."""

    def __init__(self, head: str, model, format: str):  # noqa: A002
        self.head, self.model, self.format = head, model, format

    @classmethod
    def open(cls, path, format: str = "saved_model", kind: str = "float32",  # noqa: A002
             name: str | None = None, num_threads=None, text_in: bool | None = None
             ) -> Predictor:
        """The export at `path` (`<export_dir>/<name>` or a version folder) in `format`;
        `kind` (float32, dynamic_int8, ...) picks the file of the other formats; `name`: the
        head's file name when the folder's name is not it (classifier, encoder); `text_in`:
        an ONNX or OpenVINO export's text-in file where it has one (None: OpenVINO's always,
        ONNX's where this process can run it, `runtimes.text_ops_safe`; False: its ids file,
        the text tokenized in Python)."""
        path = os.fspath(path)
        if format not in FORMATS:
            raise InputError(f"format={format!r}: not one of {', '.join(FORMATS)}")
        if format == "saved_model":
            base, folder = saved_model_folder(path)
            head = name or os.path.basename(base)
            if head == "classifier":
                return cls(head, _SavedModelClassifier(folder), format)
            if head == "encoder":
                return cls(head, _SavedModelEncoder(folder, base), format)
            if head == "token_classifier":
                return cls(head, _SavedModelTagger(folder), format)
            raise InputError(f"{path}: a {head} export; Predictor opens classifier, "
                             "token_classifier and encoder exports")
        base = os.path.dirname(os.path.abspath(path)) if os.path.isfile(
            os.path.join(path, "saved_model.pb")) else path  # a version folder: its export's
        head = name or os.path.basename(base)
        if head not in (*_LITE, "token_classifier"):
            raise InputError(f"{path}: a {head} export; Predictor opens classifier, "
                             "token_classifier and encoder exports")
        folder = find_folder(os.path.join(base, format), head)
        open_runner = None if format == "tflite" else (
            lambda file: runtimes.runner(file, num_threads))
        if text_in is None:  # openvino-tokenizers' ops run after TensorFlow
            text_in = format == "openvino" or runtimes.text_ops_safe()
        text_file = _text_file(folder, head, kind) if format in _TEXT_RUNNERS and text_in \
            else None
        if text_file is not None:  # the file that takes strings (onnx_text, openvino_text)
            text_runner = _TEXT_RUNNERS[format]
            open_runner = (lambda file: text_runner(text_file[0], text_file[1], num_threads))
        if head == "token_classifier" and text_file is not None:
            return cls(head, _TextTagger(folder, open_runner(text_file[0])), format)
        if head == "token_classifier":
            return cls(head, _IdsTagger(folder, kind, open_runner, num_threads), format)
        model = _LITE[head].from_folder(folder, kind=kind, name=head, open_runner=open_runner,
                                        num_threads=num_threads)
        return cls(head, model, format)

    def _need(self, head: str, call: str):
        if self.head != head:
            article = "an" if head[0] in "aeiou" else "a"
            raise InputError(f"{call} is for {article} {head} export; this is a {self.head} one")

    def predict(self, texts, text_pairs=None) -> np.ndarray:
        """Probabilities [B, C] (a regressor: its score per text [B])."""
        texts, text_pairs = self._texts("classifier", "predict", texts, text_pairs)
        if isinstance(self.model, LiteClassifier):
            return self.model.predict(texts, text_pairs)
        out = self.model.outputs(texts, text_pairs)
        return out["score"] if "score" in out else out["probabilities"]

    def predict_labels(self, texts, text_pairs=None) -> list:
        """The most probable label of each text (its name, or a class id without names)."""
        texts, text_pairs = self._texts("classifier", "predict_labels", texts, text_pairs)
        if isinstance(self.model, LiteClassifier):
            return self.model.predict_labels(texts, text_pairs)
        out = self._checked(texts, text_pairs)
        if "labels" in out and out["predictions"].ndim == 1:
            return [label.decode("utf-8") for label in out["labels"]]
        return [int(i) for i in np.argmax(out["probabilities"], -1)]

    def classify(self, texts, text_pairs=None) -> list:
        """A label per text; a multi-label export: the labels it chose for each text."""
        texts, text_pairs = self._texts("classifier", "classify", texts, text_pairs)
        if isinstance(self.model, LiteClassifier):
            return self.model.classify(texts, text_pairs)
        out = self._checked(texts, text_pairs)
        if out["predictions"].ndim == 1:
            return self.predict_labels(texts, text_pairs)
        if "labels" in out:  # the chosen names joined by the export's own separator
            separator = self.model.separator
            return [names.decode("utf-8").split(separator) if row.any() else []
                    for row, names in zip(out["predictions"], out["labels"])]
        return [[int(i) for i in np.flatnonzero(row)] for row in out["predictions"]]

    def _texts(self, head: str, call: str, texts, text_pairs):
        """The texts and text pairs of a `call` only a `head` export answers, checked."""
        self._need(head, call)
        return as_text(texts), as_text(text_pairs, "text pair")

    def _checked(self, texts, text_pairs):
        out = self.model.outputs(texts, text_pairs)
        if "score" in out:
            raise InputError(f"{self.model.path}: a regression model (it predicts a score, not "
                             "a label); use predict(texts) for the scores")
        return out

    def tag(self, texts) -> list:
        """A token classifier's tag per whitespace-separated word of each text (tag names, or
        class ids where the export has none)."""
        self._need("token_classifier", "tag")
        texts = as_text(texts)
        return self.model.tag([texts] if isinstance(texts, str) else list(texts))

    def encode(self, texts, text_pairs=None) -> dict:
        """{"pooled_output" [B, H], "sequence_output" [B, S, H]}."""
        texts, text_pairs = self._texts("encoder", "encode", texts, text_pairs)
        out = self.model.encode(texts, text_pairs)
        return {k: np.asarray(out[k]) for k in ("pooled_output", "sequence_output")}
