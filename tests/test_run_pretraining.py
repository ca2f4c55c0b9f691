"""run_pretraining.py end to end (TFRecord → train → eval → export_checkpoints.py), flags,
eval_results.txt, --use_tpu without a TPU, bf16/XLA smoke."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.tasks.eval_state import CheckpointEvaluator
from albert_tf.tasks.pretraining.task import (PretrainingEvalLog, PretrainingRunConfig,
                                              format_eval_results, run_pretraining)
from support.entry_points import run_entry_point
from support.golden import (assert_matches_golden, golden_features, one_layer_config,
                            write_golden_records)
from support.paths import REPO


def run_script(script, *args):
    result = run_entry_point(script, args)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stderr


def run_golden(fixtures_dir, tmp_path, *flags):
    """run_pretraining.py from the golden checkpoint on the 3 golden records; (log, output_dir)."""
    model_dir = fixtures_dir / "model"
    records = write_golden_records(model_dir, tmp_path / "golden.tfrecord")
    out = tmp_path / "out"
    log = run_script(
        "run_pretraining.py",
        f"--albert_config_file={model_dir / 'albert_config_train_nodropout.json'}",
        f"--input_file={records}", f"--output_dir={out}",
        f"--init_checkpoint={model_dir / 'ckpt' / 'model.ckpt'}",
        "--max_seq_length=24", "--max_predictions_per_seq=5", *flags)
    return log, out


def test_cli_reproduces_golden_three_steps_and_exports_tf1(fixtures_dir, tmp_path):
    """Batch 3 = the 3 golden records, so every batch is the golden batch (in some order)."""
    model_dir = fixtures_dir / "model"
    log, out = run_golden(
        fixtures_dir, tmp_path, "--train_batch_size=3",
        "--learning_rate=1e-3", "--num_train_steps=10", "--num_warmup_steps=2",
        "--save_checkpoints_steps=3", "--log_every_steps=1", "--optimizer=lamb",
        "--do_train", "--do_eval", "--eval_batch_size=3", "--max_eval_steps=2")
    steps = re.findall(r"step (\d+)/10 loss=(\S+) .*learning_rate=(\S+)", log)
    assert [int(s) for s, _, _ in steps] == list(range(1, 11))
    losses = [float(l) for _, l, _ in steps[:3]]
    lrs = [float(r) for _, _, r in steps[:3]]
    assert json.loads((out / "albert_config.json").read_text())["hidden_size"] == 32
    eval_lines = (out / "eval_results.txt").read_text().splitlines()
    keys = [line.split(" = ")[0] for line in eval_lines]
    assert keys[:6] == ["global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
                        "sentence_order_accuracy", "sentence_order_loss"]
    # Every task's evaluations end with the best so far (none while the accuracy is 0).
    accuracy = float(eval_lines[2].split(" = ")[1])
    assert keys[6:] == (["best_masked_lm_accuracy", "best_step"] if accuracy > 0 else [])
    assert eval_lines[0] == "global_step = 10"
    exported = tmp_path / "export" / "model.ckpt"
    run_script("export_checkpoints.py", f"--albert_directory={out}",
               "--checkpoint_name=model.ckpt-3", f"--export_path={exported}")
    reader = tf.train.load_checkpoint(str(exported))
    names = reader.get_variable_to_shape_map()
    assert int(reader.get_tensor("global_step")) == 3
    assert not [n for n in names if "adam" in n or "optimizer" in n]
    values = {n: reader.get_tensor(n) for n in names}
    assert_matches_golden(model_dir / "train_lamb_resourcevars", values,
                          losses, lrs, atol=1e-5)


def options(model_dir, records, out, **overrides):
    base = dict(albert_config_file=str(model_dir / "albert_config_train_nodropout.json"),
                input_file=str(records), output_dir=str(out), max_seq_length=24,
                max_predictions_per_seq=5, train_batch_size=3, eval_batch_size=3,
                learning_rate=1e-3, num_train_steps=3, num_warmup_steps=1,
                save_checkpoints_steps=3, log_every_steps=1, max_eval_steps=2)
    base.update(overrides)
    return PretrainingRunConfig.from_flat(base)


def test_eval_only_evaluates_a_tf1_checkpoint_like_the_forward_golden(fixtures_dir, tmp_path):
    """Losses and accuracies from the original's forward golden. The golden model predicts none
    of its masked tokens (accuracy 0 tells nothing), so three labels are changed to what it
    predicts, two weighted and one padding slot (weight 0); the labels are no model input, so
    the golden log-probabilities still hold: masked_lm_accuracy = 2/9, not 3/15 or 2/15."""
    model_dir = fixtures_dir / "model"
    golden = np.load(model_dir / "forward_golden.npz")
    predicted = golden["masked_lm_log_probs"].argmax(-1)  # [B·P]
    labels = golden["masked_lm_ids"].ravel().copy()
    weights = golden["masked_lm_weights"].ravel()
    assert (predicted != labels)[weights > 0].all()
    for slot in (0, 5, 4):  # weighted, weighted, padding
        labels[slot] = predicted[slot]
    assert weights[[0, 5]].all() and weights[4] == 0
    features = dict(golden_features(model_dir), masked_lm_ids=labels.reshape(3, -1))
    records = write_golden_records(model_dir, tmp_path / "golden.tfrecord", features=features)
    results = run_pretraining(options(
        model_dir, records, tmp_path / "out", do_train=False, do_eval=True,
        init_checkpoint=str(model_dir / "ckpt" / "model.ckpt")))
    assert results["global_step"] == 0
    example_loss = -golden["masked_lm_log_probs"][np.arange(len(labels)), labels]
    mlm = float((example_loss * weights).sum() / weights.sum())
    sop = float(golden["sentence_order_loss"])
    assert results["masked_lm_loss"] == pytest.approx(mlm, abs=1e-5)
    assert results["sentence_order_loss"] == pytest.approx(sop, abs=1e-5)
    assert results["loss"] == pytest.approx(mlm + sop, abs=1e-5)
    assert results["masked_lm_accuracy"] == pytest.approx(2 / 9, abs=1e-6)
    # The golden model says "in order" for all three; the labels are [0, 1, 0].
    assert golden["sentence_order_log_probs"].argmax(-1).tolist() == [0, 0, 0]
    assert golden["sentence_order_labels"].tolist() == [0, 1, 0]
    assert results["sentence_order_accuracy"] == pytest.approx(2 / 3, abs=1e-6)


def test_eval_results_format_and_best_checkpoint_lines(tmp_path):
    (tmp_path / "model.ckpt-7.index").write_bytes(b"i")
    (tmp_path / "model.ckpt-7.data-00000-of-00001").write_bytes(b"d")
    tf.compat.v1.train.update_checkpoint_state(str(tmp_path), "model.ckpt-7")
    results = {"masked_lm_accuracy": 0.25, "loss": 3.5, "global_step": 7,
               "masked_lm_loss": 2.0, "sentence_order_accuracy": 0.5,
               "sentence_order_loss": 1.5}
    assert format_eval_results(results)[:2] == ["global_step = 7", "loss = 3.5"]
    evaluator = CheckpointEvaluator(str(tmp_path), lambda: results, "masked_lm_accuracy",
                                    PretrainingEvalLog(str(tmp_path)), load=None)
    evaluator.on_checkpoint(7, str(tmp_path / "model.ckpt-7"))
    lines = (tmp_path / "eval_results.txt").read_text().splitlines()
    assert lines[0] == "global_step = 7"
    assert lines[1].startswith("saved ") and lines[1].endswith("model.ckpt-best.data-00000-of-00001")
    assert lines[2].endswith("model.ckpt-best.index") and lines[3] == "loss = 3.5"
    assert (tmp_path / "model.ckpt-best.data-00000-of-00001").read_bytes() == b"d"
    assert (tmp_path / "eval_results.txt").read_text().splitlines() == lines


def test_eval_results_of_a_run_health_flags_record_the_word(tmp_path):
    # A run that training health flags adds `health = not_learning` to every evaluation: the
    # results were written as float32 ("could not convert string to float") and the run died.
    results = {"loss": 9.25, "masked_lm_accuracy": 0.0, "health": "not_learning"}
    evaluator = CheckpointEvaluator(str(tmp_path), lambda: results, "masked_lm_accuracy",
                                    PretrainingEvalLog(str(tmp_path)), load=None)
    evaluator.on_checkpoint(120, str(tmp_path / "model.ckpt-120"))
    lines = (tmp_path / "eval_results.txt").read_text().splitlines()
    assert lines[:4] == ["global_step = 120", "health = not_learning", "loss = 9.25",
                         "masked_lm_accuracy = 0.0"]
    saved = json.loads((tmp_path / "eval_results.json").read_text())["evaluations"]
    assert [e["health"] for e in saved] == ["not_learning"]


def test_use_tpu_without_a_tpu_fails_fast(fixtures_dir, tmp_path):
    model_dir = fixtures_dir / "model"
    records = write_golden_records(model_dir, tmp_path / "golden.tfrecord")
    with pytest.raises(RuntimeError, match="no TPU could be reached"):
        run_pretraining(options(model_dir, records, tmp_path / "out", use_tpu=True,
                                tpu_name="no-such-tpu"))


def test_bad_flags_are_clear_errors(fixtures_dir, tmp_path):
    model_dir = fixtures_dir / "model"
    records = write_golden_records(model_dir, tmp_path / "golden.tfrecord")
    with pytest.raises(ValueError, match="At least one of `do_train` or `do_eval`"):
        run_pretraining(options(model_dir, records, tmp_path, do_train=False))
    with pytest.raises(FileNotFoundError, match="no file matches"):
        run_pretraining(options(model_dir, tmp_path / "missing-*.tfrecord", tmp_path))
    with pytest.raises(ValueError, match="masked_lm_budget"):
        run_pretraining(options(model_dir, records, tmp_path, masked_lm_budget=5))


def test_sigkill_after_a_checkpoint_then_restart_matches_uninterrupted_run(fixtures_dir, tmp_path):
    import os
    import signal

    model_dir = fixtures_dir / "model"
    records = write_golden_records(model_dir, tmp_path / "golden.tfrecord")
    config = one_layer_config(model_dir, tmp_path / "albert_config.json")

    def command(out):
        return [sys.executable, "run_pretraining.py", f"--albert_config_file={config}",
                f"--input_file={records}", f"--output_dir={out}",
                f"--init_checkpoint={model_dir / 'ckpt' / 'model.ckpt'}",
                "--max_seq_length=24", "--max_predictions_per_seq=5", "--train_batch_size=3",
                "--learning_rate=1e-3", "--num_train_steps=60", "--num_warmup_steps=10",
                "--save_checkpoints_steps=20", "--log_every_steps=20"]

    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    proc = subprocess.Popen(command(tmp_path / "killed"), cwd=REPO, env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for line in proc.stderr:
            if "saved checkpoint" in line:
                os.kill(proc.pid, signal.SIGKILL)
                break
        proc.wait(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed" / "model.ckpt-60.index").exists()
    resumed_log = run_script(*command(tmp_path / "killed")[1:])
    assert "resuming from" in resumed_log
    run_script(*command(tmp_path / "straight")[1:])
    resumed = tf.train.load_checkpoint(str(tmp_path / "killed" / "model.ckpt-60"))
    straight = tf.train.load_checkpoint(str(tmp_path / "straight" / "model.ckpt-60"))
    names = [n for n in straight.get_variable_to_shape_map() if n.startswith(("model/", "optimizer/"))]
    assert len(names) > 60
    for name in names:
        np.testing.assert_allclose(resumed.get_tensor(name), straight.get_tensor(name),
                                   atol=1e-5, rtol=1e-5, err_msg=name)


def test_do_eval_alone_evaluates_only_and_says_so(fixtures_dir, tmp_path):
    """Unlike the original (whose --do_train defaults to true), --do_eval without --do_train
    trains nothing: no checkpoint of this run, one log line saying so."""
    log, out = run_golden(fixtures_dir, tmp_path, "--do_eval", "--eval_batch_size=3",
                          "--max_eval_steps=1")
    assert "--do_eval without --do_train: evaluating only" in log
    assert not list(out.glob("model.ckpt-*")) and (out / "eval_results.txt").exists()


@pytest.mark.parametrize("steps", [0, -2])
def test_max_eval_steps_below_one_is_refused(fixtures_dir, tmp_path, steps):
    # It evaluated nothing, wrote an empty eval_results.txt and exited 0.
    with pytest.raises(ValueError, match=f"--max_eval_steps must be at least 1, got {steps}"):
        options(fixtures_dir / "model", tmp_path / "r.tfrecord", tmp_path / "out",
                do_eval=True, max_eval_steps=steps)


def test_batch_that_accumulation_cannot_split_is_refused_before_anything(fixtures_dir, tmp_path):
    model_dir = fixtures_dir / "model"
    records = write_golden_records(model_dir, tmp_path / "golden.tfrecord")
    with pytest.raises(ValueError, match=r"--train_batch_size=4 cannot be split into "
                       r"--gradient_accumulation_steps=8 equal micro-batches: use a "
                       r"--train_batch_size that is a multiple of 8"):
        run_pretraining(options(model_dir, records, tmp_path / "out", train_batch_size=4,
                                gradient_accumulation_steps=8))
    assert not (tmp_path / "out").exists()



@pytest.mark.parametrize("rate", [0.0, -1e-3])
def test_a_learning_rate_that_cannot_train_is_refused(fixtures_dir, tmp_path, rate):
    with pytest.raises(ValueError, match=f"--learning_rate must be above 0, got {rate}"):
        options(fixtures_dir / "model", tmp_path / "r.tfrecord", tmp_path / "out",
                learning_rate=rate)
