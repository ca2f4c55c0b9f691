"""Training health (albert_tf/training/health.py): a run that does not learn, or starts from a
collapsed checkpoint, says so in one warning line, in eval_results.txt and in the summary; a
healthy run says nothing; a non-finite loss names the learning rate and the last good step.

The toy task: Korean sentiment reviews (tests/support/korean.py) on a one-layer WordPiece
model. Measured on it (150 steps, batch 8): learning rate 1e-3 reaches dev accuracy 1.0 with
the last 50 steps' loss at 0.004-0.09 (seeds 1, 3, 4); learning rate 1.0 leaves the loss at
4.7-5.2 and every dev prediction one class."""

import json
import logging
import math
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.optimization import create_optimizer
from albert_tf.training import NonFiniteLossError, Objective, Runtime, RuntimeConfig, Trainer
from albert_tf.training import health as H
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.korean import reviews, write_nsmc
from support.wordpiece_vocab import build_vocab

LN2 = math.log(2.0)


# ---------------------------------------------------------------- the judgements, on curves
def _noisy(values, scale, seed=0):
    return np.asarray(values) + np.random.RandomState(seed).normal(0.0, scale, len(values))


def test_loss_at_chance_is_stalled_and_a_falling_loss_is_not():
    steps = np.arange(150)
    # Stuck at chance with the toy's measured step-to-step noise (0.018).
    flat = _noisy(np.full(150, LN2), 0.018)
    stalled = H.loss_stalled(flat, LN2)
    assert stalled is not None and stalled["first"] == 76 and stalled["last"] == 150
    assert stalled["recent"] == pytest.approx(LN2, abs=0.01)
    # Learning: from chance down to 0.05 (the healthy toy runs end at 0.004-0.09).
    assert H.loss_stalled(_noisy(0.05 + (LN2 - 0.05) * np.exp(-steps / 30), 0.018), LN2) is None
    # Too few steps to judge, however flat.
    assert H.loss_stalled(flat[:H.MIN_STEPS - 1], LN2) is None
    # Flat for 100 steps, then coming down below chance: slow, not stuck.
    slow = np.concatenate([np.full(100, LN2), np.linspace(LN2, 0.55, 60)])
    assert H.loss_stalled(_noisy(slow, 0.01), LN2) is None
    # Far above chance, noisy and slowly falling (learning rate 1.0 measured 8.8 -> 5.2): stalled.
    assert H.loss_stalled(_noisy(np.linspace(8.8, 5.0, 150), 1.5), LN2) is not None
    # Without a chance loss, the first steps are the start: a pretraining-like drop is fine.
    assert H.loss_stalled(_noisy(6.0 + 4.0 * np.exp(-steps / 20), 0.1)) is None
    assert H.loss_stalled(_noisy(np.full(150, 10.0), 0.1)) is not None


def test_noise_tolerance_is_three_standard_errors_by_hand():
    # 100 steps alternating m -+ 0.25: the window is the last 50, whose 49 steps are 25 of one
    # sign and 24 of the other, 0.5 apart: noise = sqrt(0.25 - (0.5/49)^2) / sqrt(2) = 0.35348,
    # and 3 standard errors of the window's mean are 3 * noise / sqrt(50) = 0.14997 (over 2 %
    # of the chance loss 1.0). m = 0.86 is within them of chance: stalled; 0.84 is not.
    # Z = 1 (0.05) passed every test: their curves' noise was below the 2 %.
    def curve(m):
        return np.array([m + (0.25 if i % 2 else -0.25) for i in range(100)])

    noise = math.sqrt(0.25 - (0.5 / 49) ** 2) / math.sqrt(2)
    assert 3 * noise / math.sqrt(50) == pytest.approx(0.14997, abs=1e-5)
    stalled = H.loss_stalled(curve(0.86), 1.0)
    assert stalled is not None and stalled["noise"] == pytest.approx(noise, abs=1e-12)
    assert (stalled["first"], stalled["last"]) == (51, 100)
    assert stalled["recent"] == pytest.approx(0.86, abs=1e-12)
    assert H.loss_stalled(curve(0.84), 1.0) is None


def test_a_checkpoint_in_the_warm_up_is_not_judged_and_a_finding_can_end(caplog):
    health = H.TrainingHealth({"warmup": ("--warmup_step", 100)}, chance_loss=LN2)
    for loss in _noisy(np.full(150, LN2), 0.018):
        health.record_loss(loss)
    assert not health.check_loss(final=False)  # 150 steps: less than twice the warm-up
    # absl's own logger: another test in this worker may have set absl's verbosity to WARNING.
    with caplog.at_level(logging.INFO, logger="absl"):
        assert health.check_loss(final=True) and health.status == "not_learning"
        for loss in _noisy(np.linspace(LN2, 0.1, 150), 0.018, seed=1):  # it learns after all
            health.record_loss(loss)
        assert not health.check_loss() and health.status == "ok" and health.fields() == {}
    said = [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]
    assert len(said) == 2 and said[1].startswith("training health: no longer so (loss check)")
    health.check_predictions(300, np.zeros(30, int), np.arange(30) % 2)
    assert health.fields() == {"health": "not_learning"}
    health.check_predictions(400, np.arange(30) % 2, np.arange(30) % 2)
    assert health.status == "ok"


def test_entropy_spread_and_one_class():
    assert H.label_entropy([0, 1, 0, 1]) == pytest.approx(LN2)
    assert H.label_entropy([0, 0, 0, 1]) == pytest.approx(-(0.75 * math.log(0.75)
                                                             + 0.25 * math.log(0.25)))
    assert H.label_entropy([-1, -1]) is None
    # [CLS] (position 0) is left out; each position's tokens against their mean.
    same = np.ones((3, 4, 2))
    assert H.input_spread(same, np.ones((3, 4))) == 0.0
    varied = np.concatenate([np.ones((2, 1, 2)), [[[1, 1]], [[3, 3]]]], axis=1)
    assert H.input_spread(varied, np.ones((2, 2))) == pytest.approx(1 / math.sqrt(5))
    assert H.input_spread(varied, [[1, 1], [1, 0]]) != H.input_spread(varied, [[1, 1], [1, 0]])
    gold = np.arange(30) % 2
    assert H.one_class(np.zeros(30, int), gold) == 0
    assert H.one_class(gold, gold) is None
    assert H.one_class(np.zeros(10, int), gold[:10]) is None  # too few to judge
    assert H.one_class(np.zeros(30, int), np.zeros(30, int)) is None  # one gold class


# ---------------------------------------------------------------- the trainer's loss watch
class Blobs(keras.Model):
    """A linear classifier of two 2-D Gaussian blobs."""

    def __init__(self):
        super().__init__()
        self.kernel = self.add_weight(shape=(2, 2), initializer="glorot_uniform", name="kernel")
        self.bias = self.add_weight(shape=(2,), initializer="zeros", name="bias")

    def call(self, features, training=False):
        return keras.ops.matmul(features["x"], self.kernel) + self.bias


def _blob_trainer(out, lr):
    runtime = Runtime(RuntimeConfig())
    with runtime.scope():
        keras.utils.set_random_seed(0)
        model = Blobs()
        optimizer = create_optimizer(lr, 150, 0, optimizer="adamw")

    def loss_fn(logits, features):
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            features["y"], logits)), {}

    health = H.TrainingHealth({"learning_rate": ("--learning_rate", lr)}, chance_loss=LN2)
    trainer = Trainer(runtime, model, optimizer, Objective(loss_fn), out, health=health)
    rng = np.random.RandomState(0)
    y = rng.randint(0, 2, 400)
    x = (rng.normal(0, 1, (400, 2)) + 1.5 * (2 * y[:, None] - 1) + 3.0).astype(np.float32)
    dataset = lambda ctx: tf.data.Dataset.from_tensor_slices(
        {"x": x, "y": y.astype(np.int32)}).repeat().batch(8)
    return trainer, dataset


@pytest.mark.parametrize("lr, status", [(1e-2, "ok"), (100.0, "not_learning")])
def test_trainer_warns_when_the_loss_stays_at_chance(tmp_path, caplog, lr, status):
    trainer, dataset = _blob_trainer(tmp_path, lr)
    with caplog.at_level(logging.WARNING):
        trainer.train(dataset, 8, 120, save_checkpoints_steps=0, log_every_steps=1000)
    assert trainer.health.status == status
    warnings = [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]
    if status == "ok":
        assert warnings == []
    else:
        assert len(warnings) == 1 and "--learning_rate=100.0" in warnings[0]


def test_non_finite_loss_names_the_learning_rate_and_the_last_good_step(tmp_path):
    trainer, _ = _blob_trainer(tmp_path, 0.1)
    x = np.full((16, 2), np.nan, np.float32)
    nan_data = lambda ctx: tf.data.Dataset.from_tensor_slices(
        {"x": x, "y": np.zeros(16, np.int32)}).repeat().batch(8)
    with pytest.raises(NonFiniteLossError, match="loss") as error:
        trainer.train(nan_data, 8, 10, save_checkpoints_steps=1)
    message = str(error.value)
    assert "None" not in message
    assert "at step 1; learning rate 0.1 at that step (--learning_rate=0.1)" in message
    assert "no step of this run had a finite loss" in message
    assert f"none in {tmp_path} is from this run" in message


# ---------------------------------------------------------------- whole runs (the driver)
@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("health_toy")
    train, dev = reviews(400, seed=0), reviews(40, seed=1)
    write_nsmc(root / "train.tsv", train)
    write_nsmc(root / "dev.tsv", dev)
    vocab = build_vocab(root / "vocab.txt", [t for t, _ in train], words=200,
                        do_lower_case=False)
    config = dict(vocab_size=len(vocab), embedding_size=16, hidden_size=32,
                  num_hidden_layers=1, num_attention_heads=4, intermediate_size=37,
                  max_position_embeddings=64)
    (root / "albert_config.json").write_text(json.dumps(config))
    return root


def _run(root, out, steps, lr, **extra):
    from albert_tf.tasks.classification.config import ClassifierRunConfig
    from albert_tf.tasks.classification.task import classification_driver

    flat = dict(task_name="tsv", train_file=str(root / "train.tsv"),
                dev_file=str(root / "dev.tsv"), text_a_column="document", label_column="label",
                id_column="id", albert_config_file=str(root / "albert_config.json"),
                vocab_file=str(root / "vocab.txt"), do_lower_case=False, output_dir=str(out),
                max_seq_length=12, train_batch_size=8, eval_batch_size=64, learning_rate=lr,
                train_step=steps, warmup_step=steps // 10, save_checkpoints_steps=steps,
                seed=1, log_every_steps=1000, **{"do_train": True, "do_eval": True, **extra})
    driver = classification_driver(ClassifierRunConfig.from_flat(flat))
    return driver.run(), driver


def test_run_at_an_absurd_learning_rate_says_it_does_not_learn(toy, tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        summary, driver = _run(toy, tmp_path / "out", H.MIN_STEPS, 1.0)
    assert summary["health"] == "not_learning"
    assert summary["eval"]["health"] == "not_learning"
    results = (tmp_path / "out" / "eval_results.txt").read_text()
    assert "health = not_learning" in results
    warnings = [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]
    assert len(warnings) == 1, warnings
    for named in ("--learning_rate=1.0", "--warmup_step=10", "--seed=1", "not learning"):
        assert named in warnings[0]
    assert driver.health.chance_loss == pytest.approx(H.label_entropy(
        [label for _, label in reviews(400, seed=0)]))


def test_an_evaluation_far_above_chance_or_not_finite_is_judged_at_any_length(caplog):
    health = H.TrainingHealth({"learning_rate": ("--learning_rate", 3.0)}, chance_loss=LN2)
    gold = np.array([1] * 26 + [0] * 14)  # the toy's dev set: 26 of 40 in class 1
    ones, zeros = np.ones(40, int), np.zeros(40, int)
    # Not the run's last evaluation and under MIN_STEPS: not judged, however bad.
    assert not health.check_evaluation(40, 47.19, (zeros, gold), final=False)
    # 3 x ln 2 = 2.0794: at it with one class predicted is news; just under it is not.
    assert not health.check_evaluation(40, 2.0794, (ones, gold), final=True)
    with caplog.at_level(logging.WARNING):
        assert health.check_evaluation(40, 2.0795, (ones, gold), final=True)
    said = [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith(
        "training health: not learning: the evaluation at step 40 has loss 2.079, 3 times the "
        "chance loss 0.6931, and gets 26 of 40 dev examples right, no more than the commonest "
        "class alone (26); likely causes: a learning rate too high")
    assert health.fields() == {"health": "not_learning"}
    # Overconfident but right more often than the commonest class (27 of 40): an overfit run.
    better = ones.copy()
    better[26] = 0
    assert not health.check_evaluation(40, 47.0, (better, gold), final=True)
    assert health.status == "ok"
    # From MIN_STEPS on every evaluation is judged; a non-finite loss whatever the predictions.
    assert health.check_evaluation(H.MIN_STEPS, float("nan"), (gold, gold))
    assert "the evaluation at step 100 has a non-finite loss (nan)" in health.findings["eval"]
    # Without a chance loss (an eval-only run), the dev labels' prior: entropy(26/40, 14/40).
    eval_only = H.TrainingHealth()
    prior = -(26 / 40 * math.log(26 / 40) + 14 / 40 * math.log(14 / 40))
    assert not eval_only.check_evaluation(0, 3 * prior - 1e-4, (ones, gold), final=True)
    assert eval_only.check_evaluation(0, 3 * prior + 1e-4, (ones, gold), final=True)
    # A tagger of 9 tags, mostly O (prior entropy 0.2375): 4 steps from a random head measured
    # 1.951, about ln 9 = 2.197, an even guess; that is a start, not a divergence (it warned).
    tagger = H.TrainingHealth(chance_loss=0.2375)
    tags = [f"T{i}" for i in range(9)]
    gold_tags = np.array([0] * 1972 + [1] * 279)
    wrong = (np.ones(2251, int), gold_tags, tags)
    assert not tagger.check_evaluation(4, 1.951, wrong, final=True)
    assert not tagger.check_evaluation(4, 3 * math.log(9) - 1e-4, wrong, final=True)
    assert tagger.check_evaluation(4, 3 * math.log(9) + 1e-4, wrong, final=True)
    assert "3 times an even guess's loss (ln 9) 2.197" in tagger.findings["eval"]
    # A tagger: gold -1 (a tag the run does not know) is left out of the count.
    assert H.no_better_than_commonest([0, 0, 1, 1], [0, -1, 1, 0]) == (2, 2, 3)
    assert H.no_better_than_commonest([0, 1, 1, 0], [0, -1, 1, 0]) is None


def test_a_short_run_that_diverges_says_so_a_healthy_one_and_its_eval_only_rerun_too(toy, tmp_path,
                                                                           caplog):
    # 10 steps at learning rate 3.0: eval loss far above chance, everything in one class, and
    # before this nothing was said (nothing under MIN_STEPS was judged).
    with caplog.at_level(logging.WARNING):
        summary, driver = _run(toy, tmp_path / "bad", 10, 3.0)
        bad = [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]
        caplog.clear()
        healthy, _ = _run(toy, tmp_path / "good", 10, 1e-3)
        good = [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]
    loss = summary["eval"]["eval_loss"]
    assert loss >= 3 * driver.health.chance_loss and summary["health"] == "not_learning"
    assert summary["eval"]["health"] == "not_learning"
    assert "health = not_learning" in (tmp_path / "bad" / "eval_results.txt").read_text()
    assert len(bad) == 1 and f"the evaluation at step 10 has loss {loss:.4g}" in bad[0]
    assert "--learning_rate=3.0" in bad[0]
    assert good == [] and "health" not in healthy and "health" not in healthy["eval"]
    assert healthy["eval"]["eval_loss"] < 3 * driver.health.chance_loss
    # An eval-only run on that folder: its one checkpoint was evaluated, so it says so.
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again, _ = _run(toy, tmp_path / "good", 10, 1e-3, do_train=False)
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"--do_eval: every checkpoint in {tmp_path / 'good'} was evaluated before (the newest at "
        f"step 10; the best, eval_accuracy {healthy['eval']['eval_accuracy']:.6g}, at step 10; "
        f"see {tmp_path / 'good' / 'eval_results.json'}): nothing new to evaluate (delete "
        f"{tmp_path / 'good' / 'best_trial.txt'} to evaluate them again)"]
    assert "health" not in again


def _pretrained(path, config_file, collapse: bool) -> tuple[str, float]:
    """A TF1 checkpoint of a random pretrainer; `collapse`: the last LayerNorm's gamma 0 (every
    token's output is its beta). Returns (prefix, how much its outputs vary between inputs)."""
    keras.utils.set_random_seed(2)
    model = AlbertPretrainer(AlbertConfig.from_json_file(str(config_file)))
    ids = np.random.RandomState(0).randint(5, 60, (8, 12))
    ids[:, 0] = 2  # [CLS]
    if collapse:
        for weight in model.weights:
            if weight.path.endswith("LayerNorm_1/gamma"):
                weight.assign(np.zeros(weight.shape, np.float32))
            if weight.path.endswith("LayerNorm_1/beta"):
                weight.assign(np.random.RandomState(1).normal(0, 1, weight.shape))
    spread, what = H.encoder_spread(model, {"input_ids": ids})
    assert what == "sequence outputs"
    return save_tf1_checkpoint(model, str(path / "model.ckpt")), spread


def test_collapsed_start_checkpoint_is_reported_with_its_figure(toy, tmp_path, caplog):
    (tmp_path / "random").mkdir()
    _, random_spread = _pretrained(tmp_path / "random", toy / "albert_config.json", False)
    assert random_spread > 30 * H.COLLAPSED_SPREAD  # a random model is not collapsed
    (tmp_path / "collapsed").mkdir()
    prefix, spread = _pretrained(tmp_path / "collapsed", toy / "albert_config.json", True)
    assert spread == pytest.approx(0.0, abs=1e-6)
    with caplog.at_level(logging.WARNING):
        # No evaluation: the absurd-learning-rate run shows the results file's entry.
        summary, _ = _run(toy, tmp_path / "out", 1, 1e-3, init_checkpoint=prefix, do_eval=False)
    assert summary["health"] == "collapsed_start"
    warnings = [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]
    assert len(warnings) == 1 and "collapsed start" in warnings[0] and prefix in warnings[0]
    figure = float(re.search(r"vary by (\S+) of their size", warnings[0]).group(1))
    assert figure == pytest.approx(spread, abs=1e-6) and figure < 1e-6
    assert not os.path.exists(tmp_path / "out" / "model.ckpt-0.index")
