"""The one evaluate-each-checkpoint loop: checkpoint listing, best-checkpoint keeping, progress
kept across runs, and the SQuAD/RACE runners' results file."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import checkpoint
from albert_tf.tasks.classification.task import ClassifierEvalLog
from albert_tf.tasks.eval_log import EvalLog, RunnerEvalLog
from albert_tf.tasks.eval_state import CheckpointEvaluator, EvalState
from albert_tf.models import AlbertSquadV1
from albert_tf.tasks.pretraining.task import PretrainingEvalLog
from albert_tf.tasks.token_classification.results import NerEvalLog
from albert_tf.training.checkpoint_files import list_checkpoints
from albert_tf.weights.our_checkpoints import checkpoint_step

def _evaluate_directory(directory, model, f1_by_step):
    def load(prefix):
        checkpoint.load_tf1_checkpoint(model, prefix)

    def evaluate():
        return {"f1": f1_by_step[int(model.output_bias.numpy()[0])]}

    evaluator = CheckpointEvaluator(str(directory), evaluate, "f1",
                                    RunnerEvalLog(str(directory), "f1"), load)
    for step, prefix in list_checkpoints(directory):
        if step > evaluator.state.last_step:
            load(prefix)
            evaluator.on_checkpoint(step, prefix)
    return evaluator.finish()


def test_evaluate_all_keeps_the_best_checkpoint(tmp_path, tiny_config):
    model = AlbertSquadV1(tiny_config)
    for step in (10, 2, 5):
        model.output_bias.assign([step, 0.0])
        checkpoint.save_tf1_checkpoint(model, str(tmp_path / f"model.ckpt-{step}"), step)
    assert [s for s, _ in list_checkpoints(tmp_path)] == [2, 5, 10]
    f1_by_step = {2: 10.0, 5: 30.0, 10: 20.0}
    best = _evaluate_directory(tmp_path, model, f1_by_step)
    assert best == {"f1": 30.0}
    assert checkpoint_step(str(tmp_path / "model.ckpt-best")) == 5
    text = (tmp_path / "eval_results.txt").read_text()
    assert text.count("=" * 50) == 3 and "best f1 = 30.0" in text
    assert text.rstrip().endswith("best perf happened at step: 5")
    assert EvalState.read(str(tmp_path / "best_trial.txt")) == EvalState(10, 5, 30.0)
    # a re-run evaluates nothing again and keeps the best
    model.output_bias.assign([10, 0.0])
    assert _evaluate_directory(tmp_path, model, f1_by_step) == {"f1": 30.0}
    checkpoint.load_tf1_checkpoint(model, str(tmp_path / "model.ckpt-best"))
    np.testing.assert_array_equal(
        checkpoint.tf1_weights(model)["cls/squad/output_bias"], [5.0, 0.0])


def test_state_round_trip_and_bad_file(tmp_path):
    path = str(tmp_path / "best_trial.txt")
    assert EvalState.read(path) == EvalState(-1, -1, float("-inf"))
    EvalState(300, 200, 0.8125).write(path)
    assert open(path).read() == "300:200:0.8125"
    assert EvalState.read(path) == EvalState(300, 200, 0.8125)
    (tmp_path / "best_trial.txt").write_text("garbage")
    with pytest.raises(ValueError, match="best_trial.txt"):
        EvalState.read(path)


def test_the_best_is_copied_only_when_it_beats_the_initial_value(tmp_path):
    """With initial_best=0 (the original's), a score of 0 is not kept; only `model.ckpt-best.*`
    is written, never the `checkpoint` state file or another checkpoint."""
    for suffix, data in ((".index", b"i"), (".data-00000-of-00001", b"d")):
        (tmp_path / f"model.ckpt-5{suffix}").write_bytes(data)
    (tmp_path / "model.ckpt-50.index").write_bytes(b"other")
    tf.compat.v1.train.update_checkpoint_state(str(tmp_path), "model.ckpt-5")
    state = (tmp_path / "checkpoint").read_text()
    scores, copies = iter([0.0, 0.3, 0.2]), []

    class Log(EvalLog):
        def record(self, step, result, best_before, copied):
            copies.append(copied)

    evaluator = CheckpointEvaluator(tmp_path, lambda: {"accuracy": next(scores)}, "accuracy",
                                    Log(), load=None, initial_best=0.0)
    for step in (1, 2, 3):
        evaluator.on_checkpoint(step, str(tmp_path / "model.ckpt-5"))
    assert [len(c) for c in copies] == [0, 2, 0]
    assert evaluator.state.best_value == 0.3
    assert (tmp_path / "model.ckpt-best.index").read_bytes() == b"i"
    assert (tmp_path / "checkpoint").read_text() == state
    assert (tmp_path / "model.ckpt-50.index").read_bytes() == b"other"


def _fake_checkpoint(folder):
    for suffix, data in ((".index", b"i"), (".data-00000-of-00001", b"d")):
        (folder / f"model.ckpt-5{suffix}").write_bytes(data)
    return str(folder / "model.ckpt-5")


@pytest.mark.parametrize("kind", ["classifier", "runner", "ner", "pretraining"])
def test_every_results_file_ends_each_evaluation_with_the_best_so_far(tmp_path, kind):
    """One format for every task: whatever the original's layout, each evaluation's last keys
    are best_<metric> and best_step as they stand after it (the classifier's `best = -inf` is
    the best *before*), and eval_results.json is the same for all."""
    log = {"classifier": lambda: ClassifierEvalLog(str(tmp_path)),
           "runner": lambda: RunnerEvalLog(str(tmp_path), "eval_accuracy"),
           "ner": lambda: NerEvalLog(str(tmp_path), "eval_accuracy"),
           "pretraining": lambda: PretrainingEvalLog(str(tmp_path))}[kind]()
    prefix = _fake_checkpoint(tmp_path)
    scores = iter([0.5, 0.75, 0.25])
    evaluator = CheckpointEvaluator(tmp_path, lambda: {"eval_accuracy": next(scores),
                                                        "loss": 0.5}, "eval_accuracy", log,
                                    load=None)
    for step in (10, 20, 30):
        evaluator.on_checkpoint(step, prefix)
    text = (tmp_path / "eval_results.txt").read_text()
    blocks = [b for b in text.split("=" * 50) if b.strip()] if kind != "pretraining" else [text]
    lines = [b.strip().splitlines() for b in blocks]
    expected = [("0.5", "10"), ("0.75", "20"), ("0.75", "20")]
    if kind == "pretraining":  # one evaluation kept: the latest
        expected = expected[-1:]
    assert [tuple(line.split(" = ")[1] for line in block[-2:]) for block in lines[:3]] == expected
    assert all(block[-2].startswith("best_eval_accuracy = ") and block[-1].startswith("best_step = ")
               for block in lines[:len(expected)])
    data = json.loads((tmp_path / "eval_results.json").read_text())
    assert (data["metric"], data["best_eval_accuracy"], data["best_step"]) == \
        ("eval_accuracy", 0.75, 20)
    assert [(e["global_step"], e["eval_accuracy"]) for e in data["evaluations"]] == \
        [(10, 0.5), (20, 0.75), (30, 0.25)]
