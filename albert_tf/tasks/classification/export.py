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
"""

from __future__ import annotations

import math

import tensorflow as tf
from absl import logging

from albert_tf.serving.saved_model import serving_root, write_saved_model
from albert_tf.serving.text_inputs import checked_text
from albert_tf.text import optional as text_optional
from albert_tf.text import text_preprocessor


def _strings(name):
    return tf.TensorSpec([None], tf.string, name=name)


class ClassifierServing:
    """Builds the serving functions of one classifier (and, for `serve_text`, its tokenizer)."""

    def __init__(self, model, max_seq_length: int, spm_model_file=None, do_lower_case=True,
                 pair: bool | None = True, threshold: float | None = None, label_names=None,
                 vocab_file=None, albert_text_rules: bool = True):
        self.model = model
        self.regression = bool(getattr(model, "is_regression", False))
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
        outputs = self.model(features, training=False)
        result = {"probabilities": outputs["probabilities"], "predictions": outputs["predictions"]}
        if self.regression:
            result["score"] = tf.identity(outputs["predictions"])
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
        return self._outputs(self.preprocessor((checked["text_a"], checked["text_b"])))

    def serve_single(self, text_a):
        return self._outputs(self.preprocessor(checked_text(text_a=text_a)["text_a"]))

    def module(self):
        """(root module, signatures) for `write_saved_model`."""
        functions = {"serving_default": tf.function(self.serve_examples,
                                                    input_signature=[_strings("input")])}
        resources = {}
        if self.preprocessor is None:
            text_optional.note_no_tokenizer_file()
        else:
            single = tf.function(self.serve_single, input_signature=[_strings("text_a")])
            pair = tf.function(self.serve_pair,
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
                      label_names=None, vocab_file=None, extras: dict | None = None) -> str:
    """Writes `<export_dir>/<version>/` (one past the highest numeric folder by default, the
    layout TF Serving polls) through `write_saved_model`, with `extras` (its TFLite files,
    `<export_dir>/tflite/<version>`) published together; returns its path."""
    serving = ClassifierServing(model, max_seq_length, spm_model_file, do_lower_case, pair,
                                threshold, label_names, vocab_file)
    root, signatures = serving.module()
    path = write_saved_model(root, export_dir, signatures, version, extras=extras)
    logging.info("exported SavedModel to %s", path)
    return path
