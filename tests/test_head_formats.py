"""A head carries its own formats: a head defined here, with its TF1, Hugging Face names and its
export, registered with one line, goes through every weight path (TF1 checkpoint save → load,
HF folder write → read, export_saved_model's export) with no other change to the package.
Also: a held head without an export is refused, and the multiple-choice head's export (a pair
scorer) scores as the model."""

import json
import types

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from albert_tf import models
from albert_tf.errors import UsageError
from albert_tf.models import AlbertMultipleChoice, AlbertTaskModel, HeadFormats
from albert_tf.serving.head_export import HeadExport, HeadInputs
from albert_tf.serving.saved_model import inference_call, serving_root
from albert_tf.source_export import export_source, head_exports
from albert_tf.weights import writers
from albert_tf.weights.loading import load
from albert_tf.weights.readers import open_source
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import tiny_config

LENGTH = 12


def export_toy(cls, inputs):
    """The toy head's export: ids in, its three scores per position out."""
    model = inputs.load(cls(inputs.config))
    call = inference_call(model)
    spec = [tf.TensorSpec([None, None], tf.int32, name) for name in
            ("input_ids", "input_mask", "segment_ids")]
    serve = tf.function(lambda ids, mask, segments: call(
        {"input_ids": ids, "input_mask": mask, "segment_ids": segments}), input_signature=spec,
        autograph=False)
    root = serving_root({"serve": serve})

    def check():  # what export_saved_model's fresh-process check sends and expects
        batch = _batch(inputs.config)
        return ({"serving_default": batch},
                {"serving_default": {"scores": _scores(model, batch)}})

    return HeadExport("toy", root, {"serving_default": root.serve}, check)


# The toy head's names: a TF1 scope of its own (rows: TF1 name, attribute, shape) and its HF
# names (HF name, TF1 name, transpose).
TOY_FORMATS = HeadFormats(
    tf1=(("toy/output_weights", "toy_weights", (3, "hidden_size")),
         ("toy/output_bias", "toy_bias", (3,))),
    hf=(("toy_head.weight", "toy/output_weights", False), ("toy_head.bias", "toy/output_bias", False)),
    hf_class="AlbertForToyTagging", hf_pooler=False)


class ToyTagger(AlbertTaskModel):
    """Three scores per position (a 3-way tagger), in a TF1 scope and HF names of its own."""

    HEAD_ID, HEADS, SERVING = "toy_tagger", ("toy_tagger",), export_toy
    FORMATS = {"toy_tagger": TOY_FORMATS}

    def __init__(self, config, encoder=None, **kwargs):
        super().__init__(config, encoder, **kwargs)
        self.toy_weights = self.add_weight(name="output_weights",
                                           shape=(3, self.config.hidden_size),
                                           initializer=keras.initializers.RandomNormal(0, 0.5))
        self.toy_bias = self.add_weight(name="output_bias", shape=(3,),
                                        initializer=keras.initializers.RandomNormal(0, 0.5))

    def call(self, inputs, training=False):
        sequence = self.encoder(inputs, training=training)["sequence_output"]
        return {"scores": ops.einsum("bsh,ch->bsc", sequence, self.toy_weights) + self.toy_bias}


@pytest.fixture()
def toy_head():
    models.register_head(ToyTagger)  # the one registry line a new head needs
    yield ToyTagger
    models.HEAD_CLASSES.remove(ToyTagger)


def _batch(config, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, config.vocab_size, (2, LENGTH)).astype(np.int32)
    mask = np.ones_like(ids)
    mask[1, LENGTH - 3:] = 0
    return {"input_ids": ids, "input_mask": mask, "segment_ids": np.zeros_like(ids)}


def _scores(model, batch):
    return np.asarray(model(batch)["scores"])


def test_a_registered_head_round_trips_through_tf1_hf_and_export(toy_head, tmp_path):
    config = tiny_config(num_hidden_layers=1)
    batch = _batch(config)
    trained = toy_head(config)
    want = _scores(trained, batch)

    # TF1 checkpoint: saved under the head's names, found as its head, loaded back.
    prefix = save_tf1_checkpoint(trained, str(tmp_path / "model.ckpt"))
    (tmp_path / "albert_config.json").write_text(config.to_json_string())
    assert tuple(writers.open_to_write(prefix).heads) == ("toy_tagger",)
    again = toy_head(config)
    assert "heads loaded: toy_tagger" in load(again, prefix, require_head=True)
    np.testing.assert_array_equal(_scores(again, batch), want)

    # Hugging Face: written as the head's own class under its HF names, read back as the head.
    hf_dir = tmp_path / "hf"
    report = writers.write(writers.open_to_write(prefix), str(hf_dir), "hf",
                           config=str(tmp_path / "albert_config.json"))
    assert report.heads == ("toy_tagger",) and report.architecture == "AlbertForToyTagging"
    saved = json.loads((hf_dir / "config.json").read_text())
    assert saved["architectures"] == ["AlbertForToyTagging"]
    source = open_source(str(hf_dir))
    assert tuple(source.heads) == ("toy_tagger",)
    from_hf = toy_head(config)
    load(from_hf, source, require_head=True)
    np.testing.assert_allclose(_scores(from_hf, batch), want, atol=1e-6)
    # keras-hub has no place for it: left out, and said so.
    left = writers.write(writers.open_to_write(prefix), str(tmp_path / "kh"), "keras_hub",
                         config=str(tmp_path / "albert_config.json"))
    assert left.left == ("toy_tagger",)

    # export_saved_model's work: the head's own export beside the encoder, serving its scores.
    result = export_source(str(hf_dir), tmp_path / "exports", max_seq_length=LENGTH,
                           verify=False)
    served = tf.saved_model.load(result["toy"]).signatures["serving_default"](
        **{k: tf.constant(v) for k, v in batch.items()})
    np.testing.assert_allclose(served["scores"].numpy(), want, atol=1e-5)


def test_a_held_head_without_an_export_is_refused(toy_head, monkeypatch):
    monkeypatch.setattr(toy_head, "SERVING", None)
    source = types.SimpleNamespace(path="somewhere", heads=("toy_tagger",))
    with pytest.raises(UsageError, match="somewhere holds a toy_tagger head, which has no "
                                         "SavedModel export"):
        head_exports(source, inputs=None)


def test_the_multiple_choice_export_answers_as_the_model(tmp_path):
    """RACE's head exported as multiple choice: serving_default on ids [B, options, S] gives
    the model's logits, their softmax and the argmax as index and letter; its TFLite form is the
    row scorer (one score per (passage, option) row)."""
    config = tiny_config(num_hidden_layers=1)
    model = AlbertMultipleChoice(config, num_choices=2)
    model.output_bias.assign([0.3])
    batch = _batch(config, seed=1)
    want = np.asarray(model({k: v[None] for k, v in batch.items()})["logits"])[0]
    source = types.SimpleNamespace(path="race", heads=("multiple_choice",), labels=None)
    inputs = HeadInputs(config, source, None, None, LENGTH, True, True,
                        load=lambda fresh: _copy(model, fresh))
    (export,) = head_exports(source, inputs)
    assert export.name == "multiple_choice" and export.tflite_args["outputs"] == ("score",)
    got = export.signatures["serving_default"]({k: tf.constant(v[None])
                                                for k, v in batch.items()})
    np.testing.assert_allclose(got["logits"].numpy()[0], want, atol=1e-5)
    np.testing.assert_allclose(got["probabilities"].numpy()[0],
                               np.exp(want) / np.exp(want).sum(), atol=1e-6)
    assert got["choice"].numpy()[0] == np.argmax(want)
    assert got["letter"].numpy()[0].decode() == "AB"[np.argmax(want)]
    rows = export.tflite_args["call"](*(tf.constant(batch[k]) for k in
                                        ("input_ids", "input_mask", "segment_ids")))
    np.testing.assert_allclose(rows["score"].numpy(), want, atol=1e-5)


def _copy(model, fresh):
    fresh.set_weights(model.get_weights())
    return fresh
