"""Sentence embeddings and semantic search: `TextEncoder` (encode, fit, search, save),
`run_embeddings.py` (train and evaluate from pair files) and `python -m albert_tf.search`.
`TextEncoder` is loaded on first use: importing this package starts no TensorFlow."""

from albert_tf import lazy_imports as _lazy_imports

_EXPORTS = {"TextEncoder": "albert_tf.tasks.embeddings.encoder",
            "EmbeddingsError": "albert_tf.tasks.embeddings.pairs",
            "HnswIndex": "albert_tf.tasks.embeddings.vector_search",
            "EmbeddingsRunConfig": "albert_tf.tasks.embeddings.config",
            "run_embeddings": "albert_tf.tasks.embeddings.run"}
__all__ = list(_EXPORTS)

__getattr__ = _lazy_imports.lazy_exports(__name__, _EXPORTS)
