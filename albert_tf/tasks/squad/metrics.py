"""The official SQuAD v1.1 and v2.0 metrics, re-implemented from their published definitions.

Answers are normalised (lower case, punctuation and the articles a/an/the removed, whitespace
collapsed); EM is string equality after normalisation, F1 the token-bag overlap, each maxed over
the gold answers and reported ×100. v2.0 adds no-answer handling, a no-answer probability
threshold and the best-threshold search.
"""

from __future__ import annotations

import collections
import re
import string

from absl import logging

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _questions(dataset):
    for article in dataset:
        for paragraph in article["paragraphs"]:
            yield from paragraph["qas"]


def _overlap_f1(pred_tokens, gold_tokens) -> float:
    common = collections.Counter(pred_tokens) & collections.Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(pred_tokens)
    recall = 1.0 * same / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


# ----- v1.1 -----

def evaluate_v1(dataset, predictions) -> dict:
    """{'exact_match', 'f1'} over every question; unanswered questions score 0 (logged)."""
    exact = f1 = total = 0
    for qa in _questions(dataset):
        total += 1
        if qa["id"] not in predictions:
            logging.warning("Unanswered question %s will receive score 0.", qa["id"])
            continue
        prediction = normalize_answer(predictions[qa["id"]])
        golds = [normalize_answer(answer["text"]) for answer in qa["answers"]]
        exact += max(prediction == gold for gold in golds)
        f1 += max(_overlap_f1(prediction.split(), gold.split()) for gold in golds)
    return {"exact_match": 100.0 * exact / total, "f1": 100.0 * f1 / total}


# ----- v2.0 -----

def _tokens(text):
    return normalize_answer(text).split() if text else []


def compute_exact(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def compute_f1(gold: str, prediction: str) -> float:
    gold_tokens, pred_tokens = _tokens(gold), _tokens(prediction)
    if not gold_tokens or not pred_tokens:
        return int(gold_tokens == pred_tokens)  # both empty: 1, one empty: 0
    return _overlap_f1(pred_tokens, gold_tokens)


def has_answer_by_id(dataset) -> dict:
    return {qa["id"]: bool(qa["answers"]) for qa in _questions(dataset)}


def raw_scores(dataset, predictions):
    """Per-question EM and F1 (questions without a prediction are skipped, logged)."""
    exact, f1 = {}, {}
    for qa in _questions(dataset):
        qid = qa["id"]
        golds = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])] or [""]
        if qid not in predictions:
            logging.warning("Missing prediction for %s", qid)
            continue
        exact[qid] = max(compute_exact(gold, predictions[qid]) for gold in golds)
        f1[qid] = max(compute_f1(gold, predictions[qid]) for gold in golds)
    return exact, f1


def apply_no_answer_threshold(scores, na_probs, has_answer, threshold) -> dict:
    """A question whose no-answer probability exceeds `threshold` scores as if answered ""."""
    return {qid: float(not has_answer[qid]) if na_probs[qid] > threshold else score
            for qid, score in scores.items()}


def make_eval_dict(exact, f1, qid_list=None) -> "collections.OrderedDict":
    if not qid_list:
        total = len(exact)
        return collections.OrderedDict([("exact", 100.0 * sum(exact.values()) / total),
                                        ("f1", 100.0 * sum(f1.values()) / total),
                                        ("total", total)])
    total = len(qid_list)
    return collections.OrderedDict([("exact", 100.0 * sum(exact[k] for k in qid_list) / total),
                                    ("f1", 100.0 * sum(f1[k] for k in qid_list) / total),
                                    ("total", total)])


def find_best_threshold(predictions, scores, na_probs, has_answer):
    """(best score ×100, threshold): sweep questions by rising no-answer probability; starting
    from "abstain on everything", answering each one adds its score (or −1 for a wrong
    answer to an unanswerable question)."""
    current = best = sum(1 for qid in has_answer if not has_answer[qid])
    best_threshold = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        if has_answer[qid]:
            current += scores[qid]
        elif predictions[qid]:
            current -= 1
        if current > best:
            best, best_threshold = current, na_probs[qid]
    return 100.0 * best / len(scores), best_threshold


def find_all_best_thresholds(out, predictions, exact, f1, na_probs, has_answer) -> None:
    out["best_exact"], out["best_exact_thresh"] = find_best_threshold(predictions, exact,
                                                                      na_probs, has_answer)
    out["best_f1"], out["best_f1_thresh"] = find_best_threshold(predictions, f1, na_probs,
                                                                has_answer)


def evaluate_v2(dataset, predictions, na_probs=None, na_prob_thresh: float = 1.0) -> dict:
    """The official v2.0 result dict (`HasAns_*`/`NoAns_*` when present, `best_*` when
    `na_probs` is given; without it every no-answer probability is 0)."""
    with_na_file = na_probs is not None
    if na_probs is None:
        na_probs = {qid: 0.0 for qid in predictions}
    has_answer = has_answer_by_id(dataset)
    exact_raw, f1_raw = raw_scores(dataset, predictions)
    exact = apply_no_answer_threshold(exact_raw, na_probs, has_answer, na_prob_thresh)
    f1 = apply_no_answer_threshold(f1_raw, na_probs, has_answer, na_prob_thresh)
    out = make_eval_dict(exact, f1)
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qids = [qid for qid, has in has_answer.items() if has == wanted]
        if qids:
            for key, value in make_eval_dict(exact, f1, qid_list=qids).items():
                out[f"{prefix}_{key}"] = value
    if with_na_file:
        find_all_best_thresholds(out, predictions, exact_raw, f1_raw, na_probs, has_answer)
    return out


def is_version_2(data: dict) -> bool:
    """Version chosen by the data file: "v2.0"/"2.0" → v2; "1.1" → v1; otherwise v2 iff any
    question carries `is_impossible`."""
    version = str(data.get("version", "")).lstrip("v")
    if version.startswith("2"):
        return True
    if version.startswith("1"):
        return False
    return any("is_impossible" in qa for qa in _questions(data["data"]))
