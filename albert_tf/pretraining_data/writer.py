"""Pretraining output files: atomic round-robin TFRecord files and the JSON summary (the
records themselves are encoded by `example_encoder`, which needs no TensorFlow)."""

from __future__ import annotations

import json
import os
import sys

from albert_tf import io_utils
from albert_tf.errors import OutputError, UsageError, first_line
from albert_tf.pretraining_data.example_encoder import ExampleEncoder  # noqa: F401 - its old home
from albert_tf.pretraining_data.record_file import open_record_file


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


def _file_errors() -> tuple:
    """What a failed write raises: OSError, and TensorFlow's errors once it is loaded (a remote
    path, or no google-crc32c: `record_file`). Checking sys.modules keeps it unloaded here."""
    tf = sys.modules.get("tensorflow")
    return (OSError,) if tf is None else (OSError, tf.errors.OpError)


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
                if directory and not io_utils.exists(directory):
                    io_utils.files(directory).makedirs(directory)
                self._writers.append(open_record_file(temporary))
            except _file_errors() as error:
                self.abort()
                raise write_failure(path, error) from None
        self._next = 0
        self.count = 0

    def write(self, record: bytes) -> None:
        try:
            self._writers[self._next].write(record)
        except _file_errors() as error:
            raise write_failure(self.paths[self._next], error) from None
        self._next = (self._next + 1) % len(self._writers)
        self.count += 1

    def close(self) -> None:
        for writer, path in zip(self._writers, self.paths):
            try:
                writer.close()  # flushes: a full disk may show only here
            except _file_errors() as error:
                raise write_failure(path, error) from None
        for temporary, path in zip(self._temporary, self.paths):
            io_utils.files(path).rename(temporary, path, overwrite=True)

    def abort(self) -> None:
        for writer in self._writers:
            try:
                writer.close()
            except _file_errors():
                pass  # the flush failed (a full disk): the temporary is removed below anyway
        for temporary in self._temporary:
            if io_utils.exists(temporary):
                io_utils.files(temporary).remove(temporary)

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
    except _file_errors() as error:
        if isinstance(error, OutputError):
            raise
        raise write_failure(path, error) from None


def summary_gist(path: str, summary: dict) -> list[str]:
    """The summary's gist for the console (two lines); the whole of it is in the file `path`."""
    outputs = summary["output_files"]
    shown = outputs[0] + (f" and {len(outputs) - 1} more" if len(outputs) > 1 else "")
    return [f"wrote {summary['instances']:,} instances to {shown} in {summary['elapsed_s']:.1f} s "
            f"({summary['documents']:,} documents, {summary['sentences']:,} sentences, "
            f"{summary['corpus_tokens']:,} tokens, [UNK] {100 * summary['unk_rate']:.2f} %)",
            f"summary (lengths, masking, sentence order): {path}"]


def write_summary(path: str, summary: dict) -> None:
    """Writes the summary (atomically) and prints its gist on stdout."""
    write_json_atomic(path, summary)
    print("\n".join(summary_gist(path, summary)), flush=True)
