"""A few pretraining steps of a tiny model from a fixed initialisation, under any runtime
(tests/test_training_runtime.py compares runtimes with it, also in a subprocess)."""

import keras
import numpy as np
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.optimization import create_optimizer
from albert_tf.tasks.pretraining.objective import pretraining_objective
from albert_tf.training import Runtime, RuntimeConfig, Trainer
from support.configs import TINY


def batch_features(batch=8, seq=12, preds=4, vocab=60, seed=3):
    """Random pretraining features whose masked-LM weight counts differ between examples, so a
    loss normalised per replica or micro-batch would not equal the global-batch loss."""
    rng = np.random.RandomState(seed)
    weights = (np.arange(preds)[None, :] < rng.randint(1, preds + 1, (batch, 1))).astype(np.float32)
    return {"input_ids": rng.randint(5, vocab, (batch, seq)).astype(np.int32),
            "input_mask": (np.arange(seq)[None, :] < rng.randint(6, seq + 1, (batch, 1))).astype(np.int32),
            "segment_ids": (np.arange(seq)[None, :] >= seq // 2).astype(np.int32).repeat(batch, 0),
            "masked_lm_positions": rng.randint(1, 6, (batch, preds)).astype(np.int32),
            "masked_lm_ids": rng.randint(5, vocab, (batch, preds)).astype(np.int32),
            "masked_lm_weights": weights,
            "next_sentence_labels": rng.randint(0, 2, (batch, 1)).astype(np.int32)}


def train_tiny(out, steps=3, global_batch=8, lr=5e-3, **runtime_kwargs):
    """Trains the tiny model from a fixed init; returns (losses, grad norms, weights)."""
    runtime = Runtime(RuntimeConfig(**runtime_kwargs))
    try:
        with runtime.scope():
            keras.utils.set_random_seed(7)
            model = AlbertPretrainer(AlbertConfig.from_dict(TINY))
            optimizer = create_optimizer(lr, 10, 1, "lamb",
                                         skip_nonfinite=runtime_kwargs.get("mixed_precision") == "fp16")
        trainer = Trainer(runtime, model, optimizer, pretraining_objective(), out)
        features = batch_features()
        per_replica = global_batch // runtime.num_replicas
        dataset = lambda ctx: tf.data.Dataset.from_tensor_slices(features).batch(per_replica).repeat()
        step, losses, norms = trainer.train_step, [], []

        def recording(iterator):
            loss, metrics, lr_, norm = step(iterator)
            losses.append(float(loss))
            norms.append(float(norm))
            return loss, metrics, lr_, norm

        trainer.train_step = recording
        trainer.train(dataset, global_batch, steps, save_checkpoints_steps=0)
        return losses, norms, [w.numpy() for w in model.weights]
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
