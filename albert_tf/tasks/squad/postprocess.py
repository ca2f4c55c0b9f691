"""Model outputs → answer texts: n-best spans, null scores, and the prediction JSON files.

Two steps as the original: `accumulate_*` collects valid (start, end) candidates per feature,
`write_predictions_*` ranks them per question and maps them back to the raw paragraph text.
Candidates are keyed by piece positions inside the window (start − doc_offset, where doc_offset
is the index after the first `[SEP]`).
"""

from __future__ import annotations

import collections
import json
import math
from typing import NamedTuple, Optional


from albert_tf.io_utils import write_text_atomically


class RawResult(NamedTuple):
    """v1 outputs of one feature; the "log probs" are the raw logits (the original's names)."""

    unique_id: int
    start_log_prob: list
    end_log_prob: list


class RawResultV2(NamedTuple):
    """v2 beam outputs of one feature; end entries are flattened as i·end_n_top + j."""

    unique_id: int
    start_top_log_probs: list
    start_top_index: list
    end_top_log_probs: list
    end_top_index: list
    cls_logits: float


class _Candidate(NamedTuple):
    feature_index: int
    start_index: int
    end_index: int
    start_log_prob: float
    end_log_prob: float


def best_indexes(scores, n_best_size: int) -> list:
    """Indexes of the `n_best_size` highest scores (stable: ties keep the earlier index)."""
    ranked = sorted(enumerate(scores), key=lambda pair: pair[1], reverse=True)
    return [index for index, _ in ranked[:n_best_size]]


def softmax(scores) -> list:
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = sum(exps)
    return [value / total for value in exps]


def _features_by_example(features):
    grouped = collections.defaultdict(list)
    for feature in features:
        grouped[feature.example_index].append(feature)
    return grouped


def _doc_offset(feature) -> int:
    return feature.tokens.index("[SEP]") + 1


def _valid_span(feature, start_index, end_index, doc_offset, max_answer_length) -> bool:
    if start_index - doc_offset >= len(feature.tok_start_to_orig_index):
        return False
    if end_index - doc_offset >= len(feature.tok_end_to_orig_index):
        return False
    if not feature.token_is_max_context.get(start_index, False):
        return False
    return start_index <= end_index < start_index + max_answer_length


def _add(store, key, log_probs):
    store.setdefault(key, []).append(log_probs)


def accumulate_predictions_v1(result_dict, examples, features, results, n_best_size: int,
                              max_answer_length: int) -> None:
    """result_dict[example index][unique id][(start, end)] += [(start logit, end logit)]."""
    by_example = _features_by_example(features)
    by_id = {result.unique_id: result for result in results}
    for example_index in range(len(examples)):
        per_feature = result_dict.setdefault(example_index, {})
        for feature in by_example[example_index]:
            store = per_feature.setdefault(feature.unique_id, {})
            result = by_id[feature.unique_id]
            doc_offset = _doc_offset(feature)
            starts = best_indexes(result.start_log_prob, n_best_size)
            ends = best_indexes(result.end_log_prob, n_best_size)
            for start_index in starts:
                for end_index in ends:
                    if _valid_span(feature, start_index, end_index, doc_offset, max_answer_length):
                        _add(store, (start_index - doc_offset, end_index - doc_offset),
                             (result.start_log_prob[start_index], result.end_log_prob[end_index]))


def accumulate_predictions_v2(result_dict, cls_dict, examples, features, results,
                              n_best_size: int, max_answer_length: int, start_n_top: int,
                              end_n_top: int) -> None:
    """As v1 over the beam pairs; cls_dict[example index] += [min cls logit over its features]."""
    del n_best_size  # the beam already limits candidates; kept for the original's signature
    by_example = _features_by_example(features)
    by_id = {result.unique_id: result for result in results}
    for example_index in range(len(examples)):
        per_feature = result_dict.setdefault(example_index, {})
        null_score = 1000000.0  # the original's "large and positive" start value
        for feature in by_example[example_index]:
            store = per_feature.setdefault(feature.unique_id, {})
            result = by_id[feature.unique_id]
            null_score = min(null_score, result.cls_logits)
            doc_offset = _doc_offset(feature)
            for i in range(start_n_top):
                start_index = result.start_top_index[i]
                for j in range(end_n_top):
                    end_index = result.end_top_index[i * end_n_top + j]
                    if start_index < doc_offset:
                        continue
                    if _valid_span(feature, start_index, end_index, doc_offset, max_answer_length):
                        _add(store, (start_index - doc_offset, end_index - doc_offset),
                             (result.start_top_log_probs[i],
                              result.end_top_log_probs[i * end_n_top + j]))
        cls_dict.setdefault(example_index, []).append(null_score)


def _ranked_candidates(result_dict, example_index, features):
    candidates = []
    for feature_index, feature in enumerate(features):
        for (start, end), log_probs in result_dict[example_index][feature.unique_id].items():
            start_sum = sum(pair[0] for pair in log_probs)  # noqa: the original sums in order
            end_sum = sum(pair[1] for pair in log_probs)
            candidates.append(_Candidate(feature_index, start, end, start_sum / len(log_probs),
                                         end_sum / len(log_probs)))
    return sorted(candidates, key=lambda c: c.start_log_prob + c.end_log_prob, reverse=True)


def _nbest(example, features, candidates, n_best_size):
    nbest, seen = [], set()
    for candidate in candidates:
        if len(nbest) >= n_best_size:
            break
        feature = features[candidate.feature_index]
        char_start = feature.tok_start_to_orig_index[candidate.start_index]
        char_end = feature.tok_end_to_orig_index[candidate.end_index]
        text = example.paragraph_text[char_start:char_end + 1].strip()
        if text in seen:
            continue
        seen.add(text)
        nbest.append((text, candidate.start_log_prob, candidate.end_log_prob))
    return nbest


def _nbest_json(nbest):
    probabilities = softmax([start + end for _, start, end in nbest])
    return [collections.OrderedDict([("text", text), ("probability", probability),
                                     ("start_log_prob", start), ("end_log_prob", end)])
            for (text, start, end), probability in zip(nbest, probabilities)]


def write_json(path, value) -> None:
    """JSON with 4-space indent (the original's format), written atomically."""
    if path is None:
        return
    write_text_atomically(path, json.dumps(value, indent=4) + "\n")


def write_predictions_v1(result_dict, examples, features, results, n_best_size: int,
                         max_answer_length: int, output_prediction_file=None,
                         output_nbest_file=None):
    """{qas_id: text} and {qas_id: n-best list}; a question without candidates gets "empty"."""
    del results, max_answer_length  # already applied by accumulate; the original's signature
    by_example = _features_by_example(features)
    predictions, nbest_all = collections.OrderedDict(), collections.OrderedDict()
    for example_index, example in enumerate(examples):
        features_of = by_example[example_index]
        candidates = _ranked_candidates(result_dict, example_index, features_of)
        nbest = _nbest(example, features_of, candidates, n_best_size) or [("empty", 0.0, 0.0)]
        nbest_all[example.qas_id] = _nbest_json(nbest)
        predictions[example.qas_id] = nbest[0][0]
    write_json(output_prediction_file, predictions)
    write_json(output_nbest_file, nbest_all)
    return predictions, nbest_all


def write_predictions_v2(result_dict, cls_dict, examples, features, results, n_best_size: int,
                         max_answer_length: int, output_prediction_file=None,
                         output_nbest_file=None, output_null_log_odds_file=None,
                         null_score_diff_threshold: Optional[float] = None):
    """(predictions, null scores): the best text, or "" when the null score (the minimum cls
    logit) is ≥ the threshold; with no threshold every question is answered."""
    del results, max_answer_length
    by_example = _features_by_example(features)
    predictions, nbest_all = collections.OrderedDict(), collections.OrderedDict()
    null_odds = collections.OrderedDict()
    for example_index, example in enumerate(examples):
        features_of = by_example[example_index]
        candidates = _ranked_candidates(result_dict, example_index, features_of)
        nbest = _nbest(example, features_of, candidates, n_best_size) or [("", -1e6, -1e6)]
        nbest_all[example.qas_id] = _nbest_json(nbest)
        null_scores = cls_dict[example_index]
        score_diff = sum(null_scores) / len(null_scores)
        null_odds[example.qas_id] = score_diff
        answer = null_score_diff_threshold is None or score_diff < null_score_diff_threshold
        predictions[example.qas_id] = nbest[0][0] if answer else ""
    write_json(output_prediction_file, predictions)
    write_json(output_nbest_file, nbest_all)
    write_json(output_null_log_odds_file, null_odds)
    return predictions, null_odds
