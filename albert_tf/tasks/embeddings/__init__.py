"""Sentence embeddings and semantic search: `TextEncoder` (encode, fit, search, save),
`run_embeddings.py` (train and evaluate from pair files) and `python -m albert_tf.search`.
`TextEncoder` is loaded on first use: importing this package starts no TensorFlow."""

import importlib as _importlib

_EXPORTS = {"TextEncoder": "albert_tf.tasks.embeddings.encoder",
            "EmbeddingsError": "albert_tf.tasks.embeddings.pairs",
            "EmbeddingsRunConfig": "albert_tf.tasks.embeddings.run",
            "run_embeddings": "albert_tf.tasks.embeddings.run"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(_importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert_tf.tasks.embeddings' has no attribute {name!r}")
