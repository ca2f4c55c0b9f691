"""Keras-native models: every layer and model is a registered serializable, a `.keras` file
round-trips with the same outputs, and `AlbertClassifier` trains with compile/fit."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import layers, models
from support.configs import TINY


def _inputs(batch=2, length=12, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, length), "int32")
    mask[-1, length - 3:] = 0
    return {"input_ids": rng.integers(5, TINY["vocab_size"], (batch, length)).astype("int32"),
            "input_mask": mask,
            "segment_ids": (np.arange(length) >= length // 2).astype("int32")[None].repeat(batch, 0)}


def _flat(outputs):
    """Every output array, in a fixed order (lists such as `encoder_outputs` flattened)."""
    arrays = []
    for name in sorted(outputs):
        value = outputs[name]
        arrays += [np.asarray(v) for v in value] if isinstance(value, list) else [np.asarray(value)]
    return arrays


MODELS = {
    "AlbertModel": (lambda c: models.AlbertModel(c), lambda x: x),
    "AlbertPretrainer": (lambda c: models.AlbertPretrainer(c),
                         lambda x: {**x, "masked_lm_positions": np.array([[1, 2], [3, 4]], "int32")}),
    "AlbertClassifier": (lambda c: models.AlbertClassifier(c, 3), lambda x: x),
    "AlbertClassifier/regression": (lambda c: models.AlbertClassifier(c, 1), lambda x: x),
    "AlbertSquadV1": (lambda c: models.AlbertSquadV1(c), lambda x: x),
    "AlbertSquadV2": (lambda c: models.AlbertSquadV2(c, start_n_top=3, end_n_top=2),
                      lambda x: {**x, "p_mask": np.zeros_like(x["input_ids"], "float32")}),
    "AlbertMultipleChoice": (lambda c: models.AlbertMultipleChoice(c, num_choices=3),
                             lambda x: {k: np.stack([v] * 3, 1) for k, v in x.items()}),
    "AlbertTokenClassifier": (lambda c: models.AlbertTokenClassifier(c, 5, dropout_prob=0.2),
                              lambda x: x),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_keras_file_round_trip_gives_the_same_outputs(name, tiny_config, tmp_path):
    build, feed = MODELS[name]
    model = build(tiny_config)
    inputs = feed(_inputs())
    expected = model(inputs)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)  # no custom_objects: the classes are registered
    assert type(loaded) is type(model)
    assert loaded.get_config() == model.get_config()
    assert len(loaded.weights) == len(model.weights)
    got = loaded(inputs)
    assert sorted(got) == sorted(expected)
    for want, have in zip(_flat(expected), _flat(got)):
        np.testing.assert_array_equal(have, want)


def _layer_cases(config):
    c = config
    return [
        layers.LayerNorm(epsilon=1e-6),
        layers.AttentionSublayer(c.hidden_size, c.num_attention_heads, 0.03, 0.1, 0.2),
        layers.AlbertEmbeddings(c.vocab_size, c.embedding_size, c.type_vocab_size,
                                c.max_position_embeddings, 0.02, 0.1),
        layers.AlbertTransformer(c),
        layers.FeedForwardSublayer(c.hidden_size, c.intermediate_size, "gelu", 0.02, 0.1),
        layers.MaskedLMHead(c.embedding_size, c.vocab_size, "relu", 0.05),
        layers.SentenceOrderHead(0.04),
        layers.Dense(3, activation="tanh", use_bias=False),
    ]


def test_every_layer_is_registered_and_rebuilds_from_its_config(tiny_config):
    cases = _layer_cases(tiny_config)
    exported = {name for name in dir(layers) if isinstance(getattr(layers, name), type)}
    assert {type(layer).__name__ for layer in cases} == exported
    for layer in cases:
        name = keras.saving.get_registered_name(type(layer))
        assert name == f"albert_tf>{type(layer).__name__}"
        assert keras.saving.get_registered_object(name) is type(layer)
        rebuilt = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
        assert type(rebuilt) is type(layer)
        assert rebuilt.get_config() == layer.get_config()
    assert keras.saving.get_registered_name(layers.gelu_tanh) == "albert_tf>gelu_tanh"


def test_every_model_class_is_registered():
    for cls in (models.AlbertModel, models.AlbertPretrainer, models.AlbertClassifier,
                models.AlbertSquadV1, models.AlbertSquadV2, models.AlbertMultipleChoice,
                models.AlbertTokenClassifier):
        assert keras.saving.get_registered_object(f"albert_tf>{cls.__name__}") is cls


def test_classifier_trains_with_compile_and_fit_on_tf_data(tiny_config, tmp_path):
    keras.utils.set_random_seed(1)
    features = _inputs(batch=32, length=10, seed=3)
    labels = (features["input_ids"][:, 1] % 2).astype("int32")  # learnable from one token
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(32, seed=0).batch(8)
    model = models.AlbertClassifier(tiny_config, 2)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
        metrics={"logits": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]})
    before = [w.numpy().copy() for w in model.trainable_weights]
    history = model.fit(dataset, epochs=12, verbose=0)
    losses = history.history["loss"]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]
    assert history.history["logits_accuracy"][-1] > 0.8
    assert all(not np.array_equal(b, w.numpy()) for b, w in zip(before, model.trainable_weights))
    in_order = tf.data.Dataset.from_tensor_slices((features, labels)).batch(8)
    evaluated = model.evaluate(in_order, verbose=0, return_dict=True)
    # Saved with its optimizer and compile settings; the reloaded model scores the same.
    path = str(tmp_path / "classifier.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded.optimizer, keras.optimizers.Adam)
    assert loaded.optimizer.iterations.numpy() == model.optimizer.iterations.numpy()
    again = loaded.evaluate(in_order, verbose=0, return_dict=True)
    assert again["loss"] == pytest.approx(evaluated["loss"], abs=1e-6)
