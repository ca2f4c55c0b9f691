"""SQuAD's in-graph WordPiece tokenization: the ids of the Python SQuAD features, and piece byte
spans that cover the raw characters the Python alignment (banded LCS) gives each piece."""

import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.tasks.squad import reader
from albert_tf.tasks.squad.alignment import align_paragraph
from albert_tf.text import WordpiecePreprocessor
from support.wordpiece_vocab import build_vocab

# Accents (stripped), mixed case, CJK with and without spaces, full-width and curly
# punctuation, Unicode spaces, format characters, final sigma, emoji.
CRAFTED = [
    "The Café “Zürich” opened on 3 May 1999 with 1,000.5 litres of ÉCOLE-grade naïve "
    "coffee.",
    "北京是中华人民共和国的首都，Beijing（北京）is its CAPITAL; 上海 is bigger. "
    "我爱你！",
    "Straße ΟΛΟΣ résumé\u00a0Ångström a\u200bb\ttab\nline "
    "Mixed-CASE McDonald's x²",
    "smile 😀 ok, «quoted» ¿qué? ¡sí! İstanbul e\u0301\u0327 end",
    "", " \t ",
]


def python_spans(pieces, text, do_lower_case):
    """Per piece, the raw (first char, end char) the Python SQuAD path cuts out (after its
    `strip()`), from the LCS alignment; the encoded ids."""
    encoded = tokenization.encode_pieces(pieces, tokenization.preprocess_text(
        text, lower=do_lower_case))
    ids = [pieces.PieceToId(p) for p in encoded]
    alignment = align_paragraph(text, encoded, do_lower_case) if encoded else None
    if alignment is None:
        return ids, None
    spans = []
    for start, end in zip(alignment.tok_start_to_orig_index, alignment.tok_end_to_orig_index):
        while start <= end and text[start].isspace():
            start += 1
        while end >= start and text[end].isspace():
            end -= 1
        spans.append((start, end + 1))
    return ids, spans


def char_spans(text, starts, ends):
    """Byte offsets → character offsets."""
    raw = text.encode()
    return [(len(raw[:s].decode()), len(raw[:e].decode())) for s, e in zip(starts, ends)]


@pytest.fixture(scope="module")
def paragraphs(data_dir):
    examples = reader.read_squad_examples(data_dir / "squad" / "v1.1" / "dev-v1.1.json", False)
    return list(dict.fromkeys(e.paragraph_text for e in examples))[:40:2]


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_ids_and_spans_equal_the_python_squad_path(paragraphs, do_lower_case, tmp_path):
    texts = paragraphs + CRAFTED
    # Every character SQuAD's normalisation leaves is in the vocabulary: no [UNK] (see below).
    build_vocab(tmp_path / "vocab.txt", [tokenization.preprocess_text(t) for t in texts],
                words=600, do_lower_case=do_lower_case)
    pieces = tokenization.WordpiecePieces(str(tmp_path / "vocab.txt"), do_lower_case)
    layer = WordpiecePreprocessor(str(tmp_path / "vocab.txt"), 64, do_lower_case)
    ids, starts, ends = layer.tokenize_with_offsets(tf.constant(texts))
    compared = 0
    for text, got, s, e in zip(texts, ids.to_list(), starts.to_list(), ends.to_list()):
        want_ids, want_spans = python_spans(pieces, text, do_lower_case)
        assert got == want_ids, text
        assert pieces.unk_id not in got
        if want_spans is None:  # empty: the Python path drops the question
            assert not text.strip() and got == []
            continue
        assert char_spans(text, s, e) == want_spans, text
        compared += len(got)
    assert compared > 2000


def test_spans_are_exact_where_the_alignment_guesses(tmp_path):
    """One raw character that becomes several words ("…" → ". . ."), a character dropped as a
    space ("¨"), unknown and over-long words ([UNK]): the Python alignment places these
    loosely (or drops the paragraph), the spans give their raw characters."""
    text = "capital… ﬁnal a¨x ☃ snow " + "x" * 201
    build_vocab(tmp_path / "vocab.txt", ["capital final a x snow ..."], words=50)
    layer = WordpiecePreprocessor(str(tmp_path / "vocab.txt"), 64, True)
    ids, starts, ends = layer.tokenize_with_offsets(tf.constant([text]))
    raw = text.encode()
    pieces = [raw[s:e].decode() for s, e in zip(starts.to_list()[0], ends.to_list()[0])]
    assert pieces == ["capital", "…", "…", "…", "ﬁnal", "a", "x", "☃", "snow", "x" * 201]
    vocab = tokenization.load_vocab(str(tmp_path / "vocab.txt"))
    unk = vocab["[UNK]"]
    assert [i == unk for i in ids.to_list()[0]] == [False] * 7 + [True, False, True]


def test_empty_batch_and_empty_strings(tmp_path):
    build_vocab(tmp_path / "vocab.txt", ["a b"], words=5)
    layer = WordpiecePreprocessor(str(tmp_path / "vocab.txt"), 8, True)
    for batch in ([], ["", " "]):
        ids, starts, ends = layer.tokenize_with_offsets(tf.constant(batch, tf.string))
        assert ids.to_list() == starts.to_list() == ends.to_list() == [[] for _ in batch]
