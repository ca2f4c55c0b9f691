"""Streaming mode: output independent of the number of workers, bounded read-ahead, shuffling."""

import collections
import hashlib
import itertools

import pytest

from albert_tf.data import documents, parallel, sentence_tokens, stats
from albert_tf.data.pretraining_options import PretrainingDataOptions


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
    writer, record_stats, doc_counts = _ListWriter(), stats.RecordStatistics(), collections.Counter()
    extra = parallel.run(options, [options.input_file], encoder, writer, documents.InputCounters(),
                         doc_counts, record_stats, collections.Counter())
    return writer, record_stats, doc_counts, extra


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
    counters = documents.InputCounters()
    docs = documents.iter_documents(documents.iter_lines([small_input], counters), options.preprocess,
                                    counters)
    consumed = []

    def counted(blocks):
        for block in blocks:
            consumed.append(block.index)
            yield block

    processor = parallel.BlockProcessor(options, sentence_tokens.SentenceEncoder(options.make_tokenizer()))
    results = parallel.process_blocks(counted(parallel.iter_blocks(docs, 5_000, counters)), processor, 2)
    for result in itertools.islice(results, 3):
        assert len(consumed) <= result.index + 1 + 2 * 2 + 1
    results.close()
    assert len(consumed) < 15


def test_blocks_group_whole_documents_in_order():
    counters = documents.InputCounters()
    docs = [["a" * 6], ["b" * 3, "b"], ["c" * 10], ["d"]]
    blocks = list(parallel.iter_blocks(iter(docs), 8, counters))
    assert [b.documents for b in blocks] == [docs[:2], docs[2:3], docs[3:]]
    assert [b.first_document for b in blocks] == [0, 2, 3]


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
