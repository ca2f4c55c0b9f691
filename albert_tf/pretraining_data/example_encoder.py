"""Pretraining instance → serialized tf.train.Example bytes, without TensorFlow.

Records are encoded directly as protobuf wire bytes (no per-record proto objects: this is the hot
path of the generator). The bytes are exactly `Example.SerializeToString(deterministic=True)`
(features in key order, packed repeated fields), which the tests check against protobuf.
The workers that make records (the local pool's and Beam's) import this module, not
`writer`, so they start without loading TensorFlow.
"""

from __future__ import annotations

import struct

from albert_tf.pretraining_data.instances import Instance


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
# Deterministic serialization orders map entries by key: data.schema.PRETRAINING_WRITE_ORDER
# sorted (spelled out, as the schema module imports TensorFlow; a test checks they agree).
KEY_ORDER = ("input_ids", "input_mask", "masked_lm_ids", "masked_lm_positions",
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
        # Payloads as packed varints (0/1 flags are one byte each), in KEY_ORDER.
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
        for name, payload in zip(KEY_ORDER, payloads):
            prefix = prefixes.get((name, len(payload))) or self._prefix(name, len(payload))
            parts.append(prefix)
            parts.append(payload)
        body = b"".join(parts)
        return _field(b"\x0a", body)  # Example.features
