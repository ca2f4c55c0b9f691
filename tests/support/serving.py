"""Loading exports the way a server does: in another process, which never built a model.

One such process serves the whole test session (per pytest-xdist worker): it is started on first
use and pays TensorFlow's start-up once, where a process per check paid it every time. Each
request runs a script there as `python -c CODE ARGV...` would (`run_fresh`), the real
`saved_model_cli` (`saved_model_cli`), or several SavedModels' signatures through the loader the
exports' own check uses (`serve_in_fresh_process`, `albert_tf.serving.verify`).
"""

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile

import numpy as np

from support.paths import REPO

# The server: reads one JSON request a line ({"argv", "code"}), runs the code as `python -c`
# would (fresh globals, sys.argv, flags reset, stdout/stderr captured), answers one JSON line.
_SERVER = r'''
import contextlib, copy, io, json, sys, traceback
from absl import app, flags
import tensorflow as tf
# Grappler's rewrites off: each export is loaded and called once or twice here, where
# optimising every loaded graph on its first call cost more than it saved.
tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
from tensorflow.python.tools import saved_model_cli  # defines its flags: once, before the snapshot
app.define_help_flags()
CLEAN = copy.deepcopy(flags.FLAGS.__dict__)
replies = sys.stdout
for line in sys.stdin:
    request = json.loads(line)
    flags.FLAGS.__dict__.clear()
    flags.FLAGS.__dict__.update(copy.deepcopy(CLEAN))
    sys.argv = list(request["argv"])
    out, err, status = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as done:
            status = done.code if isinstance(done.code, int) else int(done.code is not None)
            if isinstance(done.code, str):
                print(done.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            status = 1
    replies.write(json.dumps({"returncode": status, "stdout": out.getvalue(),
                              "stderr": err.getvalue()}) + "\n")
    replies.flush()
'''

_SAVED_MODEL_CLI = ("import sys, tensorflow_text; from tensorflow.python.tools import saved_model_cli; "
                    "sys.argv[0] = 'saved_model_cli'; saved_model_cli.main()")

_VERIFY = "import sys\nfrom albert_tf.serving.verify import _main\n_main(sys.argv[1:])\n"


class _Server:
    def __init__(self):
        self._proc = None
        self._log = None

    def _start(self):
        self._folder = tempfile.mkdtemp(prefix="serving-")  # its own folder: no relative paths
        self._log = open(os.path.join(self._folder, "stderr.txt"), "w+")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
                   PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH"))
                                              if p))
        self._proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._log, text=True,
                                      cwd=self._folder, env=env)

    def run(self, code, argv, timeout) -> subprocess.CompletedProcess:
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        command = [sys.executable, "-c", code, *argv]
        self._proc.stdin.write(json.dumps({"code": code, "argv": ["-c", *argv]}) + "\n")
        self._proc.stdin.flush()
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        line = self._proc.stdout.readline() if ready else ""
        if not line:  # died or hung: the next request starts a new one
            self._proc.kill()
            self._proc.wait()
            self._log.seek(0)
            return subprocess.CompletedProcess(command, self._proc.returncode or 1, "",
                                               self._log.read()[-5000:])
        reply = json.loads(line)
        return subprocess.CompletedProcess(command, reply["returncode"], reply["stdout"],
                                           reply["stderr"])

    def close(self):
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()


_SERVER_PROCESS = _Server()
atexit.register(_SERVER_PROCESS.close)


def run_fresh(code: str, *argv, timeout: int = 600) -> subprocess.CompletedProcess:
    """`python -c code *argv` in the serving process; the result as `subprocess.run(...,
    capture_output=True, text=True)` gives it."""
    return _SERVER_PROCESS.run(code, [os.fspath(a) for a in argv], timeout)


# An export's predictions on a features file the run wrote: its probabilities, label ids and
# is_real_example flags, as JSON on stdout (`run_fresh(EXPORT_ON_FEATURES, export, records)`).
EXPORT_ON_FEATURES = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # the export's serve_text holds SentencePiece ops
model = tf.saved_model.load(sys.argv[1])
records = [r.numpy() for r in tf.data.TFRecordDataset(sys.argv[2])]
spec = {k: tf.io.FixedLenFeature([1], tf.int64) for k in ("label_ids", "is_real_example")}
parsed = tf.io.parse_example(tf.constant(records), spec)
p = model.signatures["serving_default"](input=tf.constant(records))["probabilities"]
print(json.dumps({"probabilities": p.numpy().tolist(),
                  "labels": parsed["label_ids"].numpy()[:, 0].tolist(),
                  "real": parsed["is_real_example"].numpy()[:, 0].tolist()}))
"""


def export_on_features(export_dir, features_file) -> tuple:
    """(probabilities [N, C], label ids [N]) of an export on the real examples of a features
    file, computed in the serving process."""
    done = run_fresh(EXPORT_ON_FEATURES, export_dir, features_file)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    real = np.asarray(got["real"]) == 1
    return np.asarray(got["probabilities"])[real], np.asarray(got["labels"])[real]


def check_in_serving_process(argv, timeout: int, env=None, cwd=None) -> subprocess.CompletedProcess:
    """`albert_tf.serving.verify.run_check_process` for the test session: the export check's
    `python -m albert_tf.serving.verify ARGV` run in the serving process (its own folder, and
    TF_CPP_MIN_LOG_LEVEL=3 and this checkout first on the path, as the check's own environment
    sets them), without a TensorFlow start-up per check."""
    return run_fresh(_VERIFY, *argv, timeout=timeout)


def saved_model_cli(*argv, timeout: int = 600) -> subprocess.CompletedProcess:
    """TensorFlow's `saved_model_cli *argv` (with tensorflow_text's ops, which it cannot load by
    itself) in the serving process; fails the test when it fails."""
    done = run_fresh(_SAVED_MODEL_CLI, *argv, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def serve_in_fresh_process(requests: dict) -> dict:
    """{key: (export_dir, {signature: {input: array}})} → {key: {signature: {output: array}}}."""
    from albert_tf.serving.verify import _load, _save

    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for i, (key, (export_dir, calls)) in enumerate(requests.items()):
            inputs, outputs = os.path.join(tmp, f"{i}.in.npz"), os.path.join(tmp, f"{i}.out.npz")
            _save(calls, inputs)
            args += [os.path.abspath(export_dir), inputs, outputs]
        done = run_fresh(_VERIFY, *args)
        assert done.returncode == 0, done.stderr[-3000:]
        return {key: _load(os.path.join(tmp, f"{i}.out.npz")) for i, key in enumerate(requests)}


def _function_library(saved_model_dir):
    """The function library of saved_model.pb, read as TF Serving reads it."""
    from tensorflow.core.protobuf import saved_model_pb2  # the test process has TF loaded

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(saved_model_dir, "saved_model.pb"), "rb") as handle:
        saved.ParseFromString(handle.read())
    return saved.meta_graphs[0].graph_def.library


def xla_compiled_functions(saved_model_dir) -> list[str]:
    """Names of the functions a SavedModel marks for XLA (`jit_compile=True`)."""
    return [f.signature.name for f in _function_library(saved_model_dir).function
            if f.attr.get("_XlaMustCompile") is not None and f.attr["_XlaMustCompile"].b]


def function_input_types(saved_model_dir, name) -> list[int]:
    """The DataType enums of a saved function's inputs (captured variables are DT_RESOURCE)."""
    function = next(f for f in _function_library(saved_model_dir).function
                    if f.signature.name == name)
    return [arg.type for arg in function.signature.input_arg]
