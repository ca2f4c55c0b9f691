"""The input cut into blocks of bytes that any process reads on its own, with whole documents.

The input files are one stream of bytes, in order (a new file does not start a document, only a
line that is empty after preprocessing does). Block k is the byte range [k·B, (k+1)·B) of that
stream. It owns every document that follows a boundary (an empty line, or the stream's start)
lying in its range, and reads such a document to its end, past the range and into the next files
if need be; it counts the lines that start in its range. So every document belongs to exactly one
block and stays whole, every line is counted once, and what a block holds depends only on the
input and B — not on who reads it, in which order, nor on a runner's bundles. A document is named
by the stream offset of its first line, which seeds its random draws (see `parallel`).

Memory: a block holds its range's documents, each cut every `max_document_bytes` of text as the
sequential reader cuts it; a run of text with no empty line belongs whole to the block where it
began, so that block grows with the run (not with the corpus).
"""

from __future__ import annotations

import bisect
from typing import Callable, Iterator, NamedTuple

from absl import logging

from albert_tf import io_utils
from albert_tf.pretraining_data import documents

_REPORT_LIMIT = 5  # bad lines named in the log per block; the rest are only counted


class InputFile(NamedTuple):
    path: str
    base: int  # stream offset of its first byte
    size: int


class Layout(NamedTuple):
    files: tuple  # of InputFile, in input order
    total_bytes: int
    block_bytes: int

    @property
    def num_blocks(self) -> int:
        return -(-self.total_bytes // self.block_bytes)


def layout(paths: list[str], sizes: list[int], block_bytes: int) -> Layout:
    files, base = [], 0
    for path, size in zip(paths, sizes):
        files.append(InputFile(path, base, size))
        base += size
    return Layout(tuple(files), base, block_bytes)


class Document(NamedTuple):
    offset: int  # stream offset of its first line: its name
    lines: list  # preprocessed, non-empty


class _Line(NamedTuple):
    offset: int  # in the stream
    raw: bytes  # capped at max_line_bytes
    size: int  # bytes the line takes in the file (an over-long line's discarded rest included)
    overlong: bool
    path: str
    position: int  # in its file


def _skip_rest_of_line(reader, piece: int) -> int:
    skipped = 0
    while True:
        rest = reader.readline(piece) if piece else reader.readline()
        skipped += len(rest)
        if not rest or rest.endswith(b"\n"):
            return skipped


def line_number(opener, path: str, position: int) -> int:
    """1-based number of the line starting at byte `position` (reads the file up to it)."""
    count, done = 1, 0
    with opener(path) as reader:
        while done < position:
            chunk = reader.read(min(1 << 20, position - done))
            if not chunk:
                break
            count += chunk.count(b"\n")
            done += len(chunk)
    return count


class BlockReader:
    """Reads block k's documents (picklable: `opener` and `preprocess` must be too)."""

    def __init__(self, corpus: Layout, preprocess: Callable[[str], str], *,
                 opener=io_utils.open_binary, on_undecodable: str = "skip",
                 ignore_decode_errors: bool = False, max_line_bytes: int = 1_000_000,
                 max_document_bytes: int = 0):
        if on_undecodable not in documents.UNDECODABLE_POLICIES:
            raise ValueError(f"on_undecodable must be one of {documents.UNDECODABLE_POLICIES}")
        self.layout = corpus
        self.preprocess = preprocess
        self.opener = opener
        self.on_undecodable = on_undecodable
        self.ignore_decode_errors = ignore_decode_errors
        self.max_line_bytes = max_line_bytes
        self.max_document_bytes = max_document_bytes

    def _lines_from(self, start: int) -> Iterator[_Line]:
        """The lines starting at or after stream offset `start`, through the following files."""
        files = self.layout.files
        first = bisect.bisect_right([f.base for f in files], start) - 1
        cap = self.max_line_bytes
        for input_file in files[max(first, 0):]:
            if input_file.size == 0 or input_file.base + input_file.size <= start:
                continue
            with self.opener(input_file.path) as reader:
                position = max(start - input_file.base, 0)
                if position > 0:
                    reader.seek(position - 1)
                    if reader.read(1) != b"\n":  # mid-line: that line belongs to the block before
                        position += _skip_rest_of_line(reader, cap)
                while True:
                    raw = reader.readline(cap + 1) if cap else reader.readline()
                    if not raw:
                        break
                    size, overlong = len(raw), False
                    if cap and len(raw) > cap and not raw.endswith(b"\n"):
                        size += _skip_rest_of_line(reader, cap)
                        raw, overlong = documents._trim_cut_character(raw[:cap]), True
                    yield _Line(input_file.base + position, raw, size, overlong, input_file.path,
                                position)
                    position += size

    def _decode(self, line: _Line, inside: bool, counters: documents.InputCounters) -> str | None:
        """The line's text, or None for an undecodable line that is skipped."""
        try:
            return line.raw.decode("utf-8")
        except UnicodeDecodeError as error:
            if self.ignore_decode_errors:
                if inside:
                    counters.undecodable_lines += 1
                return line.raw.decode("utf-8", "ignore")
            if not inside:
                return None  # the block that owns the line counts and reports it
            counters.undecodable_lines += 1
            what = (f"undecodable UTF-8 ({error.reason}) at byte {error.start} of the line: "
                    f"{line.raw[max(0, error.start - 20):error.start + 20]!r}")
            if self.on_undecodable == "fail":
                number = line_number(self.opener, line.path, line.position)
                raise documents.InputError(f"{line.path}:{number}: {what} (--undecodable_lines=fail)")
            if counters.undecodable_lines <= _REPORT_LIMIT:
                logging.warning("%s, byte %d: %s; line skipped", line.path, line.position, what)
            return None

    def read(self, index: int, counters: documents.InputCounters) -> list[Document]:
        """Block `index`'s documents in stream order; its lines are counted in `counters`."""
        start = index * self.layout.block_bytes
        end = min(start + self.layout.block_bytes, self.layout.total_bytes)
        collecting = start == 0  # the stream's start is a boundary, owned by block 0
        docs: list[Document] = []
        lines: list[str] = []
        first, size = 0, 0
        for line in self._lines_from(start):
            inside = line.offset < end
            if not inside and not collecting:
                break
            if inside:
                counters.lines += 1
                counters.input_bytes += line.size
                if line.overlong:
                    counters.overlong_lines += 1
                    if counters.overlong_lines <= _REPORT_LIMIT:
                        logging.warning("%s, byte %d: line longer than --max_line_bytes=%d; kept its "
                                        "first bytes", line.path, line.position, self.max_line_bytes)
            text = self._decode(line, inside, counters)
            if text is None:
                continue
            text = self.preprocess(text)
            if not text:  # a boundary
                if collecting:
                    if lines:
                        docs.append(Document(first, lines))
                    else:
                        counters.empty_documents += 1
                collecting, lines, size = inside, [], 0
                if not inside:
                    break
                continue
            if not collecting:
                continue  # the end of a document an earlier block owns
            if not lines:
                first = line.offset
            lines.append(text)
            size += len(text)
            if self.max_document_bytes and size >= self.max_document_bytes:
                counters.split_documents += 1
                docs.append(Document(first, lines))
                lines, size = [], 0
        if collecting and lines:
            docs.append(Document(first, lines))
        return docs
