"""Outputs that appear only when complete, and the one version-folder rule of every export.

Every file, TFRecord, checkpoint copy and SavedModel this package writes goes through
`atomic_output`: it is written under a hidden temporary name beside its final path
(`.<name>.tmp-<pid>-<random>`) and renamed when complete, so a reader, a glob or TF Serving never
sees a half-written output. A crashed writer's temporary is removed by the next run
(`remove_stale_temporaries`) and skipped by every reader (`is_temporary`).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import numbers
import os
import re
import shutil
import stat
import uuid

from albert_tf.errors import InputError, OutputError, UsageError

_TEMPORARY = re.compile(r"^\..+\.(tmp|incomplete)-(\d+)(-[0-9a-f]+)?$")
# Files our writers put beside their outputs that are not data (summaries, cache keys, locks).
SIDE_FILE_SUFFIXES = (".summary.json", ".key.json", ".lock")


def _gfile():
    import tensorflow as tf

    return tf.io.gfile


def is_remote(path) -> bool:
    """A URL such as gs://bucket/x, read and written through tf.io.gfile; any other path is a
    local one, handled with `os` (no TensorFlow needed)."""
    return "://" in os.fspath(path)


def is_local(path) -> bool:
    return not is_remote(path)


def absolute_path(path):
    """An absolute local path (`~` expanded); None and remote URLs are returned as given."""
    if path is None:
        return None
    path = os.fspath(path)
    return path if is_remote(path) else os.path.abspath(os.path.expanduser(path))


class _LocalFiles:
    """The few `tf.io.gfile` calls our writers make, for a local path, without TensorFlow (a
    `create_pretraining_data` run then never loads it). Text is UTF-8 with '\n' kept as is, as
    GFile writes it, on Windows too."""

    makedirs = staticmethod(lambda path: os.makedirs(path, exist_ok=True))
    exists = staticmethod(os.path.exists)
    isdir = staticmethod(os.path.isdir)
    remove = staticmethod(os.remove)
    rmtree = staticmethod(shutil.rmtree)

    @staticmethod
    def rename(source, target, overwrite=False):
        if not overwrite and os.path.exists(target):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), target)
        os.replace(source, target)

    @staticmethod
    def GFile(path, mode="r"):  # noqa: N802 - gfile's name
        if "b" in mode:
            return open(path, mode)
        return open(path, mode, encoding="utf-8", newline="")


def files(path):
    """`tf.io.gfile` for a remote path, `_LocalFiles` for a local one."""
    return _LocalFiles if is_local(path) else _gfile()


# Reading goes through tf.io.gfile only for a remote path (gs://, ...): a local read loads no
# TensorFlow, so the pretraining-data worker processes, which only tokenize, start without it.
def exists(path) -> bool:
    path = os.fspath(path)
    return os.path.exists(path) if is_local(path) else _gfile().exists(path)


def file_size(path) -> int:
    path = os.fspath(path)
    if is_pipe(path):
        return len(read_bytes(path))
    return os.path.getsize(path) if is_local(path) else _gfile().stat(path).length


# A pipe's bytes by path (`--test_file=<(zcat …)`): it can be read only once, and a run reads an
# input more than once (its sha256 for the cache key, then its text). tf.io.gfile reads a pipe
# as empty (it reads the size a stat gives), so pipes are read here, whole, on first use.
_PIPES: dict = {}


def is_pipe(path) -> bool:
    path = os.fspath(path)
    if not is_local(path):
        return False
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def read_bytes(path) -> bytes:
    """All the bytes of `path` (local, remote, or a pipe: read once and kept)."""
    path = os.fspath(path)
    if is_pipe(path):
        if path not in _PIPES:
            with open(path, "rb") as reader:
                _PIPES[path] = reader.read()
        return _PIPES[path]
    with open_binary(path) as reader:
        return reader.read()


def open_binary(path):
    path = os.fspath(path)
    if is_pipe(path):
        return io.BytesIO(read_bytes(path))
    return open(path, "rb") if is_local(path) else _gfile().GFile(path, "rb")


def open_input(path, what: str, error=InputError):
    """`path` opened for reading bytes, or `error` naming it when it is missing, a folder or
    unreadable (`what`: "vocab file", ...)."""
    path = os.fspath(path)
    if not exists(path):
        raise error(f"{what} not found: {path}")
    if os.path.isdir(path):
        raise error(f"{path}: a folder, not a {what}")
    try:
        return open_binary(path)
    except OSError as failure:
        raise error(f"{path}: cannot be read ({failure.strerror})") from None


def temporary_name(path) -> str:
    """A hidden name beside `path`, unique to this process and call."""
    path = os.fspath(path)
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def is_temporary(path) -> bool:
    """True for a writer's temporary name (ours, or the data writer's `.incomplete-<pid>`)."""
    return bool(_TEMPORARY.match(os.path.basename(os.fspath(path))))


def is_side_file(path) -> bool:
    """True for temporaries and the summary/key/lock files written beside data files."""
    path = os.fspath(path)
    return is_temporary(path) or path.endswith(SIDE_FILE_SUFFIXES)


def glob_inputs(patterns, error, no_match: str, empty: str) -> list[str]:
    """The files named by comma-separated (or a list of) file names and globs: each pattern's
    matches sorted, folders left out; a glob (`*?[`) also leaves out our temporaries and side
    files (`dir/*` means the data in `dir`). Raises `error(no_match.format(pattern))` for a
    pattern that matches nothing and `error(empty)` when there is no pattern."""
    gfile = _gfile()
    files: list[str] = []
    for pattern in (p.strip() for p in (patterns.split(",") if isinstance(patterns, str)
                                        else patterns)):
        if not pattern:
            continue
        matched = [f for f in sorted(gfile.glob(pattern)) if not gfile.isdir(f)]
        if any(ch in pattern for ch in "*?["):
            matched = [f for f in matched if not is_side_file(f)]
        if not matched:
            raise error(no_match.format(pattern=pattern))
        files.extend(matched)
    if not files:
        raise error(empty)
    return files


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(directory) -> list[str]:
    """Removes temporaries in `directory` left by writers that are no longer running (a killed
    run); returns what was removed. Only local folders: on a shared file system another host's
    writer may still be alive."""
    directory = os.fspath(directory) or "."
    if not is_local(directory) or not os.path.isdir(directory):
        return []
    removed = []
    for name in os.listdir(directory):
        match = _TEMPORARY.match(name)
        if match and int(match.group(2)) != os.getpid() and not _pid_alive(int(match.group(2))):
            path = os.path.join(directory, name)
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
            removed.append(path)
    return removed


def _remove(path: str) -> None:
    gfile = files(path)
    if gfile.isdir(path):
        gfile.rmtree(path)
    elif gfile.exists(path):
        gfile.remove(path)


_DISK_FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def disk_full_reason(error: BaseException) -> str | None:
    """"No space left on device" (or the file size limit, the quota) when `error` is a write that
    failed for want of space: an OSError, or TensorFlow's file errors, which carry only the text
    (`<path>; No space left on device`, raised as ResourceExhaustedError); else None."""
    number = getattr(error, "errno", None)
    if isinstance(number, int) and number in _DISK_FULL:
        return os.strerror(number)
    text = str(getattr(error, "message", None) or error)
    for number in _DISK_FULL:
        if os.strerror(number) in text:
            return os.strerror(number)
    return None


def error_path(error: BaseException) -> str | None:
    """The file a failed write names: an OSError's filename, or the `<path>; <reason>` head of
    TensorFlow's file errors."""
    filename = getattr(error, "filename", None)
    if filename:
        return os.fspath(filename)
    text = str(getattr(error, "message", None) or "")
    head = text.split("; ", 1)[0].strip() if "; " in text else ""
    return head if head and ("/" in head or os.sep in head) and "\n" not in head else None


def describe_disk(path) -> str:
    """'the disk mounted at /data has 1.2 MB free': where `path` is written (a local path)."""
    path = os.path.abspath(os.fspath(path))
    if not is_local(path):
        return f"the storage of {path}"
    folder = path
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    mount = folder
    while not os.path.ismount(mount):
        mount = os.path.dirname(mount)
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return f"the disk mounted at {mount}"
    return f"the disk mounted at {mount} has {free / 1e6:.1f} MB free"


def _dangling_link(path: str) -> str | None:
    """The target of `path` (or of a folder above it) when it is a symbolic link to nothing."""
    probe = path
    while probe and os.path.dirname(probe) != probe:
        if os.path.islink(probe) and not os.path.exists(probe):
            return f"{probe} is a symbolic link to {os.readlink(probe)}, which does not exist"
        probe = os.path.dirname(probe)
    return None


def check_output_path(path) -> None:
    """Refuses, naming the user's path, an output that is (or lies under) a symbolic link to
    nothing: a rename onto it would fail with the name of a hidden temporary instead."""
    path = os.fspath(path)
    if is_local(path):
        dangling = _dangling_link(os.path.abspath(path))
        if dangling:
            raise OutputError(f"{path}: cannot write there: {dangling}; remove the link or point "
                              "it at an existing folder")


def _remove_stale_temporaries_of(path: str) -> None:
    """Removes the temporaries of `path` left by writers that died (kill -9): the hidden
    `.<name>.tmp-<pid>-*` of a process that no longer runs."""
    head, tail = os.path.split(path)
    if not is_local(path) or not os.path.isdir(head or "."):
        return
    start = f".{tail}.tmp-"
    with os.scandir(head or ".") as entries:
        stale = [entry.path for entry in entries if entry.name.startswith(start)]
    for name in stale:
        match = _TEMPORARY.match(os.path.basename(name))
        if match and int(match.group(2)) != os.getpid() and not _pid_alive(int(match.group(2))):
            shutil.rmtree(name, ignore_errors=True) if os.path.isdir(name) else os.remove(name)


@contextlib.contextmanager
def atomic_output(path, directory: bool = False, overwrite: bool = True):
    """Yields a temporary path to write `path` under; renames it to `path` when the block ends
    without an error, removes it otherwise. `directory=True` for a folder (a SavedModel), which
    never replaces an existing folder. A full disk, a missing parent or a dangling symbolic link
    is an `OutputError` naming `path`. Temporaries of `path` left by a killed writer are removed
    first."""
    path = os.fspath(path)
    gfile = files(path)
    check_output_path(path)
    parent = os.path.dirname(path)
    if parent:
        gfile.makedirs(parent)
    if directory and gfile.exists(path):
        raise OutputError(f"{path} already exists; refusing to replace it")
    _remove_stale_temporaries_of(path)
    tmp = temporary_name(path)
    try:
        yield tmp
        if directory:
            if gfile.exists(path):
                raise OutputError(f"{path} already exists; refusing to replace it")
            gfile.rename(tmp, path)
        else:
            gfile.rename(tmp, path, overwrite=overwrite)
    except Exception as error:  # noqa: B902 - OSError, or TensorFlow's file errors (OpError)
        if isinstance(error, OutputError):
            raise
        reason = disk_full_reason(error)
        if reason is not None:
            raise OutputError(f"{path}: could not write it ({reason}; {describe_disk(path)}); "
                              "nothing was written") from None
        raise
    finally:
        if gfile.exists(tmp):
            _remove(tmp)


def write_text_atomically(path, text: str) -> None:
    """Writes `text` to `path` through `atomic_output` (tf.io.gfile for gs:// and the like)."""
    with atomic_output(path) as tmp:
        with files(tmp).GFile(tmp, "w") as writer:
            writer.write(text)


def check_version(version) -> None:
    """`--version`: None (the next one) or a whole number >= 0 (TF Serving polls numeric
    folders only: "-3" would be written, and never served)."""
    if version is not None and (isinstance(version, bool) or
                                not isinstance(version, numbers.Integral) or version < 0):
        raise UsageError(f"--version must be a whole number >= 0, got {version}")


def version_dir(base_path, version: int | None = None) -> str:
    """The one version-folder rule of every export: `<base_path>/<version>`, by default one past
    the highest numeric folder there (from 1), the layout TF Serving polls."""
    base_path = os.fspath(base_path)
    base_path = os.path.abspath(base_path) if is_local(base_path) else base_path
    check_version(version)
    gfile = _gfile()
    if gfile.exists(base_path) and not gfile.isdir(base_path):
        raise OutputError(f"{base_path}: exists and is not a folder (exports go to "
                          f"{base_path}/<version>)")
    if version is None:
        names = gfile.listdir(base_path) if gfile.isdir(base_path) else []
        existing = [int(n.rstrip("/")) for n in names if n.rstrip("/").isdigit()]
        version = max(existing, default=0) + 1
    return os.path.join(base_path, str(int(version)))


def read_utf8(path) -> str:
    """The text of `path` (tf.io.gfile) decoded as UTF-8 (a leading byte-order mark dropped);
    bytes that are not UTF-8 are an `InputError` naming the file, line and column."""
    path = os.fspath(path)
    data = read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise InputError(f"{path}:{line}: not valid UTF-8 (byte 0x{data[error.start]:02x} at "
                         f"column {column}); save the file as UTF-8") from None


def read_json_object(path, error=InputError, unreadable: str = "cannot read it as JSON",
                     expected: str = "an object") -> dict:
    """The JSON object a settings file holds, or one `error` naming the file: unreadable, not
    JSON (`unreadable`, with the reason), or JSON of another type than an object."""
    try:
        with open(path, encoding="utf-8") as f:
            values = json.load(f)
    except (OSError, ValueError) as reason:
        raise error(f"{path}: {unreadable} ({reason})") from None
    if not isinstance(values, dict):
        raise error(f"{path}: holds a JSON {type(values).__name__}, expected {expected}")
    return values
