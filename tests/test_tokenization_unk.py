"""[UNK] rate and its casing cause (albert_tf.tokenization.unk), and create_pretraining_data's
summary of it, on Korean text against a syllable vocabulary."""

import contextlib
import io

from absl import logging as absl_logging

from albert_tf.pretraining_data import engines
from albert_tf.pretraining_data.options import PretrainingDataOptions
from albert_tf.tokenization import FullTokenizer, settings, unk
from tests.support import korean
from tests.support.wordpiece_vocab import build_vocab

TEXTS = [text for text, _ in korean.reviews(200)]


def _vocab(tmp_path, do_lower_case):
    path = tmp_path / f"vocab-{do_lower_case}.txt"
    build_vocab(path, TEXTS, do_lower_case=do_lower_case)
    return str(path)


def test_nfd_lower_casing_turns_hangul_into_unk_and_is_named(tmp_path):
    vocab = _vocab(tmp_path, do_lower_case=False)  # syllables, composed
    kept = FullTokenizer(vocab, do_lower_case=False)
    assert unk.count_unk(kept, TEXTS)[0] == 0
    lowered = FullTokenizer(vocab, do_lower_case=True)
    count, total = unk.count_unk(lowered, TEXTS)
    assert count / total > 0.5
    cause = unk.casing_cause(TEXTS, lowered.vocab, do_lower_case=True)
    assert "--nodo_lower_case" in cause and "Hangul" in cause
    assert unk.casing_cause(TEXTS, kept.vocab, do_lower_case=False) is None


def test_the_reverse_trap_names_do_lower_case(tmp_path):
    vocab = _vocab(tmp_path, do_lower_case=True)  # built lower-cased: jamo
    kept = FullTokenizer(vocab, do_lower_case=False)
    count, total = unk.count_unk(kept, TEXTS)
    assert count / total > 0.5
    assert "pass --do_lower_case" in unk.casing_cause(TEXTS, kept.vocab, do_lower_case=False)


def test_report_warns_in_one_line_above_five_percent(tmp_path, caplog):
    absl_logging.get_absl_logger().propagate = True
    with caplog.at_level("INFO"):
        assert unk.report(1, 100, "a.tsv") == 0.01
        unk.report(10, 100, "b.tsv", "lower-casing is the cause")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == ["[UNK] rate 10.00 % (10 of 100 tokens) in b.tsv: above 5 %; "
                        "lower-casing is the cause"]


def test_pretraining_summary_reports_unk_and_follows_the_settings_file(tmp_path):
    corpus = korean.write_corpus(tmp_path / "corpus.txt")
    vocab = _vocab(tmp_path, do_lower_case=False)
    options = dict(input_file=corpus, vocab_file=vocab, max_seq_length=32, dupe_factor=1,
                   num_workers=1, max_predictions_per_seq=4)

    def run(name, **extra):
        with contextlib.redirect_stdout(io.StringIO()):
            return engines.run(PretrainingDataOptions(
                output_file=str(tmp_path / name), **options, **extra))

    lowered = run("a.tfrecord")  # no record: the original's default lower-cases
    assert lowered["do_lower_case"] is True and lowered["unk_rate"] > 0.5
    settings.write_settings(tmp_path, {"do_lower_case": False, "vocab_file": "vocab-False.txt"})
    kept = run("b.tfrecord", flags_given=frozenset())
    assert kept["do_lower_case"] is False and kept["unk_rate"] == 0.0
    assert kept["unk_tokens"] == 0 and kept["corpus_tokens"] > 1000


def test_vocabulary_check_of_the_export(tmp_path):
    vocab = _vocab(tmp_path, do_lower_case=False)
    assert unk.vocabulary_check(FullTokenizer(vocab, do_lower_case=False), False) < 0.05
    assert unk.vocabulary_check(FullTokenizer(vocab, do_lower_case=True), True) > 0.05


def test_sentencepiece_unknown_text_is_counted_by_id(spm_model):
    # SentencePiece hands text it cannot cover back as itself ('주인공'), never as '<unk>';
    # counting pieces equal to '<unk>' reported 0 % for every SentencePiece model.
    tokenizer = FullTokenizer(spm_model_file=spm_model)
    count, total = unk.count_unk(tokenizer, TEXTS[:20])
    assert (count, total) == (70, 150)
    assert unk.count_unk(tokenizer, ["the cat sat on the mat"]) == (0, 12)
