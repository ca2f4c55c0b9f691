"""The load half of checkpoints: model-only round trip (every block weight), TF1 vs ours
detection, init from either, step lookup, prefixes resolved (copies: test_training_checkpoint_files)."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertPretrainer
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from albert_tf.weights.loading import init_from_checkpoint
from albert_tf.weights.our_checkpoints import checkpoint_step, is_tf1_checkpoint
from albert_tf.weights.tf1_checkpoint import resolve_prefix as resolve_checkpoint
from support.configs import GROUPED, tiny_config



def weights_equal(a, b):
    return all(np.array_equal(x.numpy(), y.numpy()) for x, y in zip(a.weights, b.weights))


def test_model_only_checkpoint_holds_every_weight_and_init_reads_ours_and_tf1(tmp_path):
    config = tiny_config(**GROUPED)
    source = AlbertPretrainer(config)
    ours = tf.train.Checkpoint(model=source).write(str(tmp_path / "ours" / "ckpt"))
    tf1 = save_tf1_checkpoint(source, str(tmp_path / "tf1" / "model.ckpt"), global_step=7)
    assert not is_tf1_checkpoint(ours) and is_tf1_checkpoint(tf1)
    assert checkpoint_step(tf1) == 7
    for prefix in (ours, str(tmp_path / "tf1")):
        target = AlbertPretrainer(config)
        assert not weights_equal(source, target)
        init_from_checkpoint(target, prefix)
        assert weights_equal(source, target), prefix


def test_resolve_checkpoint_errors_name_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint found in directory"):
        resolve_checkpoint(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="model.ckpt-9 .no .*index"):
        resolve_checkpoint(str(tmp_path / "model.ckpt-9"))
