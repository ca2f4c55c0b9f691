"""N-gram whole-word masking: the original's rules, draw order and distributions."""

import collections
import random

import numpy as np
import pytest

from albert_tf.pretraining_data import masking
from support import two_sample

CLS, SEP, MASK = 2, 3, 4
VOCAB = 50


def _config(**kwargs):
    """The original's settings (exact mode: both shuffles), changed by `kwargs`."""
    base = dict(cls_code=CLS * 2 + 1, sep_code=SEP * 2 + 1, mask_id=MASK,
                replacement_ids=tuple(range(VOCAB)), masked_lm_prob=0.15, max_predictions_per_seq=20,
                do_whole_word_mask=True, do_permutation=False, replay_unused_shuffle=True,
                full_candidate_shuffle=True)
    base.update(kwargs)
    return masking.MaskingConfig(**base)


def _codes(spec):
    """'S' a word start, 'c' a continuation, '|' [SEP]; [CLS] first; ids from 10 on."""
    out = [CLS * 2 + 1]
    for k, ch in enumerate(spec):
        out.append(SEP * 2 + 1 if ch == "|" else (10 + k % 30) * 2 + (ch == "S"))
    return out


def _random_tokens(rng, length):
    flags = "".join(rng.choice("SSc") for _ in range(length))
    cut = rng.randint(1, length - 1)
    return _codes(flags[:cut] + "|" + flags[cut:] + "|")


def _original_masking(tokens, cfg, rng, np_rng, ngram, favor_shorter):
    """Independent transcription of the original's `create_masked_lm_predictions` on (id, start)
    pairs, draw for draw."""
    words, boundary = [], [0] * len(tokens)
    for i, code in enumerate(tokens):
        if code in (cfg.cls_code, cfg.sep_code):
            boundary[i] = 1
            continue
        if cfg.do_whole_word_mask and words and not code & 1:
            words[-1].append(i)
        else:
            words.append([i])
            boundary[i] = code & 1
    out = [c >> 1 for c in tokens]
    if cfg.masked_lm_prob == 0:
        return out, [], [], boundary
    k = min(cfg.max_predictions_per_seq, max(1, int(round(len(tokens) * cfg.masked_lm_prob))))
    ngrams = np.arange(1, ngram + 1, dtype=np.int64)
    p = masking.ngram_probabilities(ngram, favor_shorter)
    entries = [[words[i:i + n] for n in ngrams] for i in range(len(words))]
    rng.shuffle(entries)

    def pick(entry, chosen, blocked):
        n = np_rng.choice(ngrams[:len(entry)], p=p[:len(entry)] / p[:len(entry)].sum(keepdims=True))
        for m in range(n, 0, -1):
            flat = sum(entry[m - 1], [])
            if len(chosen) + len(flat) <= k:
                return None if any(i in blocked for i in flat) else flat
        return None

    preds, covered = [], set()
    for entry in entries:
        if len(preds) >= k:
            break
        flat = pick(entry, preds, covered)
        for i in flat or []:
            covered.add(i)
            original = out[i]
            if rng.random() < 0.8:
                out[i] = cfg.mask_id
            elif rng.random() >= 0.5:
                out[i] = cfg.replacement_ids[rng.randint(0, len(cfg.replacement_ids) - 1)]
            preds.append((i, original))
    rng.shuffle(entries)
    if cfg.do_permutation:
        selected = []
        for entry in entries:
            if len(selected) >= k:
                break
            flat = pick(entry, selected, covered | set(selected))
            selected.extend(flat or [])
        selected.sort()
        targets = list(selected)
        rng.shuffle(targets)
        before = list(out)
        for s, t in zip(selected, targets):
            out[s] = before[t]
            preds.append((s, before[s]))
    preds.sort()
    return out, [i for i, _ in preds], [t for _, t in preds], boundary


@pytest.mark.parametrize("variant", [
    dict(), dict(do_permutation=True), dict(do_whole_word_mask=False), dict(favor_shorter=False),
    dict(ngram=1), dict(ngram=5, max_predictions_per_seq=7), dict(masked_lm_prob=0.5),
    dict(masked_lm_prob=0.0),
])
def test_same_output_and_draws_as_a_transcription_of_the_original(variant):
    variant = dict(variant)
    ngram = variant.pop("ngram", 3)
    favor = variant.pop("favor_shorter", True)
    cfg = _config(**variant)
    source = random.Random(7)
    for seed in range(150):
        tokens = _random_tokens(source, source.randint(3, 60))
        ours_rng, theirs_rng = random.Random(seed), random.Random(seed)
        sampler = masking.LegacyNumpyNgramSampler(seed, ngram, favor)
        ours = masking.create_masked_lm_predictions(tokens, cfg, ours_rng, sampler)
        theirs = _original_masking(tokens, cfg, theirs_rng, np.random.RandomState(seed), ngram, favor)
        assert ours == theirs, (seed, tokens)
        assert ours_rng.random() == theirs_rng.random()  # the same number of draws


def test_legacy_sampler_is_numpy_choice():
    for ngram, favor in ((3, True), (4, False)):
        sampler = masking.LegacyNumpyNgramSampler(12345, ngram, favor)
        state = np.random.RandomState(12345)
        p = masking.ngram_probabilities(ngram, favor)
        ngrams = np.arange(1, ngram + 1, dtype=np.int64)
        assert [sampler() for _ in range(5000)] == \
            [int(state.choice(ngrams, p=p / p.sum(keepdims=True))) for _ in range(5000)]


def test_ngram_probabilities():
    np.testing.assert_allclose(masking.ngram_probabilities(3), [6 / 11, 3 / 11, 2 / 11])
    np.testing.assert_allclose(masking.ngram_probabilities(3, False), [2 / 11, 3 / 11, 6 / 11])


def test_python_sampler_distribution():
    sampler = masking.PythonNgramSampler(random.Random(3), 3)
    counts = collections.Counter(sampler() for _ in range(30000))
    expected = {n: 30000 * p for n, p in zip((1, 2, 3), masking.ngram_probabilities(3))}
    statistic = sum((counts[n] - e) ** 2 / e for n, e in expected.items())
    assert two_sample.chi2_sf(statistic, 2) > 1e-3


@pytest.mark.parametrize("length,prob,expected", [(10, 0.25, 2), (14, 0.25, 4), (6, 0.05, 1), (64, 0.15, 10)])
def test_num_to_predict_rounds_half_to_even(length, prob, expected):
    tokens = _codes("S" * (length - 3) + "||")  # one-piece words: every candidate fits
    cfg = _config(masked_lm_prob=prob, full_candidate_shuffle=False, replay_unused_shuffle=False)
    _, positions, _, _ = masking.create_masked_lm_predictions(
        tokens, cfg, random.Random(0), masking.PythonNgramSampler(random.Random(1), 1))
    assert len(positions) == expected


def test_whole_words_and_specials():
    tokens = _codes("ScccSc|ScSccc|")
    cfg = _config(masked_lm_prob=0.4)
    words = [[1, 2, 3, 4], [5, 6], [8, 9], [10, 11, 12, 13]]
    for seed in range(200):
        out, positions, labels, boundary = masking.create_masked_lm_predictions(
            tokens, cfg, random.Random(seed), masking.PythonNgramSampler(random.Random(seed), 3))
        assert 0 not in positions and 7 not in positions and 14 not in positions
        for word in words:
            assert set(word) <= set(positions) or not set(word) & set(positions)
        assert labels == [tokens[p] >> 1 for p in positions]
        assert boundary == [1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 1]


def test_continuation_after_sep_joins_the_word_before():
    tokens = _codes("S|c|")  # [CLS] S [SEP] c [SEP]
    cfg = _config(masked_lm_prob=1.0)
    _, positions, _, boundary = masking.create_masked_lm_predictions(
        tokens, cfg, random.Random(0), masking.PythonNgramSampler(random.Random(0), 3))
    assert positions == [1, 3] and boundary == [1, 1, 1, 0, 1]


def test_replacement_shares_are_80_10_10():
    tokens = _codes("S" * 60 + "||")
    cfg = _config(masked_lm_prob=0.15, replacement_ids=tuple(range(1000, 1000 + VOCAB)))
    kinds = collections.Counter()
    rng = random.Random(5)
    sampler = masking.PythonNgramSampler(rng, 3)
    for _ in range(2000):
        out, positions, labels, _ = masking.create_masked_lm_predictions(tokens, cfg, rng, sampler)
        for p, label in zip(positions, labels):
            kinds["mask" if out[p] == MASK else "kept" if out[p] == label else "random"] += 1
    total = sum(kinds.values())
    expected = {"mask": 0.8 * total, "kept": 0.1 * total, "random": 0.1 * total}
    statistic = sum((kinds[k] - e) ** 2 / e for k, e in expected.items())
    assert two_sample.chi2_sf(statistic, 2) > 1e-3


def test_permutation_targets_are_a_shuffle_of_selected_tokens():
    tokens = _codes("S" * 40 + "|" + "S" * 20 + "|")
    cfg = _config(do_permutation=True, replacement_ids=tuple(range(1000, 1000 + VOCAB)))
    out, positions, labels, _ = masking.create_masked_lm_predictions(
        tokens, cfg, random.Random(2), masking.PythonNgramSampler(random.Random(2), 3))
    k = round(len(tokens) * 0.15)
    assert k < len(positions) <= 2 * k
    permuted = [p for p in positions if out[p] != MASK and out[p] < 1000]  # kept or permuted
    assert sorted(out[p] for p in permuted) == sorted(tokens[p] >> 1 for p in permuted)


def test_default_mode_draws_its_order_as_a_forward_fisher_yates():
    # The default (lazy) mode draws the candidates' order one step at a time: step i swaps
    # candidate i with one drawn uniformly from i..n-1, then masks it (80/10/10). Drawing from
    # 0..n-1 instead (a biased shuffle that revisits masked words) passed every test.
    cfg = _config(masked_lm_prob=0.3, full_candidate_shuffle=False, replay_unused_shuffle=False)
    for seed in range(100):
        n = 8 + seed % 30
        tokens = _codes("S" * n + "||")  # one-piece words at positions 1..n
        k = min(cfg.max_predictions_per_seq, max(1, int(round(len(tokens) * 0.3))))
        rng, ours_rng = random.Random(seed), random.Random(seed)
        out, order, masked = [t >> 1 for t in tokens], list(range(n)), []
        for step in range(k):
            j = step + rng.randrange(n - step)
            order[step], order[j] = order[j], order[step]
            position = 1 + order[step]
            masked.append((position, out[position]))
            if rng.random() < 0.8:
                out[position] = MASK
            elif rng.random() >= 0.5:
                out[position] = cfg.replacement_ids[rng.randint(0, VOCAB - 1)]
        masked.sort()
        ours = masking.create_masked_lm_predictions(
            tokens, cfg, ours_rng, masking.PythonNgramSampler(random.Random(-1), 1))
        assert ours[:3] == (out, [p for p, _ in masked], [label for _, label in masked]), seed
        assert ours_rng.random() == rng.random()  # the same number of draws
