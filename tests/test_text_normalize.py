"""TF-ops `preprocess_text` equals the Python one on every golden text and on tricky characters."""

import json

import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.text import normalize


@pytest.mark.parametrize("lower", [True, False])
def test_matches_golden_preprocessed_text(fixtures_dir, lower):
    golden = json.loads((fixtures_dir / "tokenization" / "tokenization_golden.json").read_text("utf-8"))
    texts = [case["text"] for case in golden["cases"]]
    got = normalize.preprocess_text(tf.constant(texts), lower=lower).numpy()
    key = f"preprocess_text(lower={lower})+tokenize"
    for case, text in zip(golden["cases"], got):
        assert text.decode("utf-8") == case[key]["preprocessed"], ascii(case["text"])


def test_python_character_classes():
    texts = ["\u3000a\u2028b\x1cc\x85 ", "NUL\x00Ins\u00cfde\x00", "\u039f\u0394\u039f\u03a3 \u03a3",
             "\ufb01ne \u2460 x\u0301\u0327", "\u1e9e\u0130", "a\u034fb\u0e31c", "\u00a0"]
    for lower in (True, False):
        got = normalize.preprocess_text(tf.constant(texts), lower=lower).numpy()
        assert [t.decode("utf-8") for t in got] == [
            tokenization.preprocess_text(t, lower=lower) for t in texts]


def test_invalid_utf8_is_dropped_like_the_python_decoder():
    raw = b"caf\xc3\xa9 \xff\xfe ok"
    got = normalize.preprocess_text(tf.constant([raw]), lower=True).numpy()[0]
    assert got.decode("utf-8") == tokenization.preprocess_text(raw, lower=True)
