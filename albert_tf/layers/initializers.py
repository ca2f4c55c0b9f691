"""Weight initialiser of the original: truncated normal (redraw beyond 2 stddev)."""

import keras


@keras.saving.register_keras_serializable(package="albert_tf")
class TruncatedNormal(keras.initializers.Initializer):
    """The original's truncated normal, a new draw on every call. A Keras `TruncatedNormal`
    instance fixes its seed when it is made, so the layers that share one (a layer's query,
    key, value and output kernels) would all start from the same matrix; the original's TF1
    variables each drew their own."""

    def __init__(self, stddev=0.02):
        self.stddev = stddev

    def __call__(self, shape, dtype=None):
        return keras.initializers.TruncatedNormal(stddev=self.stddev)(shape, dtype=dtype)

    def get_config(self):
        return {"stddev": self.stddev}


def truncated_normal(stddev):
    return TruncatedNormal(stddev=stddev)
