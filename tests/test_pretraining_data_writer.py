"""The pretraining output files: atomic round-robin TFRecords, the output names, the JSON summary."""

import os

import pytest
import tensorflow as tf

from albert_tf.data import schema
from albert_tf.pretraining_data import writer as pretraining_writer


def test_original_fixture_parses_with_the_training_spec(fixtures_dir):
    path = fixtures_dir / "create_pretraining_data" / "pretraining_data.tfrecord"
    spec = schema.pretraining_features(64, 10)
    # One traced parse over the dataset (parsing 4,527 records eagerly took 20 s here).
    count = 0
    for features in tf.data.TFRecordDataset(str(path)).map(lambda r: schema.decode(r, spec)):
        count += 1
    assert count == 4527
    assert features["input_ids"].shape == (64,) and features["masked_lm_weights"].shape == (10,)


def test_round_robin_and_atomic_rename(tmp_path):
    paths = [str(tmp_path / "a.tfrecord"), str(tmp_path / "sub" / "b.tfrecord")]
    with pretraining_writer.RoundRobinWriter(paths) as writer:
        for k in range(5):
            writer.write(bytes([k]))
        assert not any(os.path.exists(p) for p in paths)  # nothing looks finished yet
    assert [r.numpy() for r in tf.data.TFRecordDataset(paths[0])] == [b"\x00", b"\x02", b"\x04"]
    assert [r.numpy() for r in tf.data.TFRecordDataset(paths[1])] == [b"\x01", b"\x03"]
    assert sorted(os.listdir(tmp_path)) == ["a.tfrecord", "sub"]


def test_failed_run_leaves_no_output(tmp_path):
    path = str(tmp_path / "out.tfrecord")
    with pytest.raises(RuntimeError, match="killed"):
        with pretraining_writer.RoundRobinWriter([path]) as writer:
            writer.write(b"x")
            raise RuntimeError("killed")
    assert os.listdir(tmp_path) == []


def test_output_file_expansion():
    assert pretraining_writer.expand_output_files("a,b") == ["a", "b"]
    assert pretraining_writer.expand_output_files("o", 3) == ["o-00000-of-00003", "o-00001-of-00003",
                                                               "o-00002-of-00003"]
    with pytest.raises(ValueError, match="--output_file is empty"):
        pretraining_writer.expand_output_files("", 1)


def test_json_is_written_atomically(tmp_path):
    path = tmp_path / "s.json"
    pretraining_writer.write_json_atomic(str(path), {"a": 1})
    assert path.read_text() == '{\n "a": 1\n}\n' and os.listdir(tmp_path) == ["s.json"]
