"""export_checkpoints: our training checkpoints → TF1 names (+ global_step, no slots)."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.checkpoint import load_tf1_checkpoint
from albert_tf.optimization import create_optimizer
from albert_tf.training import CheckpointState, Runtime, RuntimeConfig, Trainer
from albert_tf.weights.our_checkpoints import export_tf1_checkpoint
from albert_tf.tasks.pretraining.objective import pretraining_objective
from support.configs import GROUPED, TINY
from support.entry_points import run_entry_point

CONFIG = {**TINY, **GROUPED}


def random_features(batch=4, seq=12, preds=3, vocab=40):
    rng = np.random.RandomState(1)
    return {"input_ids": rng.randint(5, vocab, (batch, seq)).astype(np.int32),
            "input_mask": np.ones((batch, seq), np.int32),
            "segment_ids": np.zeros((batch, seq), np.int32),
            "masked_lm_positions": rng.randint(1, seq, (batch, preds)).astype(np.int32),
            "masked_lm_ids": rng.randint(5, vocab, (batch, preds)).astype(np.int32),
            "masked_lm_weights": np.ones((batch, preds), np.float32),
            "next_sentence_labels": rng.randint(0, 2, (batch, 1)).astype(np.int32)}


def test_export_latest_named_and_best(tmp_path):
    config = AlbertConfig.from_dict(CONFIG)
    (tmp_path / "albert_config.json").write_text(config.to_json_string())
    runtime = Runtime(RuntimeConfig())
    with runtime.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(1e-2, 10, 1, "adamw")
    trainer = Trainer(runtime, model, optimizer, pretraining_objective(), tmp_path)
    features = {k: tf.constant(v) for k, v in random_features().items()}
    snapshots = {}
    trainer.train(lambda ctx: tf.data.Dataset.from_tensors(features).repeat(), 4, 4,
                  save_checkpoints_steps=2,
                  on_checkpoint=lambda step, path: snapshots.update(
                      {step: [w.numpy() for w in model.weights]}))
    for name, step in ((None, 4), ("latest", 4), ("model.ckpt-2", 2)):
        out = export_tf1_checkpoint(tmp_path, tmp_path / f"export_{name}" / "model.ckpt", name)
        reader = tf.train.load_checkpoint(out)
        names = reader.get_variable_to_shape_map()
        assert int(reader.get_tensor("global_step")) == step
        assert all(n.startswith(("bert/", "cls/")) or n == "global_step" for n in names)
        assert "cls/predictions/output_bias" in names
        fresh = AlbertPretrainer(config)
        report = load_tf1_checkpoint(fresh, out)
        assert not report.missing and not report.unused
        for got, want in zip(fresh.weights, snapshots[step]):
            np.testing.assert_array_equal(got.numpy(), want)


def test_export_needs_albert_config(tmp_path):
    with pytest.raises(FileNotFoundError, match="albert_config.json not found"):
        export_tf1_checkpoint(tmp_path, tmp_path / "x")


def _script(*args, cwd):
    proc = run_entry_point("export_checkpoints.py", args, cwd=cwd)
    return proc.returncode, proc.stderr.strip().splitlines()


def test_script_errors_are_one_line(tmp_path):
    """No albert_config.json, or a config that does not fit the checkpoint: one `error:` line
    naming the flag, or the variable, both shapes and the config key; nothing written."""
    code, lines = _script("--albert_directory=nowhere", "--export_path=out/model.ckpt", cwd=tmp_path)
    assert code == 1 and lines[-1].startswith("error: --albert_directory=nowhere")
    run = tmp_path / "run"
    CheckpointState(run, AlbertPretrainer(AlbertConfig.from_dict(CONFIG)),
                    create_optimizer(1e-3, 10, 1, "lamb")).save(step=1)
    (run / "albert_config.json").write_text(AlbertConfig.from_dict({**CONFIG, "embedding_size": 4})
                                            .to_json_string())
    code, lines = _script("--albert_directory=run", "--export_path=out/model.ckpt", cwd=tmp_path)
    assert code == 1 and not any("Traceback" in line for line in lines), lines[-5:]
    assert lines[-1].startswith("error: ") and "variable bert/embeddings/" in lines[-1]
    assert "in the checkpoint but" in lines[-1] and "config key embedding_size" in lines[-1]
    assert not (tmp_path / "out").exists()
