"""Each GLUE metric against a direct computation (numpy / TensorFlow formulas)."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.tasks.classification import metrics as M

RNG = np.random.default_rng(7)
LABELS = RNG.integers(0, 2, 200)
LOGITS = RNG.normal(size=(200, 2)) + 1.5 * np.eye(2)[LABELS] * RNG.random((200, 1))
PRED = LOGITS.argmax(-1)


def test_accuracy_and_loss_against_tensorflow():
    result = M.glue_metrics("sst-2", LOGITS, LABELS)
    assert result["eval_accuracy"] == pytest.approx(np.mean(PRED == LABELS))
    want = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(LABELS, LOGITS)).numpy()
    assert result["eval_loss"] == pytest.approx(want, rel=1e-9)
    assert set(result) == {"eval_accuracy", "eval_loss"}


def test_matthews_equals_pearson_of_binary_vectors():
    want = np.corrcoef(LABELS, PRED)[0, 1]
    assert M.matthews_corr(LABELS, PRED) == pytest.approx(want, rel=1e-9)
    assert M.glue_metrics("cola", LOGITS, LABELS)["matthew_corr"] == pytest.approx(want, rel=1e-9)
    assert M.matthews_corr([1, 1, 1], [1, 1, 1]) == 0.0  # zero denominator


def test_f1_from_precision_and_recall():
    tp = np.sum((PRED == 1) & (LABELS == 1))
    precision, recall = tp / np.sum(PRED == 1), tp / np.sum(LABELS == 1)
    want = 2 * precision * recall / (precision + recall)
    assert M.f1(LABELS, PRED) == pytest.approx(want, rel=1e-9)
    for task in ("mrpc", "qqp"):
        assert M.glue_metrics(task, LOGITS, LABELS)["f1"] == pytest.approx(want, rel=1e-9)
    assert "f1" not in M.glue_metrics("rte", LOGITS, LABELS)
    assert M.f1([0, 0], [0, 0]) == 0.0


def test_regression_metrics():
    labels = RNG.uniform(0, 5, 300)
    preds = labels + RNG.normal(scale=0.8, size=300)
    result = M.glue_metrics("sts-b", preds[:, None], labels)
    assert result["pearson"] == pytest.approx(np.corrcoef(preds, labels)[0, 1], rel=1e-9)
    rank = lambda v: np.argsort(np.argsort(v)).astype(float)  # no ties in continuous data
    assert result["spearman"] == pytest.approx(np.corrcoef(rank(preds), rank(labels))[0, 1], rel=1e-9)
    assert result["MSE"] == pytest.approx(np.mean((preds - labels) ** 2), rel=1e-9)
    assert result["eval_loss"] == pytest.approx(result["MSE"], rel=1e-9)
    np.testing.assert_allclose(result["pred"], preds, rtol=1e-6)
    np.testing.assert_allclose(result["label_ids"], labels, rtol=1e-6)


def test_spearman_with_ties_uses_average_ranks():
    np.testing.assert_array_equal(M.rank([10, 20, 20, 5]), [2, 3.5, 3.5, 1])
    x, y = [1, 2, 2, 3], [1, 3, 2, 4]
    want = np.corrcoef([1, 2.5, 2.5, 4], [1, 3, 2, 4])[0, 1]
    assert M.spearman(x, y) == pytest.approx(want, rel=1e-12)


def test_padding_examples_do_not_count():
    weights = np.ones(200)
    weights[150:] = 0
    full = M.glue_metrics("cola", LOGITS[:150], LABELS[:150])
    weighted = M.glue_metrics("cola", LOGITS, LABELS, weights)
    assert full == weighted


def test_selection_metric_is_the_originals():
    assert M.selection_metric("cola") == "matthew_corr"
    assert M.selection_metric("sts-b") == "pearson"
    assert M.selection_metric("mrpc") == "eval_accuracy"


def test_macro_f1_and_custom_metrics():
    labels, predictions = [0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 2, 0]
    # per class: 0: tp1 fp1 fn1 → 0.5; 1: tp1 fp1 fn0 → 2/3; 2: tp2 fp0 fn1 → 0.8
    assert M.macro_f1(labels, predictions, 3) == pytest.approx((0.5 + 2 / 3 + 0.8) / 3)
    logits = np.eye(3)[predictions] * 4.0
    result = M.custom_metrics(np.vstack([logits, np.zeros((2, 3))]), labels + [0, 0],
                              [1] * 6 + [0, 0], 3, regression=False)  # padding never counts
    assert set(result) == {"eval_accuracy", "eval_macro_f1", "eval_loss"}
    assert result["eval_accuracy"] == pytest.approx(4 / 6)
    scores = M.custom_metrics([1.0, 2.0, 4.0], [1.0, 3.0, 2.0], [1, 1, 1], 1, regression=True)
    assert set(scores) == {"eval_pearson", "eval_spearman", "eval_mse", "eval_loss"}
    assert scores["eval_mse"] == pytest.approx(5 / 3)
