"""`albert-convert`: the installed command of `python -m albert_tf.weights` (also
`python -m albert_tf.convert`): weights between formats, the same flags."""

import runpy


def run():
    # The module's own __main__ defines the flags and runs them, wherever the package keeps it.
    runpy.run_module("albert_tf.weights", run_name="__main__", alter_sys=True)
