"""Approximate search for large corpora: faiss' HNSW graph, the optional [search] extra.

    index = HnswIndex.build(encoder.encode(corpus))          # m=32, ef_construction=200
    encoder.search(["a guitar"], index, top_k=10)             # as with the vectors themselves

Exact search (numpy dot products, `TextEncoder.search` over an array) reads every vector for
every query; past about 100k texts an HNSW graph (Malkov & Yashunin) answers from a few
thousand of them, at a recall@10 against exact search measured in docs/embeddings.md. The
graph is faiss' `IndexHNSWFlat` with the inner-product metric (the vectors are
L2-normalised, so its scores are the cosines exact search gives). faiss (faiss-cpu on PyPI) is
maintained, ships wheels for Linux, macOS and Windows with AVX2 / AVX-512 kernels, and keeps
exact and approximate indexes behind one API; it is optional (`pip install albert-tf[search]`),
imported on first use by importlib, and a missing one is one `MissingDependencyError` naming
the extra.

The parameters: `m`, the graph's links per vector; `ef_construction`, the candidates kept
while it is built; `ef_search`, those kept while a query walks it (at least top_k). More of
each: better recall, slower. `config` records them with the faiss version (a search index
file keeps it beside the serialized graph).
"""

from __future__ import annotations

import functools
import importlib

import numpy as np

from albert_tf.errors import InputError, MissingDependencyError

KINDS = ("exact", "hnsw")
INSTALL = "pip install albert-tf[search]"
DEFAULTS = {"m": 32, "ef_construction": 200, "ef_search": 128}


@functools.lru_cache(maxsize=None)
def _load():
    try:
        return importlib.import_module("faiss"), None
    except Exception as error:  # absent, or built against another numpy
        return None, error


def available() -> bool:
    return _load()[0] is not None


def faiss(purpose: str = "an approximate (hnsw) search index"):
    """The faiss module; `MissingDependencyError` naming the extra when it cannot be imported."""
    module, error = _load()
    if module is None:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise MissingDependencyError(f"{purpose} needs faiss (the [search] extra), which cannot "
                                     f"be imported ({first}): {INSTALL}")
    return module


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise InputError(f"index kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return kind


def _params(m, ef_construction, ef_search) -> dict:
    values = {"m": m, "ef_construction": ef_construction, "ef_search": ef_search}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"hnsw {name} must be an integer of at least 1, got {value!r}")
    return {name: int(value) for name, value in values.items()}


class HnswIndex:
    """An HNSW graph over L2-normalised vectors (inner product); see the module docstring."""

    kind = "hnsw"

    def __init__(self, index, config: dict):
        self.index, self.config = index, dict(config)
        self.dim, self.size = int(index.d), int(index.ntotal)

    @classmethod
    def build(cls, vectors, m: int = DEFAULTS["m"],
              ef_construction: int = DEFAULTS["ef_construction"],
              ef_search: int = DEFAULTS["ef_search"]) -> "HnswIndex":
        """The graph of `vectors` ([n, dim] float32, each of length 1)."""
        library = faiss()
        params = _params(m, ef_construction, ef_search)
        vectors = np.ascontiguousarray(vectors, np.float32)
        if vectors.ndim != 2 or not len(vectors):
            raise InputError("an empty corpus; nothing to index")
        index = library.IndexHNSWFlat(vectors.shape[1], params["m"], library.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params["ef_construction"]
        index.add(vectors)
        return cls(index, {"kind": "hnsw", "library": f"faiss {library.__version__}",
                           "metric": "inner_product", **params})

    @classmethod
    def from_bytes(cls, blob: np.ndarray, config: dict) -> "HnswIndex":
        """An index `to_bytes` wrote (faiss' serialization), with its recorded config."""
        library = faiss("searching an hnsw index file")
        return cls(library.deserialize_index(np.ascontiguousarray(blob, np.uint8)), config)

    def to_bytes(self) -> np.ndarray:
        return faiss().serialize_index(self.index)

    def search(self, queries: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows), each [len(queries), top_k] best first; a row of -1 where the walk
        found fewer than top_k vectors (never with ef_search >= top_k on a connected graph)."""
        library = faiss()
        queries = np.ascontiguousarray(queries, np.float32)
        params = library.SearchParametersHNSW(efSearch=max(int(self.config["ef_search"]), top_k))
        return self.index.search(queries, min(top_k, self.size), params=params)
