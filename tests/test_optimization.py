"""The original's LAMB/AdamW and schedule: golden 3-step training, schedule values, exclusions."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.checkpoint import load_tf1_checkpoint, tf1_weights
from albert_tf.models import pretraining_losses
from albert_tf.optimization import (AdamWeightDecay, Lamb, WarmupPolynomialDecay,
                                    create_optimizer)
from support.golden import assert_matches_golden, golden_features


def train_three_steps(model_dir, optimizer_name):
    config = AlbertConfig.from_json_file(model_dir / "albert_config_train_nodropout.json")
    model = AlbertPretrainer(config)
    load_tf1_checkpoint(model, model_dir / "ckpt" / "model.ckpt")
    optimizer = create_optimizer(1e-3, 10, 2, optimizer=optimizer_name)
    features = {k: tf.constant(v) for k, v in golden_features(model_dir).items()}

    @tf.function(autograph=False)  # no tensor-dependent Python: skip the source rewrite
    def step():
        with tf.GradientTape() as tape:
            loss, _, _ = pretraining_losses(model(features, training=True), features)
        lr = optimizer.learning_rate
        optimizer.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
        return loss, lr

    losses, lrs = [], []
    for _ in range(3):
        loss, lr = step()
        losses.append(float(loss))
        lrs.append(float(lr))
    return tf1_weights(model), losses, lrs, optimizer


@pytest.mark.parametrize("name", ["lamb", "adamw"])
def test_three_steps_reproduce_the_original(fixtures_dir, name):
    model_dir = fixtures_dir / "model"
    weights, losses, lrs, optimizer = train_three_steps(model_dir, name)
    assert int(optimizer.iterations) == 3
    assert_matches_golden(model_dir / f"train_{name}_resourcevars", weights, losses, lrs)


def test_schedule_matches_the_originals_values():
    schedule = WarmupPolynomialDecay(0.00176, 125000, 3125)
    expected = {0: 0.0, 1000: 0.0005632, 3124: 0.001759437, 3125: 0.001716, 62500: 0.00088,
                125000: 0.0, 200000: 0.0}
    for step, value in expected.items():
        assert float(schedule(step)) == pytest.approx(value, abs=1e-9)


def test_schedule_is_negative_before_start_warmup_step_and_plain_decay_without_warmup():
    schedule = WarmupPolynomialDecay(1.0, 100, 10, start_warmup_step=5)
    assert float(schedule(0)) == pytest.approx(-0.5)
    assert float(schedule(5)) == 0.0
    assert float(schedule(10)) == pytest.approx(0.5)
    no_warmup = WarmupPolynomialDecay(1.0, 100, 0, poly_power=2.0)
    assert float(no_warmup(50)) == pytest.approx(0.25)


def test_exclusions_follow_the_variable_paths(tiny_config):
    model = AlbertPretrainer(tiny_config)
    optimizer = create_optimizer(1e-3, 10, 0, optimizer="lamb")
    optimizer.build(model.trainable_variables)
    decayed = {v.path for v in model.trainable_variables if optimizer.decays(v)}
    assert all("LayerNorm" not in p and "bias" not in p for p in decayed)
    assert "albert/embeddings/word_embeddings" in decayed
    assert "albert_pretrainer/seq_relationship/output_weights" in decayed
    assert "albert_pretrainer/predictions/output_bias" not in decayed
    kernels = [v.path for v in model.trainable_variables if v.path.endswith("kernel")]
    assert kernels and set(kernels) <= decayed
    assert len(decayed) == len(kernels) + 4  # + word, type, position tables and SOP weights


def test_trust_ratio_is_one_for_zero_weights_and_excluded_variables():
    w = tf.Variable(tf.zeros([3]), name="dense/kernel")
    b = tf.Variable(tf.ones([3]), name="dense/bias")
    grads = [tf.constant([1.0, -2.0, 0.5]), tf.constant([1.0, 1.0, 1.0])]
    lamb = Lamb(learning_rate=0.1, weight_decay_rate=0.01,
                exclude_from_weight_decay=["bias"])
    lamb.apply(grads, [w, b])
    # Without bias correction the first step is m/(√v+ε) = 0.1g/(√0.001·|g|+ε) ≈ 3.1623·sign(g).
    step = 0.1 / (np.sqrt(0.001) + 1e-6 / np.abs(grads[0].numpy()))
    np.testing.assert_allclose(w.numpy(), -0.1 * np.sign(grads[0].numpy()) * step, rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), 1.0 - 0.1 * 0.1 / (np.sqrt(0.001) + 1e-6), rtol=1e-5)


def test_lamb_scales_by_the_trust_ratio_and_adamw_does_not():
    init = np.array([[3.0, 4.0]], np.float32)  # ‖w‖ = 5
    grad = [tf.constant([[1.0, 1.0]])]
    results = {}
    for cls in (Lamb, AdamWeightDecay):
        w = tf.Variable(init, name="layer/kernel")
        cls(learning_rate=0.01, weight_decay_rate=0.0).apply(grad, [w])
        results[cls.__name__] = init - w.numpy()
    update = 0.1 / (np.sqrt(0.001) + 1e-6)
    np.testing.assert_allclose(results["AdamWeightDecay"], 0.01 * update, rtol=1e-5)
    ratio = 5.0 / (update * np.sqrt(2.0))
    np.testing.assert_allclose(results["Lamb"], ratio * 0.01 * update, rtol=1e-5)


def test_gradients_are_clipped_by_global_norm():
    w = tf.Variable([0.0, 0.0], name="w")
    optimizer = AdamWeightDecay(learning_rate=1.0, clip_norm=1.0, beta_1=0.0, beta_2=0.0)
    optimizer.apply([tf.constant([30.0, 40.0])], [w])
    # β1 = β2 = 0: update = g/(|g|+ε) → sign(g) regardless of scale; check the slot instead.
    np.testing.assert_allclose(optimizer._m[0].numpy(), [0.6, 0.8], rtol=1e-6)


def test_skip_nonfinite_leaves_variables_untouched():
    w = tf.Variable([1.0, 2.0], name="w")
    optimizer = AdamWeightDecay(learning_rate=0.1, clip_norm=1.0, skip_nonfinite=True)
    optimizer.apply([tf.constant([np.inf, 1.0])], [w])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(optimizer._m[0].numpy(), [0.0, 0.0])


def test_unknown_optimizer_is_a_clear_error():
    with pytest.raises(ValueError, match="unsupported optimizer 'sgd'"):
        create_optimizer(1e-3, 10, 1, optimizer="sgd")


def test_create_optimizer_decays_weights_at_the_originals_rate():
    # The original's create_optimizer decays at 0.01 (not LayerNorm/layer_norm/bias). The
    # 3-step goldens move by only lr * 0.01 * w (1e-5 w) per step: a default of 0.001 passed.
    # A zero gradient leaves m = v = 0, so the update is the decay alone: AdamW w -= lr*0.01*w;
    # LAMB scales it by ||w|| / ||0.01 w|| = 100, so w -= lr * w.
    init = np.array([3.0, -4.0], np.float32)
    for name, factor in (("adamw", 0.01), ("lamb", 1.0)):
        names = ("layer/kernel", "layer/bias", "LayerNorm/gamma", "layer_norm/beta")
        weights = [tf.Variable(init, name=n) for n in names]
        optimizer = create_optimizer(0.5, 10, 0, optimizer=name)  # lr(0) = 0.5, no warm-up
        optimizer.apply([tf.zeros([2])] * len(weights), weights)
        np.testing.assert_allclose(weights[0].numpy(), init - 0.5 * factor * init, rtol=1e-6)
        for excluded in weights[1:]:
            np.testing.assert_array_equal(excluded.numpy(), init)
