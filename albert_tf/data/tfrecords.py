"""Finding which of several TFRecord files a read error comes from.

TensorFlow reports a damaged record as "corrupted record at OFFSET" or "truncated record at
OFFSET" without the file's name. A TFRecord file is a sequence of records, each
`length (uint64) | masked crc32c of length | data | masked crc32c of data`, so the file at
fault is the one with a record boundary at OFFSET whose record does not check out. Finding it
reads only the record headers before OFFSET (one seek each), and runs only after an error.
"""

from __future__ import annotations

import re
import struct

_OFFSET = re.compile(r"(?:corrupted|truncated) record at (\d+)")
_MAX_HEADERS = 2_000_000  # give up (and name the candidates) rather than read for minutes


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """The checksum TFRecord files store (crc32c rotated right by 15 bits plus a constant)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def error_offset(message: str) -> int | None:
    """The byte offset of a "corrupted/truncated record at N" error, else None."""
    match = _OFFSET.search(str(message))
    return int(match.group(1)) if match else None


def _gfile():
    import tensorflow as tf

    return tf.io.gfile


def _record_is_damaged(path: str, offset: int, budget: list) -> bool:
    """True when `path` has a record boundary at `offset` and the record there is damaged."""
    gfile = _gfile()
    size = gfile.stat(path).length
    with gfile.GFile(path, "rb") as reader:
        position = 0
        while position < offset:
            budget[0] -= 1
            if budget[0] < 0:
                raise TimeoutError
            reader.seek(position)
            header = reader.read(8)
            if len(header) < 8:
                return False
            position += 16 + struct.unpack("<Q", header)[0]
        if position != offset:
            return False  # no record starts there in this file
        reader.seek(offset)
        header = reader.read(12)
        if len(header) < 12:
            return True
        length, length_crc = struct.unpack("<QI", header)
        if masked_crc32c(header[:8]) != length_crc or offset + 16 + length > size:
            return True
        data = reader.read(length + 4)
        return masked_crc32c(data[:length]) != struct.unpack("<I", data[length:])[0]


def find_damaged_file(files, message: str) -> list[str]:
    """The file(s) a "corrupted/truncated record at N" error may come from: the one at fault
    when it can be found, else every file long enough to hold that offset."""
    offset = error_offset(message)
    if offset is None:
        return list(files)
    gfile = _gfile()
    candidates = [f for f in files if gfile.exists(f) and gfile.stat(f).length > offset]
    if len(candidates) <= 1:
        return candidates
    import tensorflow as tf

    budget = [_MAX_HEADERS]
    try:
        damaged = [f for f in candidates if _record_is_damaged(f, offset, budget)]
    except (TimeoutError, OSError, struct.error, tf.errors.OpError):
        return candidates  # too long to walk, or unreadable: name every candidate
    return damaged or candidates
