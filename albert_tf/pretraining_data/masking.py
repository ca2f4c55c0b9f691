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
    """The masking's settings, all given by `PretrainingDataOptions.masking_config` (the flags'
    defaults, the original's, live there and nowhere else)."""

    cls_code: int
    sep_code: int
    mask_id: int
    replacement_ids: tuple  # id written for a random replacement `vocab_words[k]`, by k
    masked_lm_prob: float
    max_predictions_per_seq: int
    do_whole_word_mask: bool
    do_permutation: bool
    # The original shuffles the candidates a second time after masking, only to consume random
    # draws (unless do_permutation); exact replication needs it, the default mode skips it.
    replay_unused_shuffle: bool
    # Exact replication shuffles the full candidate list; the default mode draws the random
    # order lazily, only as far as it is used (same distribution, far fewer draws).
    full_candidate_shuffle: bool


def _choose_ngram(idx, cand, room, draw_ngram):
    """Token indices of the n-gram of words starting at cand[idx], with the original's fallback:
    draw n, then try n, n-1, ..., 1 words until it fits in `room`; None when even 1 word does not.
    Returns (indices, words used)."""
    n = draw_ngram()
    for m in range(n, 0, -1):
        words = cand[idx:idx + m]
        indices = words[0] if len(words) == 1 else [i for w in words for i in w]
        if len(indices) <= room:
            return indices, len(words)
    return None, 0


def create_masked_lm_predictions(tokens: list[int], cfg: MaskingConfig, rng,
                                 draw_ngram: Callable[[], int], ngram_lengths: list | None = None):
    """Masks `tokens` (codes). Returns (output ids, positions, label ids, token_boundary).

    `ngram_lengths`, when given, receives the length in words of every masked n-gram.
    """
    cls_code, sep_code = cfg.cls_code, cfg.sep_code
    whole_word = cfg.do_whole_word_mask
    # Candidate words: [CLS]/[SEP] are skipped but do not end a word (a continuation piece
    # after [SEP] joins the word before it, as in the original).
    cand: list[list[int]] = []
    word = None
    for i, code in enumerate(tokens):
        if code == cls_code or code == sep_code:
            continue
        if code & 1 or word is None or not whole_word:
            word = [i]
            cand.append(word)
        else:
            word.append(i)
    output = [code >> 1 for code in tokens]
    boundary = [code & 1 for code in tokens]
    if cfg.masked_lm_prob == 0:
        return output, [], [], boundary

    num_to_predict = min(cfg.max_predictions_per_seq,
                         max(1, int(round(len(tokens) * cfg.masked_lm_prob))))
    order = list(range(len(cand)))
    lazy = not cfg.full_candidate_shuffle
    if not lazy:
        rng.shuffle(order)
    # For the lazy shuffle (same distribution, draws only as needed). `randrange(n)` with one
    # positive argument is `_randbelow(n)`: the same draws as the full shuffle's.
    randbelow = rng.randrange
    random, randint = rng.random, rng.randint
    mask_id, replacement_ids = cfg.mask_id, cfg.replacement_ids
    last_word = len(replacement_ids) - 1
    masked: list[tuple[int, int]] = []
    covered: set[int] = set()
    n_cand = len(cand)
    for k in range(n_cand):
        if len(masked) >= num_to_predict:
            break
        if lazy:  # Fisher-Yates one step at a time
            j = k + randbelow(n_cand - k)
            order[k], order[j] = order[j], order[k]
        index_set, words = _choose_ngram(order[k], cand, num_to_predict - len(masked), draw_ngram)
        if index_set is None or not covered.isdisjoint(index_set):
            continue  # too long even as 1 word, or overlaps a masked n-gram (no partial masking)
        if ngram_lengths is not None:
            ngram_lengths.append(words)
        for index in index_set:
            covered.add(index)
            label = output[index]
            if random() < 0.8:
                output[index] = mask_id
            elif random() >= 0.5:  # else: keep the original token
                output[index] = replacement_ids[randint(0, last_word)]
            masked.append((index, label))

    if cfg.replay_unused_shuffle or cfg.do_permutation:
        rng.shuffle(order)
    if cfg.do_permutation:
        masked.extend(_permute(order, cand, num_to_predict, draw_ngram, rng, covered, output))

    masked.sort()
    return output, [p for p, _ in masked], [label for _, label in masked], boundary


def _permute(order, cand, num_to_predict, draw_ngram, rng, covered, output):
    """The original's `do_permutation` targets: more n-grams chosen the same way (avoiding masked
    ones), then their tokens swapped among themselves; the labels are the tokens before."""
    selected: set[int] = set()
    for idx in order:
        if len(selected) >= num_to_predict:
            break
        index_set, _ = _choose_ngram(idx, cand, num_to_predict - len(selected), draw_ngram)
        if index_set is None or not covered.isdisjoint(index_set) or not selected.isdisjoint(index_set):
            continue
        selected.update(index_set)
    sources = sorted(selected)
    targets = list(sources)
    rng.shuffle(targets)
    before = list(output)
    for src, tgt in zip(sources, targets):
        output[src] = before[tgt]
    return [(src, before[src]) for src in sources]
