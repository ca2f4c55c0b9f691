"""Feature caches that are reused only when they were made from the same input the same way.

A cache is one or more files derived from source files (GLUE TSVs, SQuAD JSON, RACE articles)
by settings (sequence lengths, lower-casing, the tokenizer model...). Beside each cached file
sits `<file>.key.json`: the key it was built under (the SHA-256 of every source file's bytes plus
every setting that changes the features), the number of records, and a build id shared by all
files of one build. A cache is reused only when every file and key file is there, every key equals
the one asked for, all build ids agree (so a pair of files never mixes two builds) and it holds
at least one record. Anything else is rebuilt: the old key files are removed first, the files are
written through `io_utils.atomic_output`, and the key files are written last, so a crash at any
point leaves a cache that the next run rebuilds rather than trusts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from typing import Callable, Sequence

from absl import logging

from albert_tf import io_utils
from albert_tf.io_utils import atomic_output, write_text_atomically

KEY_SUFFIX = ".key.json"
# Bump when the layout of any cached feature file changes: every older cache is then rebuilt.
FORMAT_VERSION = 1


def _gfile():
    import tensorflow as tf

    return tf.io.gfile


def file_digest(path) -> str | None:
    """SHA-256 of the file's bytes (None for no path)."""
    if not path:
        return None
    digest = hashlib.sha256()
    with io_utils.open_binary(path) as reader:  # a pipe too (tf.io.gfile reads it as empty)
        while chunk := reader.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def files_digest(paths: Sequence) -> str:
    """One SHA-256 over several files: each file's name (relative order matters) and digest."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(os.path.basename(os.fspath(path)).encode("utf-8") + b"\0")
        digest.update((file_digest(path) or "").encode("ascii") + b"\0")
    return digest.hexdigest()


def tokenizer_identity(spm_model_file=None, vocab_file=None) -> dict:
    """What identifies a tokenizer: its SentencePiece model's digest, else its vocab's."""
    return {"spm_model_sha256": file_digest(spm_model_file),
            "vocab_sha256": None if spm_model_file else file_digest(vocab_file)}


def key_path(path) -> str:
    return os.fspath(path) + KEY_SUFFIX


def read_key(path) -> dict | None:
    """The stored key record of cached file `path`, or None when absent or unreadable."""
    gfile = _gfile()
    key_file = key_path(path)
    if not gfile.exists(key_file):
        return None
    try:
        with gfile.GFile(key_file, "r") as reader:
            record = json.load(reader)
    except (ValueError, OSError):
        return None
    return record if isinstance(record, dict) else None


def stored_record(paths: Sequence, key: dict) -> dict | None:
    """The key record shared by every file of a reusable cache built under `key`, else None."""
    gfile = _gfile()
    records = []
    for path in paths:
        record = read_key(path)
        if not gfile.exists(os.fspath(path)) or record is None or record.get("key") != key:
            return None
        records.append(record)
    first = records[0]
    if any(r.get("build") != first.get("build") for r in records[1:]):
        return None
    try:
        if int(first.get("num_records", 0)) <= 0:
            return None
    except (TypeError, ValueError):
        return None
    return first


def cached(paths, key: dict, build: Callable[..., int], extra: dict | None = None) -> dict:
    """Makes sure the files `paths` (one path or several) hold what `build` writes under `key`.

    `build(*temporary_paths)` writes each file to the temporary path given for it and returns the
    number of records. Reuses the files when their key records match (see the module docstring);
    otherwise builds them and writes the key files last. Returns the key record
    (`num_records`, `key`, `build` and the `extra` fields given).
    """
    paths = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else \
        [os.fspath(p) for p in paths]
    record = stored_record(paths, key)
    if record is not None:
        logging.info("reusing cached features %s", ", ".join(paths))
        return record
    gfile = _gfile()
    if any(gfile.exists(p) for p in paths):
        logging.info("rebuilding %s: made from other input or settings (or not by this "
                     "version)", ", ".join(paths))
    for path in paths:  # a key must never outlive the files it describes
        if gfile.exists(key_path(path)):
            gfile.remove(key_path(path))
    with contextlib.ExitStack() as stack:
        temporaries = [stack.enter_context(atomic_output(path)) for path in paths]
        count = int(build(*temporaries))
    record = {"key": key, "num_records": count, "build": uuid.uuid4().hex, **(extra or {})}
    text = json.dumps(record, indent=1, sort_keys=True)
    for path in paths:
        write_text_atomically(key_path(path), text)
    return record
