"""Fine-tuning tasks: GLUE classification, SQuAD span extraction, RACE multiple choice, your own
data; `TextClassifier` (loaded on first use) is their Python API for text classification."""

import importlib as _importlib

_EXPORTS = {"TextClassifier": "albert_tf.tasks.text_classifier"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(_importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert_tf.tasks' has no attribute {name!r}")
