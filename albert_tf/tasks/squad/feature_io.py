"""SQuAD features on disk: TFRecords with the original feature names, metadata as JSON.

The original pickled the Python feature objects for post-processing; we store the fields that
post-processing reads as JSON lines instead (inspectable, and no code runs when read).
"""

from __future__ import annotations

import json
import os

import tensorflow as tf

from albert_tf.data.schema import decode, int_feature
from albert_tf.errors import InputError
from albert_tf.io_utils import atomic_output, read_utf8
from albert_tf.tasks.squad.features import SquadFeature

METADATA_FIELDS = ("unique_id", "example_index", "doc_span_index", "tok_start_to_orig_index",
                   "tok_end_to_orig_index", "token_is_max_context", "tokens", "paragraph_len")


class FeatureWriter:
    """Writes features as tf.train.Examples; the file appears under its name only on `close()`
    (through `io_utils.atomic_output`; `atomic=False` writes `filename` directly, for a caller
    that already writes to a temporary name)."""

    def __init__(self, filename, is_training: bool, atomic: bool = True):
        self.filename, self.is_training = os.fspath(filename), is_training
        self.num_features = 0
        self._output = atomic_output(self.filename) if atomic else None
        path = self._output.__enter__() if atomic else self.filename
        self._writer = tf.io.TFRecordWriter(path)

    def process_feature(self, feature: SquadFeature) -> None:
        values = {
            "unique_ids": int_feature([feature.unique_id]),
            "input_ids": int_feature(feature.input_ids),
            "input_mask": int_feature(feature.input_mask),
            "segment_ids": int_feature(feature.segment_ids),
            "p_mask": int_feature(feature.p_mask),
        }
        if self.is_training:
            values["start_positions"] = int_feature([feature.start_position])
            values["end_positions"] = int_feature([feature.end_position])
            values["is_impossible"] = int_feature([int(feature.is_impossible)])
        example = tf.train.Example(features=tf.train.Features(feature=values))
        self._writer.write(example.SerializeToString())
        self.num_features += 1

    __call__ = process_feature

    def close(self) -> None:
        self._writer.close()
        if self._output is not None:
            self._output.__exit__(None, None, None)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.close()
        else:
            self._writer.close()
            if self._output is not None:  # removes the temporary; the error goes on
                self._output.__exit__(kind, value, traceback)


def feature_spec(max_seq_length: int, is_training: bool, with_p_mask: bool = True) -> dict:
    """Parsing spec; the original parses `p_mask` only for v2 and positions only in training."""
    seq = tf.io.FixedLenFeature([max_seq_length], tf.int64)
    spec = {"unique_ids": tf.io.FixedLenFeature([], tf.int64), "input_ids": seq,
            "input_mask": seq, "segment_ids": seq}
    if with_p_mask:
        spec["p_mask"] = seq
    if is_training:
        for name in ("start_positions", "end_positions", "is_impossible"):
            spec[name] = tf.io.FixedLenFeature([], tf.int64)
    return spec


def dataset(input_file, max_seq_length: int, is_training: bool, batch_size: int,
            with_p_mask: bool = True, drop_remainder: bool = False) -> tf.data.Dataset:
    """Batches of int32 feature dicts; training repeats and shuffles (buffer 100, as the
    original)."""
    spec = feature_spec(max_seq_length, is_training, with_p_mask)
    data = tf.data.TFRecordDataset(input_file)
    if is_training:
        data = data.repeat().shuffle(buffer_size=100)
    data = data.map(lambda record: decode(record, spec), num_parallel_calls=tf.data.AUTOTUNE)
    return data.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)


def write_feature_metadata(path, features, atomic: bool = True) -> None:
    """One JSON object per line with what post-processing needs; written through
    `io_utils.atomic_output` (`atomic=False`: straight to `path`, already a temporary name)."""
    if atomic:
        with atomic_output(path) as tmp:
            write_feature_metadata(tmp, features, atomic=False)
        return
    with tf.io.gfile.GFile(os.fspath(path), "w") as writer:
        for feature in features:
            row = {name: getattr(feature, name) for name in METADATA_FIELDS}
            row["token_is_max_context"] = {str(k): v for k, v in row["token_is_max_context"].items()}
            writer.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_feature_metadata(path) -> list:
    """Features (without ids/masks) as written by `write_feature_metadata`."""
    features = []
    # split on "\n" only: tokens may hold U+2028 and the like, which str.splitlines splits on
    lines = read_utf8(path).split("\n")
    for line_number, line in enumerate(lines[:-1] if lines[-1] == "" else lines, 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{path}:{line_number}: not a feature metadata line "
                             f"({error.msg})") from None
        missing = ([name for name in METADATA_FIELDS if name not in row]
                   if isinstance(row, dict) else list(METADATA_FIELDS))
        if missing:
            raise InputError(f"{path}:{line_number}: missing {', '.join(missing)}")
        row["token_is_max_context"] = {int(k): v for k, v in row["token_is_max_context"].items()}
        features.append(SquadFeature(input_ids=None, input_mask=None, segment_ids=None,
                                     p_mask=None, **row))
    return features
