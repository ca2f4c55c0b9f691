"""The error types a user can act on. Each message names the file (and line), flag or config key
at fault; every entry point prints it as one `error: ...` line and exits with status 1."""

from __future__ import annotations

import re


class AlbertError(Exception):
    """Base class: bad input, bad flags, a run that cannot go on. Never a bug in albert-tf."""


class UsageError(AlbertError, ValueError):
    """Flags that are missing or cannot work together; the message names the flag."""


class InputError(AlbertError, ValueError):
    """A data file that cannot be read as what it should be; names the file, line, column."""


class OutputError(AlbertError, OSError):
    """An output that cannot be written (in use by another run, disk full, exists already)."""


class OutputDirLockedError(OutputError):
    """Another run holds the output_dir."""


class TrainingError(AlbertError, FloatingPointError):
    """Training cannot go on (a non-finite loss or weights)."""


class CheckpointError(AlbertError, ValueError):
    """A checkpoint that does not fit the model (missing variable, wrong shape, unreadable)."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """No checkpoint at the path given (a CheckpointError and a FileNotFoundError)."""


class MissingDependencyError(AlbertError, ImportError):
    """An optional package that the asked-for work needs is not installed; names the
    `pip install` line."""


class WorkerDiedError(AlbertError, RuntimeError):
    """A worker process died without an answer (killed, out of memory, crashed); names the
    work it held and the flag that runs without workers."""


# TensorFlow error messages carry node names and stacks; no TensorFlow is needed to trim them.
_NODE = re.compile(r"\s*\[\[.*?\]\]|\s*\{\{.*?\}\}|\s*\(0\) .*?:\s*")


def first_line(message: str) -> str:
    """The line of a TF error message that says what went wrong: graph-mode errors open with
    "Graph execution error:" and a Python stack before the op's own message."""
    text = _NODE.sub(" ", str(message)).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0].startswith("Graph execution error"):
        for line in reversed(lines):  # the op's own message comes after the Python stack
            if not line.startswith(("File ", "[[", "Detected at node")) and not line.endswith(":"):
                return line
    return lines[0] if lines else ""
