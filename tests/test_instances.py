"""Instances from documents: targets, A/B split, sentence order, random B, truncation."""

import random

import pytest

from albert_tf.pretraining_data import instances, masking

CLS_CODE, SEP_CODE = 2 * 2 + 1, 3 * 2 + 1
NO_MASK = masking.MaskingConfig(cls_code=CLS_CODE, sep_code=SEP_CODE, mask_id=4,
                                replacement_ids=tuple(range(100)), masked_lm_prob=0.0,
                                max_predictions_per_seq=20, do_whole_word_mask=True,
                                do_permutation=False, replay_unused_shuffle=True,
                                full_candidate_shuffle=True)


def _never():
    raise AssertionError("no n-gram draws without masking")


def _corpus(rng, docs=6):
    """Documents of sentences; each token code encodes (document, sentence, position)."""
    return [[[((d * 100 + s) * 100 + t) * 2 + 1 for t in range(rng.randint(1, 25))]
             for s in range(rng.randint(1, 8))] for d in range(docs)]


def _original_truncate(a, b, max_num_tokens, rng):
    while len(a) + len(b) > max_num_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


def _original_instances(documents, index, max_seq_length, short_seq_prob, random_next, rng):
    """Transcription of the original's `create_instances_from_document` (without masking)."""
    document = documents[index]
    max_num_tokens = max_seq_length - 3
    target = max_num_tokens
    if rng.random() < short_seq_prob:
        target = rng.randint(2, max_num_tokens)
    out, chunk, length, i = [], [], 0, 0
    while i < len(document):
        chunk.append(document[i])
        length += len(document[i])
        if i == len(document) - 1 or length >= target:
            a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
            a = sum(chunk[:a_end], [])
            b = []
            if len(chunk) == 1 or (random_next and rng.random() < 0.5):
                label = 1
                for _ in range(10):
                    other = rng.randint(0, len(documents) - 1)
                    if other != index:
                        break
                start = rng.randint(0, len(documents[other]) - 1)
                for sentence in documents[other][start:]:
                    b.extend(sentence)
                    if len(b) >= target - len(a):
                        break
                i -= len(chunk) - a_end
            elif not random_next and rng.random() < 0.5:
                label = 1
                a, b = sum(chunk[a_end:], []), a
            else:
                label = 0
                b = sum(chunk[a_end:], [])
            _original_truncate(a, b, max_num_tokens, rng)
            out.append(([CLS_CODE] + a + [SEP_CODE] + b + [SEP_CODE], len(a), label))
            chunk, length = [], 0
        i += 1
    return out


@pytest.mark.parametrize("random_next", [False, True])
@pytest.mark.parametrize("max_seq_length,short_seq_prob", [(64, 0.1), (20, 0.5), (5, 0.3)])
def test_same_instances_and_draws_as_a_transcription_of_the_original(random_next, max_seq_length,
                                                                       short_seq_prob):
    cfg = instances.InstanceConfig(max_seq_length, short_seq_prob, random_next)
    for seed in range(40):
        corpus = _corpus(random.Random(seed))
        ours_rng, theirs_rng = random.Random(seed), random.Random(seed)
        for index in range(len(corpus)):
            ours = instances.create_instances_from_document(corpus, index, cfg, NO_MASK, ours_rng, _never)
            theirs = _original_instances(corpus, index, max_seq_length, short_seq_prob, random_next,
                                         theirs_rng)
            assert [(i.input_ids, i.len_a, i.sentence_order_label) for i in ours] == \
                [([c >> 1 for c in t], la, lab) for t, la, lab in theirs]
        assert ours_rng.random() == theirs_rng.random()


def test_truncation_matches_in_place_deletion():
    for seed in range(200):
        rng = random.Random(seed)
        a, b = list(range(rng.randint(1, 40))), list(range(100, 100 + rng.randint(1, 40)))
        expected_a, expected_b = list(a), list(b)
        _original_truncate(expected_a, expected_b, 20, random.Random(seed))
        assert instances.truncate_seq_pair(a, b, 20, random.Random(seed)) == (expected_a, expected_b)


def test_single_sentence_document_gets_a_random_b_with_label_1():
    corpus = [[[11, 13, 15]], [[21, 23], [25, 27]]]
    cfg = instances.InstanceConfig(64, 0.0, False)
    result = instances.create_instances_from_document(corpus, 0, cfg, NO_MASK, random.Random(0), _never)
    assert len(result) == 1 and result[0].sentence_order_label == 1
    assert result[0].input_ids[:5] == [2, 5, 6, 7, 3]  # [CLS] A [SEP]
    assert set(result[0].input_ids[5:-1]) <= {10, 11, 12, 13}  # B from document 1


def test_two_sentence_document_gives_one_pair_in_some_order():
    corpus = [[[11, 12, 13], [15, 17]], [[21]]]  # codes = id * 2 + word start
    cfg = instances.InstanceConfig(64, 0.0, False)
    labels = set()
    for seed in range(20):
        (instance,) = instances.create_instances_from_document(corpus, 0, cfg, NO_MASK,
                                                               random.Random(seed), _never)
        first, second = [11, 12, 13], [15, 17]
        if instance.sentence_order_label:
            first, second = second, first
        codes = [5] + first + [7] + second + [7]
        assert instance.input_ids == [c >> 1 for c in codes]
        assert instance.token_boundary == [c & 1 for c in codes]
        assert instance.len_a == len(first)
        labels.add(instance.sentence_order_label)
    assert labels == {0, 1}


def test_too_short_max_seq_length_is_rejected():
    with pytest.raises(ValueError, match="at least 5"):
        instances.InstanceConfig(max_seq_length=4)
