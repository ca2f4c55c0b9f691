"""The shared text rules: the original's preprocess_text normalisation."""

from albert_tf import tokenization


def test_preprocess_text_strips_accents_even_without_lower_casing():
    assert tokenization.preprocess_text("  Caf\u00e9\t\u00a0 \ufb01 ") == "Cafe fi"
    assert tokenization.preprocess_text(b"Caf\xc3\xa9", lower=True) == "cafe"
    assert tokenization.preprocess_text("a  b", remove_space=False) == "a  b"
