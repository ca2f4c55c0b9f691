"""The input rule of every raw-text serving signature (preprocessing, classifier, SQuAD).

The same text a data file may hold is what a signature accepts: each input must be valid UTF-8
(the file readers refuse anything else), and the inputs of one request must have the same batch
size (a pair signature given 2 `text_a` and 1 `text_b` would otherwise broadcast `text_b` over
both rows). A request that breaks the rule fails with INVALID_ARGUMENT and a message naming the
input, which TF Serving returns to the client.
"""

from __future__ import annotations

import tensorflow as tf


def _utf8_check(name: str, text: tf.Tensor):
    # Transcoding valid UTF-8 to UTF-8 is the identity; anything else changes the bytes.
    cleaned = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace")
    bad_rows = tf.reshape(tf.where(tf.not_equal(cleaned, text)), [-1])
    return tf.debugging.Assert(
        tf.equal(tf.size(bad_rows), 0),
        [f"serving input {name} is not valid UTF-8 text; rows:", bad_rows], summarize=10)


def _batch_check(named: dict):
    names = list(named)
    sizes = [tf.size(named[n]) for n in names]
    first = sizes[0]
    same = tf.reduce_all(tf.stack([tf.equal(first, s) for s in sizes]))
    data = ["serving inputs must have the same batch size, got"]
    for name, size in zip(names, sizes):
        data += [f"{name}:", size]
    return tf.debugging.Assert(same, data)


def checked_text(**named: tf.Tensor) -> dict:
    """The [B] string inputs of one signature call, returned once they pass the rule."""
    checks = [_utf8_check(name, text) for name, text in named.items()]
    if len(named) > 1:
        checks.append(_batch_check(named))
    with tf.control_dependencies(checks):
        return {name: tf.identity(text) for name, text in named.items()}
