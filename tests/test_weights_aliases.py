"""The old paths still work: `albert_tf.checkpoint` (the load/save of TF1 checkpoints that
earlier READMEs documented), `albert_tf.convert` and `python -m albert_tf.convert` are aliases
of `albert_tf.weights`."""

import subprocess
import sys

from albert_tf import AlbertPretrainer
from support.configs import tiny_config
from support.paths import REPO


def test_checkpoint_alias_loads_and_saves_as_the_readme_shows(tmp_path):
    from albert_tf import checkpoint
    from albert_tf.weights import tf1_checkpoint

    assert checkpoint.load_tf1_checkpoint is tf1_checkpoint.load_tf1_checkpoint
    assert checkpoint.save_tf1_checkpoint is tf1_checkpoint.save_tf1_checkpoint
    model = AlbertPretrainer(tiny_config())
    prefix = checkpoint.save_tf1_checkpoint(model, str(tmp_path / "out" / "model.ckpt"))
    report = checkpoint.load_tf1_checkpoint(AlbertPretrainer(tiny_config()), prefix)
    assert len(report.loaded) == len(model.weights) and report.unused == []


def test_convert_alias_exposes_the_weights_api():
    import albert_tf.convert as convert
    from albert_tf import weights

    for name in ("open_source", "WeightSource", "SourceError", "HEADS"):
        assert getattr(convert, name) is getattr(weights, name), name
    assert weights.init_from_checkpoint is weights.load


def test_the_packages_import_without_tensorflow():
    code = ("import sys, albert_tf.convert, albert_tf.weights, albert_tf.weights.__main__; "
            "assert 'tensorflow' not in sys.modules, 'tensorflow imported'")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_python_m_albert_tf_convert_help():
    result = subprocess.run([sys.executable, "-m", "albert_tf.convert", "--help"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "--output_format" in result.stdout and "--input" in result.stdout
