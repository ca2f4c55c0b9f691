"""SavedModel export of a fine-tuned classifier, loadable by TF Serving.

Two signatures, built explicitly (the original relied on the Estimator filling one in):
* `serving_default`: serialized `tf.train.Example`s under the input key `input` (the
  original's receiver), holding `input_ids`, `input_mask`, `segment_ids` of length S;
* `serve_text`: raw UTF-8 `text_a` (and `text_b` for pair tasks), tokenized in the graph with
  the SentencePiece model embedded in the export.
Both return `probabilities`, `predictions` and, when a threshold is baked in, the float32
scalar `threshold` (served alongside; it does not change the predictions).
"""

from __future__ import annotations

import logging
import math
import os
import time
import uuid

import keras
import tensorflow as tf

log = logging.getLogger(__name__)


class ClassifierServing:
    """Builds the serving functions of one classifier (and, for `serve_text`, its tokenizer)."""

    def __init__(self, model, max_seq_length: int, spm_model_file=None, do_lower_case=True,
                 pair: bool = True, threshold: float | None = None):
        self.model = model
        self.max_seq_length = int(max_seq_length)
        self.pair = pair
        self.threshold = None if threshold is None or math.isnan(threshold) else float(threshold)
        self.preprocessor = None
        if spm_model_file:
            from albert_tf.text import AlbertPreprocessor

            self.preprocessor = AlbertPreprocessor(spm_model_file, max_seq_length, do_lower_case)
            self.preprocessor(tf.constant([""]))  # builds it (an export needs built layers)

    def _outputs(self, features):
        outputs = self.model(features, training=False)
        result = {"probabilities": outputs["probabilities"], "predictions": outputs["predictions"]}
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
        return self._outputs(self.preprocessor((text_a, text_b)))

    def serve_single(self, text_a):
        return self._outputs(self.preprocessor(text_a))

    def archive(self) -> keras.export.ExportArchive:
        """A Keras ExportArchive: it saves exactly the variables the signatures capture, which
        is what the TF1-style loaders of TF Serving and `saved_model_cli` need to restore."""
        archive = keras.export.ExportArchive()
        archive.track(self.model)
        strings = lambda name: tf.TensorSpec([None], tf.string, name=name)  # noqa: E731
        archive.add_endpoint("serving_default", self.serve_examples, [strings("input")])
        if self.preprocessor is None:
            log.warning("no SentencePiece model: the export has no serve_text signature")
            return archive
        archive.track(self.preprocessor)
        if self.pair:
            archive.add_endpoint("serve_text", self.serve_pair,
                                 [strings("text_a"), strings("text_b")])
        else:
            archive.add_endpoint("serve_text", self.serve_single, [strings("text_a")])
        return archive


def export_classifier(model, export_dir, max_seq_length: int, spm_model_file=None,
                      do_lower_case: bool = True, pair: bool = True,
                      threshold: float | None = None) -> str:
    """Writes `<export_dir>/<unix time>/` (a numeric version folder, as TF Serving expects and the
    Estimator wrote) atomically; returns its path."""
    module = ClassifierServing(model, max_seq_length, spm_model_file, do_lower_case, pair, threshold)
    tf.io.gfile.makedirs(export_dir)
    version = int(time.time())
    while tf.io.gfile.exists(os.path.join(export_dir, str(version))):
        version += 1
    final = os.path.join(export_dir, str(version))
    tmp = os.path.join(export_dir, f".tmp-{version}-{uuid.uuid4().hex}")
    module.archive().write_out(tmp, verbose=False)
    tf.io.gfile.rename(tmp, final)
    log.info("exported SavedModel to %s", final)
    return final
