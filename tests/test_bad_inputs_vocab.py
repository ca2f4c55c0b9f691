"""A WordPiece vocab file is checked once, where it is opened (`tokenization.load_vocab`): an
empty, binary or non-UTF-8 file, or one missing [CLS], [SEP] or [UNK], is one `TokenizerError`
naming the file (and the line or the token) — issue 27, item 7."""

import re

import pytest

from bad_inputs import one_error_line

from albert_tf import tokenization
from albert_tf.tokenization import FullTokenizer, TokenizerError
from albert_tf.tokenization.wordpiece import WordpiecePieces

GOOD = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "café", "中"]


def _write(path, tokens, encoding="utf-8"):
    path.write_bytes(("\n".join(tokens) + "\n").encode(encoding) if tokens else b"")
    return str(path)


def test_a_good_vocab_still_loads(tmp_path):
    tokenizer = FullTokenizer(_write(tmp_path / "vocab.txt", GOOD), True)
    assert tokenizer.convert_tokens_to_ids(tokenizer.tokenize("hello zzz")) == [5, 1]


@pytest.mark.parametrize("tokens, missing", [
    ([], None),
    (["", "  "], None),
    ([t for t in GOOD if t != "[CLS]"], "[CLS]"),
    ([t for t in GOOD if t != "[SEP]"], "[SEP]"),
    # Without [UNK] the first unknown character was a KeyError '[UNK]' deep in run_classifier.
    ([t for t in GOOD if t != "[UNK]"], "[UNK]"),
])
def test_missing_special_tokens_are_named(tokens, missing, tmp_path):
    path = _write(tmp_path / "vocab.txt", tokens)
    want = re.escape(f"{path}: ") + ("empty" if missing is None else
                                     re.escape(f"has no {missing} token"))
    for load in (lambda: FullTokenizer(path, True), lambda: WordpiecePieces(path)):
        with pytest.raises(TokenizerError, match=want):
            load()


@pytest.mark.parametrize("encoding", ["gbk", "latin-1"])
def test_a_vocab_not_in_utf8_names_the_line(encoding, tmp_path):
    # Undecodable lines used to collapse to one token, so every later id shifted: exit 0.
    tokens = GOOD[:-1] if encoding == "latin-1" else GOOD  # Latin-1 has no 中
    path = _write(tmp_path / "vocab.txt", tokens, encoding)
    line = tokens.index("café") + 1  # GBK has é too, in two bytes that are not UTF-8
    with pytest.raises(TokenizerError, match=re.escape(f"{path}:{line}: not UTF-8")):
        FullTokenizer(path, True)


def test_a_binary_file_is_named(spm_model, tmp_path):
    with pytest.raises(TokenizerError, match=re.escape(f"{spm_model}:") + r"\d+: not UTF-8"):
        FullTokenizer(spm_model, True)


def test_one_error_line_at_an_entry_point(tmp_path, capsys):
    path = _write(tmp_path / "vocab.txt", [t for t in GOOD if t != "[CLS]"])
    line = one_error_line(lambda: FullTokenizer(path, True), capsys)
    assert path in line and "[CLS]" in line


def test_load_vocab_alone_reads_any_utf8_token_list(tmp_path):
    # A SentencePiece .vocab (checked against its model) has no [UNK]: load_vocab asks nothing.
    path = _write(tmp_path / "spm.vocab", ["<pad>\t0", "<unk>\t0", "▁the\t-1"])
    assert list(tokenization.load_vocab(path)) == ["<pad>", "<unk>", "▁the"]
    with pytest.raises(TokenizerError, match="not UTF-8"):
        tokenization.load_vocab(_write(tmp_path / "latin.vocab", ["café"], "latin-1"))


def test_pretraining_data_names_the_vocab_missing_mask(tmp_path):
    # create_pretraining_data.py's [MASK]: the file was not named ("the vocabulary has no ...").
    from albert_tf.pretraining_data.sentence_tokens import SentenceEncoder

    path = _write(tmp_path / "vocab.txt", [t for t in GOOD if t != "[MASK]"])
    with pytest.raises(TokenizerError, match=re.escape(f"{path}: has no [MASK] token")):
        SentenceEncoder(FullTokenizer(path, True))
