"""Pretraining records: instance → serialized tf.train.Example, and atomic round-robin TFRecord files.

Records are encoded directly as protobuf wire bytes (no per-record proto objects: this is the hot
path of the generator). The bytes are exactly `Example.SerializeToString(deterministic=True)`
(features in key order, packed repeated fields), which the tests check against protobuf.
"""

from __future__ import annotations

import json
import os
import struct

import tensorflow as tf

from albert_tf import io_utils
from albert_tf.data import schema
from albert_tf.errors import OutputError, UsageError
from albert_tf.pretraining_data.instances import Instance
from albert_tf.tf_errors import first_line


def _varint(value: int) -> bytes:
    value &= 0xFFFFFFFFFFFFFFFF  # int64 negatives take 10 bytes, as protobuf writes them
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_VARINT_TABLE = [_varint(v) for v in range(1 << 16)]


def _packed_int64(values) -> bytes:
    low, high = min(values), max(values)
    if low >= 0 and high < 0x80:
        return bytes(values)
    if low >= 0 and high < len(_VARINT_TABLE):
        table = _VARINT_TABLE
        return b"".join([table[v] for v in values])
    return b"".join([_varint(v) for v in values])


def _field(tag: bytes, payload: bytes) -> bytes:
    return tag + _VARINT_TABLE[len(payload)] + payload if len(payload) < 1 << 16 \
        else tag + _varint(len(payload)) + payload


_FLOAT_ONE = struct.pack("<f", 1.0)
_FLOAT_ZERO = struct.pack("<f", 0.0)
# Deterministic serialization orders map entries by key.
_KEY_ORDER = tuple(sorted(schema.PRETRAINING_WRITE_ORDER))
assert _KEY_ORDER == ("input_ids", "input_mask", "masked_lm_ids", "masked_lm_positions",
                      "masked_lm_weights", "next_sentence_labels", "segment_ids", "token_boundary")


class ExampleEncoder:
    """Serializes instances with the original's padding: ids/mask/segments/boundary to
    max_seq_length, predictions to max_predictions_per_seq (× 2 with do_permutation)."""

    def __init__(self, max_seq_length: int, max_predictions_per_seq: int, do_permutation: bool = False):
        self.max_seq_length = max_seq_length
        self.num_predictions = max_predictions_per_seq * (2 if do_permutation else 1)
        self._prefixes: dict = {}  # (feature, payload length) → its map-entry bytes before the payload
        self._zeros = bytes(max(max_seq_length, self.num_predictions))
        self._small_positions = max_seq_length <= 0x80  # positions are then one varint byte each

    def features(self, instance: Instance) -> dict:
        """Feature name → padded value list (the original's `write_instance_to_example_files`)."""
        n = len(instance.input_ids)
        self._check(instance)
        pad = [0] * (self.max_seq_length - n)
        len_b = n - instance.len_a - 2
        num_masked = len(instance.masked_lm_positions)
        pred_pad = [0] * (self.num_predictions - num_masked)
        return {
            "input_ids": list(instance.input_ids) + pad,
            "input_mask": [1] * n + pad,
            "segment_ids": [0] * (instance.len_a + 2) + [1] * len_b + pad,
            "token_boundary": list(instance.token_boundary) + pad,
            "masked_lm_positions": list(instance.masked_lm_positions) + pred_pad,
            "masked_lm_ids": list(instance.masked_lm_ids) + pred_pad,
            "masked_lm_weights": [1.0] * num_masked + [0.0] * len(pred_pad),
            "next_sentence_labels": [instance.sentence_order_label],
        }

    def _check(self, instance: Instance) -> None:
        if len(instance.input_ids) > self.max_seq_length:
            raise ValueError(f"instance of {len(instance.input_ids)} tokens exceeds "
                             f"max_seq_length {self.max_seq_length}")
        if len(instance.masked_lm_positions) > self.num_predictions:
            raise ValueError(f"{len(instance.masked_lm_positions)} predictions exceed "
                             f"{self.num_predictions}")

    def _prefix(self, name: str, payload_length: int) -> bytes:
        key = (name, payload_length)
        prefix = self._prefixes.get(key)
        if prefix is None:
            list_tag = b"\x12" if name == "masked_lm_weights" else b"\x1a"
            inner = len(_field(b"\x0a", bytes(payload_length)))
            feature_header = list_tag + _varint(inner) + b"\x0a" + _varint(payload_length)
            feature_length = len(feature_header) + payload_length
            entry_body = _field(b"\x0a", name.encode()) + b"\x12" + _varint(feature_length) + feature_header
            prefix = b"\x0a" + _varint(len(entry_body) + payload_length) + entry_body
            self._prefixes[key] = prefix
        return prefix

    def serialize(self, instance: Instance) -> bytes:
        """The record's bytes: equal to the Example's deterministic protobuf serialization."""
        self._check(instance)
        seq, preds, zeros = self.max_seq_length, self.num_predictions, self._zeros
        n = len(instance.input_ids)
        len_a = instance.len_a
        num_masked = len(instance.masked_lm_positions)
        pad = zeros[:seq - n]
        pred_pad = zeros[:preds - num_masked]
        if self._small_positions or not num_masked:
            positions = bytes(instance.masked_lm_positions)
        else:
            positions = _packed_int64(instance.masked_lm_positions)
        # Payloads as packed varints (0/1 flags are one byte each), in _KEY_ORDER.
        payloads = (
            _packed_int64(instance.input_ids) + pad,  # input_ids
            b"\x01" * n + pad,  # input_mask
            (_packed_int64(instance.masked_lm_ids) if num_masked else b"") + pred_pad,
            positions + pred_pad,  # masked_lm_positions
            _FLOAT_ONE * num_masked + _FLOAT_ZERO * (preds - num_masked),  # masked_lm_weights
            b"\x01" if instance.sentence_order_label else b"\x00",  # next_sentence_labels
            zeros[:len_a + 2] + b"\x01" * (n - len_a - 2) + pad,  # segment_ids
            bytes(instance.token_boundary) + pad,  # token_boundary
        )
        prefixes = self._prefixes
        parts = []
        for name, payload in zip(_KEY_ORDER, payloads):
            prefix = prefixes.get((name, len(payload))) or self._prefix(name, len(payload))
            parts.append(prefix)
            parts.append(payload)
        body = b"".join(parts)
        return _field(b"\x0a", body)  # Example.features


def expand_output_files(spec: str, shards: int = 1) -> list[str]:
    """Comma-separated outputs; with `shards` > 1 each becomes `path-0000i-of-0000n`."""
    paths = [p for p in spec.split(",") if p]
    if not paths:
        raise UsageError("--output_file is empty")
    if shards < 1:
        raise UsageError(f"--output_shards must be at least 1, got {shards}")
    if shards == 1:
        return paths
    return [f"{p}-{i:05d}-of-{shards:05d}" for p in paths for i in range(shards)]


def write_failure(path: str, error: Exception) -> OutputError:
    """A failed write (full disk, file size limit, permissions) as one line naming `path`.
    TensorFlow's file errors read 'TEMPORARY; File too large': keep only the reason."""
    message = getattr(error, "message", None) or getattr(error, "strerror", None) or str(error)
    reason = first_line(message).rsplit("; ", 1)[-1]
    return OutputError(f"{path}: could not write it ({reason}); no output was written")


class RoundRobinWriter:
    """Writes records to the output files in turn; each file appears under its name only when
    `close()` completes (written under a temporary name, then renamed). On an exception inside
    the `with` block the temporary files are removed and no output appears; a write that fails
    (full disk) is an `OutputError` naming the output file."""

    def __init__(self, paths: list[str]):
        self.paths = list(paths)
        self._temporary = [io_utils.temporary_name(p) for p in self.paths]
        self._writers = []
        for path, temporary in zip(self.paths, self._temporary):
            try:
                directory = os.path.dirname(path)
                if directory and not tf.io.gfile.exists(directory):
                    tf.io.gfile.makedirs(directory)
                self._writers.append(tf.io.TFRecordWriter(temporary))
            except (tf.errors.OpError, OSError) as error:
                self.abort()
                raise write_failure(path, error) from None
        self._next = 0
        self.count = 0

    def write(self, record: bytes) -> None:
        try:
            self._writers[self._next].write(record)
        except tf.errors.OpError as error:
            raise write_failure(self.paths[self._next], error) from None
        self._next = (self._next + 1) % len(self._writers)
        self.count += 1

    def close(self) -> None:
        for writer, path in zip(self._writers, self.paths):
            try:
                writer.close()  # flushes: a full disk may show only here
            except tf.errors.OpError as error:
                raise write_failure(path, error) from None
        for temporary, path in zip(self._temporary, self.paths):
            tf.io.gfile.rename(temporary, path, overwrite=True)

    def abort(self) -> None:
        for writer in self._writers:
            try:
                writer.close()
            except tf.errors.OpError:
                pass  # the flush failed (a full disk): the temporary is removed below anyway
        for temporary in self._temporary:
            if tf.io.gfile.exists(temporary):
                tf.io.gfile.remove(temporary)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.close()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()
        return False


def write_json_atomic(path: str, data) -> None:
    """`data` as indented JSON at `path`, which appears only complete."""
    try:
        io_utils.write_text_atomically(path, json.dumps(data, indent=1) + "\n")
    except (tf.errors.OpError, OSError) as error:
        if isinstance(error, OutputError):
            raise
        raise write_failure(path, error) from None
