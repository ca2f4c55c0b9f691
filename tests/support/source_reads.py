"""How often, in this process, a Hugging Face folder is opened as a weight source and its
weights file read (a run opens its source once and reads its weights once: `run_inputs`), and
`counted`, the call counter tests wrap a function with."""

import contextlib

import pytest


def counted(counts: dict, key: str, function):
    """`function`, adding one to `counts[key]` at each call."""
    def call(*args, **kwargs):
        counts[key] += 1
        return function(*args, **kwargs)
    return call


@contextlib.contextmanager
def counting_hf_reads():
    """Yields {"opened": n, "read": n}, counted while the block runs."""
    from albert_tf.weights import readers
    from albert_tf.weights.readers import hf

    counts = {"opened": 0, "read": 0}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(readers, "READERS", tuple(
            (name, detect, counted(counts, "opened", read) if name == "hf" else read)
            for name, detect, read in readers.READERS))
        patch.setattr(hf, "load_file", counted(counts, "read", hf.load_file))
        yield counts
