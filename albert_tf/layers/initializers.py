"""Weight initialiser of the original: truncated normal (redraw beyond 2 stddev)."""

import keras


def truncated_normal(stddev):
    return keras.initializers.TruncatedNormal(stddev=stddev)
