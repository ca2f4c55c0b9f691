"""Token codes: ids equal to the original tokenizer's, word-start flags per the original's rules."""

import json
import pickle

import pytest

from albert_tf import tokenization
from albert_tf.pretraining_data import sentence_tokens


@pytest.fixture(scope="module")
def tokenizer(spm_model):
    return tokenization.FullTokenizer(vocab_file=None, do_lower_case=True, spm_model_file=spm_model)


def _golden(fixtures_dir, name):
    return json.loads((fixtures_dir / "tokenization" / name).read_text())["cases"]


@pytest.mark.parametrize("golden_file,model", [
    ("tokenization_golden.json", "spm.model"),
    ("tokenization_golden_digitcomma.json", "spm_digitcomma.model"),
])
@pytest.mark.parametrize("lower", [True, False])
def test_codes_carry_the_golden_ids(fixtures_dir, golden_file, model, lower):
    """The batch fast path (and its piece-by-piece fallback) gives the original's ids."""
    full = tokenization.FullTokenizer(None, True, str(fixtures_dir / "spm" / model))
    encoder = sentence_tokens.SentenceEncoder(full)
    cases = _golden(fixtures_dir, golden_file)
    key = f"preprocess_text(lower={lower})+tokenize"
    texts = [sentence_tokens.preprocess_line(c["text"], lower) for c in cases]
    assert texts == [c[key]["preprocessed"] for c in cases]
    for case, codes in zip(cases, encoder.encode(texts)):
        assert [c >> 1 for c in codes] == case[key]["ids"], case["text"]
        starts = [int(sentence_tokens.is_start_piece_sp(p)) for p in case[key]["pieces"]]
        assert [c & 1 for c in codes] == starts, case["text"]


def test_start_piece_rules_sentencepiece():
    start = sentence_tokens.is_start_piece_sp
    assert start("▁the") and start("<unk>") and start(",") and start("(")
    assert not start("ing") and not start("s")
    # The original's set misses the apostrophe: a piece with one is a word start.
    assert start("'s") and start("'")
    # Digits and non-ASCII letters always start a word; so do = < > ' (not in the set).
    assert start("9") and start("é") and start("€") and start("=")
    # Pure a-z/punctuation continuation pieces, even with several punctuation marks.
    assert not start("a.b") and not start(".,")


def test_start_piece_rules_wordpiece():
    assert sentence_tokens.is_start_piece_bert("the")
    assert not sentence_tokens.is_start_piece_bert("##ing")


@pytest.mark.parametrize("text", [
    "  Hello   World\t", "ÉCOLE Ça va", "a\u0301b", "\u0301", "x\x1cy", "Ünïcödé  \u3000 spaces", "",
    "\ufeffBOM", "ﬁne", "ALL CAPS 123",
])
@pytest.mark.parametrize("lower", [True, False])
def test_preprocess_line_equals_preprocess_text(text, lower):
    assert sentence_tokens.preprocess_line(text, lower) == tokenization.preprocess_text(text, lower=lower)


def test_specials_and_replacement_ids(tokenizer):
    encoder = sentence_tokens.SentenceEncoder(tokenizer)
    assert (encoder.cls_id, encoder.sep_id, encoder.mask_id) == (2, 3, 4)
    assert encoder.cls_code & 1 and encoder.sep_code & 1
    # vocab_words[k] → id k for every piece of a SentencePiece vocabulary.
    assert encoder.replacement_ids == list(range(encoder.vocab_size)) and encoder.vocab_size == 1500


def test_encoder_survives_pickling(tokenizer):
    encoder = sentence_tokens.SentenceEncoder(tokenizer)
    clone = pickle.loads(pickle.dumps(encoder))
    texts = ["the quick brown fox, 1,000 times.", "£5 costs €6 $"]
    assert clone.encode(texts) == encoder.encode(texts)


def test_empty_sentence_gives_no_codes(tokenizer):
    assert sentence_tokens.SentenceEncoder(tokenizer).encode(["", "a"])[0] == []
