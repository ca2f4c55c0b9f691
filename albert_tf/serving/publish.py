"""Publishing the folders of one export together, when all of them are written.

An export is a SavedModel `<base>/<n>` and, beside it, folders of the same version under
`<base>/<extra>/<n>` (its TFLite files: `<base>/tflite/<n>`). Everything is written under hidden
temporary names first (TF Serving loads numeric folder names only); `publish` renames them to
their versions when all of them are complete, the extra folders first and the SavedModel last.
Nothing is published when any part fails, so a full disk during the TFLite stage leaves no
version behind a failed command.

The version is taken when publishing: when another export took `<n>` in the meantime (two
exports to one base at once), the whole export moves to the next free number, the same in every
folder, instead of failing after all its work. A version given explicitly (`--version`) never
moves: a taken one is an `ExportExistsError`, checked before the work as well.
"""

from __future__ import annotations

import errno
import os
import re
import shutil

import tensorflow as tf

from albert_tf import io_utils
from albert_tf.errors import OutputError

# rename(2) onto a folder that is not empty, or onto a file: the version is taken.
_TAKEN = (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR)
_MAX_TRIES = 1000
_FILE_TEMPORARY = re.compile(r"(^|/)\.([^/]+?)\.tmp-\d+-[0-9a-f]+")
_TF_TEMPORARY = re.compile(r"(?<=[^/])\.tmp[0-9a-f]{32}(?![0-9a-f])")


class ExportExistsError(OutputError, FileExistsError):
    """The version folder asked for exists already; an export never replaces one."""


class _Taken(Exception):
    pass


def _rename_no_replace(src: str, dst: str) -> None:
    """Renames the folder `src` to `dst` unless `dst` exists (then `_Taken`). Locally rename(2)
    itself refuses a folder that is not empty, so two exports racing for `dst` cannot both win."""
    parent = os.path.dirname(dst)
    if io_utils.is_local(dst):
        os.makedirs(parent, exist_ok=True)
        try:
            os.rename(src, dst)
        except OSError as error:
            if error.errno in _TAKEN:
                raise _Taken() from None
            raise
        return
    tf.io.gfile.makedirs(parent)
    if tf.io.gfile.exists(dst):
        raise _Taken()
    tf.io.gfile.rename(src, dst, overwrite=False)


def _remove(path: str) -> None:
    if io_utils.is_local(path):
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.remove(path)
    elif tf.io.gfile.exists(path):
        tf.io.gfile.rmtree(path) if tf.io.gfile.isdir(path) else tf.io.gfile.remove(path)


class Stage:
    """One version of an export under temporary names: `path` (the SavedModel's, not created:
    `tf.saved_model.save` creates it) and `extra(name)` (created, empty) for `<base>/<name>/<n>`.
    `target` and `extra_target(name)` are the final paths once `publish` has run."""

    def __init__(self, base, version=None, extras=()):
        base = os.fspath(base)
        io_utils.check_output_path(base)  # a symbolic link to nothing is named as given
        self.base = os.path.abspath(base) if io_utils.is_local(base) else base
        self.fixed = version is not None
        self.bases = [self.base] + [os.path.join(self.base, name) for name in extras]
        for folder in self.bases:
            # A killed export's temporary folders (their writer gone) are removed.
            io_utils.remove_stale_temporaries(folder)
        # The one version rule (io_utils.version_dir): a --version is checked (a whole number
        # >= 0), a base that is a file refused, before any work.
        self.version = int(os.path.basename(io_utils.version_dir(self.base, version))) \
            if self.fixed else self._next_version(0)
        if self.fixed:
            for target in self._targets(self.version):
                if tf.io.gfile.exists(target):
                    raise ExportExistsError(
                        f"export folder already exists: {target}; an export never replaces a "
                        "version (pass another --version, or none)")
        self.path = io_utils.temporary_name(os.path.join(self.base, str(self.version)))
        self._extras: dict[str, str] = {}
        self.published = False

    def _next_version(self, at_least: int) -> int:
        """One past the highest version in every folder of the export (`io_utils.version_dir`),
        so that its SavedModel and extra folders share one number."""
        found = [int(os.path.basename(io_utils.version_dir(folder))) for folder in self.bases]
        return max(found + [at_least])

    def _targets(self, version) -> list:
        return [os.path.join(folder, str(version)) for folder in self.bases]

    @property
    def target(self) -> str:
        return os.path.join(self.base, str(self.version))

    def extra(self, name: str) -> str:
        """A created, empty temporary folder published as `<base>/<name>/<version>`."""
        if name not in self._extras:
            folder = os.path.join(self.base, name)
            if folder not in self.bases:
                raise ValueError(f"{name!r} was not declared as an extra folder of this export")
            path = io_utils.temporary_name(os.path.join(folder, str(self.version)))
            tf.io.gfile.makedirs(path)
            self._extras[name] = path
        return self._extras[name]

    def extra_target(self, name: str) -> str:
        return os.path.join(self.base, name, str(self.version))

    def final_path(self, path: str) -> str:
        """`path` (inside one of the temporary folders) under its published name."""
        path = os.fspath(path)
        for temporary, target in self._pairs():
            if path == temporary or path.startswith(temporary + os.sep):
                return target + path[len(temporary):]
        return path

    def _pairs(self):
        extras = [(tmp, self.extra_target(name)) for name, tmp in self._extras.items()]
        return extras + [(self.path, self.target)]

    def publish(self) -> str:
        """Renames every part to its version (extras first, the SavedModel last); a version
        taken meanwhile moves the export to the next free one. Returns the SavedModel's path."""
        if not tf.io.gfile.exists(self.path):
            raise OutputError(f"{self.target}: nothing was written")
        for _ in range(_MAX_TRIES):
            done = []
            try:
                for temporary, target in self._pairs():
                    _rename_no_replace(temporary, target)
                    done.append((temporary, target))
                self.published = True
                return self.target
            except _Taken:
                for temporary, target in reversed(done):  # this version is someone else's
                    os.rename(target, temporary) if io_utils.is_local(target) else \
                        tf.io.gfile.rename(target, temporary)
                if self.fixed:
                    raise ExportExistsError(
                        f"export folder already exists: {self.target}; an export never "
                        "replaces a version (pass another --version, or none)") from None
                self.version = self._next_version(self.version + 1)
        raise OutputError(f"{self.base}: no free version folder after {_MAX_TRIES} tries")

    def unpublish(self) -> None:
        """Takes a published export back (another part of the same publication failed)."""
        if self.published:
            for _, target in self._pairs():
                _remove(target)
            self.published = False

    def discard(self) -> None:
        """Removes whatever is left under temporary names."""
        for temporary, _ in self._pairs():
            _remove(temporary)


class Publication:
    """Several exports (e.g. export_saved_model.py's encoder, preprocessing and classifier)
    published together: `with Publication() as group: stage = group.stage(base)`; all are
    published when the block ends without an error, none otherwise. A full disk while they are
    written is an `OutputError` naming the file's published path and the disk."""

    def __init__(self):
        self.stages: list[Stage] = []

    def stage(self, base, version=None, extras=()) -> Stage:
        stage = Stage(base, version, extras)
        self.stages.append(stage)
        return stage

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        try:
            if error is None:
                published = []
                try:
                    for stage in self.stages:
                        stage.publish()
                        published.append(stage)
                except BaseException:
                    for stage in published:
                        stage.unpublish()
                    raise
            elif isinstance(error, Exception):
                full = self._disk_full(error)
                if full is not None:
                    raise full from None
            return False
        finally:
            for stage in self.stages:
                stage.discard()

    def _disk_full(self, error) -> OutputError | None:
        """A full disk while the parts were written, named by the published paths."""
        reason = io_utils.disk_full_reason(error)
        if reason is None:
            return None
        if isinstance(error, OutputError):  # atomic_output's, naming a file in a temporary folder
            return OutputError(self._published_names(str(error)).replace(
                "nothing was written", "nothing was published"))
        path = io_utils.error_path(error)
        base = self.stages[0].base if self.stages else "."
        where = self._published_names(path) if path else (
            self.stages[0].target if self.stages else base)
        return OutputError(f"{where}: could not write it ({reason}; "
                           f"{io_utils.describe_disk(path or base)}); nothing was published")

    def _published_names(self, text: str) -> str:
        for stage in self.stages:
            for temporary, target in stage._pairs():
                text = text.replace(temporary, target)
        # A file's own temporary name (ours `.<name>.tmp-<pid>-<hex>`, TensorFlow's
        # `<name>.tmp<hex>`) as the file's name.
        return _TF_TEMPORARY.sub("", _FILE_TEMPORARY.sub(r"\1\2", text))
