"""Record statistics of the run summary: what one record contributes, merging, pickling."""

import pickle

from albert_tf.pretraining_data import stats

MASK_ID = 4


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
