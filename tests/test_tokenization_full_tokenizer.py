"""FullTokenizer: every variant of the original's golden tokenization, quirks and clear errors."""

import json

import pytest

from albert_tf import tokenization

GOLDEN_FILES = {
    "tokenization_golden.json": "spm.model",
    "tokenization_golden_digitcomma.json": "spm_digitcomma.model",
}
VARIANTS = {
    "do_lower_case=True", "do_lower_case=False", "preprocess_text(lower=True)+tokenize",
    "preprocess_text(lower=False)+tokenize", "encode_ids(preprocess_text(lower=True))",
}


@pytest.mark.parametrize("golden_name", sorted(GOLDEN_FILES))
def test_every_golden_case_and_variant(fixtures_dir, golden_name):
    golden = json.loads((fixtures_dir / "tokenization" / golden_name).read_text("utf-8"))
    model = str(fixtures_dir / "spm" / GOLDEN_FILES[golden_name])
    assert golden["spm_model_file"] == GOLDEN_FILES[golden_name]
    tokenizers = {lower: tokenization.FullTokenizer(None, lower, model) for lower in (True, False)}
    assert len(tokenizers[True].vocab) == golden["vocab_size"]
    for piece, piece_id in golden["special_ids"].items():
        assert tokenizers[True].vocab[piece] == piece_id
    sp_model = tokenizers[True].sp_model
    checked = 0
    for case in golden["cases"]:
        text = case["text"]
        assert VARIANTS <= case.keys()
        for lower, tokenizer in tokenizers.items():
            want = case[f"do_lower_case={lower}"]
            pieces = tokenizer.tokenize(text)
            assert pieces == want["pieces"], ascii(text)
            assert tokenizer.convert_tokens_to_ids(pieces) == want["ids"], ascii(text)
            want = case[f"preprocess_text(lower={lower})+tokenize"]
            preprocessed = tokenization.preprocess_text(text, lower=lower)
            assert preprocessed == want["preprocessed"], ascii(text)
            pieces = tokenizer.tokenize(preprocessed)
            assert pieces == want["pieces"], ascii(text)
            ids = tokenizer.convert_tokens_to_ids(pieces)
            assert ids == want["ids"], ascii(text)
            # Unknown surface pieces read back as "<unk>"; all others round-trip.
            assert tokenizer.convert_ids_to_tokens(ids) == [
                p if tokenizer.vocab.get(p) == i else "<unk>" for p, i in zip(pieces, ids)]
            checked += 1
        assert tokenization.encode_ids(
            sp_model, tokenization.preprocess_text(text, lower=True)) == case[
                "encode_ids(preprocess_text(lower=True))"], ascii(text)
    assert checked == 2 * golden["num_cases"] == 448


def test_tokenize_ignores_do_lower_case_in_sentencepiece_mode(spm_model):
    lower = tokenization.FullTokenizer(None, True, spm_model).tokenize("HeLLo Caf\u00e9")
    cased = tokenization.FullTokenizer(None, False, spm_model).tokenize("HeLLo Caf\u00e9")
    assert lower == cased
    assert lower != tokenization.FullTokenizer(None, True, spm_model).tokenize("hello cafe")


def test_vocab_file_that_agrees_is_accepted(fixtures_dir, spm_model):
    tokenizer = tokenization.FullTokenizer(str(fixtures_dir / "spm" / "spm.vocab"), True, spm_model)
    assert tokenizer.vocab["[MASK]"] == 4


def test_missing_model_file_is_named(tmp_path):
    missing = tmp_path / "nope.model"
    with pytest.raises(tokenization.TokenizerError, match="nope.model"):
        tokenization.FullTokenizer(None, True, str(missing))


def test_corrupt_model_file_is_named(tmp_path):
    corrupt = tmp_path / "corrupt.model"
    corrupt.write_bytes(b"\x08\x01garbage that is not a ModelProto")
    with pytest.raises(tokenization.TokenizerError, match="corrupt.model.*not a valid"):
        tokenization.FullTokenizer(None, True, str(corrupt))


def test_vocab_and_model_that_disagree(fixtures_dir, spm_model, tmp_path):
    vocab = (fixtures_dir / "spm" / "spm.vocab").read_text("utf-8").splitlines()
    swapped = tmp_path / "swapped.vocab"
    swapped.write_text("\n".join([vocab[0], vocab[2], vocab[1]] + vocab[3:]) + "\n", "utf-8")
    with pytest.raises(tokenization.TokenizerError, match=r"swapped.vocab.*disagrees.*'\[CLS\]' is id 1 in the vocab file but 2"):
        tokenization.FullTokenizer(str(swapped), True, spm_model)
    with pytest.raises(tokenization.TokenizerError, match="disagrees.*1511 vs 1500"):
        tokenization.FullTokenizer(str(fixtures_dir / "spm" / "spm_digitcomma.vocab"), True,
                                   spm_model)


def test_non_string_input_is_refused(spm_model):
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    for bad in (None, 12, ["a list"]):
        with pytest.raises(tokenization.TokenizerError, match="expected str or bytes"):
            tokenizer.tokenize(bad)
        with pytest.raises(tokenization.TokenizerError, match="expected str or bytes"):
            tokenization.preprocess_text(bad)


def test_no_model_and_no_vocab_is_refused():
    with pytest.raises(tokenization.TokenizerError, match="spm_model_file or vocab_file"):
        tokenization.FullTokenizer(None, True, None)
