"""Checking a .tflite file before an interpreter opens it.

The TFLite interpreter trusts the flatbuffer it is given: a truncated file (a copy cut short, a
download that stopped) makes it read past the end of the buffer and the Python process dies
(segmentation fault). `read_tflite(path)` reads the file and walks the parts of the flatbuffer
the interpreter reads (the root table, operator codes, subgraphs with their tensors and
operators, buffers, signatures), checking that every offset and vector lies inside the file,
and returns its bytes and signature; anything else is an `InputError` naming the file.
It needs neither TensorFlow nor the flatbuffers package (a device-side runner has neither).
"""

from __future__ import annotations

import os
import struct

from albert_tf.errors import InputError

IDENTIFIER = b"TFL3"  # the schema's file_identifier, bytes 4..8 of every .tflite file


class _Bad(Exception):
    pass


class _Reader:
    """Bounds-checked reads of a flatbuffer (little-endian, offsets relative to where they are
    stored)."""

    def __init__(self, data: bytes):
        self.data = data

    def _get(self, fmt: str, at: int):
        if at < 0 or at + struct.calcsize(fmt) > len(self.data):
            raise _Bad(f"an offset points past its end (byte {at} of {len(self.data)})")
        return struct.unpack_from("<" + fmt, self.data, at)[0]

    def table(self, at: int) -> "_Table":
        vtable = at - self._get("i", at)
        size = self._get("H", vtable)
        if size < 4 or size % 2 or vtable + size > len(self.data):
            raise _Bad(f"a table at byte {at} has a broken field list")
        if at + self._get("H", vtable + 2) > len(self.data):
            raise _Bad(f"a table at byte {at} runs past its end")
        return _Table(self, at, vtable, size)

    def vector(self, at: int, item_size: int) -> tuple[int, int]:
        """(start, length) of the vector at `at`, checked to lie in the file."""
        length = self._get("I", at)
        start = at + 4
        if start + length * item_size > len(self.data):
            raise _Bad(f"a vector of {length} items at byte {at} runs past its end")
        return start, length


class _Table:
    def __init__(self, reader, at, vtable, size):
        self.reader, self.at, self.vtable, self.size = reader, at, vtable, size

    def _field(self, index: int) -> int | None:
        slot = 4 + 2 * index
        if slot >= self.size:
            return None
        offset = self.reader._get("H", self.vtable + slot)
        return self.at + offset if offset else None

    def scalar(self, index: int, fmt: str, default=0):
        at = self._field(index)
        return default if at is None else self.reader._get(fmt, at)

    def _target(self, index):
        at = self._field(index)
        return None if at is None else at + self.reader._get("I", at)

    def table(self, index: int):
        at = self._target(index)
        return None if at is None else self.reader.table(at)

    def tables(self, index: int) -> list:
        at = self._target(index)
        if at is None:
            return []
        start, length = self.reader.vector(at, 4)
        return [self.reader.table(start + 4 * i + self.reader._get("I", start + 4 * i))
                for i in range(length)]

    def ints(self, index: int, fmt: str = "i") -> list:
        at = self._target(index)
        if at is None:
            return []
        start, length = self.reader.vector(at, struct.calcsize(fmt))
        return list(struct.unpack_from(f"<{length}{fmt}", self.reader.data, start))

    def bytes_length(self, index: int, item_size: int = 1) -> int:
        at = self._target(index)
        return 0 if at is None else self.reader.vector(at, item_size)[1]

    def string(self, index: int) -> str:
        at = self._target(index)
        if at is None:
            return ""
        start, length = self.reader.vector(at, 1)
        return self.reader.data[start:start + length].decode("utf-8", "replace")


def _check_model(data: bytes) -> dict:
    reader = _Reader(data)
    model = reader.table(reader._get("I", 0))
    codes = model.tables(1)
    for code in codes:
        code.string(1)  # a custom op's name
    buffers = model.tables(4)
    for buffer in buffers:
        buffer.bytes_length(0)
        offset, size = buffer.scalar(1, "Q"), buffer.scalar(2, "Q")
        if offset > 1 and offset + size > len(data):  # weights stored after the flatbuffer
            raise _Bad(f"a buffer of {size} bytes at byte {offset} runs past its end")
    subgraphs = model.tables(2)
    if not subgraphs:
        raise _Bad("it holds no subgraph")
    counts = []
    for subgraph in subgraphs:
        tensors = subgraph.tables(0)
        for tensor in tensors:
            tensor.ints(0)
            tensor.string(3)
            if tensor.scalar(2, "I") >= max(len(buffers), 1):
                raise _Bad("a tensor names a buffer the file does not hold")
            quantization = tensor.table(4)
            if quantization is not None:
                for index, size in ((0, 4), (1, 4), (2, 4), (3, 8)):
                    quantization.bytes_length(index, size)
        for index in subgraph.ints(1) + subgraph.ints(2):
            if not 0 <= index < len(tensors):
                raise _Bad("a subgraph input or output names a tensor the file does not hold")
        for operator in subgraph.tables(3):
            if operator.scalar(0, "I") >= len(codes):
                raise _Bad("an operator names an operator code the file does not hold")
            for index in operator.ints(1) + operator.ints(2):
                if not -1 <= index < len(tensors):
                    raise _Bad("an operator names a tensor the file does not hold")
            operator.table(4)
            operator.bytes_length(5)
        counts.append(len(tensors))
    signatures = {}
    for signature in model.tables(7):
        graph = signature.scalar(4, "I")
        if graph >= len(counts):
            raise _Bad("a signature names a subgraph the file does not hold")
        names = {}
        for key, index in (("inputs", 0), ("outputs", 1)):
            names[key] = []
            for item in signature.tables(index):
                if item.scalar(1, "I") >= counts[graph]:
                    raise _Bad("a signature names a tensor the file does not hold")
                names[key].append(item.string(0))
        signatures[signature.string(2)] = names
    return signatures


def read_tflite(path) -> tuple[bytes, dict]:
    """(the file's bytes, {signature key: {"inputs": [names], "outputs": [names]}}), once the
    file is checked to be a whole TFLite flatbuffer; an `InputError` naming `path` otherwise."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as reader:
            data = reader.read()
    except OSError as error:
        raise InputError(f"{path}: cannot read it ({error.strerror or error})") from None
    if len(data) < 16 or data[4:8] != IDENTIFIER:
        found = "it is empty" if not data else (
            f"it is {len(data)} bytes long" if len(data) < 16 else
            f"bytes 4..8 are {data[4:8]!r}, not {IDENTIFIER!r}")
        raise InputError(f"{path}: not a TFLite file ({found}); export it again with --tflite")
    try:
        signatures = _check_model(data)
    except _Bad as bad:
        raise InputError(f"{path}: a damaged or truncated TFLite file ({bad}; {len(data)} "
                         "bytes); copy or export it again") from None
    if not signatures:
        raise InputError(f"{path}: the TFLite file has no signature (not written by "
                         "albert_tf's export); export it again with --tflite")
    return data, signatures
