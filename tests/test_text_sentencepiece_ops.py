"""In-graph SentencePiece encoding reproduces the original's digit-comma fix-up (Python 3 form)."""

import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf import tokenization
from albert_tf.text import sentencepiece_ops


def test_digit_comma_pieces_are_split_as_the_python_tokenizer(fixtures_dir):
    model_file = fixtures_dir / "spm" / "spm_digitcomma.model"
    processor = tokenization.load_sentencepiece(str(model_file))
    op = tf_text.SentencepieceTokenizer(model=model_file.read_bytes())
    texts = ["in 2005, 2006, and 1,000.5", "pay 12, then 3,4", "x 9,", "", "no digits here, ok"]
    # The model really yields digit-comma pieces, so the fix-up runs.
    assert "\u25812006," in processor.EncodeAsPieces(texts[0])
    assert "2," in processor.EncodeAsPieces(texts[1])
    got = sentencepiece_ops.encode_ids(op, tf.constant(texts)).to_list()
    for text, ids in zip(texts, got):
        assert ids == tokenization.encode_ids(processor, text), text
    assert processor.PieceToId("\u25812006,") not in got[0]
    # Python-3 form: the re-encoded "2006" keeps the "▁" that the re-encoding adds.
    assert got[0] != op.tokenize(texts[0]).numpy().tolist()


def test_pattern_uses_python_digits():
    texts = ["9,", "\u25819,", ",", "a,", "\u0663,", "\u00b2,", "12,x", "x9,", "\u2460,"]
    pieces = tf.constant(texts)
    match = tf.strings.regex_full_match(pieces, sentencepiece_ops.digit_comma_pattern())
    want = [len(p) > 1 and p[-1] == "," and p[-2].isdigit()
            for p in texts]
    assert match.numpy().tolist() == want
