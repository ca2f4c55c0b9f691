"""Writing result files so that a reader never sees a half-written one."""

from __future__ import annotations

import os
import uuid


def write_text_atomically(path, text: str) -> None:
    """Writes `text` to a temporary name beside `path`, then renames it over `path`
    (through tf.io.gfile, so gs:// paths work too)."""
    import tensorflow as tf

    path = os.fspath(path)
    tmp = f"{path}.tmp-{uuid.uuid4().hex}"
    try:
        with tf.io.gfile.GFile(tmp, "w") as writer:
            writer.write(text)
        tf.io.gfile.rename(tmp, path, overwrite=True)
    finally:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)
