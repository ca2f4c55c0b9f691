"""The files half of checkpoints (training/checkpoint_files): copies leave the state file and
other checkpoints alone."""

import tensorflow as tf

from albert_tf.training.checkpoint_files import copy_checkpoint


def test_copy_checkpoint_leaves_state_file_and_other_files(tmp_path):
    for suffix, data in ((".index", b"i"), (".data-00000-of-00001", b"d")):
        (tmp_path / f"model.ckpt-5{suffix}").write_bytes(data)
    (tmp_path / "model.ckpt-50.index").write_bytes(b"other")
    tf.compat.v1.train.update_checkpoint_state(str(tmp_path), "model.ckpt-5")
    state = (tmp_path / "checkpoint").read_text()
    copied = copy_checkpoint(str(tmp_path / "model.ckpt-5"), str(tmp_path / "copy"))
    assert [d.rsplit("/", 1)[1] for _, d in copied] == ["copy.data-00000-of-00001", "copy.index"]
    assert (tmp_path / "checkpoint").read_text() == state
    assert (tmp_path / "model.ckpt-50.index").read_bytes() == b"other"
