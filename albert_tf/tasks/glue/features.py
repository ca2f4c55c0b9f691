"""Examples → fixed-length features exactly as the original, a keyed TFRecord cache, tf.data input.

The cached file keeps the original's name (`<task>_train.tf_record`, ...) and feature names, so
the original's readers accept it. Unlike the original, a sidecar `<file>.key.json` records what
the file was made from (task, split, source file digest, sequence length, tokenizer digest,
lower-casing); a cache whose key differs, or that has no key, is rebuilt rather than reused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import uuid

import numpy as np
import tensorflow as tf

from albert_tf.data import schema
from albert_tf.tasks.glue.processors import GlueDataError

log = logging.getLogger(__name__)

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


def truncate_seq_pair(tokens_a: list, tokens_b: list, max_length: int) -> None:
    """Pops the last token of the longer list (B on ties) until the pair fits, in place."""
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def convert_single_example(example, label_list, max_seq_length: int, tokenizer,
                           task_name: str = "") -> InputFeatures:
    """`[CLS] A [SEP]` (segment 0) + `B [SEP]` (segment 1), ids zero-padded to max_seq_length."""
    if isinstance(example, PaddingInputExample):
        zeros = [0] * max_seq_length
        return InputFeatures(list(zeros), list(zeros), list(zeros), 0, False)
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
    if tokens_b:
        truncate_seq_pair(tokens_a, tokens_b, max_seq_length - 3)
    elif len(tokens_a) > max_seq_length - 2:
        tokens_a = tokens_a[: max_seq_length - 2]
    tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
    segment_ids = [0] * len(tokens)
    if tokens_b:
        tokens += tokens_b + ["[SEP]"]
        segment_ids += [1] * (len(tokens_b) + 1)
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
        raise ValueError(f"max_seq_length must be at least 3 ([CLS] A [SEP]), got {max_seq_length}")
    if max_position_embeddings is not None and max_seq_length > max_position_embeddings:
        raise ValueError(
            f"max_seq_length ({max_seq_length}) exceeds the model's max_position_embeddings "
            f"({max_position_embeddings}); sequences that long cannot be embedded")


def write_features(examples, label_list, max_seq_length, tokenizer, output_file, task_name) -> int:
    """Writes one tf.train.Example per example to `output_file` atomically; returns the count."""
    regression = task_name == "sts-b"
    tmp = f"{output_file}.tmp-{uuid.uuid4().hex}"
    count = 0
    with tf.io.TFRecordWriter(tmp) as writer:
        for index, example in enumerate(examples):
            feature = convert_single_example(example, label_list, max_seq_length, tokenizer, task_name)
            if index < 5 and not isinstance(example, PaddingInputExample):
                log.info("*** Example %s: ids %s segments %s label %s", example.guid,
                         feature.input_ids, feature.segment_ids, feature.label_id)
            writer.write(feature_to_example(feature, regression).SerializeToString())
            count += 1
    tf.io.gfile.rename(tmp, output_file, overwrite=True)
    return count


def file_digest(path: str | None) -> str | None:
    if not path:
        return None
    digest = hashlib.sha256()
    with tf.io.gfile.GFile(path, "rb") as reader:
        while chunk := reader.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def cache_key(task_name, split, source_file, max_seq_length, tokenizer, do_lower_case,
              num_padding=0) -> dict:
    """What a cached feature file depends on; any change means the cache is stale."""
    return {
        "format_version": CACHE_FORMAT_VERSION,
        "task": task_name,
        "split": split,
        "source_sha256": file_digest(source_file),
        "max_seq_length": int(max_seq_length),
        "spm_model_sha256": file_digest(getattr(tokenizer, "spm_model_file", None)),
        "vocab_sha256": (None if getattr(tokenizer, "spm_model_file", None)
                         else file_digest(getattr(tokenizer, "vocab_file", None))),
        "do_lower_case": bool(do_lower_case),
        "num_padding": int(num_padding),
    }


def _read_key(path):
    key_file = path + ".key.json"
    if not tf.io.gfile.exists(key_file):
        return None
    try:
        with tf.io.gfile.GFile(key_file, "r") as reader:
            return json.load(reader)
    except (ValueError, OSError):
        return None


def cached_features(examples, label_list, max_seq_length, tokenizer, output_file, task_name,
                    key: dict) -> tuple[str, int]:
    """Reuses `output_file` only when its recorded key equals `key`; else (re)writes it.

    Returns (path, number of records).
    """
    stored = _read_key(output_file)
    if tf.io.gfile.exists(output_file) and stored is not None and stored.get("key") == key:
        log.info("reusing cached features %s", output_file)
        return output_file, int(stored["num_records"])
    if tf.io.gfile.exists(output_file):
        log.warning("rebuilding %s: it was made with other settings (or by another tool)",
                    output_file)
    tf.io.gfile.makedirs(os.path.dirname(output_file) or ".")
    count = write_features(examples, label_list, max_seq_length, tokenizer, output_file, task_name)
    tmp = f"{output_file}.key.json.tmp-{uuid.uuid4().hex}"
    with tf.io.gfile.GFile(tmp, "w") as writer:
        json.dump({"key": key, "num_records": count}, writer, indent=1, sort_keys=True)
    tf.io.gfile.rename(tmp, output_file + ".key.json", overwrite=True)
    return output_file, count


def input_fn_builder(input_file, seq_length: int, is_training: bool, drop_remainder: bool,
                     regression: bool = False, shuffle_buffer: int = 100, seed: int | None = None):
    """A function batch_size → tf.data.Dataset of int32 feature dicts (labels float for STS-B)."""
    spec = schema.classifier_features(seq_length, regression)

    def input_fn(batch_size: int) -> tf.data.Dataset:
        dataset = tf.data.TFRecordDataset(input_file)
        if is_training:
            dataset = dataset.repeat().shuffle(shuffle_buffer, seed=seed)
        dataset = dataset.map(lambda record: schema.decode(record, spec),
                              num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)

    return input_fn


def read_features(path: str, seq_length: int, regression: bool = False) -> dict[str, np.ndarray]:
    """All records of a feature file as numpy arrays (for tests and small sets)."""
    spec = schema.classifier_features(seq_length, regression)
    rows = [schema.decode(r, spec) for r in tf.data.TFRecordDataset(path)]
    return {name: np.stack([row[name].numpy() for row in rows]) for name in spec}

