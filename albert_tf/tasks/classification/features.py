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
from albert_tf.tasks.classification.windows import window_tokens
from albert_tf.tokenization import pack_pair

CACHE_FORMAT_VERSION = 1


class PaddingInputExample:
    """Fills a last batch to a fixed size; becomes all-zero features with is_real_example 0."""


@dataclasses.dataclass
class InputFeatures:
    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: int | float | list
    is_real_example: bool = True
    example_index: int = 0      # --long_document=windows: the document a window belongs to
    window_weight: float = 1.0  # and its training weight, 1 / the document's windows


@dataclasses.dataclass(frozen=True)
class Layout:
    """What the features of a run hold beyond the original's: multi-hot labels
    (`multi_label`), every window of a long document (`stride`: windows `stride` pieces
    apart; None: the first window only, as the original)."""

    multi_label: bool = False
    stride: int | None = None

    @property
    def windows(self) -> bool:
        return self.stride is not None

    def spec(self, max_seq_length: int, regression: bool, num_labels: int) -> dict:
        return schema.classifier_features(max_seq_length, regression,
                                          num_labels if self.multi_label else 0, self.windows)


FIRST = Layout()


def convert_single_example(example, label_list, max_seq_length: int, tokenizer,
                           task_name: str = "", multi_label: bool = False) -> InputFeatures:
    """`[CLS] A [SEP]` (segment 0) + `B [SEP]` (segment 1), ids zero-padded to max_seq_length."""
    if isinstance(example, PaddingInputExample):
        zeros = [0] * max_seq_length
        label = [0] * len(label_list) if multi_label else 0
        return InputFeatures(list(zeros), list(zeros), list(zeros), label, False)
    return convert_example(example, label_list, max_seq_length, tokenizer, task_name,
                           Layout(multi_label))[0]


def convert_example(example, label_list, max_seq_length: int, tokenizer, task_name: str = "",
                    layout: Layout = FIRST, example_index: int = 0) -> list[InputFeatures]:
    """The features of one example: its first window, or with `layout.stride` every window
    (`windows.window_tokens`)."""
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
    if layout.windows:
        packed = window_tokens(tokens_a, tokens_b, max_seq_length, layout.stride)
    else:
        packed = [pack_pair(tokens_a, tokens_b, max_seq_length)]
    label_id = _label_id(example, label_list, task_name, layout.multi_label)
    return [_features(tokenizer.convert_tokens_to_ids(tokens), segment_ids, max_seq_length,
                      label_id, example_index, 1.0 / len(packed))
            for tokens, segment_ids in packed]


def _features(input_ids, segment_ids, max_seq_length, label_id, example_index, weight):
    input_ids, segment_ids = list(input_ids), list(segment_ids)
    input_mask = [1] * len(input_ids)
    padding = max_seq_length - len(input_ids)
    input_ids += [0] * padding
    input_mask += [0] * padding
    segment_ids += [0] * padding
    return InputFeatures(input_ids, input_mask, segment_ids, label_id, True, example_index,
                         weight)


def _label_id(example, label_list, task_name, multi_label):
    """The class id; the score when regressing; the multi-hot list of a label set."""
    if task_name == "sts-b" or label_list == [None]:
        return float(example.label)
    names = tuple(example.label) if multi_label else (example.label,)
    ids = []
    for name in names:
        try:
            ids.append(label_list.index(name))
        except ValueError:
            raise GlueDataError(f"{example.source or example.guid}: label {name!r} is "
                                f"not one of {label_list}") from None
    if not multi_label:
        return ids[0]
    return [int(i in ids) for i in range(len(label_list))]


def feature_to_example(feature: InputFeatures, regression: bool,
                       layout: Layout = FIRST) -> tf.train.Example:
    if regression:
        label = schema.float_feature([feature.label_id])
    elif layout.multi_label:
        label = schema.int_feature(feature.label_id)
    else:
        label = schema.int_feature([int(feature.label_id)])
    values = {
        "input_ids": schema.int_feature(feature.input_ids),
        "input_mask": schema.int_feature(feature.input_mask),
        "segment_ids": schema.int_feature(feature.segment_ids),
        "label_ids": label,
        "is_real_example": schema.int_feature([int(feature.is_real_example)]),
    }
    if layout.windows:
        values["example_index"] = schema.int_feature([feature.example_index])
        values["window_weight"] = schema.float_feature([feature.window_weight])
    return tf.train.Example(features=tf.train.Features(feature=values))


def all_features(examples, label_list, max_seq_length, tokenizer, task_name,
                 layout: Layout = FIRST):
    """The features of `examples` in order (every window of each, with `layout.stride`)."""
    for index, example in enumerate(examples):
        if isinstance(example, PaddingInputExample):
            yield convert_single_example(example, label_list, max_seq_length, tokenizer,
                                         task_name, layout.multi_label)
        else:
            yield from convert_example(example, label_list, max_seq_length, tokenizer,
                                       task_name, layout, index)


def check_max_seq_length(max_seq_length: int, max_position_embeddings: int | None) -> None:
    if max_seq_length < 3:
        raise UsageError(f"max_seq_length must be at least 3 ([CLS] A [SEP]), got {max_seq_length}")
    if max_position_embeddings is not None and max_seq_length > max_position_embeddings:
        raise UsageError(
            f"--max_seq_length ({max_seq_length}) exceeds the model's max_position_embeddings "
            f"({max_position_embeddings}); sequences that long cannot be embedded")


def _is_regression(task_name, label_list) -> bool:
    return task_name == "sts-b" or label_list == [None]


def _write_records(examples, label_list, max_seq_length, tokenizer, path, task_name,
                   layout: Layout = FIRST) -> int:
    regression = _is_regression(task_name, label_list)
    count = 0
    with tf.io.TFRecordWriter(path) as writer:
        for feature in all_features(examples, label_list, max_seq_length, tokenizer, task_name,
                                    layout):
            if count < 5 and feature.is_real_example:
                # per-example dumps only with --verbosity=1: a default run's console stays quiet
                logging.debug("*** Example %s: ids %s segments %s label %s",
                              feature.example_index, feature.input_ids, feature.segment_ids,
                              feature.label_id)
            writer.write(feature_to_example(feature, regression, layout).SerializeToString())
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
                    key: dict, layout: Layout = FIRST) -> tuple[str, int]:
    """Reuses `output_file` only when its recorded key equals `key` (see
    `albert_tf.data.feature_cache`); else (re)writes it. Returns (path, number of records)."""
    record = feature_cache.cached(
        output_file, key,
        lambda tmp: _write_records(examples, label_list, max_seq_length, tokenizer, tmp,
                                   task_name, layout))
    return output_file, int(record["num_records"])


def feature_arrays(examples, label_list, max_seq_length: int, tokenizer,
                   task_name: str = "", layout: Layout = FIRST) -> dict[str, np.ndarray]:
    """The features of `examples` as the arrays `read_features` returns for their file: for
    examples held in memory, which need no file."""
    features = list(all_features(examples, label_list, max_seq_length, tokenizer, task_name,
                                 layout))
    label_type = np.float32 if _is_regression(task_name, label_list) else np.int32
    arrays = {name: np.array([getattr(f, name) for f in features], np.int32).reshape(
        len(features), max_seq_length) for name in ("input_ids", "input_mask", "segment_ids")}
    arrays["label_ids"] = np.array([f.label_id for f in features], label_type)
    if layout.multi_label:
        arrays["label_ids"] = arrays["label_ids"].reshape(len(features), len(label_list))
    arrays["is_real_example"] = np.array([int(f.is_real_example) for f in features], np.int32)
    if layout.windows:
        arrays["example_index"] = np.array([f.example_index for f in features], np.int32)
        arrays["window_weight"] = np.array([f.window_weight for f in features], np.float32)
    return arrays


def input_fn_builder(input_file, seq_length: int, is_training: bool, drop_remainder: bool,
                     regression: bool = False, shuffle_buffer: int = 100, seed: int | None = None,
                     spec: dict | None = None):
    """A function batch_size → tf.data.Dataset of int32 feature dicts (labels float for STS-B).
    `input_file`: a feature file, or the `feature_arrays` of examples held in memory; `spec`:
    the records' parsing spec (`Layout.spec`; default: the original's)."""
    spec = spec or schema.classifier_features(seq_length, regression)
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


def read_features(path: str, seq_length: int, regression: bool = False,
                  spec: dict | None = None) -> dict[str, np.ndarray]:
    """All records of a feature file as numpy arrays (for tests and small sets)."""
    spec = spec or schema.classifier_features(seq_length, regression)
    rows = [schema.decode(r, spec) for r in tf.data.TFRecordDataset(path)]
    return {name: np.stack([row[name].numpy() for row in rows]) for name in spec}

