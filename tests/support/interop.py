"""The interop fixtures (../shared/fixtures/interop: weights saved by transformers and keras-hub
with their own outputs) and helpers that load a `WeightSource` into our models and run them."""

import numpy as np
import pytest

from support.paths import SHARED

INTEROP = SHARED / "fixtures" / "interop"


def interop(*parts) -> str:
    """A path in the interop fixtures; skips the test when ../shared is absent."""
    path = INTEROP.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the project's ../shared folder; absent in a plain clone)")
    return str(path)


def inputs() -> dict:
    """The fixtures' encoder inputs as int32 (input_ids, input_mask, segment_ids)."""
    return {k: v.astype("int32") for k, v in np.load(interop("inputs.npz")).items()}


def expected(*parts) -> dict:
    return dict(np.load(interop(*parts, "outputs.npz")))


def loaded(model_cls, source, **head_args):
    """`model_cls(source.config, **head_args)` with the source's weights; the load report."""
    from albert_tf.checkpoint import ArrayReader, load_tf1_weights

    model = model_cls(source.config, **head_args)
    report = load_tf1_weights(model, ArrayReader(source.arrays), source.path)
    return model, report


def run(model, feed):
    """The model's outputs as numpy; a pretrainer predicts every position."""
    from albert_tf.models import AlbertPretrainer

    feed = dict(feed)
    if isinstance(model, AlbertPretrainer):
        batch, length = feed["input_ids"].shape
        feed["masked_lm_positions"] = np.tile(np.arange(length, dtype="int32"), (batch, 1))
    outputs = model(feed)
    return {k: np.asarray(v) for k, v in outputs.items() if not isinstance(v, (list, tuple))}


def assert_close(actual, wanted, what, atol=1e-4):
    diff = float(np.max(np.abs(np.asarray(actual) - np.asarray(wanted))))
    assert diff <= atol, f"{what}: max |diff| {diff} > {atol}"
