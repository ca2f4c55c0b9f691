"""SavedModel export of a fine-tuned classifier, loadable by TF Serving.

Two signatures, built explicitly (the original relied on the Estimator filling one in):
* `serving_default`: serialized `tf.train.Example`s under the input key `input` (the
  original's receiver), holding `input_ids`, `input_mask`, `segment_ids` of length S;
* `serve_text`: raw UTF-8 `text_a` (and `text_b` for pair tasks, same batch size), tokenized
  in the graph with the SentencePiece model (or, for WordPiece models, the vocabulary)
  embedded in the export. A classifier whose task is not known (`pair=None`: one exported
  from a weight source) gets `serve_text(text_a)` for single texts and
  `serve_pair(text_a, text_b)` for pairs.
Both return `probabilities`, `predictions` (class ids), `labels` (the predicted class names,
when the export is given them: a lookup in a constant table) or, for a regressor, `score`, and,
when a threshold is baked in, the float32 scalar `threshold` (served alongside; it does not
change the predictions).

A multi-label classifier returns `probabilities` [B, C] (a sigmoid per label), `predictions`
[B, C] int32 (1: the label's probability is at least the model's threshold) and `labels` [B]:
the chosen names joined by the label separator, "" for none (test_predictions.tsv's cell).
With `windows` (`--long_document=windows`), `serve_text` (and `serve_pair`) read every window
of text_a (`windows.window_inputs`) and pool their logits as run_classifier.py does; the ids
signature `serving_default` scores each window it is given.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.models import classifier_outputs
from albert_tf.serving import reference
from albert_tf.serving.head_export import (SAMPLE_TEXT, HeadExport, example_bytes,
                                           numpy_outputs, text_labels)
from albert_tf.serving.saved_model import inference_call, serving_root, write_saved_model
from albert_tf.serving.text_inputs import checked_text
from albert_tf.tasks.classification.windows import pool_tf, window_inputs
from albert_tf.text import optional as text_optional
from albert_tf.text import text_preprocessor
from albert_tf.weights.source import MULTI_LABEL


def _strings(name):
    return tf.TensorSpec([None], tf.string, name=name)


class ClassifierServing:
    """Builds the serving functions of one classifier (and, for `serve_text`, its tokenizer)."""

    def __init__(self, model, max_seq_length: int, spm_model_file=None, do_lower_case=True,
                 pair: bool | None = True, threshold: float | None = None, label_names=None,
                 vocab_file=None, albert_text_rules: bool = True,
                 windows: tuple[int, str] | None = None, label_separator: str = ","):
        self.model = model
        self._model_call = inference_call(model)
        self.regression = bool(getattr(model, "is_regression", False))
        self.multi_label = bool(getattr(model, "multi_label", False))
        self.windows = windows  # (doc_stride, window_pooling), or None: the first window
        self.separator = label_separator
        self.label_names = None if self.regression or label_names is None else \
            [str(name) for name in label_names]
        if self.label_names is not None and len(self.label_names) != model.num_labels:
            raise ValueError(f"{len(self.label_names)} label names for a model with "
                             f"{model.num_labels} classes")
        self.max_seq_length = int(max_seq_length)
        self.pair = pair
        self.threshold = None if threshold is None or math.isnan(threshold) else float(threshold)
        self.preprocessor = None
        if (spm_model_file or vocab_file) and not text_optional.available():
            logging.warning("%s", text_optional.skipped("the classifier's serve_text signature"))
        else:
            # SentencePiece when given, else WordPiece over vocab_file (as FullTokenizer picks).
            self.preprocessor = text_preprocessor(max_seq_length, do_lower_case, spm_model_file,
                                                  vocab_file, albert_text_rules)

    def _outputs(self, features):
        return self._result(self._model_call(features))

    def _windowed(self, ids_a, ids_b):
        """The model's outputs per text from the pooled logits of all its windows."""
        stride, pooling = self.windows
        features, row = window_inputs(ids_a, ids_b, self.max_seq_length, stride,
                                      self.preprocessor.cls_id, self.preprocessor.sep_id)
        logits = self._model_call(features)["logits"]
        pooled = pool_tf(logits, row, ids_a.nrows(), pooling)
        return self._result(classifier_outputs(pooled, self.regression, self.multi_label,
                                               getattr(self.model, "threshold", 0.5)))

    def _result(self, outputs):
        result = {"probabilities": outputs["probabilities"], "predictions": outputs["predictions"]}
        if self.regression:
            result["score"] = tf.identity(outputs["predictions"])
        elif self.multi_label and self.label_names is not None:
            names = tf.broadcast_to(tf.constant(self.label_names, tf.string),
                                    tf.shape(outputs["predictions"]))
            chosen = tf.ragged.boolean_mask(names, outputs["predictions"] > 0)
            result["labels"] = tf.strings.reduce_join(chosen, axis=1, separator=self.separator)
        elif self.label_names is not None:
            result["labels"] = tf.gather(tf.constant(self.label_names, tf.string),
                                         outputs["predictions"])
        if self.threshold is not None:
            result["threshold"] = tf.constant(self.threshold, tf.float32)
        return result

    def parse_examples(self, serialized):
        spec = {name: tf.io.FixedLenFeature([self.max_seq_length], tf.int64)
                for name in ("input_ids", "input_mask", "segment_ids")}
        parsed = tf.io.parse_example(serialized, spec)
        return {name: tf.cast(value, tf.int32) for name, value in parsed.items()}

    def serve_examples(self, input):  # noqa: A002 - the argument name is the input key
        return self._outputs(self.parse_examples(input))

    def serve_pair(self, text_a, text_b):
        checked = checked_text(text_a=text_a, text_b=text_b)
        if self.windows:
            tokenize = self.preprocessor.tokenize_strings
            return self._windowed(tokenize(checked["text_a"]), tokenize(checked["text_b"]))
        return self._outputs(self.preprocessor((checked["text_a"], checked["text_b"])))

    def serve_single(self, text_a):
        text_a = checked_text(text_a=text_a)["text_a"]
        if self.windows:
            return self._windowed(self.preprocessor.tokenize_strings(text_a), None)
        return self._outputs(self.preprocessor(text_a))

    def module(self):
        """(root module, signatures) for `write_saved_model`."""
        functions = {"serving_default": tf.function(self.serve_examples, autograph=False,
                                                    input_signature=[_strings("input")])}
        resources = {}
        if self.preprocessor is None:
            text_optional.note_no_tokenizer_file()
        else:
            single = tf.function(self.serve_single, input_signature=[_strings("text_a")],
                                 autograph=False)
            pair = tf.function(self.serve_pair, autograph=False,
                               input_signature=[_strings("text_a"), _strings("text_b")])
            if self.pair is None:  # either: serve_text takes one text, serve_pair two
                functions.update(serve_text=single, serve_pair=pair)
            else:
                functions["serve_text"] = pair if self.pair else single
            # The tokenizer's resources are captured by serve_text: the root must hold them.
            resources.update(self.preprocessor.resources)
        root = serving_root(functions, resources)
        return root, {name: getattr(root, name) for name in functions}


def export_classifier(model, export_dir, max_seq_length: int, spm_model_file=None,
                      do_lower_case: bool = True, pair: bool = True,
                      threshold: float | None = None, version: int | None = None,
                      label_names=None, vocab_file=None, extras: dict | None = None,
                      windows: tuple[int, str] | None = None, label_separator: str = ",") -> str:
    """Writes `<export_dir>/<version>/` (one past the highest numeric folder by default, the
    layout TF Serving polls) through `write_saved_model`, with `extras` (its TFLite files,
    `<export_dir>/tflite/<version>`) published together; returns its path."""
    serving = ClassifierServing(model, max_seq_length, spm_model_file, do_lower_case, pair,
                                threshold, label_names, vocab_file, windows=windows,
                                label_separator=label_separator)
    root, signatures = serving.module()
    path = write_saved_model(root, export_dir, signatures, version, extras=extras)
    logging.info("exported SavedModel to %s", path)
    return path


def export_head(cls, inputs) -> HeadExport:
    """export_saved_model.py's export of a classifier source (`AlbertClassifier.SERVING`): a
    source does not say whether its task reads one text or two, so both `serve_text(text_a)`
    and `serve_pair(text_a, text_b)`; labels when the source names them."""
    source = inputs.source
    model = inputs.load(cls(inputs.config, source.num_labels,
                            multi_label=source.problem_type == MULTI_LABEL))
    return classifier_export(model, inputs, "classifier")


def classifier_export(model, inputs, name: str) -> HeadExport:
    """The `HeadExport` of a loaded classifier under the folder `name`."""
    labels = text_labels(inputs.source, model.num_labels)
    length = inputs.max_seq_length
    serving = ClassifierServing(model, length, inputs.spm_model_file, inputs.do_lower_case,
                                pair=None, label_names=labels, vocab_file=inputs.vocab_file,
                                albert_text_rules=inputs.albert_text_rules)
    root, signatures = serving.module()

    def check():  # (inputs, the Keras model's outputs) for the fresh-process comparison
        ids, mask, types_, _ = reference.sample_inputs(inputs.config, length=min(16, length))
        examples = [example_bytes(ids[i], mask[i], types_[i], length) for i in range(len(ids))]
        calls = {"serving_default": {"input": np.array(examples, dtype=object)}}
        expected = {"serving_default": numpy_outputs(serving.serve_examples(
            tf.constant(examples)))}
        if "serve_text" in signatures:
            text_a, text_b = (np.array(t) for t in SAMPLE_TEXT)
            calls["serve_text"] = {"text_a": text_a}
            expected["serve_text"] = numpy_outputs(serving.serve_single(tf.constant(text_a)))
            calls["serve_pair"] = {"text_a": text_a, "text_b": text_b}
            expected["serve_pair"] = numpy_outputs(serving.serve_pair(tf.constant(text_a),
                                                                      tf.constant(text_b)))
        return calls, expected

    return HeadExport(name, root, signatures, check, model, {"label_names": labels})
