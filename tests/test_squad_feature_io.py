"""Feature TFRecords equal the original writer's files; metadata JSON round-trips."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.tasks.squad import feature_io, features, reader
from albert_tf.tokenization import load_sentencepiece


def _parse_all(path):
    rows = []
    for record in tf.data.TFRecordDataset(str(path)):
        example = tf.train.Example.FromString(record.numpy())
        rows.append({k: list(v.int64_list.value) for k, v in example.features.feature.items()})
    return rows


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_tfrecord_equals_original(mode, fixtures_dir, spm_model, tmp_path):
    golden = json.loads((fixtures_dir / "squad" / "squad_golden.json").read_text())
    args = golden["args"]
    training = mode == "train"
    examples = reader.read_squad_examples(fixtures_dir / "squad" / "squad_v2_tiny.json", training)
    path = tmp_path / f"{mode}.tfrecord"
    with feature_io.FeatureWriter(path, training) as writer:
        features.convert_examples_to_features(
            examples, load_sentencepiece(spm_model), args["max_seq_length"], args["doc_stride"],
            args["max_query_length"], training, output_fn=writer, do_lower_case=True)
    assert writer.num_features == 124
    ours = _parse_all(path)
    theirs = _parse_all(fixtures_dir / "squad" / f"squad_{mode}_features.tfrecord")
    assert ours == theirs
    batch = next(iter(feature_io.dataset(str(path), args["max_seq_length"], False, 4)))
    assert batch["input_ids"].dtype == tf.int32 and batch["p_mask"].shape == (4, 64)
    np.testing.assert_array_equal(batch["unique_ids"], [1000000000 + i for i in range(4)])


def test_metadata_round_trip(fixtures_dir, spm_model, tmp_path):
    examples = reader.read_squad_examples(fixtures_dir / "squad" / "squad_v2_tiny.json", False)
    feats = features.convert_examples_to_features(examples, load_sentencepiece(spm_model), 64,
                                                  16, 16, False)
    path = tmp_path / "left.jsonl"
    feature_io.write_feature_metadata(path, feats)
    back = feature_io.read_feature_metadata(path)
    for field in feature_io.METADATA_FIELDS:
        assert [getattr(f, field) for f in back] == [getattr(f, field) for f in feats]
    path.write_text(path.read_text().splitlines()[0] + "\n{not json\n")
    with pytest.raises(ValueError, match=r"left\.jsonl:2"):
        feature_io.read_feature_metadata(path)


def test_failed_writer_leaves_no_file(tmp_path):
    path = tmp_path / "f.tfrecord"
    with pytest.raises(RuntimeError, match="killed"):
        with feature_io.FeatureWriter(path, is_training=False):
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []
