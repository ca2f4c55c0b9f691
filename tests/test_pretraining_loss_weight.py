"""--sentence_order_loss_weight: the SOP/NSP loss's weight in the pretraining loss (1: the
original; 0: the masked LM alone, the paper's "None" row of Table 5)."""

import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import cli
from albert_tf.cli_flags import FLAG_TABLE
from albert_tf.errors import UsageError
from albert_tf.models import AlbertPretrainer
from albert_tf.tasks.pretraining.config import PretrainingRunConfig
from albert_tf.tasks.pretraining.objective import pretraining_objective, pretraining_totals
from albert_tf.tasks.pretraining.task import PretrainingTask
from support.configs import tiny_config
from support.paths import REPO


def _batch():
    rng = np.random.default_rng(0)
    return {"input_ids": rng.integers(5, 100, (4, 12)).astype("int32"),
            "input_mask": np.ones((4, 12), "int32"), "segment_ids": np.zeros((4, 12), "int32"),
            "masked_lm_positions": np.array([[1, 2]] * 4, "int32"),
            "masked_lm_ids": rng.integers(5, 100, (4, 2)).astype("int32"),
            "masked_lm_weights": np.ones((4, 2), "float32"),
            "next_sentence_labels": np.array([[0], [1], [1], [0]], "int32")}


@pytest.mark.parametrize("weight", [0.0, 0.5, 1.0])
def test_the_weight_scales_the_sentence_order_loss(weight):
    features = _batch()
    outputs = AlbertPretrainer(tiny_config())(features, heads_only=True)
    totals = {**pretraining_totals(features), "examples": tf.constant(4.0)}
    loss, metrics = pretraining_objective(weight).loss_fn(outputs, features, totals)
    mlm = metrics["masked_lm_loss"][0] / metrics["masked_lm_loss"][1]
    sop = metrics["sentence_order_loss"][0] / metrics["sentence_order_loss"][1]
    assert float(loss) == pytest.approx(float(mlm) * 8 / (8 + 1e-5) + weight * float(sop),
                                        rel=1e-5)
    evaluated = pretraining_objective(weight).metric_fn(outputs, features)["loss"][0]
    assert float(evaluated) == pytest.approx(float(loss), rel=1e-4)


def test_the_flag_default_is_the_original_loss():
    assert PretrainingRunConfig().sentence_order_loss_weight == 1.0
    assert cli.config_defaults(PretrainingRunConfig)["sentence_order_loss_weight"] == 1.0
    assert FLAG_TABLE["sentence_order_loss_weight"][0] == "float"


def test_a_negative_weight_is_a_usage_error(tmp_path):
    tiny_config().to_json_file(tmp_path / "albert_config.json")
    config = PretrainingRunConfig.from_flat(dict(
        albert_config_file=str(tmp_path / "albert_config.json"), input_file="r.tfrecord",
        output_dir=str(tmp_path / "out"), sentence_order_loss_weight=-1.0))
    with pytest.raises(UsageError, match="--sentence_order_loss_weight must be >= 0"):
        PretrainingTask(config)


def test_run_pretraining_takes_the_flag():
    result = subprocess.run([sys.executable, "run_pretraining.py", "--helpfull"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert "--sentence_order_loss_weight" in result.stdout
