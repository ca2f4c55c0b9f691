"""Sequence-pair truncation of the classifier features."""

from albert_tf import tokenization


def test_a_pair_that_fits_is_left_alone_and_ties_trim_b_first():
    a, b = list("ab"), list("xy")
    assert tokenization.truncate_seq_pair(a, b, 4) is None
    assert (a, b) == (list("ab"), list("xy"))
    tokenization.truncate_seq_pair(a, b, 2)
    assert (a, b) == (list("a"), list("x"))
    a, b = list("abcdef"), []
    tokenization.truncate_seq_pair(a, b, 3)
    assert (a, b) == (list("abc"), [])
