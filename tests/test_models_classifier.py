"""AlbertClassifier: the original's head (layout, init, dropout, losses) and TF1 names."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertModel
from albert_tf.weights.tf1_checkpoint import load_tf1_checkpoint, model_entries, save_tf1_checkpoint
from albert_tf.models import AlbertClassifier, classifier_loss, per_example_loss


def _inputs(batch=3, seq=8, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, seq), np.int32)
    mask[1, 5:] = 0
    return {"input_ids": rng.integers(0, 100, (batch, seq)).astype(np.int32),
            "input_mask": mask, "segment_ids": np.zeros((batch, seq), np.int32)}


def test_head_layout_and_outputs(tiny_config):
    keras.utils.set_random_seed(1)
    model = AlbertClassifier(tiny_config, 3)
    assert tuple(model.output_weights.shape) == (3, 16) and tuple(model.output_bias.shape) == (3,)
    assert np.all(model.output_bias.numpy() == 0)
    assert np.abs(model.output_weights.numpy()).max() <= 0.04 + 1e-6  # truncated at 2·0.02
    x = _inputs()
    out = model(x)
    pooled = model.encoder(x)["pooled_output"].numpy()
    logits = pooled @ model.output_weights.numpy().T + model.output_bias.numpy()
    np.testing.assert_allclose(out["logits"].numpy(), logits, atol=1e-6)
    np.testing.assert_allclose(out["probabilities"].numpy(), tf.nn.softmax(logits).numpy(), atol=1e-6)
    np.testing.assert_array_equal(out["predictions"].numpy(), logits.argmax(-1))
    assert out["predictions"].dtype == tf.int32


def test_dropout_only_in_training_and_fixed_at_point_one(tiny_config):
    model = AlbertClassifier(tiny_config, 2)  # config dropout 0: the head's is fixed
    assert model.dropout.rate == 0.1
    x = _inputs(batch=64)
    np.testing.assert_array_equal(model(x)["logits"].numpy(), model(x)["logits"].numpy())
    assert not np.allclose(model(x, training=True)["logits"].numpy(), model(x)["logits"].numpy())


def test_regression_outputs_and_losses(tiny_config):
    model = AlbertClassifier(tiny_config, 1)
    out = model(_inputs())
    assert out["probabilities"].shape == (3, 1) and out["logits"].shape == (3,)
    np.testing.assert_array_equal(out["predictions"].numpy(), out["logits"].numpy())
    labels = np.array([1.0, 2.5, 4.0], np.float32)
    want = np.mean((out["logits"].numpy() - labels) ** 2)
    got = classifier_loss(out, {"label_ids": labels}, regression=True)
    assert float(got) == pytest.approx(want, rel=1e-6)


def test_classification_loss_is_mean_cross_entropy():
    logits = np.array([[1.0, -1.0, 0.5], [0.0, 2.0, -3.0]], np.float32)
    labels = np.array([2, 1])
    want = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits).numpy()
    np.testing.assert_allclose(per_example_loss(logits, labels, False).numpy(), want, rtol=1e-6)


def test_tf1_names_round_trip_and_pretrained_checkpoint(tmp_path, fixtures_dir, tiny_config):
    model = AlbertClassifier(tiny_config, 2)
    names = [e.name for e in model_entries(model)]
    assert names[-2:] == ["output_weights", "output_bias"]  # root-level, as the original
    prefix = save_tf1_checkpoint(model, str(tmp_path / "model.ckpt-3"), 3)
    shapes = dict(tf.train.list_variables(prefix))
    assert shapes["output_weights"] == [2, 16] and shapes["output_bias"] == [2]
    clone = AlbertClassifier(tiny_config, 2)
    report = load_tf1_checkpoint(clone, prefix)
    assert report.missing == [] and "output_weights" in report.loaded
    x = _inputs()
    np.testing.assert_allclose(clone(x)["logits"].numpy(), model(x)["logits"].numpy(), atol=1e-6)
    # An original pretrained checkpoint has no head: the encoder loads, the head stays new.
    config = AlbertConfig.from_json_file(fixtures_dir / "model" / "albert_config.json")
    fine_tune = AlbertClassifier(config, 2)
    report = load_tf1_checkpoint(fine_tune, str(fixtures_dir / "model" / "ckpt" / "model.ckpt"))
    assert report.missing == ["output_weights", "output_bias"]
    encoder = AlbertModel(config)
    load_tf1_checkpoint(encoder, str(fixtures_dir / "model" / "ckpt" / "model.ckpt"))
    ids = {"input_ids": np.array([[2, 40, 50, 3]], np.int32)}
    np.testing.assert_allclose(fine_tune.encoder(ids)["pooled_output"].numpy(),
                               encoder(ids)["pooled_output"].numpy(), atol=1e-6)


def test_bad_num_labels(tiny_config):
    with pytest.raises(ValueError, match="num_labels"):
        AlbertClassifier(tiny_config, 0)
