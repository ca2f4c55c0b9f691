"""End to end through `engines.run`: files, summary, bad input counts, atomic outputs."""

import contextlib
import hashlib
import io
import json
import os

import pytest
import tensorflow as tf

from albert_tf.pretraining_data import documents, engines
from albert_tf.pretraining_data.options import PretrainingDataOptions
from support.pipes import fifo_with

SENTENCES = ["The quick brown fox jumps over the lazy dog.", "Licenses grant rights to copy software.",
             "Python evaluates expressions from left to right.", "Each sentence is on its own line."]


def _write_corpus(path, with_bad_input=True):
    """Six five-sentence documents; with bad input also: two empty documents (extra blank lines),
    a one-sentence document, an undecodable line and an over-long line in a last document."""
    docs = [[f"{SENTENCES[(d + k) % 4]} Number {d} {k}." for k in range(5)] for d in range(6)]
    data = "\n\n".join("\n".join(doc) for doc in docs).encode() + b"\n\n"
    if with_bad_input:
        data += b"\n\nOnly one sentence in this document.\n\n"
        data += b"bad byte \xff in this line\n" + b"x" * 300 + b"\nlast line.\n"
    path.write_bytes(data)


def _run(**kwargs):
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        summary = engines.run(PretrainingDataOptions(**kwargs))
    # The gist goes to the console, the whole summary to its file.
    assert printed.getvalue().startswith(f"wrote {summary['instances']:,} instances to ")
    with open(printed.getvalue().splitlines()[-1].split(": ", 1)[1]) as f:
        assert json.load(f) == summary
    return summary


def test_summary_counts_and_files(tmp_path, spm_model):
    corpus = tmp_path / "corpus.txt"
    _write_corpus(corpus)
    output = tmp_path / "out" / "data.tfrecord"
    summary = _run(input_file=str(corpus), output_file=str(output), spm_model_file=spm_model,
                   max_seq_length=32, max_predictions_per_seq=5, dupe_factor=3, max_line_bytes=200,
                   num_workers=1, output_shards=2)
    assert summary["undecodable_lines"] == 1 and summary["overlong_lines"] == 1
    assert summary["empty_documents"] == 2 and summary["single_sentence_documents"] == 1
    assert summary["documents"] == 8  # 6 + the one-sentence one + the tail after the bad line
    assert summary["mode"] == "streaming"
    for key in ("instances", "corpus_tokens", "tokens", "masked_fraction", "ngram_length_histogram",
                "sentence_order_labels", "elapsed_s", "instances_per_s", "peak_rss_mb_main"):
        assert key in summary, key
    assert 0.1 < summary["masked_fraction"] < 0.2
    files = summary["output_files"]
    assert [os.path.basename(f) for f in files] == ["data.tfrecord-00000-of-00002",
                                                    "data.tfrecord-00001-of-00002"]
    assert sum(1 for _ in tf.data.TFRecordDataset(files)) == summary["instances"]
    saved = json.loads((tmp_path / "out" / "data.tfrecord.summary.json").read_text())
    assert saved == summary
    assert not [f for f in os.listdir(tmp_path / "out") if "incomplete" in f]


def test_undecodable_input_can_stop_the_run_without_output(tmp_path, spm_model):
    corpus = tmp_path / "corpus.txt"
    _write_corpus(corpus)
    with pytest.raises(documents.InputError, match=r"corpus\.txt:\d+: undecodable UTF-8"):
        _run(input_file=str(corpus), output_file=str(tmp_path / "o.tfrecord"), spm_model_file=spm_model,
             max_seq_length=32, dupe_factor=1, undecodable_lines="fail", num_workers=1)
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]


def test_missing_input_is_an_error_before_any_output(tmp_path, spm_model):
    with pytest.raises(documents.InputError, match="matched no files"):
        _run(input_file=str(tmp_path / "*.txt"), output_file=str(tmp_path / "o.tfrecord"),
             spm_model_file=spm_model)
    assert os.listdir(tmp_path) == []


def test_exact_mode_files_round_robin_to_the_fixture_digest(tmp_path, fixtures_dir, spm_model):
    folder = fixtures_dir / "create_pretraining_data"
    outputs = [tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"]
    summary = _run(input_file=str(folder / "input.txt"), output_file=",".join(map(str, outputs)),
                   spm_model_file=spm_model, max_seq_length=64, max_predictions_per_seq=10,
                   dupe_factor=2, masked_lm_prob=0.15, ngram=3, random_seed=12345, exact_original=True)
    a, b = ([r.numpy() for r in tf.data.TFRecordDataset(str(p))] for p in outputs)
    assert len(a) == 2264 and len(b) == 2263 and summary["instances"] == 4527
    interleaved = [r for pair in zip(a, b + [b""]) for r in pair if r]
    digest = hashlib.sha256()
    for record in interleaved:
        digest.update(tf.train.Example.FromString(record).SerializeToString(deterministic=True))
    expected = json.loads((folder / "run_info.json").read_text())
    assert digest.hexdigest() == expected["sha256_of_concat_deterministic_serialized_examples"]


def test_wordpiece_mode(tmp_path):
    """Without a SentencePiece model: WordPiece tokens, '##' pieces continue words."""
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##want", "##ed", "run", "##ning",
             "the", "dog", "cat", "sat", ".", "is"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    sentences = ["The dog sat.", "The cat is running.", "Unwanted dog.", "The cat sat."]
    (tmp_path / "in.txt").write_text("\n\n".join("\n".join(sentences[k:] + sentences[:k]) for k in range(4)))
    summary = _run(input_file=str(tmp_path / "in.txt"), output_file=str(tmp_path / "o.tfrecord"),
                   vocab_file=str(tmp_path / "vocab.txt"), max_seq_length=24, max_predictions_per_seq=4,
                   dupe_factor=2, num_workers=1)
    assert summary["documents"] == 4 and summary["instances"] > 0
    spec = {"input_ids": tf.io.FixedLenFeature([24], tf.int64),
            "token_boundary": tf.io.FixedLenFeature([24], tf.int64),
            "masked_lm_positions": tf.io.FixedLenFeature([4], tf.int64)}
    for record in tf.data.TFRecordDataset(str(tmp_path / "o.tfrecord")):
        parsed = tf.io.parse_single_example(record, spec)
        masked = set(parsed["masked_lm_positions"].numpy().tolist())
        for position, (token, start) in enumerate(zip(parsed["input_ids"].numpy(),
                                                      parsed["token_boundary"].numpy())):
            if position in masked:
                continue  # the token there may be a replacement
            if token in (6, 7, 9):  # ##want ##ed ##ning
                assert start == 0
            elif token in (2, 3, 5, 8, 10, 11, 12, 13, 14, 15):
                assert start == 1


@pytest.mark.parametrize("data,why", [
    (b"", "the input is empty"),
    (b"\n\n  \n\n", "none of its 4 lines holds text"),
    (b"\xff\xfe bad\n\xff\n", "all 2 lines are undecodable UTF-8"),
])
def test_input_without_instances_is_an_error_and_writes_nothing(tmp_path, spm_model, data, why):
    """It used to write an empty TFRecord (exit 0) that pretraining then died on."""
    from albert_tf.errors import InputError

    (tmp_path / "in.txt").write_bytes(data)
    with pytest.raises(InputError, match=rf"no pretraining instances from --input_file=.*in\.txt.*{why}"):
        _run(input_file=str(tmp_path / "in.txt"), output_file=str(tmp_path / "o.tfrecord"),
             spm_model_file=spm_model, max_seq_length=32, dupe_factor=1, num_workers=1)
    assert os.listdir(tmp_path) == ["in.txt"]


def test_allow_empty_keeps_the_old_behaviour(tmp_path, spm_model):
    (tmp_path / "in.txt").write_bytes(b"")
    summary = _run(input_file=str(tmp_path / "in.txt"), output_file=str(tmp_path / "o.tfrecord"),
                   spm_model_file=spm_model, max_seq_length=32, dupe_factor=1, num_workers=1,
                   allow_empty=True)
    assert summary["instances"] == 0
    assert sorted(os.listdir(tmp_path)) == ["in.txt", "o.tfrecord", "o.tfrecord.summary.json"]
    assert (tmp_path / "o.tfrecord").stat().st_size == 0


def test_a_killed_runs_temporaries_are_removed(tmp_path, spm_model):
    import subprocess

    from albert_tf import io_utils

    _write_corpus(tmp_path / "corpus.txt", with_bad_input=False)
    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = [out / f".o.tfrecord.incomplete-{dead.pid}", out / f".o.tfrecord.tmp-{dead.pid}-0a1b2c3d"]
    mine = out / f".other.tmp-{os.getpid()}-0a1b2c3d"  # a live writer's: kept
    for path in stale + [mine]:
        path.write_bytes(b"partial")
        assert io_utils.is_temporary(path)
    _run(input_file=str(tmp_path / "corpus.txt"), output_file=str(out / "o.tfrecord"),
         spm_model_file=spm_model, max_seq_length=32, dupe_factor=1, num_workers=1)
    assert sorted(os.listdir(out)) == [mine.name, "o.tfrecord", "o.tfrecord.summary.json"]


def test_the_options_pick_the_engine():
    flags = dict(input_file="in.txt", output_file="o.tfrecord", spm_model_file="spm.model")
    picked = {name: engines.select_engine(PretrainingDataOptions(**flags, **changes))
              for name, changes in (("default", {}), ("exact", dict(exact_original=True)),
                                    ("beam", dict(beam_runner="DirectRunner")))}
    assert isinstance(picked["default"], engines.StreamingEngine)
    assert isinstance(picked["exact"], engines.ExactOriginalEngine)
    assert isinstance(picked["beam"], engines.BeamEngine)
    assert [engine.mode for engine in picked.values()] == ["streaming", "exact_original", "beam"]


@pytest.mark.parametrize("exact_original", [False, True])
def test_an_input_that_shrinks_during_the_run_is_an_error(tmp_path, spm_model, monkeypatch,
                                                          exact_original):
    corpus = tmp_path / "corpus.txt"
    _write_corpus(corpus, with_bad_input=False)
    engine = engines.ExactOriginalEngine if exact_original else engines.StreamingEngine
    original = engine.write_records

    def shrink_first(self, options, files, *args):
        # Another program truncates the file after the run took its size.
        corpus.write_bytes(corpus.read_bytes()[:200])
        return original(self, options, files, *args)

    monkeypatch.setattr(engine, "write_records", shrink_first)
    size = corpus.stat().st_size
    output = tmp_path / "data.tfrecord"
    with pytest.raises(documents.InputError, match=rf"the input changed while it was read "
                       rf"\(200 of {size} bytes read; .*corpus.txt: {size} bytes at the start, "
                       rf"200 now\)"):
        engines.run(PretrainingDataOptions(
            input_file=str(corpus), output_file=str(output), spm_model_file=spm_model,
            max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1, num_workers=1,
            exact_original=exact_original))
    assert not output.exists()


def test_a_pipe_is_read_not_taken_as_empty(tmp_path, spm_model):
    corpus = tmp_path / "corpus.txt"
    _write_corpus(corpus, with_bad_input=False)
    options = dict(spm_model_file=spm_model, max_seq_length=32, max_predictions_per_seq=5,
                   dupe_factor=1, num_workers=1)
    from_file = _run(input_file=str(corpus), output_file=str(tmp_path / "a.tfrecord"), **options)
    with fifo_with(tmp_path / "fifo", corpus.read_bytes()) as fifo:
        from_pipe = _run(input_file=fifo, output_file=str(tmp_path / "b.tfrecord"), **options)
    assert from_pipe["instances"] == from_file["instances"] > 0
    assert from_pipe["input_bytes"] == corpus.stat().st_size
