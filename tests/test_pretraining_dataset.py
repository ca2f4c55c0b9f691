"""Pretraining input files: globs, and the checks that name the file, feature and flag."""

import os

import pytest
import tensorflow as tf

from albert_tf.data import pretraining_dataset, schema
from albert_tf.errors import InputError


def _example(seq=8, preds=3, top_id=9):
    ints = {"input_ids": [2, top_id] + [0] * (seq - 2), "input_mask": [1, 1] + [0] * (seq - 2),
            "segment_ids": [0] * seq, "token_boundary": [1] * seq,
            "masked_lm_positions": [1] + [0] * (preds - 1), "masked_lm_ids": [5] + [0] * (preds - 1),
            "next_sentence_labels": [0]}
    features = {k: schema.int_feature(v) for k, v in ints.items()}
    features["masked_lm_weights"] = schema.float_feature([1.0] + [0.0] * (preds - 1))
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def _write(path, records):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    return str(path)


def test_globs_skip_side_files_and_name_the_pattern(tmp_path):
    for name in ("a.tfrecord", "a.tfrecord.summary.json", ".b.tfrecord.incomplete-77",
                 ".c.tfrecord.tmp-12-0a1b2c3d"):
        (tmp_path / name).write_bytes(b"")
    assert pretraining_dataset.input_files(f"{tmp_path}/*") == [str(tmp_path / "a.tfrecord")]
    with pytest.raises(InputError, match=r"no file matches .*missing-\*"):
        pretraining_dataset.input_files(f"{tmp_path}/missing-*")
    with pytest.raises(FileNotFoundError, match="no file matches"):  # as before
        pretraining_dataset.input_files(f"{tmp_path}/.*.tmp-*")


def test_files_that_fit_pass(tmp_path):
    """Records that fit (the largest id, 9, inside a vocabulary of 10) pass the check, and the
    reader gives them back as written."""
    paths = [_write(tmp_path / "a.tfrecord", [_example(), _example()]),
             _write(tmp_path / "b.tfrecord", [_example(top_id=7)])]
    assert pretraining_dataset.check_pretraining_files(paths, 8, 3, vocab_size=10) is None
    batch = next(iter(pretraining_dataset.pretraining_dataset(paths, 8, 3, 3, is_training=False)))
    assert batch["input_ids"].numpy()[:, 1].tolist() == [9, 9, 7]
    assert batch["input_ids"].shape == (3, 8) and batch["masked_lm_positions"].shape == (3, 3)
    assert batch["masked_lm_weights"].numpy()[:, 0].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("args,message", [
    ((16, 3), r"feature 'input_ids' of the first record holds 8 values but --max_seq_length=16; "
              r"pass --max_seq_length=8"),
    ((8, 5), r"feature 'masked_lm_positions' .* holds 3 values but --max_predictions_per_seq=5"),
    ((8, 3, 9), r"token id 9, outside the model's vocabulary \(config key `vocab_size`=9\)"),
])
def test_mismatched_records_name_file_feature_and_flag(tmp_path, args, message):
    path = _write(tmp_path / "a.tfrecord", [_example()])
    with pytest.raises(InputError, match=message) as caught:
        pretraining_dataset.check_pretraining_files([path], *args)
    assert str(caught.value).startswith(path + ": ")


def test_empty_foreign_and_truncated_files_are_named(tmp_path):
    good = _write(tmp_path / "good.tfrecord", [_example()])
    empty = _write(tmp_path / "empty.tfrecord", [])
    with pytest.raises(InputError, match=f"^no records in {empty}$"):
        pretraining_dataset.check_pretraining_files([good, empty], 8, 3)
    text = tmp_path / "notes.txt"
    text.write_text("not a TFRecord file at all\n" * 4)
    with pytest.raises(InputError, match=rf"^{text}: not a TFRecord file, or corrupted or truncated"):
        pretraining_dataset.check_pretraining_files([good, str(text)], 8, 3)
    truncated = tmp_path / "cut.tfrecord"
    truncated.write_bytes((tmp_path / "good.tfrecord").read_bytes()[:-20])
    with pytest.raises(InputError, match=rf"^{truncated}: not a TFRecord file, or corrupted"):
        pretraining_dataset.check_pretraining_files([str(truncated)], 8, 3)
    other = _write(tmp_path / "other.tfrecord", [tf.train.Example().SerializeToString()])
    with pytest.raises(InputError, match=rf"^{other}: the first record has no int64_list feature 'input_ids'"):
        pretraining_dataset.check_pretraining_files([other], 8, 3)


def test_read_errors_mid_file_name_the_damaged_file(tmp_path):
    records = [_example()] * 50
    files = [_write(tmp_path / f"{k}.tfrecord", records) for k in range(3)]
    data = bytearray((tmp_path / "1.tfrecord").read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside a record in the middle of the file
    (tmp_path / "1.tfrecord").write_bytes(bytes(data))
    dataset = pretraining_dataset.pretraining_dataset(files, 8, 3, batch_size=4, is_training=False)
    with pytest.raises(tf.errors.DataLossError, match="corrupted record") as caught:
        for _ in dataset.take(100):
            pass
    message = pretraining_dataset.describe_read_error(caught.value, files)
    assert message.startswith(files[1] + ": corrupted or truncated TFRecord"), message
    assert pretraining_dataset.describe_read_error(tf.errors.OutOfRangeError(None, None, "End of sequence"),
                                                   files[:1]) == f"no records in {files[0]}"
    assert os.path.exists(files[1])
