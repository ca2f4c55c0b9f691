"""The in-graph WordPiece preprocessor gives the Python WordPiece tokenizer's ids
(`FullTokenizer(vocab_file, do_lower_case)`) and the GLUE features' packing. SQuAD's in-graph
WordPiece tokenization (`tokenize_with_offsets`) gives the ids of the Python SQuAD features, and
piece byte spans that cover the raw characters the Python alignment (banded LCS) gives each
piece."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.processors import InputExample, read_tsv
from albert_tf.tasks.squad import reader
from albert_tf.tasks.squad.alignment import align_paragraph
from albert_tf.text import AlbertPreprocessor, WordpiecePreprocessor, text_preprocessor
from support.paths import FIXTURES
from support.wordpiece_vocab import HARD_TEXTS, build_vocab

TEXTS = HARD_TEXTS


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
