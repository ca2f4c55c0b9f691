"""albert_tf.pretraining_data.record_file: local TFRecord files framed without TensorFlow are
TensorFlow's bytes exactly, and a create_pretraining_data run then never loads TensorFlow."""

import json
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.pretraining_data import record_file
from support.paths import REPO

needs_crc = pytest.mark.skipif(not record_file.writes_without_tensorflow("local"),
                               reason="needs google-crc32c's C extension (the [beam] extra)")


@needs_crc
def test_frames_are_tensorflows_bytes(tmp_path):
    rng = np.random.default_rng(0)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 3000, 40)] + [b""]
    ours = record_file.open_record_file(str(tmp_path / "ours.tfrecord"))
    assert isinstance(ours, record_file.LocalRecordFile)
    theirs = tf.io.TFRecordWriter(str(tmp_path / "theirs.tfrecord"))
    for record in records:
        ours.write(record)
        theirs.write(record)
    ours.close()
    theirs.close()
    assert (tmp_path / "ours.tfrecord").read_bytes() == (tmp_path / "theirs.tfrecord").read_bytes()
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "ours.tfrecord"))] == records


def test_remote_paths_go_to_tensorflow():
    assert not record_file.writes_without_tensorflow("gs://bucket/o.tfrecord")


@needs_crc
def test_a_data_run_loads_no_tensorflow(tmp_path, fixtures_dir):
    code = ("import sys\n"
            "from albert_tf.entry_points import create_pretraining_data\n"
            "try:\n    create_pretraining_data.run()\n"
            "finally:\n    print('TENSORFLOW', 'tensorflow' in sys.modules, file=sys.stderr)\n")
    out = tmp_path / "o.tfrecord"
    done = subprocess.run(
        [sys.executable, "-c", code,
         f"--input_file={fixtures_dir / 'create_pretraining_data' / 'input.txt'}",
         f"--output_file={out}", f"--spm_model_file={fixtures_dir / 'spm' / 'spm.model'}",
         "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=1",
         "--num_workers=1"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "TENSORFLOW False" in done.stderr
    summary = json.loads((tmp_path / "o.tfrecord.summary.json").read_text())
    assert summary["instances"] == sum(1 for _ in tf.data.TFRecordDataset(str(out))) > 0
