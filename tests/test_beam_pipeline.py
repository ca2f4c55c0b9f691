"""--beam_runner: the same records and summary as the local engine, whatever Beam's workers.

Needs the optional extra (pip install -e ".[beam]"); without it the Beam runs are skipped and
only the install message is checked.
"""

import contextlib
import glob
import hashlib
import importlib.util
import io
import sys

import pytest
import tensorflow as tf

from albert_tf import errors
from albert_tf.pretraining_data import documents, engines
from albert_tf.pretraining_data.options import PretrainingDataOptions
from support import paths

needs_beam = pytest.mark.skipif(importlib.util.find_spec("apache_beam") is None,
                                reason='apache-beam is not installed: pip install -e ".[beam]"')
CORPUS = sorted(glob.glob(str(paths.DATA / "pretrain" / "nltk_inaugural" / "19[0-4]*.txt")))
needs_corpus = pytest.mark.skipif(not CORPUS, reason=f"no corpus slice under {paths.DATA} (../shared)")
# Fields that measure the run, not the data.
MEASURED = {"elapsed_s", "instances_per_s", "documents_per_s", "input_mb_per_s", "peak_rss_mb_main",
            "peak_rss_mb_worker", "mode", "num_workers", "beam_runner", "beam_counters", "output_files"}


@pytest.fixture(autouse=True)
def _workers_import_this_checkout(monkeypatch):
    # Beam's worker processes import albert_tf afresh: from this checkout, not an installed copy.
    monkeypatch.setenv("PYTHONPATH", str(paths.REPO))


def _run(**kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return engines.run(PretrainingDataOptions(**kwargs))


def _sorted_digest(files):
    records = sorted(r.numpy() for r in tf.data.TFRecordDataset(files))
    return len(records), hashlib.sha256(b"".join(records)).hexdigest()


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory, spm_model):
    """A real corpus slice and a last file whose document continues it, with an undecodable line."""
    extra = tmp_path_factory.mktemp("beam_input") / "bad.txt"
    extra.write_bytes(b"A line that continues the last document.\nbad \xff byte\n\nOne more.\nTwo more.\n")
    return ",".join(CORPUS + [str(extra)])


def _flags(input_file, spm_model, output, **changes):
    return {**dict(input_file=input_file, output_file=str(output), spm_model_file=spm_model,
                   max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1, random_seed=3,
                   block_bytes=8_000, progress_interval_s=0), **changes}


@needs_beam
@needs_corpus
def test_beam_writes_the_local_engines_records(corpus_files, spm_model, tmp_path):
    local = _run(**_flags(corpus_files, spm_model, tmp_path / "local" / "data.tfrecord", num_workers=2))
    two = _run(**_flags(corpus_files, spm_model, tmp_path / "two" / "data.tfrecord", output_shards=3,
                        beam_runner="DirectRunner", beam_pipeline_options=(
                            "--direct_num_workers=2 --direct_running_mode=multi_processing")))
    one = _run(**_flags(corpus_files, spm_model, tmp_path / "one" / "data.tfrecord", output_shards=0,
                        beam_runner="DirectRunner", beam_pipeline_options="--direct_num_workers=1"))
    assert local["instances"] > 300 and local["blocks"] > 10
    expected = _sorted_digest(local["output_files"])
    assert _sorted_digest(two["output_files"]) == expected == _sorted_digest(one["output_files"])
    assert [p.rsplit("/", 1)[1] for p in two["output_files"]] == [
        f"data.tfrecord-0000{i}-of-00003" for i in range(3)]
    assert all(tf.io.gfile.exists(p) for p in two["output_files"] + one["output_files"])
    assert one["output_files"] and one["output_files"][0].endswith(f"-of-{len(one['output_files']):05d}")
    for summary in (one, two):
        assert summary["mode"] == "beam"
        assert {k: v for k, v in summary.items() if k not in MEASURED} == \
            {k: v for k, v in local.items() if k not in MEASURED}
    counters = two["beam_counters"]
    assert counters["documents"] == local["documents"] and counters["instances"] == local["instances"]
    assert counters["undecodable_lines"] == counters["skipped_lines"] == 1 == local["undecodable_lines"]
    assert counters["blocks"] == local["blocks"] and counters["lines"] == local["input_lines"]


@needs_beam
def test_beam_stops_on_undecodable_input_as_the_local_engine(tmp_path, spm_model):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"First line.\nSecond line.\n\nThird.\nbad \xff byte\nFourth.\n")
    with pytest.raises(documents.InputError, match=r"corpus\.txt:5: undecodable UTF-8.*=fail\)$"):
        _run(**_flags(str(corpus), spm_model, tmp_path / "out" / "o.tfrecord", undecodable_lines="fail",
                      beam_runner="DirectRunner"))
    assert not glob.glob(str(tmp_path / "out" / "o.tfrecord*"))


@needs_beam
def test_beam_with_a_missing_model_fails_before_the_pipeline(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("One.\nTwo.\n")
    with pytest.raises(errors.AlbertError, match="model file not found: .*missing.model"):
        _run(**_flags(str(corpus), str(tmp_path / "missing.model"), tmp_path / "o.tfrecord",
                      beam_runner="DirectRunner"))


def test_without_beam_the_runner_flag_fails_at_once_with_the_install_command(tmp_path, monkeypatch, spm_model):
    monkeypatch.setitem(sys.modules, "apache_beam", None)  # import apache_beam raises ImportError
    with pytest.raises(errors.UsageError, match=r'--beam_runner needs Apache Beam.*pip install -e "\.\[beam\]"'):
        _run(**_flags(str(tmp_path / "absent.txt"), spm_model, tmp_path / "o.tfrecord",
                      beam_runner="DirectRunner"))
    assert list(tmp_path.iterdir()) == []


def test_beam_flags_that_cannot_work_are_usage_errors(tmp_path, spm_model):
    for changes, message in ((dict(exact_original=True), "cannot be combined with --exact_original"),
                             (dict(output_file="a,b"), "writes one --output_file"),
                             (dict(beam_runner="", beam_pipeline_options="--x"), "needs --beam_runner")):
        flags = {**_flags("in.txt", spm_model, tmp_path / "o", beam_runner="DirectRunner"), **changes}
        with pytest.raises(errors.UsageError, match=message):
            _run(**flags)
