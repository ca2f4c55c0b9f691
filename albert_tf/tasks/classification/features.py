"""Examples → fixed-length features exactly as the original, a keyed TFRecord cache (or numpy
arrays, for examples held in memory), tf.data input.

The cached file keeps the original's name (`<task>_train.tf_record`, ...) and feature names, so
the original's readers accept it. Unlike the original, a sidecar `<file>.key.json` records what
the file was made from (task, split, source file digest, sequence length, tokenizer digest,
lower-casing); a cache whose key differs, that has no key or no records, is rebuilt rather than
reused (`albert_tf.data.feature_cache`, shared with SQuAD and RACE).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf
from absl import logging

from albert_tf.data import feature_cache, schema
from albert_tf.data.feature_cache import file_digest
from albert_tf.errors import UsageError
from albert_tf.tasks.classification.processors import GlueDataError
from albert_tf.tokenization import pack_pair

CACHE_FORMAT_VERSION = 1


class PaddingInputExample:
    """Fills a last batch to a fixed size; becomes all-zero features with is_real_example 0."""


@dataclasses.dataclass
class InputFeatures:
    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: int | float
    is_real_example: bool = True


def convert_single_example(example, label_list, max_seq_length: int, tokenizer,
                           task_name: str = "") -> InputFeatures:
    """`[CLS] A [SEP]` (segment 0) + `B [SEP]` (segment 1), ids zero-padded to max_seq_length."""
    if isinstance(example, PaddingInputExample):
        zeros = [0] * max_seq_length
        return InputFeatures(list(zeros), list(zeros), list(zeros), 0, False)
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
    tokens, segment_ids = pack_pair(tokens_a, tokens_b, max_seq_length)
    input_ids = tokenizer.convert_tokens_to_ids(tokens)
    input_mask = [1] * len(input_ids)
    padding = max_seq_length - len(input_ids)
    input_ids += [0] * padding
    input_mask += [0] * padding
    segment_ids += [0] * padding
    if task_name == "sts-b" or label_list == [None]:
        label_id = float(example.label)
    else:
        try:
            label_id = label_list.index(example.label)
        except ValueError:
            raise GlueDataError(f"{example.source or example.guid}: label {example.label!r} is "
                                f"not one of {label_list}") from None
    return InputFeatures(input_ids, input_mask, segment_ids, label_id, True)


def feature_to_example(feature: InputFeatures, regression: bool) -> tf.train.Example:
    label = (schema.float_feature([feature.label_id]) if regression
             else schema.int_feature([int(feature.label_id)]))
    values = {
        "input_ids": schema.int_feature(feature.input_ids),
        "input_mask": schema.int_feature(feature.input_mask),
        "segment_ids": schema.int_feature(feature.segment_ids),
        "label_ids": label,
        "is_real_example": schema.int_feature([int(feature.is_real_example)]),
    }
    return tf.train.Example(features=tf.train.Features(feature=values))


def check_max_seq_length(max_seq_length: int, max_position_embeddings: int | None) -> None:
    if max_seq_length < 3:
        raise UsageError(f"max_seq_length must be at least 3 ([CLS] A [SEP]), got {max_seq_length}")
    if max_position_embeddings is not None and max_seq_length > max_position_embeddings:
        raise UsageError(
            f"--max_seq_length ({max_seq_length}) exceeds the model's max_position_embeddings "
            f"({max_position_embeddings}); sequences that long cannot be embedded")


def _is_regression(task_name, label_list) -> bool:
    return task_name == "sts-b" or label_list == [None]


def _write_records(examples, label_list, max_seq_length, tokenizer, path, task_name) -> int:
    regression = _is_regression(task_name, label_list)
    count = 0
    with tf.io.TFRecordWriter(path) as writer:
        for index, example in enumerate(examples):
            feature = convert_single_example(example, label_list, max_seq_length, tokenizer, task_name)
            if index < 5 and not isinstance(example, PaddingInputExample):
                # per-example dumps only with --verbosity=1: a default run's console stays quiet
                logging.debug("*** Example %s: ids %s segments %s label %s", example.guid,
                              feature.input_ids, feature.segment_ids, feature.label_id)
            writer.write(feature_to_example(feature, regression).SerializeToString())
            count += 1
    return count


def cache_key(task_name, split, source_file, max_seq_length, tokenizer, do_lower_case,
              num_padding=0) -> dict:
    """What a cached feature file depends on; any change means the cache is stale."""
    return {
        "format_version": CACHE_FORMAT_VERSION,
        "task": task_name,
        "split": split,
        "source_sha256": file_digest(source_file),
        "max_seq_length": int(max_seq_length),
        **feature_cache.tokenizer_identity(getattr(tokenizer, "spm_model_file", None),
                                           getattr(tokenizer, "vocab_file", None)),
        "do_lower_case": bool(do_lower_case),
        "num_padding": int(num_padding),
    }


def cached_features(examples, label_list, max_seq_length, tokenizer, output_file, task_name,
                    key: dict) -> tuple[str, int]:
    """Reuses `output_file` only when its recorded key equals `key` (see
    `albert_tf.data.feature_cache`); else (re)writes it. Returns (path, number of records)."""
    record = feature_cache.cached(
        output_file, key,
        lambda tmp: _write_records(examples, label_list, max_seq_length, tokenizer, tmp,
                                   task_name))
    return output_file, int(record["num_records"])


def feature_arrays(examples, label_list, max_seq_length: int, tokenizer,
                   task_name: str = "") -> dict[str, np.ndarray]:
    """The features of `examples` as the arrays `read_features` returns for their file: for
    examples held in memory, which need no file."""
    features = [convert_single_example(example, label_list, max_seq_length, tokenizer, task_name)
                for example in examples]
    label_type = np.float32 if _is_regression(task_name, label_list) else np.int32
    arrays = {name: np.array([getattr(f, name) for f in features], np.int32).reshape(
        len(features), max_seq_length) for name in ("input_ids", "input_mask", "segment_ids")}
    arrays["label_ids"] = np.array([f.label_id for f in features], label_type)
    arrays["is_real_example"] = np.array([int(f.is_real_example) for f in features], np.int32)
    return arrays


def input_fn_builder(input_file, seq_length: int, is_training: bool, drop_remainder: bool,
                     regression: bool = False, shuffle_buffer: int = 100, seed: int | None = None):
    """A function batch_size → tf.data.Dataset of int32 feature dicts (labels float for STS-B).
    `input_file`: a feature file, or the `feature_arrays` of examples held in memory."""
    spec = schema.classifier_features(seq_length, regression)
    in_memory = isinstance(input_file, dict)

    def input_fn(batch_size: int) -> tf.data.Dataset:
        dataset = (tf.data.Dataset.from_tensor_slices(input_file) if in_memory
                   else tf.data.TFRecordDataset(input_file))
        if is_training:
            dataset = dataset.repeat().shuffle(shuffle_buffer, seed=seed)
        if not in_memory:
            dataset = dataset.map(lambda record: schema.decode(record, spec),
                                  num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)

    return input_fn


def read_features(path: str, seq_length: int, regression: bool = False) -> dict[str, np.ndarray]:
    """All records of a feature file as numpy arrays (for tests and small sets)."""
    spec = schema.classifier_features(seq_length, regression)
    rows = [schema.decode(r, spec) for r in tf.data.TFRecordDataset(path)]
    return {name: np.stack([row[name].numpy() for row in rows]) for name in spec}

