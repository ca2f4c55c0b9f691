"""GLUE evaluation metrics over a whole dev set, weighted by `is_real_example` as the original.

The original's keys (`eval_accuracy`, `eval_loss`, `matthew_corr`, `pearson`, `MSE`, `pred`,
`label_ids`) are kept, plus what GLUE users expect and the original lacks: `f1` for MRPC and
QQP and `spearman` for STS-B. Padding examples (weight 0) never count.
"""

from __future__ import annotations

import numpy as np

F1_TASKS = ("mrpc", "qqp")


def _real(values, weights):
    return np.asarray(values)[np.asarray(weights) > 0]


def accuracy(labels, predictions) -> float:
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return float(np.mean(labels == predictions)) if labels.size else 0.0


def confusion(labels, predictions):
    """(tp, tn, fp, fn) with class 1 as the positive class."""
    labels, predictions = np.asarray(labels) == 1, np.asarray(predictions) == 1
    return (int(np.sum(labels & predictions)), int(np.sum(~labels & ~predictions)),
            int(np.sum(~labels & predictions)), int(np.sum(labels & ~predictions)))


def matthews_corr(labels, predictions) -> float:
    """(TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)); 0 when the denominator is 0."""
    tp, tn, fp, fn = (float(x) for x in confusion(labels, predictions))
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denominator) if denominator else 0.0


def f1(labels, predictions) -> float:
    tp, _, fp, fn = confusion(labels, predictions)
    return 2.0 * tp / (2 * tp + fp + fn) if tp else 0.0


def macro_f1(labels, predictions, num_classes: int) -> float:
    """The unweighted mean over classes of each class's F1 (one class against the rest)."""
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    scores = []
    for c in range(num_classes):
        tp = int(np.sum((labels == c) & (predictions == c)))
        fp = int(np.sum((labels != c) & (predictions == c)))
        fn = int(np.sum((labels == c) & (predictions != c)))
        scores.append(2.0 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(scores)) if scores else 0.0


def pearson(x, y) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    dx, dy = x - x.mean(), y - y.mean()
    denominator = np.sqrt(np.sum(dx * dx) * np.sum(dy * dy))
    return float(np.sum(dx * dy) / denominator) if denominator else 0.0


def rank(values) -> np.ndarray:
    """Ranks from 1, ties sharing their average rank (as Spearman's coefficient needs)."""
    values = np.asarray(values, np.float64)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), np.float64)
    sorted_values = values[order]
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


def spearman(x, y) -> float:
    return pearson(rank(x), rank(y))


def mse(predictions, labels) -> float:
    diff = np.asarray(predictions, np.float64) - np.asarray(labels, np.float64)
    return float(np.mean(diff * diff)) if diff.size else 0.0


def softmax_cross_entropy(logits, labels) -> np.ndarray:
    logits = np.asarray(logits, np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -log_probs[np.arange(len(logits)), np.asarray(labels, np.int64)]


def glue_metrics(task_name: str, logits, labels, weights=None) -> dict:
    """The dev-set result dict for a task from all logits ([N,C]; [N] or [N,1] for STS-B)."""
    logits = np.asarray(logits)
    labels = np.asarray(labels)
    weights = np.ones(len(labels)) if weights is None else np.asarray(weights)
    logits, labels = _real(logits, weights), _real(labels, weights)
    if task_name == "sts-b":
        predictions = logits.reshape(-1).astype(np.float64)
        losses = (predictions - labels) ** 2
        return {"pearson": pearson(predictions, labels), "spearman": spearman(predictions, labels),
                "MSE": mse(predictions, labels), "eval_loss": float(np.mean(losses)),
                "pred": predictions.astype(np.float32), "label_ids": labels.astype(np.float32)}
    predictions = np.argmax(logits, axis=-1)
    result = {"eval_accuracy": accuracy(labels, predictions),
              "eval_loss": float(np.mean(softmax_cross_entropy(logits, labels)))}
    if task_name == "cola":
        result["matthew_corr"] = matthews_corr(labels, predictions)
    if task_name in F1_TASKS:
        result["f1"] = f1(labels, predictions)
    return result


def custom_metrics(logits, labels, weights, num_classes: int, regression: bool) -> dict:
    """Your own data's dev-set keys: eval_accuracy, eval_macro_f1, eval_loss; regressing:
    eval_pearson, eval_spearman, eval_mse, eval_loss."""
    logits = _real(np.asarray(logits), weights)
    labels = _real(np.asarray(labels), weights)
    if regression:
        predictions = logits.reshape(-1).astype(np.float64)
        error = mse(predictions, labels)
        return {"eval_pearson": pearson(predictions, labels),
                "eval_spearman": spearman(predictions, labels), "eval_mse": error,
                "eval_loss": error}
    predictions = np.argmax(logits, axis=-1)
    return {"eval_accuracy": accuracy(labels, predictions),
            "eval_macro_f1": macro_f1(labels, predictions, num_classes),
            "eval_loss": float(np.mean(softmax_cross_entropy(logits, labels)))
            if len(labels) else 0.0}


def selection_metric(task_name: str) -> str:
    """The key whose strict improvement makes a checkpoint the best (the original's choice)."""
    return {"cola": "matthew_corr", "sts-b": "pearson"}.get(task_name, "eval_accuracy")
