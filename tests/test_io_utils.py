"""albert_tf.io_utils' one test of "is this path remote" and the absolute form of a path, which
every reader and writer of the package uses."""

import hashlib
import os
import pathlib

from albert_tf import io_utils
from albert_tf.data.feature_cache import file_digest
from albert_tf.tasks.classification.processors import read_tsv
from albert_tf.tasks.token_classification.data import read_sentences
from support.pipes import fifo_with


def test_urls_are_remote_and_everything_else_is_local():
    for url in ("gs://bucket/data/*.tfrecord", "s3://b/x", "hdfs://host/path", "file:///tmp/x"):
        assert io_utils.is_remote(url) and not io_utils.is_local(url)
    for path in ("data/x.txt", "/tmp/x", "~/x", "C:\\data\\x.txt", pathlib.Path("a") / "b"):
        assert io_utils.is_local(path) and not io_utils.is_remote(path)


def test_absolute_path_expands_local_paths_and_keeps_urls_and_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert io_utils.absolute_path("out/x") == str(tmp_path / "out" / "x")
    assert io_utils.absolute_path(pathlib.Path("out")) == str(tmp_path / "out")
    assert io_utils.absolute_path("~/x") == os.path.join(str(tmp_path / "home"), "x")
    assert io_utils.absolute_path("gs://bucket/out") == "gs://bucket/out"
    assert io_utils.absolute_path(None) is None


def test_a_pipe_is_read_once_and_kept_for_every_reader(tmp_path):
    # tf.io.gfile reads a pipe (`--test_file=<(zcat …)`) as empty: "no sentences".
    conll = "EU\tB-ORG\nrejects\tO\n\nPeter\tB-PER\n".encode()
    with fifo_with(tmp_path / "tags", conll) as fifo:
        assert io_utils.is_pipe(fifo) and not io_utils.is_pipe(tmp_path)
        assert [s.tokens for s in read_sentences(fifo)] == [["EU", "rejects"], ["Peter"]]
        assert file_digest(fifo) == hashlib.sha256(conll).hexdigest()  # the same bytes again
        assert io_utils.file_size(fifo) == len(conll)
    with fifo_with(tmp_path / "tsv", b"a\tb\nc\td\n") as fifo:
        assert read_tsv(fifo) == [(1, ["a", "b"]), (2, ["c", "d"])]
