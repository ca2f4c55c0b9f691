"""Fine-tuning tasks: classification (GLUE, your own files, texts in memory), SQuAD span
extraction, RACE multiple choice, token classification (NER and other tagging);
`TextClassifier` and `TokenClassifier` (loaded on first use: importing this package starts no
TensorFlow) are their Python APIs."""

import importlib as _importlib

_EXPORTS = {"TextClassifier": "albert_tf.tasks.classification.text_classifier",
            "TokenClassifier": "albert_tf.tasks.token_classification.api"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(_importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert_tf.tasks' has no attribute {name!r}")
