"""Runs an entry point in this process, as `python SCRIPT ARGV...` would run it in a new one,
but without the ~4 s TensorFlow start-up: a fresh absl flag set per call, sys.argv, stdout and
stderr captured, and the exit status `cli.run` gives (SystemExit caught; an uncaught error's
traceback goes to stderr with status 1, as Python prints it).

    run_entry_point("run_squad.py", ["--output_dir=..."])          # a top-level script
    run_entry_point("-m", ["albert_tf.evaluate_squad", "d.json", "p.json"])  # python -m ...

Returns a `subprocess.CompletedProcess` (returncode, stdout, stderr), so a test reads it as it
read a process. What only a real process shows (TensorFlow's C++ start-up lines, a signal, a
file-size limit, a lock held by another process) still needs one: see `run_process`.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import os
import pathlib
import re
import runpy
import subprocess
import sys
import traceback
import warnings

from absl import app, flags
from absl import logging as absl_logging

from support.paths import REPO


def _absl_flags() -> dict:
    """The state of a flag set holding absl's own flags only (logging, --help and friends),
    unparsed: what every script starts with."""
    app.define_help_flags()
    values = copy.deepcopy(flags.FLAGS)
    for name in list(values):
        module = values.find_module_defining_flag(name) or ""
        if not module.startswith("absl."):
            delattr(values, name)
    return values.__dict__


_PRISTINE = _absl_flags()


@contextlib.contextmanager
def _fresh_process_state(argv, stdout, stderr):
    """sys.argv, streams, flags and logging as a new process has them; everything put back.

    The flag set is swapped inside the one `flags.FLAGS` object (its state is its __dict__), so
    every holder of it sees the fresh set: absl's DEFINE_* defaults, absl.app, absl.logging."""
    process_flags = flags.FLAGS
    own_state = dict(process_flags.__dict__)
    root = logging.getLogger()
    handler = absl_logging.get_absl_handler()
    saved = dict(argv=sys.argv, stdout=sys.stdout, stderr=sys.stderr, root_level=root.level,
                 absl_level=absl_logging.get_absl_logger().level, filters=list(handler.filters),
                 stream=handler.python_handler.stream, run_init=app._run_init.done,
                 env=dict(os.environ), policy=_dtype_policy(),
                 levels={n: logging.getLogger(n).level for n in ("tensorflow", "keras", "h5py")})
    try:
        process_flags.__dict__.clear()
        process_flags.__dict__.update(copy.deepcopy(_PRISTINE))
        # absl.app's one-time set-up is done as in a new process (its help flags are in the set).
        app._run_init.done = True
        sys.argv, sys.stdout, sys.stderr = list(argv), stdout, stderr
        handler.python_handler.stream = stderr
        if handler not in root.handlers:
            root.addHandler(handler)
        process_flags["verbosity"].value = 0  # absl.app's INFO default; --verbosity=N overrides
        yield
    finally:
        process_flags.__dict__.clear()
        process_flags.__dict__.update(own_state)
        app._run_init.done = saved["run_init"]
        sys.argv, sys.stdout, sys.stderr = saved["argv"], saved["stdout"], saved["stderr"]
        root.removeHandler(handler)
        handler.python_handler.stream = saved["stream"]
        handler.filters[:] = saved["filters"]
        root.setLevel(saved["root_level"])
        absl_logging.get_absl_logger().setLevel(saved["absl_level"])
        for name, level in saved["levels"].items():
            logging.getLogger(name).setLevel(level)
        os.environ.clear()
        os.environ.update(saved["env"])
        if saved["policy"] is not None:
            sys.modules["keras"].mixed_precision.set_dtype_policy(saved["policy"])


def _dtype_policy():
    keras = sys.modules.get("keras")  # a run may switch the global policy (mixed precision)
    return None if keras is None else keras.mixed_precision.dtype_policy()


def _exit_status(code, stderr) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=stderr)  # SystemExit("error: ...") prints its message, status 1
    return 1


def run_entry_point(script: str, argv=(), cwd=None, env=None,
                    without=()) -> subprocess.CompletedProcess:
    """`python script *argv` (script: a file in the repository, or "-m" with the module first in
    argv) in this process; the result as `subprocess.run(..., capture_output=True, text=True)`.
    `env`: variables set for the call; `without`: modules that cannot be imported during the
    call, as where they are not installed."""
    command = [sys.executable, script, *map(os.fspath, argv)]
    argv = command[2:]
    if script == "-m":
        module, argv = argv[0], argv[1:]
        program = os.path.join(REPO, *module.split(".")) + ".py"
        run = lambda: _run_module(module)  # noqa: E731
    else:
        program = os.fspath(REPO / script)
        run = lambda: runpy.run_path(program, run_name="__main__")  # noqa: E731
    stdout, stderr = io.StringIO(), io.StringIO()
    with _fresh_process_state([program, *argv], stdout, stderr), _cwd(cwd), _missing(without):
        os.environ.update(env or {})  # put back by _fresh_process_state
        try:
            run()
            code = 0
        except SystemExit as done:
            code = _exit_status(done.code, stderr)
        except BaseException:  # noqa: B902 - as Python: the traceback on stderr, status 1
            traceback.print_exc(file=stderr)
            code = 1
    return subprocess.CompletedProcess(command, code, stdout.getvalue(), stderr.getvalue())


def _run_module(module):
    with warnings.catch_warnings():
        # A test has often imported the module already; `python -m` runs a fresh copy all the same.
        warnings.filterwarnings("ignore", f".*'{re.escape(module)}' found in sys.modules",
                                RuntimeWarning)
        runpy.run_module(module, run_name="__main__", alter_sys=True)


@contextlib.contextmanager
def _missing(names):
    saved = {name: sys.modules.get(name) for name in names}
    sys.modules.update({name: None for name in names})  # `import name` raises ImportError
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                del sys.modules[name]
            else:
                sys.modules[name] = module


@contextlib.contextmanager
def _cwd(path):
    if path is None:
        yield
        return
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def console_env(**extra) -> dict:
    """A user's environment: no TF_CPP_MIN_LOG_LEVEL from the test run (so a test sees what a
    user's console shows), plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}, **extra}


def run_process(script: str, argv=(), env=None, timeout=300, **kwargs) -> subprocess.CompletedProcess:
    """The same command in a real new process (from the repository root), for what only a process
    shows; each such test pays ~4 s of TensorFlow start-up, so keep them few."""
    env = dict(console_env() if env is None else env)
    # A script outside the checkout (a test's own) still imports this checkout's albert_tf,
    # installed or not.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.fspath(REPO), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, script, *map(os.fspath, argv)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, env=env, **kwargs)


def assert_refused(done, message: str, output_dir) -> None:
    """A run refused in one `error:` line (its last) that wrote no checkpoint to `output_dir`."""
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == f"error: {message}"
    assert not list(pathlib.Path(output_dir).glob("model.ckpt-*"))
