"""SentencePiece training: README options, special ids, atomic outputs, the command line."""

import os

import pytest
import sentencepiece as spm

from albert_tf import tokenization, train_spm
from albert_tf.paper import data as paper_data
from albert_tf.paper.plan import PaperOptions
from support.entry_points import run_entry_point


@pytest.fixture(scope="module")
def corpus(data_dir, tmp_path_factory):
    """Two small real files: an inaugural address and the start of wikitext-2 valid."""
    folder = tmp_path_factory.mktemp("corpus")
    source = data_dir / "pretrain" / "wikitext-2_v1" / "valid.txt"
    lines = source.read_text("utf-8").splitlines()[:300]
    (folder / "wiki.txt").write_text("\n".join(lines) + "\n", "utf-8")
    inaugural = data_dir / "pretrain" / "nltk_inaugural" / "1789-Washington.txt"
    (folder / "speech.txt").write_bytes(inaugural.read_bytes())
    return folder


def test_library_trains_with_readme_options(corpus, tmp_path, capsys):
    model, vocab = train_spm.train_sentencepiece(
        f"{corpus}/wiki.txt,{corpus}/speech*", str(tmp_path / "out" / "tiny"), 300,
        num_threads=1, progress_every=100)
    assert model.endswith("tiny.model") and os.path.exists(model) and os.path.exists(vocab)
    assert sorted(os.listdir(tmp_path / "out")) == ["tiny.model", "tiny.vocab"]  # no temporaries
    progress = capsys.readouterr().err
    assert "train_spm: file 1/2: 100 sentences" in progress and "wrote" in progress
    processor = spm.SentencePieceProcessor(model_file=model)
    assert processor.GetPieceSize() == 300
    pieces = [processor.IdToPiece(i) for i in range(13)]
    assert pieces == ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]", "(", ")", '"', "-", ".",
                      "\u2013", "\u00a3", "\u20ac"]
    assert processor.IsControl(2) and processor.IsControl(4) and not processor.IsControl(7)
    assert processor.bos_id() == -1 and processor.eos_id() == -1
    # The trained pair is usable by the tokenizer, vocab file included.
    tokenizer = tokenization.FullTokenizer(vocab, True, model)
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("the people (of) the states."))
    assert 5 in ids and 6 in ids and 9 in ids  # "(", ")" and "." are whole pieces


def test_command_line(corpus, tmp_path):
    prefix = tmp_path / "cli"
    result = run_entry_point("-m", ["albert_tf.train_spm", f"--input={corpus}/speech.txt",
                                    f"--model_prefix={prefix}", "--vocab_size=200",
                                    "--num_threads=1"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert "train_spm: input done" in result.stderr
    processor = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
    assert [processor.PieceToId(p) for p in ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]")] == [
        0, 1, 2, 3, 4]


def test_bad_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        train_spm.train_sentencepiece(str(tmp_path / "nothing-here*.txt"), str(tmp_path / "m"), 100)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", "utf-8")
    with pytest.raises(RuntimeError, match="empty.txt"):
        train_spm.train_sentencepiece(str(empty), str(tmp_path / "m"), 100)
    assert not (tmp_path / "m.model").exists() and not (tmp_path / "m.vocab").exists()


def test_bad_inputs_are_our_error_types(tmp_path):
    from albert_tf.errors import InputError, UsageError

    (tmp_path / "a.txt.summary.json").write_text("{}\n")
    with pytest.raises(InputError, match=r"--input pattern .*\*' matches no file"):
        train_spm.train_sentencepiece(str(tmp_path / "*"), str(tmp_path / "m"), 100)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", "utf-8")
    with pytest.raises(InputError, match=r"no text in --input \(.*empty.txt\): every line is blank"):
        train_spm.train_sentencepiece(str(empty), str(tmp_path / "m"), 100)
    with pytest.raises(UsageError, match="--vocab_size=10 leaves no room"):
        train_spm.train_sentencepiece(str(empty), str(tmp_path / "m"), 10)


@pytest.mark.parametrize("args,expected", [
    (["--input={tmp}/nothing-*.txt", "--model_prefix={tmp}/m"], "error: --input pattern "),
    (["--input={tmp}/empty.txt", "--model_prefix={tmp}/m", "--vocab_size=100"],
     "error: no text in --input"),
    (["--model_prefix={tmp}/m"], "error: missing required flag: --input"),
])
def test_command_line_errors_are_one_line(tmp_path, args, expected):
    (tmp_path / "empty.txt").write_text("\n\n", "utf-8")
    result = run_entry_point("-m", ["albert_tf.train_spm", *(a.format(tmp=tmp_path) for a in args)])
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1].startswith(expected), result.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["empty.txt"]


def test_a_vocabulary_larger_than_the_text_names_the_flag_and_the_paper_kit_sizes_it(tmp_path):
    """SentencePiece's "Vocabulary size too high (8000)... <= N" named --vocab_size nowhere; the
    paper kit's preset (8000 pieces) failed on a small corpus such as the demo's."""
    text = tmp_path / "small.txt"
    text.write_text("".join(f"sentence number {i} of a very small corpus.\n" for i in range(200)))
    with pytest.raises(train_spm.VocabularyTooLargeError, match=r"--vocab_size=500 .* at most "
                       r"(\d+); pass --vocab_size=\1 or less") as raised:
        train_spm.train_sentencepiece([str(text)], str(tmp_path / "a"), 500)
    said = []
    options = PaperOptions.create(quick=True, input_file=str(text), output_dir=str(tmp_path),
                                  vocab_size=500)
    tokenizer = paper_data._tokenizer(options, str(tmp_path), str(text), said.append)
    assert spm.SentencePieceProcessor(model_file=tokenizer["spm_model_file"]).get_piece_size() \
        == raised.value.maximum
    assert said and "--vocab_size" in said[0]
