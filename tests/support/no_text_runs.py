"""Runs several commands in one Python process started without `tensorflow_text` (the caller
puts a package that raises ModuleNotFoundError first on PYTHONPATH), so they pay for one
TensorFlow start-up between them. Each runs in-process as `run_entry_point` runs it, in order;
the results go to a JSON file as {name: {"returncode", "stdout", "stderr"}}.

    python no_text_runs.py REQUEST.json RESULT.json

REQUEST holds [[name, script, [argv, ...]], ...]; the script "-c" runs argv[0] as Python code.
"""

import contextlib
import io
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tensorflow as tf  # noqa: E402

from support.entry_points import run_entry_point  # noqa: E402 (needs the path above)

# Grappler's rewrites off, as in the test workers (tests/support/tf_session.py): this process
# checks that tensorflow_text is optional, and optimising each tiny graph on its first call
# cost more than it saved.
tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


def _run_code(code):
    stdout, stderr = io.StringIO(), io.StringIO()
    status = 0
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            exec(compile(code, "<-c>", "exec"), {"__name__": "__main__"})
        except BaseException:  # noqa: B902 - as `python -c`: the traceback, status 1
            traceback.print_exc()
            status = 1
    return {"returncode": status, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


def main(request_path, result_path):
    with open(request_path, encoding="utf-8") as handle:
        request = json.load(handle)
    results = {}
    for name, script, argv in request:
        if script == "-c":
            results[name] = _run_code(argv[0])
        else:
            done = run_entry_point(script, argv)
            results[name] = {"returncode": done.returncode, "stdout": done.stdout,
                             "stderr": done.stderr}
    with open(result_path, "w", encoding="utf-8") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
