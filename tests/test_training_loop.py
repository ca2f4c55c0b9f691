"""The generic Trainer: golden 3 steps through the loop, resume, non-finite stop, eval, the
best-checkpoint evaluator on its checkpoints, logging and TensorBoard events."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.weights import load
from albert_tf.weights.tf1_checkpoint import tf1_weights
from albert_tf.optimization import create_optimizer
from albert_tf.errors import TrainingError
from albert_tf.tasks.eval_log import EvalLog
from albert_tf.tasks.eval_state import CheckpointEvaluator
from albert_tf.training import NonFiniteLossError, Objective, Runtime, RuntimeConfig, Trainer
from albert_tf.tasks.pretraining.objective import pretraining_objective
from support.golden import assert_matches_golden, golden_features


def golden_dataset_fn(model_dir):
    features = {k: tf.constant(v) for k, v in golden_features(model_dir).items()}
    return lambda ctx: tf.data.Dataset.from_tensors(features).repeat()


def golden_trainer(model_dir, output_dir, optimizer="lamb", config=None):
    runtime = Runtime(config or RuntimeConfig())
    with runtime.scope():
        model = AlbertPretrainer(AlbertConfig.from_json_file(
            model_dir / "albert_config_train_nodropout.json"))
        opt = create_optimizer(1e-3, 10, 2, optimizer=optimizer)
    return Trainer(runtime, model, opt, pretraining_objective(), output_dir)


class LossRecorder:
    """Wraps the train step to keep per-step losses and learning rates."""

    def __init__(self, trainer):
        self.step, self.losses, self.lrs = trainer.train_step, [], []
        trainer.train_step = self

    def __call__(self, iterator):
        loss, metrics, lr, norm = self.step(iterator)
        self.losses.append(float(loss))
        self.lrs.append(float(lr))
        return loss, metrics, lr, norm

    def __getattr__(self, name):
        return getattr(self.step, name)


def test_trainer_reproduces_golden_three_steps_and_resumes(fixtures_dir, tmp_path):
    model_dir = fixtures_dir / "model"
    out = tmp_path / "run"
    first = golden_trainer(model_dir, out)
    recorder = LossRecorder(first)
    first.train(golden_dataset_fn(model_dir), 3, 2, save_checkpoints_steps=1,
                initialize=lambda model: load(model, str(model_dir / "ckpt" / "model.ckpt")))
    assert sorted(p for p in os.listdir(out) if p.endswith(".index")) == [
        "model.ckpt-1.index", "model.ckpt-2.index"]
    # A new process-like start in the same directory resumes at step 2 and ends at 3.
    second = golden_trainer(model_dir, out)
    recorder2 = LossRecorder(second)
    values = second.train(golden_dataset_fn(model_dir), 3, 3, save_checkpoints_steps=1,
                          log_every_steps=1,
                          initialize=lambda model: load(model, "/nonexistent/ignored/when/resuming"))
    assert second.step == 3 and len(recorder2.losses) == 1
    assert_matches_golden(model_dir / "train_lamb_resourcevars", tf1_weights(second.model),
                          recorder.losses + recorder2.losses, recorder.lrs + recorder2.lrs)
    assert set(values) >= {"loss", "masked_lm_accuracy", "masked_lm_loss",
                           "sentence_order_accuracy", "sentence_order_loss", "learning_rate",
                           "examples_per_second"}
    assert any(p.startswith("events.out.tfevents") for p in os.listdir(out))
    # Evaluation on the golden batch after step 3 gives the golden loss after the last step.
    results = second.evaluate(golden_dataset_fn(model_dir), steps=2)
    assert results["loss"] == pytest.approx(7.992825031280518, abs=1e-5)
    # Only the last checkpoint is written by the second run; keep_checkpoint_max=5 keeps all.
    assert "model.ckpt-3.index" in os.listdir(out)


class TinyRegressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1, name="dense")
        self.dense.build((None, 2))

    def call(self, features, training=False):
        return self.dense(features["x"])


def tiny_trainer(out, lr=0.1):
    runtime = Runtime(RuntimeConfig())
    with runtime.scope():
        model = TinyRegressor()
        optimizer = create_optimizer(lr, 100, 0, optimizer="adamw")

    def loss_fn(outputs, features):
        return tf.reduce_mean(tf.square(outputs[:, 0] - features["y"])), {}

    def metric_fn(outputs, features):
        return {"mse": (tf.reduce_sum(tf.square(outputs[:, 0] - features["y"])),
                        tf.cast(tf.size(features["y"]), tf.float32))}

    return Trainer(runtime, model, optimizer, Objective(loss_fn, metric_fn=metric_fn), out)


def tiny_dataset(nan_from_batch=None):
    x = np.random.RandomState(0).randn(40, 2).astype(np.float32)
    y = (x @ np.array([1.0, -2.0], np.float32)).astype(np.float32)
    if nan_from_batch is not None:
        x[nan_from_batch * 4:] = np.nan
    return lambda ctx: tf.data.Dataset.from_tensor_slices({"x": x, "y": y}).batch(4)


def test_non_finite_loss_stops_naming_the_step_and_saves_nothing_new(tmp_path):
    trainer = tiny_trainer(tmp_path)
    with pytest.raises(NonFiniteLossError, match="at step 3;.*from step 2"):
        trainer.train(tiny_dataset(nan_from_batch=2), 4, 10, save_checkpoints_steps=1)
    assert sorted(p for p in os.listdir(tmp_path) if p.endswith(".index")) == [
        "model.ckpt-1.index", "model.ckpt-2.index"]


def test_checkpoint_evaluator_copies_only_on_improvement(tmp_path):
    trainer = tiny_trainer(tmp_path)
    seen = []

    class Log(EvalLog):
        def record(self, step, result, best_before, copied):
            seen.append((step, -result["neg_mse"], copied))

    def evaluate():  # the evaluator keeps the highest value: the lowest mse
        return {"neg_mse": -trainer.evaluate(tiny_dataset(), steps=2)["mse"]}

    evaluator = CheckpointEvaluator(tmp_path, evaluate, "neg_mse", Log(), load=None)
    (tmp_path / "notes.txt").write_text("user file")
    trainer.train(tiny_dataset(), 4, 6, save_checkpoints_steps=2,
                  on_checkpoint=evaluator.on_checkpoint)
    assert [s for s, _, _ in seen] == [2, 4, 6]
    assert seen[0][2], "the first evaluation always beats the initial best"
    copied = [c for _, _, c in seen if c]
    last_src, last_dst = copied[-1][-1]
    assert last_dst.endswith("model.ckpt-best.index")
    assert (tmp_path / "model.ckpt-best.index").read_bytes() == open(last_src, "rb").read()
    assert (tmp_path / "notes.txt").read_text() == "user file"
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-6")
    assert -evaluator.state.best_value == min(m for _, m, _ in seen)


def test_batch_not_divisible_by_accumulation_is_a_clear_error(tmp_path):
    runtime = Runtime(RuntimeConfig(gradient_accumulation_steps=3))
    with runtime.scope():
        model = TinyRegressor()
        optimizer = create_optimizer(0.1, 10, 0)
    trainer = Trainer(runtime, model, optimizer,
                      Objective(lambda o, f: (tf.reduce_mean(o), {})), tmp_path)
    with pytest.raises(ValueError, match="--train_batch_size=4 cannot be split into "
                       "--gradient_accumulation_steps=3 equal micro-batches"):
        trainer.train(tiny_dataset(), 4, 1)


def test_weights_that_turn_non_finite_are_never_checkpointed_nor_resumed(tmp_path):
    trainer = tiny_trainer(tmp_path)
    step_fn = trainer.train_step

    def step_that_blows_up_at_3(iterator):
        result = step_fn(iterator)
        if trainer.step == 3:  # the update of step 3 leaves NaN weights, the loss was finite
            kernel = trainer.model.dense.kernel
            kernel.assign(np.full(kernel.shape, np.nan, np.float32))
        return result

    trainer.train_step = step_that_blows_up_at_3
    with pytest.raises(TrainingError, match=r"non-finite at step 3 .*model\.ckpt-2 \(step 2\)"):
        trainer.train(tiny_dataset(), 4, 10, save_checkpoints_steps=1)
    assert sorted(p for p in os.listdir(tmp_path) if p.endswith(".index")) == [
        "model.ckpt-1.index", "model.ckpt-2.index"]
    # A checkpoint with non-finite weights (as older versions wrote them) is never resumed from.
    trainer.state.manager.save(checkpoint_number=3)
    again = tiny_trainer(tmp_path)
    with pytest.raises(TrainingError, match=r"model\.ckpt-3 holds non-finite weights.*"
                                            r"model\.ckpt-2 \(step 2\)"):
        again.train(tiny_dataset(), 4, 10, save_checkpoints_steps=1)
