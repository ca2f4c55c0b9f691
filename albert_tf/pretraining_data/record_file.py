"""TFRecord output files, written without TensorFlow where that is possible.

A local path is framed here (length, masked CRC32C of the length, data, masked CRC32C of the
data: TensorFlow's format, byte for byte) when `google-crc32c` is installed (it comes with the
`[beam]` extra), so a `create_pretraining_data` run, whose workers already tokenize without
TensorFlow, never loads it (about 10 s and a few hundred MB per run). A remote path (gs://,
...) or a machine without `google-crc32c` gets `tf.io.TFRecordWriter`.
"""

from __future__ import annotations

import struct

from albert_tf import io_utils

try:  # optional: the C CRC32C of google-crc32c; without it TensorFlow writes the records
    import google_crc32c
except ImportError:
    google_crc32c = None

_MASK_DELTA = 0xA282EAD8


def masked_crc32c(data: bytes) -> int:
    """TFRecord's checksum: CRC32C rotated right by 15 bits plus a constant, modulo 2^32."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(record: bytes) -> bytes:
    """One record as a TFRecord file holds it."""
    length = struct.pack("<Q", len(record))
    return (length + struct.pack("<I", masked_crc32c(length)) + record
            + struct.pack("<I", masked_crc32c(record)))


class LocalRecordFile:
    """`tf.io.TFRecordWriter`'s `write` and `close` for a local path; errors are OSErrors."""

    def __init__(self, path: str):
        self._file = open(path, "wb")

    def write(self, record: bytes) -> None:
        self._file.write(frame(record))

    def close(self) -> None:
        self._file.close()


def writes_without_tensorflow(path: str) -> bool:
    return (google_crc32c is not None and getattr(google_crc32c, "implementation", "c") == "c"
            and io_utils.is_local(path))


def open_record_file(path: str):
    """A TFRecord writer for `path` (the module docstring says which)."""
    if writes_without_tensorflow(path):
        return LocalRecordFile(path)
    # Heavy and only needed here: a remote file system or no google-crc32c.
    import tensorflow as tf

    return tf.io.TFRecordWriter(path)
