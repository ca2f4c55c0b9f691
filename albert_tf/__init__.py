"""albert-tf: ALBERT for TensorFlow 2 / Keras 3, compatible with the original Google release."""

import os as _os

_os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from albert_tf import cli as _cli  # noqa: E402

if _cli.is_entry_point():  # a script's console: no TensorFlow start-up lines
    _cli.quiet_tensorflow()

from albert_tf.config import AlbertConfig, ConfigError, preset  # noqa: E402
from albert_tf.models import AlbertModel, AlbertPretrainer  # noqa: E402

__all__ = ["AlbertConfig", "ConfigError", "preset", "AlbertModel", "AlbertPretrainer"]
__version__ = "0.1.0"
