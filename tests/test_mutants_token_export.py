"""serve_text's windows in the token classifier's export (its graph) against run_ner.py's own
features, piece for piece: the export's [CLS] written as [SEP], or a word's home window picked
with its right-hand context one larger, changed the tags it served and passed the export tests
(their models tag most words alike)."""

import re
import types

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.tasks.token_classification.export import TokenServing
from albert_tf.tasks.token_classification.features import sentence_windows
from albert_tf.text import optional as text_optional

CLS, SEP = 2, 3


def _serving(max_seq_length, stride):
    serving = TokenServing.__new__(TokenServing)  # only the windowing: no model, no tokenizer
    serving.max_seq_length, serving.doc_stride = max_seq_length, stride
    serving.preprocessor = types.SimpleNamespace(cls_id=CLS, sep_id=SEP)
    return serving


# (8, 2) and (10, 4): window and stride of even sum, where a word can sit one piece nearer the
# middle of the later window (the home-window tie-break decides).
@pytest.mark.parametrize("max_seq_length, stride", [(8, 3), (6, 1), (16, 7), (8, 2), (10, 4)])
def test_serve_text_windows_are_run_ners_features(max_seq_length, stride):
    rng = np.random.RandomState(max_seq_length)
    # Texts short (one window) and long (several), words of one to three pieces.
    texts = [[[int(p) for p in rng.randint(10, 99, rng.randint(1, 4))] for _ in range(words)]
             for words in (2, 9, 1, 14, 6, 20)]
    want_ids, want_mask, want_where = [], [], []
    for text in texts:
        records = sentence_windows(0, text, None, max_seq_length, stride, CLS, SEP)
        first_window = len(want_ids)
        for k, record in enumerate(records):
            want_ids.append(record["input_ids"])
            want_mask.append(record["input_mask"])
        for word in range(len(text)):
            (home,) = [(first_window + k, at) for k, record in enumerate(records)
                       for at, (w, top) in enumerate(zip(record["word_ids"],
                                                         record["is_max_context"]))
                       if w == word and top]
            want_where.append(home)
    words = [word for text in texts for word in text]
    ids, mask, where = _serving(max_seq_length, stride)._windows(
        tf.constant([p for word in words for p in word], tf.int32),
        tf.constant([len(word) for word in words], tf.int64),
        tf.constant([t for t, text in enumerate(texts) for _ in text], tf.int64),
        tf.constant(len(texts), tf.int64))
    assert len(want_ids) > len(texts)  # some text was split into several windows
    assert ids.numpy().tolist() == want_ids
    assert mask.numpy().tolist() == want_mask
    assert where.numpy().tolist() == [list(w) for w in want_where]
    assert all(row[0] == CLS for row in want_ids)


@pytest.mark.skipif(not text_optional.available(), reason="needs tensorflow-text")
def test_serve_text_words_are_str_splits_with_their_byte_offsets():
    """The words serve_text tags are str.split()'s, as run_ner.py's and every runner's:
    tensorflow-text's WhitespaceTokenizer, which it used before, ended a word before a multi-byte
    space with that space's first bytes ("a\u00a0b" gave b"a\xc2") and kept "\x1f" inside a
    word; its regex split stops at a NUL, which the words keep."""
    texts = ["a\u00a0b", "x\u3000y\u2003z ", "one\x1ftwo", "null\x00char here", "", " \t\n",
             "Café  brûlée\u2028ü"]
    words, starts, ends = TokenServing._words(tf.constant(texts))
    assert [[w.decode("utf-8") for w in row] for row in words.to_list()] == [
        t.split() for t in texts]
    spans = [[(len(t[:m.start()].encode()), len(t[:m.end()].encode()))
              for m in re.finditer(r"\S+", t)] for t in texts]
    assert [list(zip(s, e)) for s, e in zip(starts.to_list(), ends.to_list())] == spans
