"""WordPiece path on a vocabulary built here: Chinese, accents, punctuation, unknown words."""

import pytest

from albert_tf import tokenization
from albert_tf.tokenization import wordpiece

VOCAB_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "中", "国", "人", "你", "好",
                "un", "##want", "##ed", "want", "runn", "##ing", "run", "cafe", ",", ".", "!",
                "$", "hello", "world", "resume", "##s", "a", "##b", "##c"]


@pytest.fixture()
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCAB_TOKENS) + "\n", "utf-8")
    return str(path)


def test_full_tokenizer_wordpiece_path(vocab_file):
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    tokens = tokenizer.tokenize("UNwant\u00e9d,running 中国人你好! Caf\u00e9 $ zzz r\u00e9sum\u00e9s")
    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing", "中", "国", "人", "你", "好",
                      "!", "cafe", "$", "[UNK]", "resume", "##s"]
    ids = tokenizer.convert_tokens_to_ids(tokens)
    assert ids[:3] == [10, 11, 12] and ids[14] == 1
    assert tokenizer.convert_ids_to_tokens(ids) == tokens
    with pytest.raises(KeyError, match="not-in-vocab"):
        tokenizer.convert_tokens_to_ids(["not-in-vocab"])


def test_cased_keeps_accents_and_case(vocab_file):
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=False)
    assert tokenizer.tokenize("Caf\u00e9 hello") == ["[UNK]", "hello"]
    assert tokenizer.tokenize("cafe\u0301") == ["[UNK]"]


def test_basic_tokenizer_cleaning_cjk_and_punctuation():
    basic = wordpiece.BasicTokenizer(do_lower_case=True)
    text = "a\x00b\ufffd\u200bc\td\u3000e\u4e2d\u3042f\U00020000 g.h\u2014i\u00bfj^k"
    # NUL, U+FFFD and the Cf ZWSP vanish; tab and ideographic space split; only true CJK
    # ideographs are isolated (hiragana "あ" is not); "^" is ASCII punctuation though category Sk.
    assert basic.tokenize(text) == ["abc", "d", "e", "\u4e2d", "\u3042f", "\U00020000", "g", ".",
                                    "h", "\u2014", "i", "\u00bf", "j", "^", "k"]
    assert wordpiece.BasicTokenizer(do_lower_case=False).tokenize("H\u00e9!") == ["H\u00e9", "!"]


def test_every_ascii_symbol_is_punctuation_as_in_the_original():
    # The original splits every non-alphanumeric ASCII character off, whatever its Unicode
    # category: "$" Sc, "+<=>|~" Sm, "^`" Sk among them. Only "^" was checked: dropping
    # 60-64 ("<=>?@") from the ASCII ranges passed every test ("?@" are P* anyway).
    basic = wordpiece.BasicTokenizer(do_lower_case=False)
    symbols = "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum())
    assert len(symbols) == 32
    assert basic.tokenize(f"x{'y'.join(symbols)}z") == ["x", *"".join(
        f"{s}y" for s in symbols)[:-1], "z"]
    assert [c for c in symbols if wordpiece.is_punctuation(c)] == list(symbols)


def test_every_cjk_block_of_the_original_is_split_into_characters():
    # The original's _is_chinese_char blocks (spec), one character of each, between letters:
    # each becomes its own token. Dropping the compatibility block F900-FAFF passed every test.
    blocks = (0x4E00, 0x9FFF, 0x3400, 0x4DBF, 0x20000, 0x2A6DF, 0x2A700, 0x2B73F, 0x2B740,
              0x2B81F, 0x2B820, 0x2CEAF, 0xF900, 0xFAD9, 0x2F800, 0x2FA1D)
    cased = wordpiece.BasicTokenizer(do_lower_case=False)
    for code in blocks:
        assert cased.tokenize(f"a{chr(code)}b") == ["a", chr(code), "b"], hex(code)
    for code in (0x3041, 0xAC00, 0xFF21, 0x2FA1F + 1):  # hiragana, hangul, full-width A, beyond
        assert len(cased.tokenize(f"a{chr(code)}b")) == 1, hex(code)
    # Lower-cased, a compatibility ideograph is still split first, then NFD maps it (F900 ->
    # 8C48) as the original's _run_strip_accents does.
    assert wordpiece.BasicTokenizer().tokenize("a\uf900b") == ["a", "\u8c48", "b"]


def test_wordpiece_greedy_longest_match_and_limits():
    vocab = {t: i for i, t in enumerate(VOCAB_TOKENS)}
    tokenizer = wordpiece.WordpieceTokenizer(vocab)
    assert tokenizer.tokenize("abc running unwanted") == [
        "a", "##b", "##c", "runn", "##ing", "un", "##want", "##ed"]
    assert tokenizer.tokenize("abx") == ["[UNK]"]
    assert tokenizer.tokenize("a" + "b" * 199) == ["a"] + ["##b"] * 199
    assert tokenizer.tokenize("a" + "b" * 200) == ["[UNK]"]


def test_load_vocab_first_occurrence_ids(tmp_path):
    vocab_file = tmp_path / "v.txt"
    vocab_file.write_text("a\t-1\nb\na\n\nc\n", "utf-8")
    assert dict(tokenization.load_vocab(str(vocab_file))) == {"a": 0, "b": 1, " ": 2, "c": 3}
    with pytest.raises(tokenization.TokenizerError, match="missing.txt"):
        tokenization.load_vocab(str(tmp_path / "missing.txt"))


@pytest.mark.parametrize("name, says", [("none.txt", "not found"), ("", "a folder")])
def test_a_missing_vocab_or_a_folder_is_named(tmp_path, name, says):
    path = str(tmp_path / name) if name else str(tmp_path)
    with pytest.raises(tokenization.TokenizerError, match=says) as raised:
        tokenization.load_vocab(path)
    assert path in str(raised.value)
