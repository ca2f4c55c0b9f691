"""albert_tf.lazy_imports: a module named to `defer_imports` runs its code on first use, not at
import; this process (set up by conftest.py as our scripts are by albert_tf's import) loaded
Keras' wrapper modules that way, and they still work."""

import importlib
import sys

import keras
import pytest

from albert_tf.lazy_imports import KERAS_WRAPPER_MODULES, LazyModules, defer_imports


@pytest.fixture()
def probe_package(tmp_path, monkeypatch):
    """A package whose `heavy` module records, in `lazy_probe.runs`, each time its code runs."""
    package = tmp_path / "lazy_probe"
    package.mkdir()
    (package / "__init__.py").write_text("runs = []\n")
    (package / "heavy.py").write_text("import lazy_probe\nlazy_probe.runs.append('heavy')\n"
                                      "VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in ("lazy_probe", "lazy_probe.heavy"):
        sys.modules.pop(name, None)
    sys.meta_path[:] = [f for f in sys.meta_path if not (isinstance(f, LazyModules) and
                                                         "lazy_probe.heavy" in f.names)]


def test_a_deferred_module_runs_on_first_attribute_access(probe_package):
    finder = defer_imports(["lazy_probe.heavy"])
    assert defer_imports(["lazy_probe.heavy"]) is finder  # installed once
    from lazy_probe import heavy
    import lazy_probe

    assert lazy_probe.runs == [] and finder.deferred == ["lazy_probe.heavy"]
    assert heavy.VALUE == 42
    assert lazy_probe.runs == ["heavy"]
    from lazy_probe.heavy import VALUE  # a later import finds the loaded module
    assert VALUE == 42 and lazy_probe.runs == ["heavy"]


def test_other_modules_load_as_usual(probe_package):
    defer_imports(["lazy_probe.other"])
    import lazy_probe.heavy

    assert lazy_probe.runs == ["heavy"]


def test_this_process_deferred_keras_wrappers_and_they_still_work():
    finders = [f for f in sys.meta_path if isinstance(f, LazyModules)
               and f.names == frozenset(KERAS_WRAPPER_MODULES)]
    assert finders, "conftest.py's defer_keras_wrappers() did not run before Keras' import"
    # Keras' import reached both modules through the finder: if Keras renames them, this fails.
    assert sorted(finders[0].deferred) == sorted(KERAS_WRAPPER_MODULES)
    for name in KERAS_WRAPPER_MODULES:
        assert hasattr(importlib.import_module(name), "SKLearnClassifier"), name
    assert keras.wrappers.SKLearnRegressor.__name__ == "SKLearnRegressor"
