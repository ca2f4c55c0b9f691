"""SQuAD questions → feature files, cached and keyed by what made them.

The training TFRecord, and the prediction TFRecord together with its metadata file (what
post-processing reads), are reused only when they were built from a file with the same bytes,
with the same settings and tokenizer model (`albert_tf.data.feature_cache`); otherwise they are
rebuilt. A run that fails half-way leaves nothing that a later run would reuse.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Optional

from absl import logging

from albert_tf.data import feature_cache
from albert_tf.errors import InputError
from albert_tf.tasks.squad import feature_io, reader
from albert_tf.tasks.squad.features import convert_examples_to_features
from albert_tf.tokenization import load_sentencepiece


@dataclasses.dataclass(frozen=True)
class FeatureSettings:
    """Every setting that changes SQuAD features (names as the original's flags)."""

    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    do_lower_case: bool = True
    version_2_with_negative: bool = False

    @classmethod
    def of(cls, config) -> "FeatureSettings":
        """The settings of any object with fields of these names (a run config)."""
        return cls(**{f.name: getattr(config, f.name) for f in dataclasses.fields(cls)})


def feature_key(source_file, spm_model_file, settings: FeatureSettings, is_training: bool,
                metadata_file: Optional[str] = None) -> dict:
    """The cache key of one feature file (or prediction pair) built from `source_file`."""
    return {
        "format_version": feature_cache.FORMAT_VERSION,
        "task": "squad",
        "is_training": bool(is_training),
        "source_sha256": feature_cache.file_digest(source_file),
        **feature_cache.tokenizer_identity(spm_model_file),
        **dataclasses.asdict(settings),
        # which partner file the prediction TFRecord was built with
        "metadata_file": os.path.basename(os.fspath(metadata_file)) if metadata_file else None,
    }


def _convert(examples, sp, settings: FeatureSettings, is_training: bool, output_fn):
    return convert_examples_to_features(examples, sp, settings.max_seq_length,
                                        settings.doc_stride, settings.max_query_length,
                                        is_training, output_fn, settings.do_lower_case)


def _sentencepiece(sp, spm_model_file):
    if sp is not None:
        return sp
    return load_sentencepiece(spm_model_file)


def _no_features(source_file, count: int, what: str) -> InputError:
    return InputError(f"{source_file}: {count} questions gave no {what} features (check "
                      f"--max_seq_length, --max_query_length and the contexts)")


def prepare_train_features(train_file, feature_file, spm_model_file,
                           settings: FeatureSettings, sp=None) -> int:
    """Writes the training TFRecord `feature_file` unless a cache made from the same
    `train_file` with the same settings is there; returns the number of training questions (the
    original counts questions, not features, for the step count). `sp`: the loaded
    SentencePiece model, if the caller has it (else loaded when features are built)."""
    examples = reader.shuffle_training_examples(reader.read_squad_examples(
        train_file, True, version_2_with_negative=settings.version_2_with_negative))
    if not examples:
        raise InputError(f"{train_file}: no questions to train on")
    key = feature_key(train_file, spm_model_file, settings, True)

    def build(tmp):
        with feature_io.FeatureWriter(tmp, is_training=True, atomic=False) as writer:
            _convert(examples, _sentencepiece(sp, spm_model_file), settings, True, writer)
        if not writer.num_features:
            raise _no_features(train_file, len(examples), "training")
        logging.info("wrote %d training features to %s", writer.num_features, feature_file)
        return writer.num_features

    feature_cache.cached(feature_file, key, build)
    return len(examples)


def prepare_predict_features(predict_file, feature_file, metadata_file, spm_model_file,
                             settings: FeatureSettings, sp=None):
    """(examples, feature metadata) of `predict_file`: the TFRecord `feature_file` and the
    metadata `metadata_file` are reused as a pair when both were built together from the same
    file with the same settings, else both are (re)written."""
    examples = reader.read_squad_examples(predict_file, False)
    if not examples:
        raise InputError(f"{predict_file}: no questions to predict")
    key = feature_key(predict_file, spm_model_file, settings, False, metadata_file)
    built = []

    def build(tmp_features, tmp_metadata):
        with feature_io.FeatureWriter(tmp_features, is_training=False, atomic=False) as writer:
            features = _convert(examples, _sentencepiece(sp, spm_model_file), settings, False,
                                writer)
        if not features:
            raise _no_features(predict_file, len(examples), "prediction")
        feature_io.write_feature_metadata(tmp_metadata, features, atomic=False)
        built.append(features)
        return len(features)

    feature_cache.cached([feature_file, metadata_file], key, build)
    if built:
        return examples, built[0]
    return examples, feature_io.read_feature_metadata(metadata_file)
