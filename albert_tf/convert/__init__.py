"""Moved to `albert_tf.weights` (readers, writers, `WeightSource`, `open_source`); this alias
keeps `albert_tf.convert` and `python -m albert_tf.convert` working."""

import importlib as _importlib

# Loaded on first use, as `albert_tf.weights` does: `python -m albert_tf.convert --help` stays
# free of TensorFlow.
_EXPORTS = {"HEADS": "heads", "SourceError": "source", "WeightSource": "source",
            "open_source": "readers"}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(_importlib.import_module(f"albert_tf.weights.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
