"""A search index file: the vectors of a text file's lines, built once by one model.

`<texts>.index.npz` (or any .npz name) holds `embeddings` [n, H] float32, `texts`, the
`model_digest` of the `TextEncoder` that built it (`TextEncoder.digest`: weights, tokenizer,
casing, pooling, length), the sha256 of the text file and `index_config` (JSON: the kind,
`exact` or `hnsw`, and an hnsw graph's parameters and faiss version); an hnsw index adds
`hnsw_graph`, faiss' serialization of the graph (`vector_search.HnswIndex`). It is written
atomically. Opened with another model it is refused in one line (its vectors would not be
comparable with the queries'); built from a text file, a stale index (another model, another
kind, or the file changed since) is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

from albert_tf import io_utils
from albert_tf.errors import InputError
from albert_tf.tasks.embeddings import vector_search

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


def write_index(path, encoder, texts, source_sha256: str = "", kind: str = "exact",
                **hnsw) -> dict:
    """Encodes `texts` and writes the index of `kind` (exact, or hnsw with `hnsw`'s m,
    ef_construction, ef_search) to `path` atomically; returns its arrays."""
    if not texts:
        raise InputError(f"{path}: an empty corpus; nothing to index")
    if vector_search.check_kind(kind) == "hnsw":
        vector_search.faiss(f"{path}: an hnsw index")  # refused before any text is encoded
    embeddings = encoder.encode(texts)
    arrays = {"embeddings": embeddings, "texts": np.array(texts, dtype=str),
              "model_digest": np.array(encoder.digest), "source_sha256": np.array(source_sha256),
              "index_config": np.array(json.dumps({"kind": "exact"}))}
    if kind == "hnsw":
        graph = vector_search.HnswIndex.build(embeddings, **hnsw)
        arrays.update(index_config=np.array(json.dumps(graph.config)),
                      hnsw_graph=graph.to_bytes())
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


def config_of(arrays) -> dict:
    """The index's `index_config` (an index written before it had one: exact)."""
    return json.loads(str(arrays["index_config"])) if "index_config" in arrays \
        else {"kind": "exact"}


def corpus(arrays, kind: str | None = None):
    """What `TextEncoder.search` searches: the vectors of an exact index (or of any index, for
    `kind` exact), the graph of an hnsw one (loaded with its recorded parameters)."""
    config = config_of(arrays)
    if config["kind"] != "hnsw" or kind == "exact":
        return arrays["embeddings"]
    if "hnsw_graph" not in arrays:
        raise InputError("an hnsw search index without its graph (no hnsw_graph)")
    return vector_search.HnswIndex.from_bytes(arrays["hnsw_graph"], config)


def open_index(path, encoder, kind: str | None = None, **hnsw) -> tuple[dict, str]:
    """(arrays, index path) for `--index_file`: an .npz index as it is (refused when another
    model built it; `kind` exact searches an hnsw index's vectors exactly, hnsw on an exact
    index is refused); a text file's `<file>.index.npz` of `kind` (default exact), built (or
    rebuilt when another model, another kind or another version of the file made it) and
    reused otherwise."""
    path = os.fspath(path)
    if kind is not None:
        vector_search.check_kind(kind)
    if path.endswith(".npz"):
        arrays = read_index(path, encoder)
        built = config_of(arrays)["kind"]
        if kind == "hnsw" and built != "hnsw":
            raise InputError(f"{path} is an {built} index, not hnsw; build an hnsw index from "
                             "its text file (--index_kind=hnsw)")
        return arrays, path
    texts = read_texts(path)
    index_path = path + SUFFIX
    source = _sha256(path)
    kind = kind or "exact"
    if os.path.isfile(index_path):
        try:
            arrays = read_index(index_path, encoder)
        except InputError:
            arrays = None
        if arrays is not None and str(arrays.get("source_sha256", "")) == source and \
                config_of(arrays)["kind"] == kind:
            return arrays, index_path
    return write_index(index_path, encoder, texts, source, kind, **hnsw), index_path
