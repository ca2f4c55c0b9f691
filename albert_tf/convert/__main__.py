"""`python -m albert_tf.convert`: the converter now lives in `albert_tf.weights.__main__`
(`python -m albert_tf.weights`); this runs it, flags and output unchanged."""

import runpy

if __name__ == "__main__":
    runpy.run_module("albert_tf.weights", run_name="__main__", alter_sys=True)
