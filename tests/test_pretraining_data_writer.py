"""Example encoding (bytes = protobuf's deterministic serialization) and atomic round-robin files."""

import os

import pytest
import tensorflow as tf

from albert_tf.data import schema
from albert_tf.pretraining_data import writer as pretraining_writer
from albert_tf.pretraining_data.instances import Instance


def _instance(n=9, len_a=3, positions=(1, 5), ids=(7, 300), label=1, a_id=20, b_id=21):
    tokens = [2] + [a_id] * len_a + [3] + [b_id] * (n - len_a - 3) + [3]
    return Instance(tokens, len_a, [k % 2 for k in range(n)], list(positions), list(ids), label)


def _reference_example(features):
    feature = {name: schema.float_feature(v) if name == "masked_lm_weights" else schema.int_feature(v)
               for name, v in features.items()}
    return tf.train.Example(features=tf.train.Features(feature=feature))


@pytest.mark.parametrize("instance,seq,preds,perm", [
    (_instance(), 16, 5, False),
    (_instance(n=150, len_a=70, positions=(130, 140), ids=(5, 99999), a_id=1000, b_id=70000), 200, 4, False),
    (_instance(positions=(), ids=(), label=0), 9, 3, True),
    (_instance(n=12, len_a=1), 12, 2, False),
])
def test_bytes_equal_deterministic_protobuf(instance, seq, preds, perm):
    encoder = pretraining_writer.ExampleEncoder(seq, preds, perm)
    features = encoder.features(instance)
    ours = encoder.serialize(instance)
    assert ours == _reference_example(features).SerializeToString(deterministic=True)
    assert len(features["masked_lm_positions"]) == preds * (2 if perm else 1)
    assert all(len(features[k]) == seq for k in ("input_ids", "input_mask", "segment_ids", "token_boundary"))


def test_padding_and_segments():
    features = pretraining_writer.ExampleEncoder(12, 4).features(_instance())
    assert features["input_mask"] == [1] * 9 + [0] * 3
    assert features["segment_ids"] == [0] * 5 + [1] * 4 + [0] * 3
    assert features["masked_lm_weights"] == [1.0, 1.0, 0.0, 0.0]
    assert features["masked_lm_positions"] == [1, 5, 0, 0]
    assert features["next_sentence_labels"] == [1]


def test_records_parse_with_the_training_spec_and_decode():
    encoder = pretraining_writer.ExampleEncoder(12, 4)
    parsed = schema.decode(encoder.serialize(_instance()), schema.pretraining_features(12, 4))
    assert parsed["input_ids"].dtype == tf.int32
    assert parsed["input_ids"].numpy().tolist()[:9] == _instance().input_ids
    assert parsed["masked_lm_ids"].numpy().tolist() == [7, 300, 0, 0]


def test_original_fixture_parses_with_the_training_spec(fixtures_dir):
    path = fixtures_dir / "create_pretraining_data" / "pretraining_data.tfrecord"
    spec = schema.pretraining_features(64, 10)
    count = 0
    for record in tf.data.TFRecordDataset(str(path)):
        features = schema.decode(record, spec)
        count += 1
    assert count == 4527
    assert features["input_ids"].shape == (64,) and features["masked_lm_weights"].shape == (10,)


def test_oversized_instance_is_an_error():
    with pytest.raises(ValueError, match="exceeds max_seq_length"):
        pretraining_writer.ExampleEncoder(5, 4).serialize(_instance())


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
    with pytest.raises(RuntimeError):
        with pretraining_writer.RoundRobinWriter([path]) as writer:
            writer.write(b"x")
            raise RuntimeError("killed")
    assert os.listdir(tmp_path) == []


def test_output_file_expansion():
    assert pretraining_writer.expand_output_files("a,b") == ["a", "b"]
    assert pretraining_writer.expand_output_files("o", 3) == ["o-00000-of-00003", "o-00001-of-00003",
                                                               "o-00002-of-00003"]
    with pytest.raises(ValueError):
        pretraining_writer.expand_output_files("", 1)


def test_json_is_written_atomically(tmp_path):
    path = tmp_path / "s.json"
    pretraining_writer.write_json_atomic(str(path), {"a": 1})
    assert path.read_text() == '{\n "a": 1\n}\n' and os.listdir(tmp_path) == ["s.json"]
