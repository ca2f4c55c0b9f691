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
    from albert_tf.weights.tf1_checkpoint import ArrayReader, load_tf1_weights

    model = model_cls(source.config, **head_args)
    report = load_tf1_weights(model, ArrayReader(source.arrays), source.path)
    return model, report


def complete_outputs(model_cls, source, *fixture, **head_args):
    """`source` loaded into `model_cls` with no weight missing or left over: its outputs on the
    fixtures' inputs and the fixture outputs `fixture` names."""
    model, report = loaded(model_cls, source, **head_args)
    assert report.missing == [] and report.unused == []
    return run(model, inputs()), expected(*fixture)


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


def random_source(config, model_cls=None, **head_args):
    """A `WeightSource` holding the (random, freshly initialised) weights of `model_cls`
    (default: an AlbertPretrainer) for `config`; also returns the model."""
    from albert_tf.weights.tf1_checkpoint import tf1_weights
    from albert_tf.weights import WeightSource
    from albert_tf.weights.heads import heads_of
    from albert_tf.models import AlbertPretrainer

    model = (model_cls or AlbertPretrainer)(config, **head_args)
    arrays = tf1_weights(model)
    # Biases and LayerNorm start at 0 / 1: move them so a swapped name cannot go unnoticed.
    rng = np.random.default_rng(5)
    arrays = {k: (v + rng.normal(0, 0.05, v.shape)).astype("float32") for k, v in arrays.items()}
    from albert_tf.weights.tf1_checkpoint import ArrayReader, load_tf1_weights

    load_tf1_weights(model, ArrayReader(arrays), "random")
    source = WeightSource(path="random", format="tf1", config=config, arrays=arrays,
                          heads=heads_of(arrays), num_labels=head_args.get("num_labels"))
    return source, model


def odd_config(**overrides):
    """Layer groups and inner groups > 1 and odd sizes (what acceptance holds out)."""
    from albert_tf.config import AlbertConfig

    values = dict(vocab_size=97, embedding_size=12, hidden_size=20, num_hidden_layers=6,
                  num_hidden_groups=2, inner_group_num=2, num_attention_heads=4,
                  intermediate_size=31, max_position_embeddings=40, hidden_act="gelu")
    values.update(overrides)
    return AlbertConfig(**values)


def tfhub_module(folder, arrays, spm):
    """A TF-Hub v1 module folder as the released ones lay it out: TF1 variables under `module/`,
    an (empty) graph file, the SentencePiece model in assets/."""
    import shutil

    from albert_tf.weights.tf1_checkpoint import write_tf1_checkpoint

    (folder / "variables").mkdir(parents=True)
    (folder / "assets").mkdir()
    (folder / "tfhub_module.pb").write_bytes(b"")
    shutil.copy(spm, folder / "assets" / "30k-clean.model")
    write_tf1_checkpoint({"module/" + k: v for k, v in arrays.items()},
                         folder / "variables" / "variables")
    return folder
