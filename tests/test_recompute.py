"""--recompute: each pass of the shared layer recomputed in the backward step (keras.remat, i.e.
tf.recompute_grad): the same loss and gradients as without, the shared weights' gradients summed
pass by pass, and the memory preflight's account."""

import collections

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.config import preset
from albert_tf.errors import UsageError
from albert_tf.layers.encoder import use_recompute
from albert_tf.optimization import create_optimizer
from albert_tf.param_counts import encoder_params
from albert_tf.tasks.pretraining.objective import pretraining_objective
from albert_tf.training import Runtime, RuntimeConfig
from albert_tf.training.memory import step_bytes
from albert_tf.training.steps import TrainStep
from support.configs import GROUPED, TINY
from support.tiny_pretraining import batch_features


def _step_gradients(recompute: bool, **layout):
    """(model, loss, gradients, operations in its graph) of the train step's gradient function
    on a fixed batch."""
    runtime = Runtime(RuntimeConfig(recompute=recompute))
    keras.utils.set_random_seed(7)
    model = AlbertPretrainer(AlbertConfig(**{**TINY, **layout}))
    objective = pretraining_objective()
    step = TrainStep(runtime, model, create_optimizer(1e-3, 10, 1, "lamb"), objective)
    features = {k: tf.constant(v) for k, v in batch_features().items()}
    totals = {k: tf.cast(v, tf.float32) for k, v in objective.totals_fn(features).items()}
    totals["examples"] = tf.constant(8.0)
    loss, _, grads, _ = step._compute(features, totals)  # the step's tf.function
    ops = len(step._compute.get_concrete_function(features, totals).graph.get_operations())
    return model, float(loss), [np.asarray(g) for g in grads], ops


@pytest.mark.parametrize("layout", [dict(GROUPED, num_hidden_layers=2),
                                    dict(num_hidden_layers=4)], ids=["groups", "shared"])
def test_recomputed_step_has_the_same_loss_and_gradients(layout):
    # groups: 2 passes in 2 groups of 2 inner blocks, every block kind recomputed (the last one,
    # which the pretraining heads' positions cut short, is not); shared: one block run 4 times,
    # its weights' gradients summed pass by pass along the recomputed passes' chain.
    plain, loss, grads, ops = _step_gradients(False, **layout)
    model, loss_rc, grads_rc, ops_rc = _step_gradients(True, **layout)
    assert model.encoder.transformer.recompute and not plain.encoder.transformer.recompute
    # The backward step holds a second forward pass of the recomputed blocks (2,022 -> 2,730
    # operations when measured).
    assert ops_rc > ops + 500
    assert loss_rc == pytest.approx(loss, rel=1e-6)
    scale = max(np.abs(g).max() for g in grads)
    assert len(grads_rc) == len(grads)
    for variable, want, got in zip(model.trainable_variables, grads, grads_rc):
        assert np.abs(want).max() > 0 or "key/bias" in variable.path  # (key bias: no gradient)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * scale, err_msg=variable.path)


def test_recomputed_passes_sum_the_shared_weights_gradients_as_they_go():
    # Without the chain each of the shared layer's 16 weights had one AddN of all its passes'
    # gradients (6 here, all held until the last existed: 24 x 50 MB at ALBERT-large). With
    # it every sum has two terms, one handed back through the call Grappler does not inline
    # (a chain of plain Adds is folded back into the one AddN): 5 passes recomputed (the last
    # one, cut to the heads' positions, is not), so 4 running sums per weight along the chain
    # and 1 at the variable (the chain's start + the last pass) = 5 x 16.
    model = AlbertPretrainer(AlbertConfig(**{**TINY, "num_hidden_layers": 6}))
    objective = pretraining_objective()
    step = TrainStep(Runtime(RuntimeConfig(recompute=True)), model,
                     create_optimizer(1e-3, 10, 1, "lamb"), objective)
    features = {k: tf.constant(v) for k, v in batch_features().items()}
    totals = {k: tf.cast(v, tf.float32) for k, v in objective.totals_fn(features).items()}
    totals["examples"] = tf.constant(8.0)
    graph = step._compute.get_concrete_function(features, totals).graph
    layers = model.encoder.transformer.attention_layers + model.encoder.transformer.ffn_layers
    shapes = {tuple(v.shape) for layer in layers for v in layer.weights}
    sums = [op for op in graph.get_operations()
            if op.type == "AddN" and tuple(op.outputs[0].shape) in shapes]
    assert collections.Counter(len(op.inputs) for op in sums) == {2: 80}
    assert all(sum(t.op.type == "PartitionedCall" for t in op.inputs) == 1 for op in sums)


def test_recompute_refuses_dropout_in_the_layers():
    model = AlbertPretrainer(AlbertConfig(**{**TINY, "hidden_dropout_prob": 0.1}))
    with pytest.raises(UsageError, match=r"^--recompute needs a model without dropout in its "
                                         r"layers \(its config has hidden_dropout_prob 0.1, "
                                         r"attention_probs_dropout_prob 0.0\)"):
        use_recompute(model)
    assert not model.encoder.transformer.recompute


def test_preflight_counts_one_layers_activations_and_each_layers_input():
    config = preset("albert_large")
    b, s, h, a, L, inner, vocab = 8, 128, 1024, 16, 24, 4096, 30000
    mb = 1024 ** 2
    per_layer = s * b * h * (34 + 5 * a * s / h) * 2  # float32 bytes of one layer's activations
    # The shared block's weights (Q, K, V, output 4·h² + biases, two LayerNorms, FFN 2·h·I +
    # biases): one weight-sized gradient per pass.
    block = (4 * h * h + 4 * h + 2 * 2 * h + 2 * h * inner + inner + h) * 4
    params = encoder_params(config) + vocab + 128 * 2
    logits, embeddings = b * 20 * vocab * 4 * 3, b * s * (128 + h) * 4 * 4
    # Without: weights, gradients, 2 slots, the clipped gradients and the update's temporaries,
    # every layer's activations, L − 1 passes' gradients held until summed, 7 MB of graph a pass.
    kept = params * 4 * 6 + L * per_layer + (L - 1) * block + logits + embeddings + (
        200 + 7 * L) * mb
    assert abs(step_bytes(config, b, s) - kept) <= 2
    # With: the larger of the backward pass (weights, slots, each layer's input, one layer's
    # activations, the running sum + one pass's gradient + its weights' copy) and the update one
    # variable at a time (weights, slots, gradients, clipped gradients, the FFN's temporaries);
    # 11 MB of graph a pass. At large's shapes the backward pass is the larger.
    backward = params * 4 * 3 + L * s * b * h * 4 + per_layer + 3 * block + logits + embeddings
    updating = params * 4 * 5 + h * inner * 4 * 2
    assert backward > updating
    recomputed = step_bytes(config, b, s, recompute=True)
    assert abs(recomputed - (backward + (200 + 11 * L) * mb)) <= 2
    # One more pass: its activations, one more weight-sized gradient held, 7 MB more graph.
    deeper = step_bytes(config.replace(num_hidden_layers=L + 1), b, s)
    assert abs((deeper - step_bytes(config, b, s)) - (per_layer + block + 7 * mb)) <= 2
    deeper = step_bytes(config.replace(num_hidden_layers=L + 1), b, s, recompute=True)
    assert abs((deeper - recomputed) - (s * b * h * 4 + 11 * mb)) <= 2
    # xxlarge's weights dominate: one step at batch 1 is the update's (no activations to speak of).
    big = preset("albert_xxlarge", vocab_size=vocab)
    big_params = encoder_params(big) + vocab + 128 * 2
    assert step_bytes(big, 1, 8, 1, 1, recompute=True) >= (
        big_params * 4 * 5 + 4096 * 16384 * 4 * 2 + (200 + 11 * 12) * mb)


# Step memory measured by bench/recompute_memory.py, 2026-12-05 13:00-13:20 UTC on 2 quiet cores
# (docs/distributed.md's table):
# (size, batch, length, masked positions, --recompute) -> MB above the RSS after importing TF.
MEASURED_STEP_MB = {("base", 8, 128, 20, False): 1526, ("base", 8, 128, 20, True): 745,
                    ("large", 8, 128, 20, False): 3355, ("large", 8, 128, 20, True): 1144,
                    ("xxlarge", 8, 128, 20, False): 16446, ("xxlarge", 8, 128, 20, True): 6794,
                    ("xxlarge", 1, 32, 5, True): 5853}


@pytest.mark.parametrize("case", sorted(MEASURED_STEP_MB), ids=str)
def test_preflight_is_within_a_quarter_of_the_measured_step(case):
    size, batch, length, predictions, recompute = case
    config = preset(size, vocab_size=30000)
    estimate = step_bytes(config, batch, length, 1, predictions, recompute=recompute) / 1024 ** 2
    assert 0.75 <= estimate / MEASURED_STEP_MB[case] <= 1.25


def test_recompute_updates_one_variable_at_a_time_to_the_same_weights():
    """--recompute also chains the optimizer's per-variable updates, so one variable's
    temporaries are alive at a time (ALBERT-xxlarge's step: 9,301 -> 6,794 MB measured): the
    weights after a step are those of the step without it."""
    after = []
    for recompute in (False, True):
        keras.utils.set_random_seed(7)
        runtime = Runtime(RuntimeConfig(recompute=recompute))
        with runtime.scope():
            model = AlbertPretrainer(AlbertConfig(**{**TINY, "num_hidden_layers": 3}))
            optimizer = create_optimizer(1e-3, 10, 1, "lamb")
            optimizer.build(model.trainable_variables)
        step = TrainStep(runtime, model, optimizer, pretraining_objective())
        assert optimizer.serial_updates is recompute
        values = {k: tf.constant(v) for k, v in batch_features().items()}
        iterator = iter(runtime.strategy.distribute_datasets_from_function(
            lambda ctx: tf.data.Dataset.from_tensors(values).repeat()))
        step(iterator)
        step(iterator)
        after.append([v.numpy() for v in model.trainable_variables])
    for plain, chained in zip(*after):
        np.testing.assert_allclose(chained, plain, rtol=1e-5, atol=1e-7)
