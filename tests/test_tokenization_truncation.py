"""Sequence-pair truncation and packing of the classifier features."""

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


def test_truncation_pops_the_longer_list_ties_from_b():
    a, b = list("abcde"), list("xyz")
    tokenization.truncate_seq_pair(a, b, 5)
    assert (a, b) == (list("abc"), list("xy"))


def test_pack_pair_trims_then_packs_with_segments_and_leaves_its_inputs():
    a, b = list("abcde"), list("xyz")
    tokens, segments = tokenization.pack_pair(a, b, 8)
    assert tokens == ["[CLS]", "a", "b", "c", "[SEP]", "x", "y", "[SEP]"]
    assert segments == [0, 0, 0, 0, 0, 1, 1, 1]
    assert (a, b) == (list("abcde"), list("xyz"))
    tokens, segments = tokenization.pack_pair(list("abcdefgh"), None, 5)
    assert tokens == ["[CLS]", "a", "b", "c", "[SEP]"] and segments == [0] * 5
