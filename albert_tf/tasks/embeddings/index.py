"""A search index file: the vectors of a text file's lines, built once by one model.

`<texts>.index.npz` (or any .npz name) holds `embeddings` [n, H] float32, `texts`, the
`model_digest` of the `TextEncoder` that built it (`TextEncoder.digest`: weights, tokenizer,
casing, pooling, length) and the sha256 of the text file. It is written atomically. Opened
with another model it is refused in one line (its vectors would not be comparable with the
queries'); built from a text file, a stale index (another model, or the file changed since)
is rebuilt.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

from albert_tf import io_utils
from albert_tf.errors import InputError

SUFFIX = ".index.npz"


def read_texts(path) -> list[str]:
    """The non-blank lines of a UTF-8 text file, stripped; none is an error."""
    path = os.fspath(path)
    texts = [line.strip() for line in io_utils.read_utf8(path).splitlines() if line.strip()]
    if not texts:
        raise InputError(f"{path}: an empty corpus (no non-blank line); nothing to search")
    return texts


def _sha256(path) -> str:
    return hashlib.sha256(io_utils.read_bytes(path)).hexdigest()


def write_index(path, encoder, texts, source_sha256: str = "") -> dict:
    """Encodes `texts` and writes the index to `path` atomically; returns its arrays."""
    if not texts:
        raise InputError(f"{path}: an empty corpus; nothing to index")
    arrays = {"embeddings": encoder.encode(texts), "texts": np.array(texts, dtype=str),
              "model_digest": np.array(encoder.digest), "source_sha256": np.array(source_sha256)}
    with io_utils.atomic_output(path) as tmp:
        with open(tmp, "wb") as handle:  # a handle: np.savez would add ".npz" to a name
            np.savez(handle, **arrays)
    return arrays


def read_index(path, encoder) -> dict:
    """The arrays of an index file, refused when another model built it."""
    path = os.fspath(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: not a search index file ({error})") from None
    missing = {"embeddings", "texts", "model_digest"} - set(arrays)
    if missing:
        raise InputError(f"{path}: not a search index file (no {', '.join(sorted(missing))})")
    built_by = str(arrays["model_digest"])
    if built_by != encoder.digest:
        raise InputError(f"{path} was built by another model (digest {built_by[:12]}), not this "
                         f"one ({encoder.digest[:12]}: weights, tokenizer, pooling or length "
                         "differ); build it again from its text file with this model")
    if not len(arrays["texts"]):
        raise InputError(f"{path}: an empty corpus; nothing to search")
    return arrays


def open_index(path, encoder) -> tuple[dict, str]:
    """(arrays, index path) for `--index_file`: an .npz index as it is (refused when another
    model built it); a text file's `<file>.index.npz`, built (or rebuilt when another model
    or another version of the file made it) and reused otherwise."""
    path = os.fspath(path)
    if path.endswith(".npz"):
        return read_index(path, encoder), path
    texts = read_texts(path)
    index_path = path + SUFFIX
    source = _sha256(path)
    if os.path.isfile(index_path):
        try:
            arrays = read_index(index_path, encoder)
        except InputError:
            arrays = None
        if arrays is not None and str(arrays.get("source_sha256", "")) == source:
            return arrays, index_path
    return write_index(index_path, encoder, texts, source), index_path
