"""The in-graph WordPiece preprocessor gives the Python WordPiece tokenizer's ids
(`FullTokenizer(vocab_file, do_lower_case)`) and the GLUE features' packing."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.processors import InputExample, read_tsv
from albert_tf.text import AlbertPreprocessor, WordpiecePreprocessor, text_preprocessor
from support.paths import FIXTURES
from support.wordpiece_vocab import build_vocab

# CJK (split per character, whatever the spacing), accents (stripped when lower-casing, kept
# otherwise), punctuation (ASCII symbols and Unicode P*), control and format characters
# (dropped), Unicode spaces, upper case, full-width letters, Greek final sigma, over-long words.
TEXTS = [
    "The quick brown foxes!", "Café naïve résumé.", "我爱中国人，你好。", "日本語のテキスト",
    "Hello,world's (abc)-abcbc", "ÜBER $5 % -- e.g. U.S.A.", "a\u200bb a\x00b a\tb\u2028c\u2029d",
    "Straße ＦＦ ｆ", "ΟΛΟΣ Ὁλος", "", " ", "x" * 200, "x" * 201, "ab\u0301c e\u0301",
    "fox\ufffd", "«quoted» „so“ ¿qué? ¡sí!", "中文English混合123", "\u3000全角\u00a0空格",
    "tab\tnew\nline\rcr", "un-affable unaffable", "Ǆ ǅ ǆ İstanbul", "é" * 3, "\x7f\x85\u200e",
    "smile 😀 ok", "e\u0301\u0327", "Zürich, München & Köln", "x\u0300\u0300y",
]


@pytest.fixture(scope="module")
def mrpc_texts():
    rows = []
    for split in ("train", "dev", "test"):
        rows += [f for _, f in read_tsv(str(FIXTURES / "glue" / "data" / "MRPC" / f"{split}.tsv"))[1:]]
    return [f[3] for f in rows] + [f[4] for f in rows]


@pytest.fixture(scope="module")
def vocab_file(tmp_path_factory, mrpc_texts):
    path = tmp_path_factory.mktemp("wordpiece") / "vocab.txt"
    build_vocab(path, mrpc_texts + TEXTS)
    return str(path)


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_ids_equal_the_python_tokenizer(vocab_file, mrpc_texts, do_lower_case):
    python = tokenization.FullTokenizer(vocab_file, do_lower_case)
    layer = WordpiecePreprocessor(vocab_file, 64, do_lower_case)
    texts = TEXTS + mrpc_texts
    got = layer.tokenize(tf.constant(texts)).to_list()
    for text, ids in zip(texts, got):
        assert ids == python.convert_tokens_to_ids(python.tokenize(text)), repr(text)
    unk = python.vocab["[UNK]"]
    flat = [i for ids in got for i in ids]
    assert unk in flat and len(set(flat)) > 50  # real pieces and unknown words both occur


def test_cjk_is_split_per_character(vocab_file):
    python = tokenization.FullTokenizer(vocab_file, True)
    assert python.tokenize("我爱中国人，你好。") == list("我爱中国人，你好。")
    ids = WordpiecePreprocessor(vocab_file, 16, True).tokenize(tf.constant(["我爱中国人"]))
    assert ids.to_list() == [[python.vocab[c] for c in "我爱中国人"]]


@pytest.mark.parametrize("max_seq_length", [8, 16, 64])
def test_packing_equals_the_glue_features(vocab_file, mrpc_texts, max_seq_length):
    python = tokenization.FullTokenizer(vocab_file, True)
    layer = WordpiecePreprocessor(vocab_file, max_seq_length, True)
    half = len(mrpc_texts) // 2
    pairs = list(zip(mrpc_texts[:half], mrpc_texts[half:])) + list(zip(TEXTS, reversed(TEXTS)))
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    packed = {k: v.numpy() for k, v in layer((tf.constant(a), tf.constant(b))).items()}
    single = {k: v.numpy() for k, v in layer(tf.constant(a)).items()}
    for row, (text_a, text_b) in enumerate(pairs):
        for inputs, second in ((packed, text_b), (single, None)):
            want = F.convert_single_example(InputExample("g", text_a, second, "0"), ["0"],
                                            max_seq_length, python)
            np.testing.assert_array_equal(inputs["input_ids"][row], want.input_ids)
            np.testing.assert_array_equal(inputs["input_mask"][row], want.input_mask)
            np.testing.assert_array_equal(inputs["segment_ids"][row], want.segment_ids)


def test_vocabulary_without_special_tokens_is_refused(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[SEP]\nhello\n")
    with pytest.raises(tokenization.TokenizerError, match=r"\[CLS\]"):
        WordpiecePreprocessor(str(path), 16)


def test_ids_follow_load_vocab_first_occurrence(tmp_path):
    # A duplicated line takes no id (load_vocab), so later ids shift; the table agrees.
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nhello\nworld\n")
    layer = WordpiecePreprocessor(str(path), 16)
    assert layer.tokenize(tf.constant(["hello world"])).to_list() == [[4, 5]]
    assert layer.vocab_size == 6


def test_text_preprocessor_picks_as_full_tokenizer(vocab_file, spm_model):
    assert isinstance(text_preprocessor(16, True, spm_model, vocab_file=None), AlbertPreprocessor)
    assert isinstance(text_preprocessor(16, True, None, vocab_file), WordpiecePreprocessor)
    assert text_preprocessor(16, True, None, None) is None


def test_saved_model_round_trip(vocab_file, tmp_path):
    layer = WordpiecePreprocessor(vocab_file, 16, True)
    module = tf.Module()
    module.table = layer.table
    module.serve = tf.function(lambda text: layer(text),
                               input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    texts = tf.constant(["我爱中国人", "Café naïve!"])
    for key, value in layer(texts).items():
        np.testing.assert_array_equal(loaded.serve(texts)[key].numpy(), value.numpy())


def test_why_not_tensorflow_text_bert_tokenizer(tmp_path):
    """tensorflow_text.BertTokenizer lower-cases by NFKC case folding: "ｆ" becomes "f" and
    "straße" becomes "strasse", where the original's `str.lower` keeps both. Ours keeps them."""
    import tensorflow_text as tf_text

    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "ｆ", "f", "straße",
                               "strasse"]) + "\n", encoding="utf-8")
    python = tokenization.FullTokenizer(str(path), True)
    texts = ["ｆ", "Straße"]
    want = [python.convert_tokens_to_ids(python.tokenize(t)) for t in texts]
    assert want == [[4], [6]]
    assert WordpiecePreprocessor(str(path), 8).tokenize(tf.constant(texts)).to_list() == want
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(python.vocab)), tf.constant(list(python.vocab.values()), tf.int64)), -1)
    bert = tf_text.BertTokenizer(table, lower_case=True, token_out_type=tf.int64)
    assert bert.tokenize(tf.constant(texts)).merge_dims(1, 2).to_list() == [[5], [7]]
