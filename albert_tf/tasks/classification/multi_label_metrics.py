"""Multi-label metrics over a whole dev set: per example a set of labels, as multi-hot rows.

* `eval_micro_f1`: F1 of the (example, label) decisions pooled over every label: 2·TP /
  (2·TP + FP + FN), 0 when there is no true positive (scikit-learn's `f1_score(average=
  "micro")` with zero_division=0);
* `eval_macro_f1`: the unweighted mean of the labels' F1 (a label never given nor predicted
  scores 0, as scikit-learn's zero_division=0);
* `eval_exact_match`: the share of examples whose predicted set is exactly the gold set;
* `eval_f1_<label>`: each label's F1; `eval_loss`: the mean binary cross-entropy.
The checkpoint kept as `model.ckpt-best` is the one with the best `eval_micro_f1`.
"""

from __future__ import annotations

import numpy as np

BEST_METRIC = "eval_micro_f1"


def _f1(tp, fp, fn) -> float:
    return 2.0 * tp / (2 * tp + fp + fn) if tp else 0.0


def counts(gold, predicted) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per label (TP, FP, FN) of multi-hot [N, C] arrays."""
    gold, predicted = np.asarray(gold) > 0, np.asarray(predicted) > 0
    return ((gold & predicted).sum(0), (~gold & predicted).sum(0), (gold & ~predicted).sum(0))


def micro_f1(gold, predicted) -> float:
    tp, fp, fn = (int(x.sum()) for x in counts(gold, predicted))
    return _f1(tp, fp, fn)


def per_label_f1(gold, predicted) -> list[float]:
    return [_f1(int(t), int(p), int(n)) for t, p, n in zip(*counts(gold, predicted))]


def exact_match(gold, predicted) -> float:
    gold, predicted = np.asarray(gold) > 0, np.asarray(predicted) > 0
    return float(np.mean(np.all(gold == predicted, axis=1))) if len(gold) else 0.0


def binary_cross_entropy(logits, labels) -> float:
    """The mean over examples and labels, computed stably from logits."""
    x, y = np.asarray(logits, np.float64), np.asarray(labels, np.float64)
    if not x.size:
        return 0.0
    return float(np.mean(np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))))


def multi_label_metrics(logits, predictions, labels, weights, label_names) -> dict:
    """The dev-set result dict from all logits [N, C], the model's 0/1 predictions [N, C] (its
    probabilities at or above the threshold) and multi-hot labels [N, C]; rows with weight 0
    (padding) never count."""
    real = np.asarray(weights) > 0
    logits, labels = np.asarray(logits)[real], np.asarray(labels)[real]
    predicted = np.asarray(predictions)[real]
    per_label = per_label_f1(labels, predicted)
    result = {"eval_micro_f1": micro_f1(labels, predicted),
              "eval_macro_f1": float(np.mean(per_label)) if per_label else 0.0,
              "eval_exact_match": exact_match(labels, predicted),
              "eval_loss": binary_cross_entropy(logits, labels)}
    for name, score in zip(label_names, per_label):
        result[f"eval_f1_{name}"] = score
    return result
