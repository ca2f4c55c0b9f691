"""Raw text ↔ SentencePiece piece alignment (banded LCS + nearest-neighbour index rule)."""

import pytest

from albert_tf.tasks.squad import alignment
from albert_tf.tokenization import encode_pieces, load_sentencepiece, preprocess_text


def test_convert_index_rules():
    index = [None, 5, None, None, 9, None]
    assert alignment.convert_index(index, 1) == 5
    assert alignment.convert_index(index, 0, is_start=True) == 0          # nothing on the left
    assert alignment.convert_index(index, 0, is_start=False) == 4
    assert alignment.convert_index(index, 2, is_start=True) == 6          # gap between 5 and 9
    assert alignment.convert_index(index, 2, is_start=False) == 8
    assert alignment.convert_index(index, 5, upper=12, is_start=True) == 10  # nothing on the right
    assert alignment.convert_index(index, 5, upper=12, is_start=False) == 11
    assert alignment.convert_index(index, 5, is_start=False) == 9
    assert alignment.convert_index([3, None, 4], 1, is_start=True) == 4   # no gap
    assert alignment.convert_index([3, None, 4], 1, is_start=False) == 3
    with pytest.raises(ValueError, match="no mapped position around 0"):
        alignment.convert_index([None, None], 0)


def test_alignment_recovers_raw_text_through_accents_and_ligatures(spm_model):
    sp = load_sentencepiece(spm_model)
    raw = "The ﬁrst Café “Zürich” sold 1,000.5 litres."
    pieces = encode_pieces(sp, preprocess_text(raw, lower=True))
    aligned = alignment.align_paragraph(raw, pieces, do_lower_case=True)
    texts = [raw[s:e + 1] for s, e in zip(aligned.tok_start_to_orig_index,
                                         aligned.tok_end_to_orig_index)]
    assert "".join(texts).replace(" ", "") == raw.replace(" ", "")
    start = raw.index("Café")
    first, last = alignment.answer_token_span(aligned, start, "Café")
    assert raw[aligned.tok_start_to_orig_index[first]:aligned.tok_end_to_orig_index[last] + 1] == "Café"


def test_unalignable_and_empty_paragraphs_fail():
    assert alignment.align_paragraph("", [], do_lower_case=True) is None
    assert alignment.align_paragraph("abcdef", ["▁xyz"], do_lower_case=True) is None
