"""Multiple-choice (RACE) head: [B,4,S] → [B,4] logits from the pooled outputs; TF1 names; loss."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.weights import tf1_checkpoint as checkpoint
from albert_tf.models import AlbertMultipleChoice, multiple_choice_loss


def test_logits_are_per_choice_projections_of_the_pooled_output(tmp_path, tiny_config):
    model = AlbertMultipleChoice(tiny_config, dropout_prob=0.0)
    rng = np.random.default_rng(1)
    inputs = {"input_ids": rng.integers(5, 50, (2, 4, 10)).astype("int32"),
              "input_mask": np.ones((2, 4, 10), "int32"),
              "segment_ids": np.zeros((2, 4, 10), "int32")}
    logits = model(inputs)["logits"].numpy()
    pooled = model.encoder({k: v.reshape(8, 10) for k, v in inputs.items()})["pooled_output"]
    expected = pooled.numpy() @ model.output_weights.numpy().T + model.output_bias.numpy()
    np.testing.assert_allclose(logits, expected.reshape(2, 4), atol=1e-5)
    loss = float(multiple_choice_loss({"logits": logits}, {"label_ids": np.array([1, 3])}))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    assert loss == pytest.approx(-(log_probs[0, 1] + log_probs[1, 3]) / 2, rel=1e-5)
    prefix = checkpoint.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt"), 1)
    names = {n for n, _ in tf.train.list_variables(prefix)}
    assert {"output_weights", "output_bias"} <= names
