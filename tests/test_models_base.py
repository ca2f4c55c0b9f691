"""What every model with a head on the encoder must do, checked the same way for each: run on a
tiny batch, survive a get_config/from_config round trip, save and load under the original's TF1
names, and give float32 head outputs under a bfloat16 policy."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf.weights import tf1_checkpoint as checkpoint
from albert_tf.models import (HEAD_CLASSES, AlbertClassifier, AlbertMultipleChoice,
                              AlbertPretrainer, AlbertSquadV1, AlbertSquadV2,
                              AlbertTokenClassifier)


def _choices(batch, num_choices=4):
    """[B,S] → [B,C,S]: choice c is the row rolled by c tokens, so the choices differ."""
    return {k: np.stack([np.roll(batch[k], c, axis=-1) for c in range(num_choices)], axis=1)
            for k in ("input_ids", "input_mask", "segment_ids")}


def _with_start_positions(batch):
    return {**batch, "start_positions": np.array([4, 5], "int32")}


# name: (build(config), inputs(tiny_batch), head outputs that must be float32 or int32)
CASES = {
    "pretrainer": (AlbertPretrainer, dict, ("masked_lm_logits", "sentence_order_logits")),
    "classifier": (lambda c: AlbertClassifier(c, 2), dict, None),
    "regression": (lambda c: AlbertClassifier(c, 1), dict, None),
    "squad_v1": (AlbertSquadV1, dict, None),
    "squad_v2": (lambda c: AlbertSquadV2(c, start_n_top=3, end_n_top=2), dict, None),
    "squad_v2_training": (lambda c: AlbertSquadV2(c, start_n_top=3, end_n_top=2),
                          _with_start_positions, None),
    "multiple_choice": (AlbertMultipleChoice, _choices, None),
    "token_classifier": (lambda c: AlbertTokenClassifier(c, 5), dict, None),
}


@pytest.fixture(params=list(CASES))
def case(request, tiny_config, tiny_batch):
    build, inputs, head_outputs = CASES[request.param]
    return lambda config=tiny_config: build(config), inputs(tiny_batch), head_outputs


def _flat(outputs):
    return [np.asarray(x) for x in tf.nest.flatten(outputs)]


def _assert_same_outputs(a, b):
    assert sorted(a) == sorted(b)
    for x, y in zip(_flat(a), _flat(b)):
        np.testing.assert_allclose(x, y, atol=1e-6)


def test_runs_on_a_tiny_batch(case):
    build, batch, _ = case
    outputs = build()(batch)
    assert isinstance(outputs, dict) and outputs
    for value in _flat(outputs):
        assert np.isfinite(value).all()


def test_head_class_carries_its_head_and_real_tflite_outputs(case):
    build, batch, _ = case
    model = build()
    cls = type(model)
    assert cls in HEAD_CLASSES and cls.HEAD_ID and cls.HEADS
    assert set(cls.TFLITE_OUTPUTS) <= set(model(batch))
    assert bool(cls.TFLITE_NAME) == bool(cls.TFLITE_OUTPUTS)


def test_head_ids_and_heads_are_distinct():
    ids = [cls.HEAD_ID for cls in HEAD_CLASSES]
    heads = [head for cls in HEAD_CLASSES for head in cls.HEADS]
    assert len(set(ids)) == len(ids) and len(set(heads)) == len(heads)
    assert all(cls.HEADS == (cls.HEAD_ID,) for cls in HEAD_CLASSES if cls is not AlbertPretrainer)


def test_config_round_trip_gives_the_same_outputs(case):
    build, batch, _ = case
    model = build()
    clone = type(model).from_config(model.get_config())
    assert clone.get_config() == model.get_config()
    assert [w.shape for w in clone.weights] == [w.shape for w in model.weights]
    clone.set_weights(model.get_weights())
    _assert_same_outputs(clone(batch), model(batch))


def test_tf1_checkpoint_round_trip(case, tmp_path):
    build, batch, _ = case
    model = build()
    prefix = checkpoint.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt"), global_step=3)
    fresh = build()
    report = checkpoint.load_tf1_checkpoint(fresh, prefix)
    assert report.missing == [] and report.unused == []
    assert len(report.loaded) == len(model.weights)
    _assert_same_outputs(fresh(batch), model(batch))


def test_bfloat16_policy_keeps_head_outputs_float32(case):
    build, batch, head_outputs = case
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = build()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert all(w.dtype == "float32" for w in model.weights)
    outputs = model(batch)
    for key in head_outputs or outputs:
        assert outputs[key].dtype in (tf.float32, tf.int32), key


def test_a_given_encoder_is_shared(tiny_config, tiny_batch):
    classifier = AlbertClassifier(tiny_config, 2)
    builds = [lambda e: AlbertPretrainer(tiny_config, encoder=e),
              lambda e: AlbertClassifier(tiny_config, 3, encoder=e),
              lambda e: AlbertSquadV1(tiny_config, encoder=e),
              lambda e: AlbertSquadV2(tiny_config, encoder=e),
              lambda e: AlbertMultipleChoice(tiny_config, encoder=e)]
    for build in builds:
        model = build(classifier.encoder)
        assert model.encoder is classifier.encoder
        encoder_ids = {id(w) for w in classifier.encoder.weights}
        assert encoder_ids <= {id(w) for w in model.weights}


def test_multiple_choice_takes_its_number_of_choices(tiny_config, tiny_batch):
    model = AlbertMultipleChoice(tiny_config, num_choices=3)
    assert model(_choices(tiny_batch, 3))["logits"].shape == (2, 3)
    assert AlbertMultipleChoice.from_config(model.get_config()).num_choices == 3
