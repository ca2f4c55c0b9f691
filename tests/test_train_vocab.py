"""python -m albert_tf.train_vocab (albert_tf.train_vocab, tokenization.vocab_builder): a
WordPiece vocab.txt or SentencePiece model with tokenizer_config.json beside it, on Korean text."""

import io
import json

import pytest

from albert_tf import train_vocab
from albert_tf.errors import UsageError
from albert_tf.tokenization import FullTokenizer, unk, vocab_builder
from albert_tf.tokenization.settings import resolve_do_lower_case
from tests.support import korean


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return korean.write_corpus(tmp_path_factory.mktemp("ko") / "corpus.txt", count=600)


def test_wordpiece_vocab_with_its_settings(corpus, tmp_path):
    stream = io.StringIO()
    values = train_vocab.train_vocab(corpus, str(tmp_path), "wordpiece", 300,
                                     do_lower_case=False, stream=stream)
    vocab = (tmp_path / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert vocab[:5] == list(vocab_builder.SPECIAL_TOKENS) and 100 < len(vocab) <= 300
    assert "##요" in vocab and "영화" in vocab
    recorded = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert recorded == values and recorded["do_lower_case"] is False
    assert "train_vocab: wrote" in stream.getvalue()
    # Every script given only this vocab keeps the case, and tokenizes without [UNK].
    vocab_file = str(tmp_path / "vocab.txt")
    assert resolve_do_lower_case(True, False, vocab_file) is False
    texts = [t for t, _ in korean.reviews(100, seed=9)]
    assert unk.count_unk(FullTokenizer(vocab_file, False), texts)[0] == 0


def test_lower_cased_wordpiece_holds_what_lower_casing_makes(corpus, tmp_path):
    train_vocab.train_vocab(corpus, str(tmp_path), "wordpiece", 300, do_lower_case=True,
                            stream=io.StringIO())
    vocab_file = str(tmp_path / "vocab.txt")
    texts = [t for t, _ in korean.reviews(100, seed=9)]
    assert unk.count_unk(FullTokenizer(vocab_file, True), texts)[0] == 0
    assert resolve_do_lower_case(True, False, vocab_file) is True


def test_sentencepiece_models_and_bad_flags(corpus, tmp_path):
    values = train_vocab.train_vocab(corpus, str(tmp_path), "unigram", 100, do_lower_case=False,
                                     stream=io.StringIO())
    assert values["spm_model_file"] == "spm.model" and (tmp_path / "spm.model").exists()
    assert resolve_do_lower_case(True, False, str(tmp_path / "spm.model")) is False
    with pytest.raises(UsageError, match="--model_type"):
        train_vocab.train_vocab(corpus, str(tmp_path), "char")


def test_learn_wordpiece_keeps_only_pieces_the_tokenizer_uses():
    words = vocab_builder.collections.Counter({"영화관": 5, "영화": 9, "관람": 3})
    vocab = vocab_builder.learn_wordpiece(words, 30, min_count=1)
    assert vocab[:5] == list(vocab_builder.SPECIAL_TOKENS)
    assert "영화" in vocab and len(vocab) == len(set(vocab))


def test_the_cycle_on_the_command_line_follows_the_vocabulary(corpus, tmp_path):
    from tests.support.entry_points import run_entry_point

    done = run_entry_point("-m", ["albert_tf.train_vocab", f"--input={corpus}",
                                  f"--output_dir={tmp_path / 'vocab'}", "--vocab_size=200",
                                  "--nodo_lower_case"])
    assert done.returncode == 0, done.stderr
    vocab = tmp_path / "vocab" / "vocab.txt"
    made = run_entry_point("create_pretraining_data.py", [
        f"--input_file={corpus}", f"--output_file={tmp_path / 'a.tfrecord'}",
        f"--vocab_file={vocab}", "--max_seq_length=32", "--dupe_factor=1", "--num_workers=1"])
    assert made.returncode == 0, made.stderr
    summary = json.loads((tmp_path / "a.tfrecord.summary.json").read_text())
    assert summary["do_lower_case"] is False and summary["unk_rate"] == 0.0
    refused = run_entry_point("create_pretraining_data.py", [
        f"--input_file={corpus}", f"--output_file={tmp_path / 'b.tfrecord'}",
        f"--vocab_file={vocab}", "--do_lower_case"])
    assert refused.returncode == 1 and not (tmp_path / "b.tfrecord").exists()
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --do_lower_case contradicts ")


@pytest.mark.parametrize("flag, value, message", [
    ("vocab_size", 0, "--vocab_size=0 cannot hold the 5 special tokens .* the minimum is 7"),
    ("vocab_size", 3, "--vocab_size=3 cannot hold"),
    ("character_coverage", 0.0, "--character_coverage=0 must be above 0"),
    ("max_piece_chars", 0, "--max_piece_chars=0 must be at least 1"),
    ("min_count", -3, "--min_count=-3 must be at least 1"),
    ("input_sentence_size", -1, "--input_sentence_size=-1 must be at least 0"),
    ("num_threads", 0, "--num_threads=0 must be at least 1"),
])
def test_flags_that_cannot_build_a_vocabulary_are_refused_before_reading(tmp_path, flag, value,
                                                                         message):
    options = dict(vocab_size=300, character_coverage=None, max_piece_chars=8, min_count=2)
    options[flag] = value
    with pytest.raises(UsageError, match=message):
        train_vocab.train_vocab(str(tmp_path / "absent.txt"), str(tmp_path / "out"),
                                "wordpiece", options.pop("vocab_size"), **options)
    assert not (tmp_path / "out").exists()


def test_a_vocab_size_below_the_texts_alphabet_names_the_minimum(corpus, tmp_path):
    # 7 passes the static floor; this text's alphabet needs far more (each character twice).
    with pytest.raises(UsageError, match=r"--vocab_size=7 cannot hold the 5 special tokens and "
                       r"the \d+ characters .* the minimum for this text is \d+"):
        train_vocab.train_vocab(corpus, str(tmp_path), "wordpiece", 7, stream=io.StringIO())
    assert not (tmp_path / "vocab.txt").exists()


def test_a_folder_holding_a_vocabulary_is_not_replaced_and_is_locked(corpus, tmp_path):
    from albert_tf.errors import OutputDirLockedError, OutputError
    from albert_tf.tasks.output_lock import OutputDirLock

    train_vocab.train_vocab(corpus, str(tmp_path), "wordpiece", 200, do_lower_case=False,
                            stream=io.StringIO())
    before = (tmp_path / "vocab.txt").read_bytes()
    with pytest.raises(OutputError, match=r"already holds a vocabulary \(vocab.txt, "
                       r"tokenizer_config.json\)"):
        train_vocab.train_vocab(corpus, str(tmp_path), "wordpiece", 250, stream=io.StringIO())
    assert (tmp_path / "vocab.txt").read_bytes() == before
    with OutputDirLock(tmp_path / "busy"), pytest.raises(OutputDirLockedError, match="in use"):
        train_vocab.train_vocab(corpus, str(tmp_path / "busy"), "wordpiece", 200)


def test_a_glob_over_the_output_dir_leaves_its_own_outputs_out(corpus, tmp_path):
    text = tmp_path / "reviews.txt"
    text.write_bytes(open(corpus, "rb").read())
    for name in ("vocab.txt", "tokenizer_config.json", "spm.vocab", "albert_tf.lock"):
        (tmp_path / name).write_text("[PAD]\n", encoding="utf-8")
    assert train_vocab._corpus_files(f"{tmp_path}/*", str(tmp_path)) == [str(text)]


@pytest.mark.parametrize("model_type", ["wordpiece", "unigram"])
def test_a_corpus_that_is_not_utf8_is_named_by_file_line_and_byte(tmp_path, model_type):
    from albert_tf.errors import InputError

    gbk = tmp_path / "gbk.txt"
    gbk.write_bytes("hello world\n".encode() + "中文的句子\n".encode("gbk"))
    with pytest.raises(InputError, match=r"gbk.txt:2: not valid UTF-8 \(byte 0xd6 at byte 12 "
                       r"of the file\).*iconv"):
        train_vocab.train_vocab(str(gbk), str(tmp_path / "out"), model_type, 100,
                                stream=io.StringIO())
    assert not (tmp_path / "out" / "vocab.txt").exists()


def test_input_file_is_accepted_as_every_other_script_names_it(tmp_path):
    from tests.support.entry_points import run_entry_point

    gbk = tmp_path / "gbk.txt"
    gbk.write_bytes("中文\n".encode("gbk"))
    done = run_entry_point("-m", ["albert_tf.train_vocab", f"--input_file={gbk}",
                                  f"--output_dir={tmp_path / 'out'}", "--vocab_size=200"])
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {gbk}:1: not valid UTF-8 (byte 0xd6 at byte 0 ")
