"""Keras' scikit-learn wrappers loaded on first use instead of at `import keras`.

Keras 3 builds `keras.wrappers` (SKLearnClassifier, ...) when it is imported, and that imports
scikit-learn whenever it is installed: 1.5-2 s of every process's start-up on 2 CPU cores
(scikit-learn is common beside NLP tools; seqeval, our test extra's check, needs it). albert_tf
never uses the wrappers. `defer_keras_wrappers()` makes Python load that module lazily
(`importlib.util.LazyLoader`): `keras.wrappers` is there as before, and its first attribute
access runs the module as the plain import would have.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

# Keras' public module, which `import keras` loads (its `keras._tf_keras.keras` twin reuses it).
KERAS_WRAPPER_MODULES = ("keras.wrappers",)


class LazyModules:
    """A meta-path finder for the modules in `names` only: the spec the other finders give, with
    a lazy loader. `deferred` lists the modules it has handed out."""

    def __init__(self, names):
        self.names = frozenset(names)
        self.deferred = []

    def find_spec(self, name, path=None, target=None):
        if name not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = importlib.util.LazyLoader(spec.loader)
            self.deferred.append(name)
        return spec


def defer_imports(names) -> LazyModules:
    """Loads the modules in `names`, when first imported, lazily: their code runs on the first
    attribute access. Returns the finder (the same one for the same names)."""
    for finder in sys.meta_path:
        if isinstance(finder, LazyModules) and finder.names == frozenset(names):
            return finder
    finder = LazyModules(names)
    sys.meta_path.insert(0, finder)
    return finder


def defer_keras_wrappers() -> LazyModules | None:
    """Call before Keras is imported (a no-op once it is): `import keras` then skips
    scikit-learn until something touches `keras.wrappers`."""
    if "keras" in sys.modules:
        return None
    return defer_imports(KERAS_WRAPPER_MODULES)


def lazy_exports(module: str, exports: dict):
    """A package's module-level `__getattr__` for `exports` (name → the module that defines it):
    each is imported on first use, so importing the package starts no TensorFlow."""
    def __getattr__(name):
        if name in exports:
            return getattr(importlib.import_module(exports[name]), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
