"""Fine-tuning tasks: classification (GLUE, your own files, texts in memory), SQuAD span
extraction, RACE multiple choice, token classification (NER and other tagging);
`TextClassifier` and `TokenClassifier` (loaded on first use: importing this package starts no
TensorFlow) are their Python APIs."""

from albert_tf import lazy_imports as _lazy_imports

_EXPORTS = {"TextClassifier": "albert_tf.tasks.classification.text_classifier",
            "TokenClassifier": "albert_tf.tasks.token_classification.api"}
__all__ = list(_EXPORTS)

__getattr__ = _lazy_imports.lazy_exports(__name__, _EXPORTS)
