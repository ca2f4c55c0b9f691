"""Record statistics, and the streaming mode compared with the original's records (issue 4).

The comparison clusters records by source document: records of one document share its text and
its per-pass target length, so they are not independent samples (see `support.two_sample`).
"""

import collections
import pickle

import pytest

from albert_tf.data import documents, exact_original, parallel, sentence_tokens, stats
from support import record_stats
from albert_tf.data.pretraining_options import PretrainingDataOptions

MASK_ID = 4


class _ListWriter(list):
    write = list.append


def test_instance_observations():
    ids = [2, 4, 4, 9, 3, 4, 50, 3]  # [CLS] A(3) [SEP] B(2) [SEP]
    observed = stats.instance_observations(ids, 3, [1, 2, 3, 5, 6], [7, 8, 9, 10, 11], 1, MASK_ID)
    assert observed == {
        "masked_per_instance": [5], "masked_run_lengths": [3, 2], "replacements": [0, 0, 2, 0, 1],
        "sentence_order_labels": [1], "segment_a_lengths": [3], "segment_b_lengths": [2]}


def test_record_statistics_merge_pickle_and_summary():
    a, b = stats.RecordStatistics(), stats.RecordStatistics()
    a.add([2, 4, 5, 3, 6, 3], 2, [1], [9], 0, MASK_ID)
    b.add([2, 5, 3, 6, 4, 3], 1, [3, 4], [6, 8], 1, MASK_ID)
    b = pickle.loads(pickle.dumps(b))
    a.merge(b)
    summary = a.as_dict()
    assert summary["instances"] == 2 and summary["tokens"] == 12 and summary["masked_tokens"] == 3
    assert summary["masked_fraction"] == 0.25
    assert summary["masked_run_length_histogram"] == {"1": 1, "2": 1}
    assert summary["replacement_shares"] == {"mask": 2 / 3, "random": 0.0, "kept": 1 / 3}
    assert summary["sentence_order_swapped_fraction"] == 0.5


@pytest.fixture(scope="module")
def fixture_setup(fixtures_dir, spm_model):
    folder = fixtures_dir / "create_pretraining_data"
    base = dict(input_file=str(folder / "input.txt"), output_file="unused", spm_model_file=spm_model,
                max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2, masked_lm_prob=0.15,
                ngram=3, random_seed=12345, num_workers=1)
    encoder = sentence_tokens.SentenceEncoder(PretrainingDataOptions(**base).make_tokenizer())
    corpus = exact_original.read_corpus([base["input_file"]], PretrainingDataOptions(**base), encoder,
                                        documents.InputCounters(), collections.Counter())
    matcher = record_stats.DocumentMatcher([[code >> 1 for sentence in doc for code in sentence] for doc in corpus])
    original = record_stats.read_tfrecords([folder / "pretraining_data.tfrecord"], 64, 10)
    return base, encoder, matcher, original


def _streaming_records(base, encoder, **changes):
    options = PretrainingDataOptions(**{**base, **changes})
    writer = _ListWriter()
    parallel.run(options, [options.input_file], encoder, writer, documents.InputCounters(),
                 collections.Counter(), stats.RecordStatistics(), collections.Counter())
    return record_stats.parse_records(writer, 64, 10)


def test_original_records_are_matched_to_their_documents(fixture_setup):
    _, _, matcher, original = fixture_setup
    clusters = matcher.clusters(original)
    assert len(original) == 4527
    assert (clusters < 93).mean() > 0.99  # nearly every record traced to one of the 93 documents


def test_streaming_mode_has_the_statistics_of_the_original(fixture_setup):
    """Masked positions per instance, masked-run lengths, [MASK]/random/kept shares, sentence-order
    labels and segment lengths: none differs from the original's at p < 0.001."""
    base, encoder, matcher, original = fixture_setup
    ours = _streaming_records(base, encoder)
    results = record_stats.compare(original, ours, MASK_ID, matcher)
    assert set(results) == set(stats.OBSERVED)
    for name, result in results.items():
        assert result.p_value >= 1e-3, (name, result)


def test_the_comparison_flags_a_different_generator(fixture_setup):
    """The same comparison rejects output made without whole-word masking (runs are shorter) and
    with a lower masking rate."""
    base, encoder, matcher, original = fixture_setup
    piecewise = record_stats.compare(original, _streaming_records(base, encoder, do_whole_word_mask=False),
                              MASK_ID, matcher)
    assert piecewise["masked_run_lengths"].p_value < 1e-6
    sparse = record_stats.compare(original, _streaming_records(base, encoder, masked_lm_prob=0.12), MASK_ID, matcher)
    assert sparse["masked_per_instance"].p_value < 1e-6
