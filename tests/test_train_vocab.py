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
