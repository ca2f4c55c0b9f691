"""Checkpoint listing, best-checkpoint keeping and the results file of the eval loop."""

import numpy as np

from albert_tf import checkpoint
from albert_tf.tasks import fit
from albert_tf.models import AlbertSquadV1


def test_evaluate_all_keeps_the_best_checkpoint(tmp_path, tiny_config):
    model = AlbertSquadV1(tiny_config)
    for step in (10, 2, 5):
        model.output_bias.assign([step, 0.0])
        checkpoint.save_tf1_checkpoint(model, str(tmp_path / f"model.ckpt-{step}"), step)
    assert [s for s, _ in fit.checkpoints_by_step(tmp_path)] == [2, 5, 10]
    f1_by_step = {2: 10.0, 5: 30.0, 10: 20.0}

    def evaluate(prefix):
        checkpoint.load_tf1_checkpoint(model, prefix)
        return {"f1": f1_by_step[int(model.output_bias.numpy()[0])]}

    best = fit.evaluate_all(str(tmp_path), evaluate, "f1")
    assert best == {"f1": 30.0}
    assert fit.checkpoint_step(str(tmp_path / "model.ckpt-best")) == 5
    text = (tmp_path / "eval_results.txt").read_text()
    assert text.count("=" * 50) == 3 and "best f1 = 30.0" in text
    assert text.rstrip().endswith("best perf happened at step: 5")
    # a re-run starts from the kept best: a worse checkpoint does not replace it
    np.testing.assert_array_equal(
        checkpoint.tf1_weights(model)["cls/squad/output_bias"], [5.0, 0.0])
