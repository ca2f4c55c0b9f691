"""--distill_from: a student (fewer passes, from the teacher's weights) learns the teacher's soft
labels, the teacher run in the same step; the loss against a hand computation, a student's run
and folder, and the teachers refused (other labels, other vocabulary)."""

import json
import logging
import shutil

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig, with_passes
from albert_tf.models import AlbertClassifier
from albert_tf.tasks.distill import distilled
from albert_tf.tasks.classification.text_classifier import TextClassifier
from albert_tf.training.distillation import distillation_loss
from albert_tf.training.steps import Objective
from albert_tf.weights.resolve import resolve_model_files
from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint
from support.configs import GLUE_TINY
from support.entry_points import assert_refused, run_entry_point
from support.informative import spread_weights
from support.tagger_folder import TAGS, tagger_folder

TEACHER = dict(GLUE_TINY, num_hidden_layers=3)
LABELS = ["neg", "pos"]
TEXTS = ["a fine day", "it broke at once", "great value", "never again", "works well",
         "awful sound", "I love it", "a waste"]
GOLD = ["pos", "neg", "pos", "neg", "pos", "neg", "pos", "neg"]


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _reference(student, teacher, hard, temperature, alpha):
    """alpha · T² · mean KL(softmax(teacher/T) ‖ softmax(student/T)) + (1 − alpha) · hard."""
    t, s = _log_softmax(teacher / temperature), _log_softmax(student / temperature)
    kl = (np.exp(t) * (t - s)).sum(-1).mean()
    return alpha * temperature ** 2 * kl + (1 - alpha) * hard


def _folder(path, spm_model, config=TEACHER, labels=LABELS, seed=5):
    path.mkdir()
    (path / "albert_config.json").write_text(json.dumps(config))
    shutil.copy(spm_model, path / "30k-clean.model")
    (path / "labels.json").write_text(json.dumps(labels))
    model = AlbertClassifier(AlbertConfig(**config), len(labels))
    spread_weights(model, seed=seed, std=0.1)
    save_tf1_checkpoint(model, str(path / "model.ckpt-best"))
    return path, model


@pytest.fixture(scope="module")
def teacher(tmp_path_factory, spm_model):
    return _folder(tmp_path_factory.mktemp("t") / "teacher", spm_model)


def test_loss_blends_soft_and_true_labels():
    student = np.array([[1.0, -0.5, 0.2], [0.3, 0.3, -1.0]], np.float32)
    soft = np.array([[2.0, 0.0, -1.0], [-0.5, 1.0, 0.0]], np.float32)
    got = float(distillation_loss(student, soft, 0.7, 2.0, 0.25))
    assert got == pytest.approx(_reference(student, soft, 0.7, 2.0, 0.25), rel=1e-6)
    # The teacher's logits are a target: no gradient flows into them.
    soft_t = tf.constant(soft)
    with tf.GradientTape() as tape:
        tape.watch(soft_t)
        loss = distillation_loss(tf.constant(student), soft_t, 0.7, 2.0, 0.25)
    assert tape.gradient(loss, soft_t) is None


def test_the_teacher_runs_in_the_step(teacher):
    _, teacher_model = teacher
    student = AlbertClassifier(with_passes(AlbertConfig(**TEACHER), 1), 2)
    features = {"input_ids": np.array([[2, 40, 77, 3, 0], [2, 9, 3, 0, 0]], np.int32),
                "input_mask": np.array([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]], np.int32),
                "segment_ids": np.zeros((2, 5), np.int32), "label_ids": np.array([1, 0])}
    student(features)
    for mine, theirs in zip(student.weights, teacher_model.weights):
        mine.assign(theirs)  # the student starts from the teacher's weights, 1 pass of 3
    objective = distilled(Objective(lambda outputs, f: (tf.constant(0.4), {"n": 1.0})),
                          teacher_model, 3.0, 0.6)
    outputs = student(features, training=True)
    loss, metrics = objective.loss_fn(outputs, features)
    want_teacher = teacher_model(features, training=False)["logits"].numpy()
    assert np.abs(want_teacher - outputs["logits"].numpy()).max() > 1e-2  # 3 passes vs 1
    assert float(loss) == pytest.approx(
        _reference(outputs["logits"].numpy(), want_teacher, 0.4, 3.0, 0.6), rel=1e-5)
    assert metrics == {"n": 1.0}


def _health_lines(caplog) -> list:
    return [r.getMessage() for r in caplog.records if "training health" in r.getMessage()]


def test_student_learns_from_the_teacher_into_its_own_folder(teacher, spm_model, tmp_path,
                                                              caplog):
    folder, _ = teacher
    student = TextClassifier.from_pretrained(str(folder), num_hidden_layers=1, max_seq_length=16,
                                             output_dir=str(tmp_path / "student"), seed=3)
    with caplog.at_level(logging.WARNING):
        summary = student.fit(TEXTS, GOLD, epochs=1, batch_size=4, distill_from=str(folder),
                              verbose=0, validation_data=(TEXTS, GOLD))
    assert (tmp_path / "student" / "model.ckpt-2.index").is_file()
    # Training health is silent on a healthy student (its evaluation judged, nothing found).
    assert _health_lines(caplog) == [] and "health" not in summary
    # Self-contained: its config runs 1 pass, its labels are the teacher's, its tokenizer copied.
    files = resolve_model_files(init_checkpoint=str(tmp_path / "student"))
    assert files.albert_config.to_dict() == {**AlbertConfig(**TEACHER).to_dict(),
                                             "num_hidden_layers": 1}
    assert json.loads((tmp_path / "student" / "labels.json").read_text()) == LABELS
    names, probabilities = student.predict(TEXTS[:2])
    assert probabilities.shape == (2, 2) and set(names) <= set(LABELS)


def test_training_health_speaks_on_a_student_that_does_not_learn(teacher, tmp_path, caplog):
    folder, _ = teacher
    student = TextClassifier.from_pretrained(str(folder), num_hidden_layers=1, max_seq_length=16,
                                             output_dir=str(tmp_path / "student"), seed=3)
    with caplog.at_level(logging.WARNING):  # 10 steps at learning rate 3: the loss explodes
        summary = student.fit(TEXTS, GOLD, epochs=5, batch_size=4, distill_from=str(folder),
                              verbose=0, learning_rate=3.0, validation_data=(TEXTS, GOLD))
    said = _health_lines(caplog)
    assert summary["health"] == "not_learning" and len(said) == 1
    assert said[0].startswith("training health: not learning: the evaluation at step 10 has loss")
    assert "learning_rate=3.0" in said[0]


def _cli(folder, tmp_path, *extra, gold=GOLD):
    train = tmp_path / "train.tsv"
    train.write_text("text\tlabel\n" + "".join(f"{t}\t{g}\n" for t, g in zip(TEXTS, gold)))
    return run_entry_point("run_classifier.py", [
        "--task_name=tsv", f"--train_file={train}", "--text_a_column=text",
        "--label_column=label", f"--output_dir={tmp_path / 'out'}", "--do_train",
        "--max_seq_length=16", "--train_batch_size=4", "--train_step=1",
        f"--distill_from={folder}", "--num_hidden_layers=1", *extra])


def test_a_teacher_of_other_labels_is_refused(teacher, tmp_path):
    folder, _ = teacher
    done = _cli(folder, tmp_path, gold=[{"pos": "good", "neg": "bad"}[g] for g in GOLD])
    assert_refused(done, (
        f"--distill_from={folder} has the labels ['neg', 'pos'] ({folder}/labels.json) "
        "but this run's are ['bad', 'good']: a student learns its teacher's labels, in the "
        "teacher's order"), tmp_path / "out")


def test_a_teacher_of_another_vocabulary_is_refused(teacher, spm_model, tmp_path):
    folder, _ = teacher
    other, _ = _folder(tmp_path / "wide", spm_model, dict(TEACHER, vocab_size=1600))
    done = _cli(folder, tmp_path, f"--init_checkpoint={other}")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"error: --distill_from={folder}'s vocabulary ({folder}/30k-clean.model, vocab_size "
        f"1500) differs from this run's ({other}/30k-clean.model, vocab_size 1600)")
    assert not list((tmp_path / "out").glob("model.ckpt-*"))


def test_tagged_words_alone_are_distilled():
    """run_ner's objective: the soft loss over tagged first pieces (label_ids >= 0) only, as
    the batch's share of the global batch's tagged words."""
    rng = np.random.default_rng(2)
    student, soft = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))
    labels = np.array([[0, -1, 2, -1], [1, 1, -1, -1]])
    teacher = lambda features, training: {"logits": tf.constant(soft, tf.float32)}  # noqa: E731
    objective = distilled(Objective(lambda o, f, s: (tf.constant(0.3), {}), totals_fn=len),
                          teacher, 2.0, 0.5)
    loss, _ = objective.loss_fn({"logits": tf.constant(student, tf.float32)},
                                {"label_ids": tf.constant(labels)}, {"tags": tf.constant(8.0)})
    tagged = labels >= 0
    t, s = _log_softmax(soft / 2.0), _log_softmax(student / 2.0)
    want = 0.5 * 4.0 * ((np.exp(t) * (t - s)).sum(-1) * tagged).sum() / (8.0 + 1e-5) + 0.5 * 0.3
    assert float(loss) == pytest.approx(want, rel=1e-5)


def test_run_ner_distils_a_tagger(spm_model, tmp_path):
    folder, train = tagger_folder(tmp_path, spm_model, TEACHER)
    tags = TAGS
    out = tmp_path / "student"
    done = run_entry_point("run_ner.py", [
        f"--train_file={train}", f"--output_dir={out}", "--do_train", "--max_seq_length=16",
        "--train_batch_size=2", "--train_step=1", f"--distill_from={folder}",
        "--num_hidden_layers=1"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((out / "labels.json").read_text()) == tags
    assert json.loads((out / "albert_config.json").read_text())["num_hidden_layers"] == 1
    assert (out / "model.ckpt-1.index").is_file()
    other = tmp_path / "other.txt"
    other.write_text("Alice\tB-Y\nsaw\tO\n\n")
    done = run_entry_point("run_ner.py", [
        f"--train_file={other}", f"--output_dir={tmp_path / 'bad'}", "--do_train",
        "--max_seq_length=16", "--train_step=1", f"--distill_from={folder}"])
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"error: --distill_from={folder} has the labels ['B-X', 'I-X', 'O'] "
        f"({folder}/labels.json) but this run's are ['B-Y', 'O']")
    assert not (tmp_path / "bad" / "labels.json").exists()
