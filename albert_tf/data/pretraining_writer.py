"""Pretraining records: instance → serialized tf.train.Example, and atomic round-robin TFRecord files.

Records are encoded directly as protobuf wire bytes (no per-record proto objects: this is the hot
path of the generator). The bytes are exactly `Example.SerializeToString(deterministic=True)`
(features in key order, packed repeated fields), which the tests check against protobuf.
"""

from __future__ import annotations

import json
import os
import struct

from albert_tf.data import schema
from albert_tf.data.instances import Instance


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
        payloads = {  # values as packed varints (0/1 flags are one byte each)
            "input_ids": _packed_int64(instance.input_ids) + pad,
            "input_mask": b"\x01" * n + pad,
            "masked_lm_ids": (_packed_int64(instance.masked_lm_ids) if num_masked else b"") + pred_pad,
            "masked_lm_positions": positions + pred_pad,
            "masked_lm_weights": _FLOAT_ONE * num_masked + _FLOAT_ZERO * (preds - num_masked),
            "next_sentence_labels": b"\x01" if instance.sentence_order_label else b"\x00",
            "segment_ids": zeros[:len_a + 2] + b"\x01" * (n - len_a - 2) + pad,
            "token_boundary": bytes(instance.token_boundary) + pad,
        }
        parts = []
        prefix = self._prefix
        for name in _KEY_ORDER:
            payload = payloads[name]
            parts.append(prefix(name, len(payload)))
            parts.append(payload)
        body = b"".join(parts)
        return b"\x0a" + _varint(len(body)) + body  # Example.features


def to_example(instance: Instance, encoder: ExampleEncoder):
    """The same record as a tf.train.Example (for callers that want the proto)."""
    import tensorflow as tf

    example = tf.train.Example()
    example.ParseFromString(encoder.serialize(instance))
    return example


def expand_output_files(spec: str, shards: int = 1) -> list[str]:
    """Comma-separated outputs; with `shards` > 1 each becomes `path-0000i-of-0000n`."""
    paths = [p for p in spec.split(",") if p]
    if not paths:
        raise ValueError("--output_file is empty")
    if shards < 1:
        raise ValueError(f"--output_shards must be at least 1, got {shards}")
    if shards == 1:
        return paths
    return [f"{p}-{i:05d}-of-{shards:05d}" for p in paths for i in range(shards)]


def _temporary_name(path: str) -> str:
    # A hidden, unmistakably unfinished name in the same directory (so the rename is atomic).
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.incomplete-{os.getpid()}")


class RoundRobinWriter:
    """Writes records to the output files in turn; each file appears under its name only when
    `close()` completes (written under a temporary name, then renamed). On an exception inside
    the `with` block the temporary files are removed and no output appears."""

    def __init__(self, paths: list[str]):
        import tensorflow as tf

        self._tf = tf
        self.paths = list(paths)
        self._temporary = [_temporary_name(p) for p in self.paths]
        for path in self.paths:
            directory = os.path.dirname(path)
            if directory and not tf.io.gfile.exists(directory):
                tf.io.gfile.makedirs(directory)
        self._writers = [tf.io.TFRecordWriter(t) for t in self._temporary]
        self._next = 0
        self.count = 0

    def write(self, record: bytes) -> None:
        self._writers[self._next].write(record)
        self._next = (self._next + 1) % len(self._writers)
        self.count += 1

    def close(self) -> None:
        for writer in self._writers:
            writer.close()
        for temporary, path in zip(self._temporary, self.paths):
            self._tf.io.gfile.rename(temporary, path, overwrite=True)

    def abort(self) -> None:
        for writer in self._writers:
            writer.close()
        for temporary in self._temporary:
            if self._tf.io.gfile.exists(temporary):
                self._tf.io.gfile.remove(temporary)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


def write_json_atomic(path: str, data) -> None:
    import tensorflow as tf

    temporary = _temporary_name(path)
    with tf.io.gfile.GFile(temporary, "w") as handle:
        handle.write(json.dumps(data, indent=1) + "\n")
    tf.io.gfile.rename(temporary, path, overwrite=True)
