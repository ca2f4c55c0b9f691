"""albert_tf.text.unigram: the wheel's segmentation in TensorFlow ops, ties included."""

import itertools

import pytest
import sentencepiece as spm
import tensorflow as tf

from albert_tf.text import unigram
from albert_tf.tokenization import TokenizerError

tensorflow_text = pytest.importorskip("tensorflow_text", reason="the op normalizes the text")

PREFIXES = ["", "a ", "the ", "http://", "fa\u00e7ade costs 0, today", "Visit "]
BODIES = ["www", "www.example.org", "https://www.example.org/path?x=1&y=2#frag", "wwwwww",
          "aaaa", "eeee", "ooo", "lll", "ssss", "mississippi"]


def _wheel_and_ours(model_file):
    proto = open(model_file, "rb").read()
    wheel = spm.SentencePieceProcessor(model_file=str(model_file))
    ours = unigram.WheelSentencepiece(tensorflow_text, proto, str(model_file))
    return wheel, ours, tf.function(ours.tokenize)


def _check(model_file, texts):
    wheel, ours, tokenize = _wheel_and_ours(model_file)
    got = tokenize(tf.constant(texts, tf.string)).to_list()
    assert got == [wheel.encode_as_ids(text) for text in texts]
    return wheel, ours


def test_vocab_has_the_models_pieces_scores_and_unknown(spm_model):
    processor = spm.SentencePieceProcessor(model_file=spm_model)
    vocab = unigram.read_unigram_vocab(open(spm_model, "rb").read(), spm_model)
    matchable = [i for i in range(processor.GetPieceSize())
                 if not (processor.IsControl(i) or processor.IsUnknown(i) or processor.IsUnused(i))]
    assert list(vocab.ids) == matchable
    assert [processor.IdToPiece(i) for i in vocab.ids] == list(vocab.pieces)
    # The original's user-defined symbols ( ) " - . – £ € (score 0 in the model) get the
    # wheel's bonus, bytes x the highest normal score (negative here, so FLT_MIN) - 0.1.
    user_defined = [p for i, p in zip(vocab.ids, vocab.pieces) if processor.GetScore(i) == 0.0]
    assert user_defined == list('()"-.\u2013\u00a3\u20ac')
    for i, piece, score in zip(vocab.ids, vocab.pieces, vocab.scores):
        want = processor.GetScore(i) if piece not in user_defined else -0.1
        assert score == pytest.approx(want, abs=1e-7), piece
    assert vocab.unknown_id == processor.unk_id()
    assert vocab.unknown_score == pytest.approx(min(vocab.scores) - 10.0)
    assert vocab.max_piece_chars == max(len(p) for p in vocab.pieces)


def test_ids_are_the_wheels_where_the_op_breaks_a_tie_differently(spm_model):
    texts = [prefix + body for prefix, body in itertools.product(PREFIXES, BODIES)]
    wheel, ours = _check(spm_model, texts)
    op = ours.ids_op.tokenize(tf.constant(texts)).to_list()
    # The check can fail: on some of these texts the op alone gives other ids.
    assert sum(ids != wheel.encode_as_ids(text) for text, ids in zip(texts, op)) >= 2


def test_real_text_unknown_runs_and_empty_strings(spm_model, fixtures_dir):
    lines = (fixtures_dir / "create_pretraining_data" / "input.txt").read_text("utf-8").splitlines()
    texts = [line for line in lines if line.strip()][:200]
    texts += ["\u9f98\u9f98 ab\u9f98c \u9f98", "", " ", "  a   b  ", "\u00e9t\u00e9 na\u00efve \uff21\uff22"]
    _check(spm_model, texts)
    _, ours, tokenize = _wheel_and_ours(spm_model)
    assert tokenize(tf.constant([], tf.string)).to_list() == []


def test_user_defined_symbols_keep_the_wheels_bonus(tmp_path, fixtures_dir):
    spm.SentencePieceTrainer.train(
        input=str(fixtures_dir / "create_pretraining_data" / "input.txt"),
        model_prefix=str(tmp_path / "ud"), vocab_size=300, character_coverage=0.98,
        user_defined_symbols=["<url>", "www", "[MASK2]"], control_symbols=["[CLS]", "[SEP]"],
        minloglevel=2)
    texts = ["<url> www.example.org wwwww [MASK2]x", "ab<url>cd", "[CLS] [SEP] <unk> <s>",
             "\u9f98 zebra quixotic"] + [prefix + body for prefix, body in itertools.product(PREFIXES, BODIES)]
    _check(tmp_path / "ud.model", texts)


def test_a_bpe_model_keeps_the_ops_segmentation(tmp_path, fixtures_dir):
    spm.SentencePieceTrainer.train(
        input=str(fixtures_dir / "create_pretraining_data" / "input.txt"),
        model_prefix=str(tmp_path / "bpe"), vocab_size=300, model_type="bpe", minloglevel=2)
    proto = (tmp_path / "bpe.model").read_bytes()
    assert unigram.read_unigram_vocab(proto, "bpe.model") is None
    _, ours, tokenize = _wheel_and_ours(tmp_path / "bpe.model")
    assert ours.search is None
    texts = tf.constant(["the quick brown fox", "www.example.org"])
    assert tokenize(texts).to_list() == ours.ids_op.tokenize(texts).to_list()


def test_a_damaged_model_is_named():
    with pytest.raises(TokenizerError, match="broken.model"):
        unigram.read_unigram_vocab(b"\x0a\xff\xff\xff", "broken.model")
