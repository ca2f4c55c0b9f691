"""A user's own Python that imports albert_tf first prints nothing on stderr: TensorFlow's C++
start-up lines (oneDNN, CUDA probing, `failed call to cuInit`) are off unless
ALBERT_TF_TRACEBACK=1 asks for them (docs/errors-and-outputs.md)."""

from __future__ import annotations

import os
import subprocess
import sys

from support.paths import REPO

# A snippet as a user writes it: TensorFlow loads (through albert_tf) and a model runs on a
# device, which is when TensorFlow probes CUDA.
SNIPPET = """
import albert_tf
import numpy as np
from albert_tf import AlbertConfig, AlbertModel
model = AlbertModel(AlbertConfig(vocab_size=100, embedding_size=8, hidden_size=16,
                                 num_hidden_layers=1, num_attention_heads=2, intermediate_size=32))
ids = np.ones((1, 4), np.int32)
out = model({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids})
print(tuple(out["pooled_output"].shape))
"""


def test_import_albert_tf_then_a_model_prints_nothing_on_stderr(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "ALBERT_TF_TRACEBACK")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", SNIPPET], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "(1, 16)\n"
    assert done.stderr == ""


def test_albert_tf_traceback_keeps_tensorflow_log_level_as_the_user_left_it(tmp_path):
    """ALBERT_TF_TRACEBACK=1: albert_tf sets no TF_CPP_MIN_LOG_LEVEL and installs no import hook
    (TensorFlow itself is not loaded here: the check costs no TensorFlow start-up)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(ALBERT_TF_TRACEBACK="1", PYTHONPATH=str(REPO))
    code = ("import sys, os, albert_tf\n"
            "print(os.environ.get('TF_CPP_MIN_LOG_LEVEL'), "
            "[type(f).__name__ for f in sys.meta_path if 'Quiet' in type(f).__name__])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "None []\n", "")
    env.pop("ALBERT_TF_TRACEBACK")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "3 ['_QuietTensorFlowImport']\n", "")


def test_a_tflite_file_runs_without_the_xnnpack_line(tmp_path):
    """TFLite's C++ logger says "Created TensorFlow Lite XNNPACK delegate" on an interpreter's
    first run (the demo's console ended with it); LiteRunner keeps it off stderr unless
    ALBERT_TF_TRACEBACK=1 asks, which shows the line is really there to hide."""
    import keras

    from albert_tf import AlbertConfig, AlbertModel
    from albert_tf.serving.tflite import export_tflite

    keras.utils.set_random_seed(3)
    model = AlbertModel(AlbertConfig(vocab_size=100, embedding_size=8, hidden_size=16,
                                     num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32))
    files = export_tflite(model, tmp_path / "lite", 8, "float32", verify=False)
    code = ("from albert_tf.serving.lite import LiteRunner\nimport numpy as np\n"
            f"runner = LiteRunner({str(files['float32'])!r})\nids = np.ones((2, 8), np.int32)\n"
            "for _ in range(2):\n"
            "    out = runner(input_word_ids=ids, input_mask=ids, input_type_ids=0 * ids)\n"
            "print(out['pooled_output'].shape)\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "ALBERT_TF_TRACEBACK")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert (done.returncode, done.stdout, done.stderr) == (0, "(2, 16)\n", "")
    env["ALBERT_TF_TRACEBACK"] = "1"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and "XNNPACK delegate" in done.stderr
