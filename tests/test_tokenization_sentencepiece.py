"""SentencePiece mode's pieces: the original's digit-comma fix-up as Python 3 runs it."""

from albert_tf import tokenization


def test_digit_comma_quirk_keeps_the_extra_underline(fixtures_dir):
    sp_model = tokenization.load_sentencepiece(str(fixtures_dir / "spm" / "spm_digitcomma.model"))
    assert "2," in sp_model.EncodeAsPieces("pay 12, now")
    # "2," had no leading "▁", yet under Python 3 the re-encoded "2" keeps the one it gains.
    assert tokenization.split_digit_comma_python3(sp_model, "2,") == (
        sp_model.EncodeAsPieces("2") + [","])
    assert sp_model.EncodeAsPieces("2")[0].startswith("\u2581")
    pieces = tokenization.encode_pieces(sp_model, "pay 12, now")
    assert "2," not in pieces and "," in pieces


def test_a_missing_file_or_a_folder_is_named(tmp_path):
    for path, says in ((tmp_path / "none.model", "not found"), (tmp_path, "a folder")):
        try:
            tokenization.load_sentencepiece(str(path))
        except tokenization.TokenizerError as error:
            assert str(path) in str(error) and says in str(error)
        else:
            raise AssertionError(f"{path} loaded")
