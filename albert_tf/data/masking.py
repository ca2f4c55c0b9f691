"""N-gram whole-word masking: the original's `create_masked_lm_predictions` on token codes.

Tokens are codes (`id * 2 + word_start`, see `sentence_tokens`). Every random draw is made in
the original's order, so with the original's generators (`random.Random(seed)` and numpy's legacy
global RandomState for the n-gram length) the output is the original's, record for record.
"""

from __future__ import annotations

import bisect
import dataclasses
from typing import Callable

import numpy as np


def ngram_probabilities(ngram: int, favor_shorter_ngram: bool = True) -> np.ndarray:
    """p(n) ∝ 1/n for n = 1..ngram, reversed when longer n-grams are favoured (float64)."""
    pvals = 1.0 / np.arange(1, ngram + 1)
    pvals /= pvals.sum(keepdims=True)
    if not favor_shorter_ngram:
        pvals = pvals[::-1]
    return pvals


def _choice_cdf(ngram: int, favor_shorter_ngram: bool) -> list[float]:
    # The exact floats numpy's legacy `choice(a, p=p)` searches: p renormalised as the original
    # passes it, cumulated, divided by its last element.
    pvals = ngram_probabilities(ngram, favor_shorter_ngram)
    p = pvals / pvals.sum(keepdims=True)
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return cdf.tolist()


class LegacyNumpyNgramSampler:
    """The original's `np.random.choice(ngrams, p=...)` on numpy's legacy global RNG, seeded.

    The original never seeds that RNG; the golden data was made after `np.random.seed(seed)`.
    This draws the same stream (one `random_sample()` per call, then a right-sided search of the
    same cumulative sums as `choice`) from a private `RandomState(seed)`.
    """

    def __init__(self, seed: int, ngram: int, favor_shorter_ngram: bool = True):
        self._random_sample = np.random.RandomState(seed).random_sample
        self._cdf = _choice_cdf(ngram, favor_shorter_ngram)

    def __call__(self) -> int:
        return bisect.bisect_right(self._cdf, self._random_sample()) + 1


class PythonNgramSampler:
    """The same n-gram distribution drawn from a `random.Random` (the reproducible default mode)."""

    def __init__(self, rng, ngram: int, favor_shorter_ngram: bool = True):
        self._random = rng.random
        self._cdf = _choice_cdf(ngram, favor_shorter_ngram)

    def __call__(self) -> int:
        return bisect.bisect_right(self._cdf, self._random()) + 1


@dataclasses.dataclass(frozen=True)
class MaskingConfig:
    cls_code: int
    sep_code: int
    mask_id: int
    replacement_ids: tuple  # id written for a random replacement `vocab_words[k]`, by k
    masked_lm_prob: float = 0.15
    max_predictions_per_seq: int = 20
    do_whole_word_mask: bool = True
    do_permutation: bool = False
    # The original shuffles the candidates a second time after masking, only to consume random
    # draws (unless do_permutation); exact replication needs it, the default mode skips it.
    replay_unused_shuffle: bool = True
    # Exact replication shuffles the full candidate list; the default mode draws the random
    # order lazily, only as far as it is used (same distribution, far fewer draws).
    full_candidate_shuffle: bool = True


def _lazy_shuffled(items: list, rng):
    """Yields `items` in uniformly random order, drawing only for the elements consumed."""
    randbelow = rng._randbelow
    n = len(items)
    for k in range(n):
        j = k + randbelow(n - k)
        items[k], items[j] = items[j], items[k]
        yield items[k]


def _select_ngrams(order, cand, num_to_predict, draw_ngram, taken, blocked, ngram_lengths):
    """Yields index lists of n-grams chosen in `order`, with the original's fallback and skips.

    `taken` counts what is already selected (a list used as a counter), `blocked` is a set of
    indices that may not be selected again. The caller consumes each yielded list before the
    next is chosen (its draws interleave with the 80/10/10 draws).
    """
    n_cand = len(cand)
    for idx in order:
        if taken[0] >= num_to_predict:
            break
        n = draw_ngram()
        index_set = None
        room = num_to_predict - taken[0]
        # Fall back to shorter n-grams until one fits; skip the start when even 1 word does not.
        for m in range(n, 0, -1):
            words = cand[idx:idx + m]
            candidate = words[0] if len(words) == 1 else [i for w in words for i in w]
            if len(candidate) <= room:
                index_set = candidate
                break
        if index_set is None:
            continue
        if not blocked.isdisjoint(index_set):
            continue  # no partial masking of an n-gram that overlaps a chosen one
        if ngram_lengths is not None:
            ngram_lengths.append(min(m, n_cand - idx))
        yield index_set


def create_masked_lm_predictions(tokens: list[int], cfg: MaskingConfig, rng,
                                 draw_ngram: Callable[[], int], ngram_lengths: list | None = None):
    """Masks `tokens` (codes). Returns (output ids, positions, label ids, token_boundary).

    `ngram_lengths`, when given, receives the length in words of every masked n-gram.
    """
    cls_code, sep_code = cfg.cls_code, cfg.sep_code
    whole_word = cfg.do_whole_word_mask
    cand: list[list[int]] = []
    for i, code in enumerate(tokens):
        if code == cls_code or code == sep_code:
            continue
        if whole_word and cand and not code & 1:
            cand[-1].append(i)
        else:
            cand.append([i])
    output = [code >> 1 for code in tokens]
    boundary = [code & 1 for code in tokens]
    if cfg.masked_lm_prob == 0:
        return output, [], [], boundary

    num_to_predict = min(cfg.max_predictions_per_seq,
                         max(1, int(round(len(tokens) * cfg.masked_lm_prob))))
    order = list(range(len(cand)))
    if cfg.full_candidate_shuffle:
        rng.shuffle(order)
        candidates = order
    else:
        candidates = _lazy_shuffled(order, rng)

    random, randint = rng.random, rng.randint
    mask_id, replacement_ids = cfg.mask_id, cfg.replacement_ids
    last_word = len(replacement_ids) - 1
    masked: list[tuple[int, int]] = []
    covered: set[int] = set()
    taken = [0]
    for index_set in _select_ngrams(candidates, cand, num_to_predict, draw_ngram, taken,
                                    covered, ngram_lengths):
        for index in index_set:
            covered.add(index)
            label = output[index]
            if random() < 0.8:
                output[index] = mask_id
            elif random() >= 0.5:  # else: keep the original token
                output[index] = replacement_ids[randint(0, last_word)]
            masked.append((index, label))
        taken[0] = len(masked)

    if cfg.replay_unused_shuffle or cfg.do_permutation:
        rng.shuffle(order)
    if cfg.do_permutation:
        masked.extend(_permute(order, cand, num_to_predict, draw_ngram, rng, covered, output))

    masked.sort()
    return output, [p for p, _ in masked], [label for _, label in masked], boundary


def _permute(order, cand, num_to_predict, draw_ngram, rng, covered, output):
    """The original's `do_permutation` targets: selected tokens swapped among themselves."""
    selected: set[int] = set()
    blocked = set(covered)
    taken = [0]
    for index_set in _select_ngrams(order, cand, num_to_predict, draw_ngram, taken, blocked, None):
        selected.update(index_set)
        blocked.update(index_set)
        taken[0] = len(selected)
    sources = sorted(selected)
    targets = list(sources)
    rng.shuffle(targets)
    before = list(output)
    for src, tgt in zip(sources, targets):
        output[src] = before[tgt]
    return [(src, before[src]) for src in sources]
