"""Streaming mode: output independent of the number of workers, bounded read-ahead, shuffling,
and the statistics of the original's records.

The comparison with the original clusters records by source document: records of one document
share its text and its per-pass target length, so they are not independent samples (see
`support.two_sample`).
"""

import collections
import hashlib
import itertools
import os
import signal
import threading

import pytest

from albert_tf.errors import WorkerDiedError
from albert_tf.pretraining_data import (corpus_blocks, documents, exact_original, parallel, sentence_tokens,
                                        stats, summary)
from albert_tf.pretraining_data.options import PretrainingDataOptions
from support import record_stats

MASK_ID = 4


class _ListWriter(list):
    write = list.append


@pytest.fixture(scope="module")
def small_input(tmp_path_factory, fixtures_dir):
    """The first ~120 KB of the fixture corpus (whole documents)."""
    text = (fixtures_dir / "create_pretraining_data" / "input.txt").read_text()
    cut = text.index("\n\n", 120_000) + 2
    path = tmp_path_factory.mktemp("parallel") / "input.txt"
    path.write_text(text[:cut])
    return str(path)


def _options(small_input, spm_model, **changes):
    base = dict(input_file=small_input, output_file="unused", spm_model_file=spm_model,
                max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2, random_seed=7,
                block_bytes=5_000, shuffle_buffer=100, num_workers=1)
    return PretrainingDataOptions(**{**base, **changes})


def _run(options):
    encoder = sentence_tokens.SentenceEncoder(options.make_tokenizer())
    writer, totals = _ListWriter(), summary.Totals()
    extra = parallel.write_records(options, [options.input_file], encoder, writer, totals)
    return writer, totals.record_stats, totals.doc_counts, extra


def test_identical_output_for_one_and_two_workers(small_input, spm_model):
    one, stats_one, docs_one, extra_one = _run(_options(small_input, spm_model, num_workers=1))
    two, stats_two, docs_two, extra_two = _run(_options(small_input, spm_model, num_workers=2))
    assert extra_one["blocks"] == extra_two["blocks"] > 3
    assert len(one) > 500
    assert hashlib.sha256(b"".join(one)).digest() == hashlib.sha256(b"".join(two)).digest()
    assert stats_one.as_dict() == stats_two.as_dict() and docs_one == docs_two


def test_output_follows_the_seed(small_input, spm_model):
    first, _, _, _ = _run(_options(small_input, spm_model, dupe_factor=1))
    again, _, _, _ = _run(_options(small_input, spm_model, dupe_factor=1))
    other, _, _, _ = _run(_options(small_input, spm_model, dupe_factor=1, random_seed=8))
    assert first == again and first != other


def test_dupe_passes_mask_differently(small_input, spm_model):
    records, _, _, _ = _run(_options(small_input, spm_model, dupe_factor=2, shuffle_buffer=0))
    assert len(set(records)) > 0.95 * len(records)


def test_read_ahead_is_bounded(small_input, spm_model):
    """Memory does not grow with the corpus: at most 2 × workers + 1 blocks are read ahead."""
    options = _options(small_input, spm_model, block_bytes=5_000)
    corpus = corpus_blocks.layout([small_input], [os.path.getsize(small_input)], 5_000)
    consumed = []

    def counted(blocks):
        for block in blocks:
            consumed.append(block)
            yield block

    processor = parallel.BlockProcessor(options, sentence_tokens.SentenceEncoder(options.make_tokenizer()),
                                        parallel.block_reader(options, corpus))
    results = parallel.process_blocks(counted(range(corpus.num_blocks)), processor, 2)
    for result in itertools.islice(results, 3):
        assert len(consumed) <= result.index + 1 + 2 * 2 + 1
    results.close()
    assert len(consumed) < 15


class _DiesOnBlock:
    """A processor whose worker is killed at one block, as the OOM killer or a crash would."""

    def __init__(self, fatal: int):
        self.fatal = fatal

    def __call__(self, index):
        if index == self.fatal:
            os.kill(os.getpid(), signal.SIGKILL)
        return index


def _within(seconds, call):
    """`call()`'s result, or its exception raised here; fails the test when it has not returned
    within `seconds` (it runs in a daemon thread, so a hang cannot block the suite)."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"no answer within {seconds} s: it hangs")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_a_worker_that_dies_is_an_error_not_a_hang():
    """The pool replaces a dead worker but never answers for its block: waiting on it hung a
    run (and the suite) before."""
    with pytest.raises(WorkerDiedError, match=r"worker process \(pid \d+\) died.*--num_workers"):
        _within(60, lambda: list(parallel.process_blocks(range(8), _DiesOnBlock(fatal=3), 2)))
    assert _within(60, lambda: list(parallel.process_blocks(range(4), _DiesOnBlock(fatal=-1),
                                                            2))) == [0, 1, 2, 3]


def test_shuffle_buffer_permutes_deterministically():
    out = []
    buffer = parallel.ShuffleBuffer(10, 3, out.append)
    buffer.extend(list(range(25)))
    buffer.extend(list(range(25, 40)))
    buffer.drain()
    again = []
    replay = parallel.ShuffleBuffer(10, 3, again.append)
    replay.extend(list(range(40)))
    replay.drain()
    assert sorted(out) == list(range(40)) and out != list(range(40)) and out == again
    passthrough = []
    parallel.ShuffleBuffer(0, 3, passthrough.append).extend([1, 2, 3])
    assert passthrough == [1, 2, 3]


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
    return base, matcher, original


def _streaming_records(base, **changes):
    writer = _run(PretrainingDataOptions(**{**base, **changes}))[0]
    return record_stats.parse_records(writer, 64, 10)


def test_original_records_are_matched_to_their_documents(fixture_setup):
    _, matcher, original = fixture_setup
    clusters = matcher.clusters(original)
    assert len(original) == 4527
    assert (clusters < 93).mean() > 0.99  # nearly every record traced to one of the 93 documents


def test_streaming_mode_has_the_statistics_of_the_original(fixture_setup):
    """Masked positions per instance, masked-run lengths, [MASK]/random/kept shares, sentence-order
    labels and segment lengths: none differs from the original's at p < 0.001."""
    base, matcher, original = fixture_setup
    ours = _streaming_records(base)
    results = record_stats.compare(original, ours, MASK_ID, matcher)
    assert set(results) == set(stats.OBSERVED)
    for name, result in results.items():
        assert result.p_value >= 1e-3, (name, result)


def test_the_comparison_flags_a_different_generator(fixture_setup):
    """The same comparison rejects output made without whole-word masking (runs are shorter) and
    with a lower masking rate."""
    base, matcher, original = fixture_setup
    piecewise = record_stats.compare(original, _streaming_records(base, do_whole_word_mask=False),
                              MASK_ID, matcher)
    assert piecewise["masked_run_lengths"].p_value < 1e-6
    sparse = record_stats.compare(original, _streaming_records(base, masked_lm_prob=0.12), MASK_ID, matcher)
    assert sparse["masked_per_instance"].p_value < 1e-6
