"""The old import paths earlier READMEs documented still work after the move to `albert_tf.serving`:
`albert_tf.lite` and the `albert_tf.export` package (with `albert_tf.export.tflite`)."""

import ast
import os
import subprocess
import sys

import albert_tf.export
import albert_tf.export.tflite
import albert_tf.lite
from albert_tf.serving import encoder, lite, preprocessing, saved_model, tflite
from support.paths import REPO

ALIASES = ("albert_tf.lite", "albert_tf.export", "albert_tf.export.tflite")


def test_lite_alias_exposes_the_readme_names():
    from albert_tf.lite import LiteClassifier, LiteEncoder

    assert LiteClassifier is lite.LiteClassifier and LiteEncoder is lite.LiteEncoder
    for name in albert_tf.lite.__all__:
        assert getattr(albert_tf.lite, name) is getattr(lite, name)


def test_export_alias_exposes_export_tflite_and_the_savedmodel_api():
    assert albert_tf.export.tflite.export_tflite is tflite.export_tflite
    for name in albert_tf.export.tflite.__all__:
        assert getattr(albert_tf.export.tflite, name) is getattr(tflite, name)
    homes = (encoder, preprocessing, saved_model)
    for name in albert_tf.export.__all__:
        assert any(getattr(albert_tf.export, name) is getattr(m, name, None) for m in homes), name


def test_lite_alias_imports_no_tensorflow():
    # A device-side runner with LiteRT needs no TensorFlow: importing the runner must not load it.
    code = ("import sys, albert_tf.lite; "
            "sys.exit(any(m.split('.')[0] == 'tensorflow' for m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:] or "albert_tf.lite imported tensorflow"


def test_nothing_in_the_package_imports_an_alias():
    importers = []
    for path in (REPO / "albert_tf").rglob("*.py"):
        rel = path.relative_to(REPO).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        if module in ALIASES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                names = {a.name for a in node.names}
            else:
                continue
            if names & set(ALIASES):
                importers.append(f"{module}:{node.lineno}")
    assert not importers, importers
