"""Reading the pretraining corpus: one sentence per line, a blank line between documents.

Everything streams: lines are read one at a time with a length cap, so memory does not grow with
the corpus. Bad input is reported with file and line and counted in `InputCounters`. As in the
original, a new file does not start a new document (only a blank line does), and lines are split
on "\\n" only (as `tf.gfile` does; a stray "\\r" is stripped as whitespace).
"""

from __future__ import annotations

import dataclasses
import glob
import os
from typing import Callable, Iterable, Iterator

from absl import logging

from albert_tf import errors, io_utils

UNDECODABLE_POLICIES = ("skip", "fail")
_REPORT_LIMIT = 20  # bad lines named one by one in the log; the rest are only counted


class InputError(errors.InputError):
    """Input that cannot be used: a missing file, an empty glob, undecodable text under 'fail'."""


@dataclasses.dataclass
class InputCounters:
    files: int = 0
    input_bytes: int = 0
    lines: int = 0
    undecodable_lines: int = 0
    overlong_lines: int = 0
    split_documents: int = 0
    empty_documents: int = 0  # blank lines with no text since the last boundary (dropped)

    def add(self, other: "InputCounters") -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


def expand_input_patterns(spec: str) -> list[str]:
    """Comma-separated globs → files, in the given order (each glob's matches sorted).

    Unlike the original, a pattern that matches nothing is an error, not a silent empty run.
    Our writers' temporaries and side files (`*.summary.json`, ...) are never input: a glob such
    as `dir/*` skips them (a file named explicitly is read).
    """
    if not spec or not spec.strip():
        raise InputError("--input_file is empty")
    files: list[str] = []
    for pattern in spec.split(","):
        if not pattern:
            continue
        if io_utils.is_remote(pattern):
            import tensorflow as tf

            matches = sorted(tf.io.gfile.glob(pattern))
        else:
            # A pipe (`<(zcat …)`, /dev/fd/N) is input too.
            matches = sorted(p for p in glob.glob(pattern)
                             if os.path.isfile(p) or io_utils.is_pipe(p))
        is_glob = any(ch in pattern for ch in "*?[")
        skipped = [p for p in matches if is_glob and io_utils.is_side_file(p)]
        matches = [p for p in matches if p not in skipped]
        if not matches:
            if is_glob:
                note = (f" (only {len(skipped)} temporary or summary file(s), which are not input)"
                        if skipped else "")
                raise InputError(f"--input_file pattern {pattern!r} matched no files{note}")
            raise InputError(f"--input_file: no such file: {pattern!r}")
        files.extend(matches)
    return files


def _trim_cut_character(raw: bytes) -> bytes:
    """Drops a UTF-8 character that the length cap cut in half (other errors stay to be reported)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason == "unexpected end of data" and error.start >= len(raw) - 3:
            return raw[:error.start]
    return raw


def iter_lines(files: Iterable[str], counters: InputCounters, *,
               on_undecodable: str = "skip", ignore_decode_errors: bool = False,
               max_line_bytes: int = 1_000_000) -> Iterator[str]:
    """Decoded lines of all files in order.

    Undecodable UTF-8 is reported as file:line and either skipped or raised (`on_undecodable`);
    with `ignore_decode_errors` (the original's `input_file_mode=rb`) bad bytes are dropped and
    counted. A line longer than `max_line_bytes` (0 = no cap) keeps its first `max_line_bytes`
    bytes; the rest is read and discarded in bounded pieces, so a file without newlines cannot
    exhaust memory.
    """
    if on_undecodable not in UNDECODABLE_POLICIES:
        raise ValueError(f"on_undecodable must be one of {UNDECODABLE_POLICIES}, got {on_undecodable!r}")
    for path in files:
        counters.files += 1
        with io_utils.open_binary(path) as reader:
            line_no = 0
            while True:
                raw = reader.readline(max_line_bytes + 1) if max_line_bytes else reader.readline()
                if not raw:
                    break
                line_no += 1
                counters.lines += 1
                counters.input_bytes += len(raw)
                if max_line_bytes and len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                    while True:  # discard the rest of the over-long line
                        rest = reader.readline(max_line_bytes)
                        counters.input_bytes += len(rest)
                        if not rest or rest.endswith(b"\n"):
                            break
                    counters.overlong_lines += 1
                    if counters.overlong_lines <= _REPORT_LIMIT:
                        logging.warning("%s:%d: line longer than --max_line_bytes=%d; kept its "
                                        "first %d bytes", path, line_no, max_line_bytes, max_line_bytes)
                    raw = _trim_cut_character(raw[:max_line_bytes])
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    counters.undecodable_lines += 1
                    where = (f"{path}:{line_no}: undecodable UTF-8 ({error.reason}) at byte "
                             f"{error.start} of the line: {raw[max(0, error.start - 20):error.start + 20]!r}")
                    if ignore_decode_errors:
                        text = raw.decode("utf-8", "ignore")
                    elif on_undecodable == "fail":
                        raise InputError(where + " (--undecodable_lines=fail)") from None
                    else:
                        if counters.undecodable_lines <= _REPORT_LIMIT:
                            logging.warning("%s; line skipped", where)
                        continue
                yield text


def iter_documents(lines: Iterable[str], preprocess: Callable[[str], str],
                   counters: InputCounters, max_document_bytes: int = 0) -> Iterator[list[str]]:
    """Groups preprocessed lines into documents (lists of non-empty lines).

    A line that is empty after `preprocess` ends the current document, exactly as in the
    original (so a line of only combining marks is a boundary too). Documents with no lines are
    counted, not yielded. With `max_document_bytes` a longer document is cut into parts (to
    bound memory; counted in `split_documents`).
    """
    document: list[str] = []
    size = 0
    for line in lines:
        text = preprocess(line)
        if not text:
            if document:
                yield document
            else:
                counters.empty_documents += 1
            document, size = [], 0
            continue
        document.append(text)
        size += len(text)
        if max_document_bytes and size >= max_document_bytes:
            counters.split_documents += 1
            yield document
            document, size = [], 0
    if document:
        yield document
