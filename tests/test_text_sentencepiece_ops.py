"""In-graph SentencePiece encoding reproduces the original's digit-comma fix-up (Python 3 form)."""

import tensorflow as tf
import tensorflow_text as tf_text

from albert_tf import tokenization
from albert_tf.text import sentencepiece_ops
from albert_tf.train_spm import train_sentencepiece


def test_digit_comma_pieces_are_split_as_the_python_tokenizer(fixtures_dir):
    model_file = fixtures_dir / "spm" / "spm_digitcomma.model"
    processor = tokenization.load_sentencepiece(str(model_file))
    op = tf_text.SentencepieceTokenizer(model=model_file.read_bytes())
    texts = ["in 2005, 2006, and 1,000.5", "pay 12, then 3,4", "x 9,", "", "no digits here, ok"]
    # The model really yields digit-comma pieces, so the fix-up runs.
    assert "\u25812006," in processor.EncodeAsPieces(texts[0])
    assert "2," in processor.EncodeAsPieces(texts[1])
    table = sentencepiece_ops.digit_comma_table(processor)
    comma = sentencepiece_ops.comma_id(processor)
    got = sentencepiece_ops.encode_ids(op, tf.constant(texts), table, comma).to_list()
    # Batches without any flagged piece take the short branch.
    plain = sentencepiece_ops.encode_ids(op, tf.constant(texts[3:]), table, comma).to_list()
    assert plain == got[3:]
    for text, ids in zip(texts, got):
        assert ids == tokenization.encode_ids(processor, text), text
    assert processor.PieceToId("\u25812006,") not in got[0]
    # Python-3 form: the re-encoded "2006" keeps the "▁" that the re-encoding adds.
    assert got[0] != op.tokenize(texts[0]).numpy().tolist()


def test_table_flags_pieces_by_the_python_rule(fixtures_dir):
    processor = tokenization.load_sentencepiece(str(fixtures_dir / "spm" / "spm_digitcomma.model"))
    table = sentencepiece_ops.digit_comma_table(processor)
    flagged = {processor.IdToPiece(i) for i in range(len(table)) if table[i]}
    # The fixture model was trained with 11 digit-comma pieces added, and nothing else.
    assert flagged == {"0,", "1,", "2,", "5,", "00,", "000,", "\u25811,", "\u25813,", "\u258110,",
                       "2005,", "\u25812006,"}
    plain = tokenization.load_sentencepiece(str(fixtures_dir / "spm" / "spm.model"))
    assert not sentencepiece_ops.digit_comma_table(plain).any()
    assert tokenization.is_digit_comma_piece("\u0663,") and tokenization.is_digit_comma_piece("\u00b2,")
    assert not tokenization.is_digit_comma_piece(",") and not tokenization.is_digit_comma_piece("a,")


def test_a_model_without_a_comma_needs_no_fix_up(tmp_path):
    # A text with no comma trains a model with no "," piece (and no piece ending in one): the
    # in-graph tokenizer (a classifier's serve_text export) used to refuse it.
    text = tmp_path / "text.txt"
    text.write_text("\n".join(f"the river ran past {n} old mills and quiet farms" for n in range(300)))
    prefix = str(tmp_path / "spm")
    train_sentencepiece([str(text)], prefix, 50)
    processor = tokenization.load_sentencepiece(prefix + ".model")
    assert processor.IsUnknown(processor.PieceToId(","))
    comma = sentencepiece_ops.comma_id(processor)
    assert comma == processor.unk_id()
    tokenizer = tf_text.SentencepieceTokenizer(open(prefix + ".model", "rb").read())
    got = sentencepiece_ops.encode_ids(tokenizer, tf.constant(["the river, 12, ran"]),
                                       tf.constant(sentencepiece_ops.digit_comma_table(processor)),
                                       comma)
    assert got.to_list()[0] == processor.EncodeAsIds("the river, 12, ran")
