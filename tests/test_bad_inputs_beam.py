"""create_pretraining_data.py --beam_runner: a bad runner, options Beam cannot parse or does not
know, and a Beam without a crc32c package are one line naming the flag (issue 27, item 9)."""

import re
import sys

import pytest

from bad_inputs import one_error_line

from albert_tf.pretraining_data import beam_pipeline
from albert_tf.pretraining_data.options import PretrainingDataOptions

pytest.importorskip("apache_beam", reason="the [beam] extra is not installed")


def _options(tmp_path, **changes):
    (tmp_path / "in.txt").write_text("the dog sat .\nthe cat ran .\n\nthe dog ran .\n")
    (tmp_path / "vocab.txt").write_text("\n".join(
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "dog", "cat", "sat", "ran", "."]))
    values = dict(input_file=str(tmp_path / "in.txt"), output_file=str(tmp_path / "out.tfrecord"),
                  vocab_file=str(tmp_path / "vocab.txt"), beam_runner="DirectRunner")
    return PretrainingDataOptions(**{**values, **changes})


@pytest.mark.parametrize("changes, named", [
    ({"beam_runner": "NoSuchRunner"}, "--beam_runner=NoSuchRunner: Beam has no such runner"),
    ({"beam_pipeline_options": "--job_name='unbalanced"},
     "--beam_pipeline_options: No closing quotation"),
    # Beam drops an option it does not know with a warning (hidden), so the typo went unnoticed.
    ({"beam_pipeline_options": "--direct_num_worker=2"},
     "--beam_pipeline_options: Beam does not know --direct_num_worker=2 \\(did you mean "
     "--direct_num_workers\\?\\)"),
    ({"beam_pipeline_options": "--direct_num_workers=2 stray"},
     "--beam_pipeline_options: Beam does not know stray"),
])
def test_bad_beam_flags_are_one_line_naming_the_flag(changes, named, tmp_path, capsys):
    options = _options(tmp_path, **changes)
    line = one_error_line(lambda: beam_pipeline.run(options), capsys)
    assert re.search(named, line), line
    assert not (tmp_path / "out.tfrecord").exists()


def test_known_options_pass(tmp_path):
    from albert_tf.pretraining_data import beam_transforms

    options = _options(tmp_path, beam_pipeline_options="--direct_num_workers=2 "
                                                       "--direct_running_mode=in_memory")
    assert beam_transforms.pipeline_options(options).get_all_options()["direct_num_workers"] == 2


def test_beam_without_a_crc32c_package_names_the_install_line(monkeypatch, tmp_path, capsys):
    # Beam's TFRecord writer needs one of them; it raised a RuntimeError at the first record.
    for name in ("snappy", "google_crc32c", "crcmod"):
        monkeypatch.setitem(sys.modules, name, None)  # `import name` raises ImportError
    line = one_error_line(lambda: beam_pipeline.run(_options(tmp_path)), capsys)
    assert "google-crc32c" in line and beam_pipeline.INSTALL in line



def test_an_input_that_shrank_during_the_run_is_one_line(monkeypatch, tmp_path, capsys):
    from albert_tf.pretraining_data import beam_transforms
    from albert_tf.pretraining_data.summary import Totals

    options = _options(tmp_path)
    size = (tmp_path / "in.txt").stat().st_size

    def read_fewer_bytes(options, corpus, stats_path):  # the workers' counts, without a pipeline
        totals = Totals()
        totals.counters.input_bytes = corpus.total_bytes - 20
        return totals, {}

    monkeypatch.setattr(beam_transforms, "run_pipeline", read_fewer_bytes)
    (tmp_path / "in.txt").write_bytes((tmp_path / "in.txt").read_bytes()[:-20])
    monkeypatch.setattr(beam_transforms, "match_inputs",
                        lambda spec: ([str(tmp_path / "in.txt")], [size]))  # taken before
    line = one_error_line(lambda: beam_pipeline.run(options), capsys)
    assert re.search(rf"the input changed while it was read \({size - 20} of {size} bytes read; "
                     rf".*in\.txt: {size} bytes at the start, {size - 20} now\)", line), line
