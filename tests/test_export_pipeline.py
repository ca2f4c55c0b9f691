import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer
from albert_tf.export.pipeline import export_pretrained, load_model
from albert_tf.optimization import create_optimizer
from albert_tf.training import CheckpointState

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tiny():
    return AlbertConfig(vocab_size=40, embedding_size=8, hidden_size=12, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=16, max_position_embeddings=16)


def test_cli_exports_an_original_checkpoint_and_verifies_it(tmp_path, fixtures_dir):
    model_dir = fixtures_dir / "model"
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, "export_saved_model.py"),
         f"--albert_config_file={model_dir / 'albert_config.json'}",
         f"--init_checkpoint={model_dir / 'ckpt' / 'model.ckpt'}",
         f"--spm_model_file={fixtures_dir / 'spm' / 'spm.model'}", "--max_seq_length=32",
         f"--export_dir={tmp_path}"],
        capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert result["model"] == "AlbertPretrainer"
    assert result["encoder"] == str(tmp_path / "encoder" / "1")
    assert result["preprocessing"] == str(tmp_path / "preprocessing" / "1")
    assert max(result["encoder_check"].values()) <= 1e-5
    assert "mlm/mlm_logits" in result["encoder_check"] and "sop/sop_log_probs" in result["encoder_check"]
    assert max(result["preprocessing_check"].values()) == 0


def test_our_training_checkpoints_load_for_export(tmp_path):
    config = _tiny()
    pretrainer = AlbertPretrainer(config)
    state = CheckpointState(tmp_path / "run", pretrainer, create_optimizer(1e-3, 10, 1, "lamb"))
    state.save(step=5)
    loaded = load_model(config, str(tmp_path / "run"))
    assert isinstance(loaded, AlbertPretrainer)
    for a, b in zip(loaded.weights, pretrainer.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    encoder = AlbertModel(config)
    tf.train.Checkpoint(model=encoder).write(str(tmp_path / "enc" / "ckpt"))
    assert isinstance(load_model(config, str(tmp_path / "enc" / "ckpt")), AlbertModel)
    result = export_pretrained(config, str(tmp_path / "run"), str(tmp_path / "exports"), verify=False)
    assert os.path.exists(os.path.join(result["encoder"], "saved_model.pb"))


def test_pretraining_checkpoint_warm_starts_a_task_model(tmp_path):
    from albert_tf.models import AlbertClassifier
    from albert_tf.training import init_from_checkpoint

    config = _tiny()
    pretrainer = AlbertPretrainer(config)
    CheckpointState(tmp_path / "run", pretrainer, create_optimizer(1e-3, 10, 1, "lamb")).save(step=3)
    classifier = AlbertClassifier(config, 2)
    head = classifier.output_weights.numpy().copy()
    message = init_from_checkpoint(classifier, str(tmp_path / "run"))
    assert "encoder restored" in message and "heads" not in message
    for a, b in zip(classifier.encoder.weights, pretrainer.encoder.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(classifier.output_weights.numpy(), head)
    # A classifier checkpoint restores the head as well.
    CheckpointState(tmp_path / "cls", classifier, create_optimizer(1e-3, 10, 1, "adamw")).save(step=1)
    again = AlbertClassifier(config, 2)
    assert "output_weights" in init_from_checkpoint(again, str(tmp_path / "cls"))
    np.testing.assert_array_equal(again.output_weights.numpy(), head)
