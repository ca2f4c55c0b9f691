"""albert-tf: ALBERT for TensorFlow 2 / Keras 3, compatible with the original Google release."""

import os as _os

_os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from albert_tf import cli as _cli  # noqa: E402  (imports absl only, not TensorFlow)
from albert_tf import lazy_imports as _lazy_imports  # noqa: E402

# TensorFlow's C++ start-up lines (oneDNN, CUDA probing, cuInit) silenced whenever it loads after
# this import, in our scripts and in a user's own Python alike; ALBERT_TF_TRACEBACK=1 (or a
# script's --verbosity=1) keeps them (docs/errors-and-outputs.md). Nothing is imported now, so a
# script parses and checks its flags before TensorFlow starts.
_cli.quiet_tensorflow()
# A script's console: no scikit-learn import for Keras' unused wrappers (1.5-2 s of start-up
# where scikit-learn is installed).
if _cli.is_entry_point():
    _lazy_imports.defer_keras_wrappers()

# Loaded on first use, so `from albert_tf import cli` does not import TensorFlow before a script
# has had the chance to quiet it.
_EXPORTS = {"AlbertConfig": "albert_tf.config", "ConfigError": "albert_tf.config",
            "preset": "albert_tf.config", "AlbertModel": "albert_tf.models",
            "AlbertPretrainer": "albert_tf.models"}
__all__ = list(_EXPORTS)
__version__ = "0.1.0"

__getattr__ = _lazy_imports.lazy_exports(__name__, _EXPORTS)
