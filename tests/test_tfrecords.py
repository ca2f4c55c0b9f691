"""Locating a damaged record among several TFRecord files."""

import tensorflow as tf

from albert_tf.data import tfrecords


def test_crc32c_and_the_tfrecord_mask(tmp_path):
    assert tfrecords.crc32c(b"123456789") == 0xE3069283  # the standard check value
    path = tmp_path / "a.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        writer.write(b"hello")
    data = path.read_bytes()
    assert int.from_bytes(data[8:12], "little") == tfrecords.masked_crc32c(data[:8])
    assert int.from_bytes(data[-4:], "little") == tfrecords.masked_crc32c(b"hello")


def test_the_damaged_file_is_found_by_the_offset(tmp_path):
    paths = []
    for k, size in enumerate((30, 10, 30)):
        path = tmp_path / f"{k}.tfrecord"
        with tf.io.TFRecordWriter(str(path)) as writer:
            for _ in range(20):
                writer.write(b"x" * size)
        paths.append(str(path))
    damaged = bytearray((tmp_path / "2.tfrecord").read_bytes())
    damaged[46 * 3 + 20] ^= 1  # data of the 4th record
    (tmp_path / "2.tfrecord").write_bytes(bytes(damaged))
    assert tfrecords.find_damaged_file(paths, "corrupted record at 138") == [paths[2]]
    (tmp_path / "0.tfrecord").write_bytes((tmp_path / "0.tfrecord").read_bytes()[:100])
    assert tfrecords.find_damaged_file(paths, "truncated record at 92") == [paths[0]]
    assert tfrecords.find_damaged_file(paths, "something else") == paths
