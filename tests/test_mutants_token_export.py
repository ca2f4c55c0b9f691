"""serve_text's windows in the token classifier's export (its graph) against run_ner.py's own
features, piece for piece: the export's [CLS] written as [SEP], or a word's home window picked
with its right-hand context one larger, changed the tags it served and passed the export tests
(their models tag most words alike)."""

import types

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.tasks.token_classification.export import TokenServing
from albert_tf.tasks.token_classification.features import sentence_windows

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
