"""Words → pieces → windows: every word of a long sentence is tagged from exactly one window
(its first piece, where it has the most context), every piece is in a window, and a word
without pieces still gets one."""

import numpy as np
import pytest

from albert_tf import tokenization
from albert_tf.tasks.token_classification import features as F
from albert_tf.tasks.token_classification.data import Sentence


def test_windows_cover_every_piece():
    assert F.windows(5, 10, 4) == [(0, 5)]
    assert F.windows(10, 10, 4) == [(0, 10)]
    assert F.windows(11, 10, 4) == [(0, 10), (4, 7)]
    assert F.windows(30, 6, 4) == [(0, 6), (4, 6), (8, 6), (12, 6), (16, 6), (20, 6), (24, 6)]
    for n in range(1, 60):
        for length, stride in ((6, 1), (6, 4), (6, 6), (13, 5)):
            spans = F.windows(n, length, stride)
            covered = {i for start, size in spans for i in range(start, start + size)}
            assert covered == set(range(n)) and spans[-1][0] + spans[-1][1] == n


def test_home_window_has_the_most_context():
    spans = F.windows(30, 6, 4)
    # piece 9: in windows 1 (4..9, context 0 after), 2 (8..13: 1 before, 4 after) → 2
    assert F.home_window(9, spans) == 2
    # piece 10: window 2 (2 before, 3 after) beats window 1 (absent) and 3 (12..: absent)
    assert F.home_window(10, spans) == 2
    # piece 5: window 0 (5 before, 0 after) loses to window 1 (1 before, 4 after)
    assert F.home_window(5, spans) == 1
    # a tie (windows 0..5 and 3..8; piece 4 has 1 on its shorter side in both): the earlier
    assert F.windows(9, 6, 3) == [(0, 6), (3, 6)] and F.home_window(4, F.windows(9, 6, 3)) == 0
    assert F.home_window(0, spans) == 0 and F.home_window(29, spans) == 6


def test_every_word_of_a_long_sentence_is_tagged_once():
    rng = np.random.default_rng(0)
    word_ids = [list(rng.integers(10, 90, rng.integers(1, 4))) for _ in range(40)]
    labels = list(rng.integers(0, 5, 40))
    records = F.sentence_windows(3, word_ids, labels, max_seq_length=12, stride=4, cls_id=2,
                                 sep_id=3)
    assert len(records) > 5  # ~80 pieces in windows of 10
    homes = {}
    for k, record in enumerate(records):
        ids, mask = record["input_ids"], record["input_mask"]
        assert ids[0] == 2 and ids[sum(mask) - 1] == 3 and len(ids) == 12
        assert record["example_index"] == 3
        for position, word in enumerate(record["word_ids"]):
            if word < 0:
                assert record["label_ids"][position] == -1
                continue
            assert ids[position] == word_ids[word][0]  # the word's first piece
            assert record["label_ids"][position] == labels[word]  # trained in every window
            if record["is_max_context"][position]:
                assert word not in homes
                homes[word] = k
    assert sorted(homes) == list(range(40))


def test_word_pieces_of_each_word(spm_model):
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    pieces = F.WordPieces(tokenizer)
    assert pieces("Hello") == tokenizer.convert_tokens_to_ids(
        tokenizer.tokenize(tokenization.preprocess_text("Hello", lower=True)))
    # Empty and blank tokens (real tweet corpora have them) become one unknown piece.
    assert pieces("") == pieces(" ") == [tokenizer.sp_model.unk_id()]
    assert (pieces.cls_id, pieces.sep_id) == tuple(tokenizer.convert_tokens_to_ids(["[CLS]",
                                                                                     "[SEP]"]))


def test_records_of_a_file_without_tags(spm_model):
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    sentences = [Sentence(["a", "b"], None, [1, 2], "t"), Sentence(["c"], None, [4], "t")]
    records = list(F.sentence_records(sentences, ["O"], F.WordPieces(tokenizer), 16, 4))
    assert [r["example_index"] for r in records] == [0, 1]
    assert all(label == -1 for r in records for label in r["label_ids"])
    assert [sum(r["is_max_context"]) for r in records] == [2, 1]


@pytest.mark.parametrize("split", ["train", "dev"])
def test_cache_round_trip(tmp_path, spm_model, split):
    import tensorflow as tf

    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    sentences = [Sentence(["Peter", "Blackburn", "in", "Brussels"], ["B-PER", "I-PER", "O",
                                                                     "B-LOC"], [1, 2, 3, 4], "t")]
    labels = ["B-LOC", "B-PER", "I-PER", "O"]
    path = str(tmp_path / "f.tf_record")
    source = tmp_path / "src"
    source.write_text("x")
    key = F.cache_key(split, str(source), 8, 2, tokenizer, True, labels)
    count = F.cached_features(sentences, labels, F.WordPieces(tokenizer), 8, 2, path, key)
    batches = list(F.input_fn_builder(path, 8, False)(64))
    assert count == len(batches[0]["input_ids"]) > 1
    got = batches[0]
    assert got["input_ids"].dtype == tf.int32
    homes = got["word_ids"].numpy()[got["is_max_context"].numpy() == 1]
    assert sorted(homes.tolist()) == [0, 1, 2, 3]


def test_sentences_held_in_memory_give_the_file_s_records(tmp_path, spm_model):
    """`record_arrays` (TokenClassifier's sentences, no file) holds what the feature file of
    the same sentences reads back as, window for window (the long sentence has several)."""
    from albert_tf.tasks.inference import array_batches

    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    sentences = [Sentence(["Peter", "Blackburn", "in", "Brussels"] * 3, ["B-PER", "I-PER", "O",
                                                                         "B-LOC"] * 3,
                          list(range(1, 13)), "t"),
                 Sentence(["EU", "rejects"], ["B-ORG", "O"], [14, 15], "t")]
    labels = ["B-LOC", "B-ORG", "B-PER", "I-PER", "O"]
    pieces = F.WordPieces(tokenizer)
    path = str(tmp_path / "f.tf_record")
    (tmp_path / "src").write_text("x")
    key = F.cache_key("dev", str(tmp_path / "src"), 10, 3, tokenizer, True, labels)
    count = F.cached_features(sentences, labels, pieces, 10, 3, path, key)
    arrays = F.record_arrays(F.sentence_records(sentences, labels, pieces, 10, 3))
    assert count == len(arrays["input_ids"]) > 2
    batches = list(array_batches(arrays, 3))
    reads = list(F.input_fn_builder(path, 10, False)(3))
    assert len(batches) == len(reads)
    for batch, read in zip(batches, reads):
        assert set(batch) == set(read)
        for name in read:
            assert batch[name].dtype == read[name].dtype
            np.testing.assert_array_equal(batch[name].numpy(), read[name].numpy())
