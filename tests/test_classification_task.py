"""The GLUE run flow (library level): flag checks, the two-step recipe of run_glue.sh,
evaluation from restored checkpoints, and `ax` predicted with an MNLI-style checkpoint."""

import json
import shutil

import keras
import numpy as np
import pytest

from albert_tf import AlbertConfig
from albert_tf.checkpoint import save_tf1_checkpoint
from albert_tf.models import AlbertClassifier
from albert_tf.tasks.classification.config import ClassifierRunError, GlueRunConfig
from albert_tf.tasks.classification.task import ClassificationTask, run_glue
from albert_tf.training.checkpoint_files import list_checkpoints
from support.configs import GLUE_TINY as TINY



@pytest.fixture()
def base(tmp_path, fixtures_dir, spm_model):
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    return dict(data_dir=str(fixtures_dir / "glue" / "data"), task_name="mrpc",
                output_dir=str(tmp_path / "out"), albert_config_file=str(config),
                spm_model_file=spm_model, max_seq_length=32, train_batch_size=4,
                eval_batch_size=2, predict_batch_size=2, learning_rate=1e-3, train_step=4,
                save_checkpoints_steps=2, log_every_steps=2)


def _blocks(path):
    text = open(path).read()
    return [dict(line.split(" = ", 1) for line in block.strip().splitlines())
            for block in text.split("=" * 50) if block.strip()]


def test_flag_checks(base):
    with pytest.raises(ClassifierRunError, match="do_train"):
        ClassificationTask(GlueRunConfig.from_flat(base))
    with pytest.raises(ClassifierRunError, match="init_checkpoint"):
        ClassificationTask(GlueRunConfig.from_flat(dict(
            base, albert_config_file=None, do_train=True,
            albert_hub_module_handle="https://tfhub.dev/x/1")))
    with pytest.raises(ValueError, match="max_position_embeddings"):
        ClassificationTask(GlueRunConfig.from_flat(dict(base, do_train=True, max_seq_length=128)))
    with pytest.raises(ClassifierRunError, match="optimizer"):
        ClassificationTask(GlueRunConfig.from_flat(dict(base, do_train=True, optimizer="sgd")))
    with pytest.raises(ClassifierRunError, match="--tflite needs --export_dir"):
        ClassificationTask(GlueRunConfig.from_flat(dict(base, do_train=True,
                                                        tflite="dynamic_int8")))
    with pytest.raises(ValueError, match="--tflite: unknown kind 'int8'"):
        ClassificationTask(GlueRunConfig.from_flat(dict(base, export_dir="e", tflite="int8")))


def test_eval_from_restored_checkpoints_equals_eval_during_training(base, tmp_path):
    keras.utils.set_random_seed(0)
    run_glue(GlueRunConfig.from_flat(dict(base, do_train=True, do_eval=True)))
    out = tmp_path / "out"
    during = _blocks(out / "eval_results.txt")
    assert [b["global_step"] for b in during] == ["2", "4"]
    assert [s for s, _ in list_checkpoints(str(out))] == [2, 4]  # `-best` is not a step
    # The run_glue.sh second step (eval + predict only) in a fresh run: every checkpoint is
    # restored from disk and must score exactly as the in-memory model did.
    (out / "best_trial.txt").unlink()
    summary = run_glue(GlueRunConfig.from_flat(dict(base, do_eval=True, do_predict=True)))
    after = _blocks(out / "eval_results.txt")
    for a, b in zip(during, after):
        for key in ("eval_accuracy", "eval_loss", "f1", "loss"):
            assert float(a[key]) == pytest.approx(float(b[key]), abs=1e-6), key
    assert summary["predict"]["leaderboard"].endswith("MRPC.tsv")
    # Evaluating again next to model.ckpt-best neither crashes nor re-evaluates (the original's
    # int("best") crash), and keeps the results file.
    run_glue(GlueRunConfig.from_flat(dict(base, do_eval=True)))
    assert _blocks(out / "eval_results.txt") == after


def test_cache_keyed_on_sequence_length(base, tmp_path):
    cfg = dict(base, do_train=True, train_step=1, save_checkpoints_steps=1)
    run_glue(GlueRunConfig.from_flat(cfg))
    shutil.rmtree(tmp_path / "out2", ignore_errors=True)
    run = ClassificationTask(GlueRunConfig.from_flat(dict(
        cfg, output_dir=str(tmp_path / "out2"), cached_dir=str(tmp_path / "out"),
        max_seq_length=24)))
    path, _ = run.features("train", run.source.processor.get_train_examples(base["data_dir"]),
                           "mrpc_train.tf_record")
    from albert_tf.tasks.classification.features import read_features
    assert read_features(path, 24)["input_ids"].shape == (5, 24)


def test_ax_predicted_with_an_mnli_checkpoint(base, tmp_path, data_dir):
    keras.utils.set_random_seed(2)
    mnli = AlbertClassifier(AlbertConfig(**TINY), 3)
    checkpoint = save_tf1_checkpoint(mnli, str(tmp_path / "mnli" / "model.ckpt-best"), 10)
    cfg = dict(base, task_name="ax", data_dir=str(data_dir / "glue"), do_predict=True,
               init_checkpoint=checkpoint, predict_batch_size=256)
    paths = run_glue(GlueRunConfig.from_flat(cfg))["predict"]
    lines = open(paths["leaderboard"]).read().splitlines()
    assert paths["leaderboard"].endswith("AX.tsv") and len(lines) == 1105
    assert {line.split("\t")[1] for line in lines[1:]} <= {"contradiction", "entailment", "neutral"}
    with pytest.raises(Exception, match="no train split"):
        run_glue(GlueRunConfig.from_flat(dict(cfg, do_train=True)))


def test_init_from_our_pretraining_checkpoint(tmp_path):
    import tensorflow as tf

    from albert_tf import AlbertPretrainer
    from albert_tf.weights import init_from_checkpoint

    config = AlbertConfig(**TINY)
    pretrainer = AlbertPretrainer(config)
    # Saved as the training loop saves: the optimizer's variable list is a shorter path to the
    # encoder weights than the model, so the variables are named after it.
    prefix = tf.train.Checkpoint(model=pretrainer, vars=list(pretrainer.trainable_variables)).save(
        str(tmp_path / "model.ckpt"))
    classifier = AlbertClassifier(config, 2)
    assert "encoder restored" in init_from_checkpoint(classifier, prefix)
    ids = {"input_ids": np.array([[2, 40, 50, 3]], np.int32)}
    np.testing.assert_allclose(classifier.encoder(ids)["pooled_output"].numpy(),
                               pretrainer.encoder(ids)["pooled_output"].numpy(), atol=1e-6)
    # A fine-tuned checkpoint of ours brings its head along.
    tuned = tf.train.Checkpoint(model=classifier).save(str(tmp_path / "tuned.ckpt"))
    clone = AlbertClassifier(config, 2)
    init_from_checkpoint(clone, tuned)
    np.testing.assert_array_equal(clone.output_weights.numpy(), classifier.output_weights.numpy())


@pytest.fixture()
def pretrained(tmp_path):
    """A pretraining checkpoint (encoder + MLM/SOP heads, no classifier head)."""
    from albert_tf import AlbertPretrainer

    keras.utils.set_random_seed(3)
    return save_tf1_checkpoint(AlbertPretrainer(AlbertConfig(**TINY)),
                               str(tmp_path / "pretrained" / "model.ckpt"), 0)


def test_predict_after_training_without_eval_uses_the_fine_tuned_model(base, tmp_path,
                                                                       pretrained):
    # No --do_eval, so no model.ckpt-best: the latest fine-tuned checkpoint must be used, never
    # the pretrained --init_checkpoint with an untrained head.
    from albert_tf.weights import init_from_checkpoint

    keras.utils.set_random_seed(1)
    cfg = dict(base, do_train=True, do_predict=True, init_checkpoint=pretrained)
    served = np.loadtxt(run_glue(GlueRunConfig.from_flat(cfg))["predict"]["test_results"])
    task = ClassificationTask(GlueRunConfig.from_flat(dict(base, do_predict=True)))
    path, _ = task.features("test", task.source.processor.get_test_examples(base["data_dir"]),
                            "predict.tf_record")

    def probabilities(checkpoint):
        model = task.build_model()
        init_from_checkpoint(model, checkpoint)
        task._predict_fn = None
        out = task.predict_logits(model, path, base["predict_batch_size"])
        return out["probabilities"][out["is_real_example"] > 0]

    np.testing.assert_allclose(served, probabilities(str(tmp_path / "out" / "model.ckpt-4")),
                               atol=1e-6)
    assert not np.allclose(served, probabilities(pretrained), atol=1e-3)


def test_predict_or_export_from_a_pretraining_checkpoint_is_refused(base, tmp_path, pretrained):
    from albert_tf.checkpoint import CheckpointError

    for flags in (dict(do_predict=True), dict(export_dir=str(tmp_path / "export"))):
        with pytest.raises(CheckpointError, match="holds no trained head for AlbertClassifier"):
            run_glue(GlueRunConfig.from_flat(dict(base, init_checkpoint=pretrained, **flags)))
    assert not (tmp_path / "out" / "test_results.tsv").exists()
    assert not (tmp_path / "export").exists()
