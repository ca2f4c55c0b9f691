"""tensorflow-text is optional: its ops run the in-graph tokenizers (the raw-text serving
signatures and the preprocessing export), while training, evaluation and prediction tokenize in
Python. It has no wheel for Windows or Linux aarch64, so installs there go without it.

Everything in `albert_tf.text` reaches the package through `tensorflow_text()`, so importing
`albert_tf` (or any `albert_tf.text` module) never needs it; building an in-graph tokenizer
does, and says how to install it.
"""

from __future__ import annotations

import functools

import tensorflow as tf
from absl import logging

from albert_tf.errors import MissingDependencyError

INSTALL = "pip install tensorflow-text"


@functools.lru_cache(maxsize=None)
def _load():
    try:
        # An optional dependency (see the module docstring): imported on first use only.
        import tensorflow_text
    except (ImportError, tf.errors.NotFoundError) as error:  # absent, or built for another TF
        return None, error
    return tensorflow_text, None


def available() -> bool:
    """Whether tensorflow-text can be imported (it registers the ops it brings)."""
    return _load()[0] is not None


def tensorflow_text(purpose: str = "in-graph tokenization (raw-text exports)"):
    """The `tensorflow_text` module; `MissingDependencyError` naming the install line when it
    cannot be imported."""
    module, error = _load()
    if module is None:
        raise MissingDependencyError(f"{purpose} needs tensorflow-text, which cannot be imported "
                                     f"({error}): {INSTALL}")
    return module


def skipped(what: str) -> str:
    """The one-line notice of an export part left out for want of tensorflow-text."""
    return f"tensorflow-text is not installed: {what} skipped ({INSTALL} to include it)"


def note_no_tokenizer_file(signature: str = "serve_text") -> None:
    """Logs that an export has no raw-text signature because it was given no tokenizer file
    (without tensorflow-text the export has already said why it has none)."""
    if available():
        logging.warning("no SentencePiece model or vocab file: the export has no %s signature",
                        signature)
