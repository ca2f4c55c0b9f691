"""Serving several SavedModels in one fresh process (one TensorFlow start-up for a whole test
module), through the same loader the exports' own check uses (`albert_tf.serving.verify`)."""

import os
import subprocess
import sys
import tempfile

from support.paths import REPO

_SCRIPT = ("import sys\nfrom albert_tf.serving.verify import _main\nargs = sys.argv[1:]\n"
           "for i in range(0, len(args), 3):\n    _main(*args[i:i + 3])\n")


def serve_in_fresh_process(requests: dict) -> dict:
    """{key: (export_dir, {signature: {input: array}})} → {key: {signature: {output: array}}}."""
    from albert_tf.serving.verify import _load, _save

    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for i, (key, (export_dir, calls)) in enumerate(requests.items()):
            inputs, outputs = os.path.join(tmp, f"{i}.in.npz"), os.path.join(tmp, f"{i}.out.npz")
            _save(calls, inputs)
            args += [os.fspath(export_dir), inputs, outputs]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
                   PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH"))
                                              if p))
        proc = subprocess.run([sys.executable, "-c", _SCRIPT, *args], capture_output=True,
                              text=True, timeout=600, env=env, cwd=tmp)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return {key: _load(os.path.join(tmp, f"{i}.out.npz")) for i, key in enumerate(requests)}
