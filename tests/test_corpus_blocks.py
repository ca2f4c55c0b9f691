"""Blocks of input bytes read on their own give the sequential reader's documents and counts."""

import dataclasses
import os

import pytest

from albert_tf.pretraining_data import corpus_blocks, documents

FILES = [
    b"\n  \nfirst doc line one\nline two\n\n\nsecond doc\n",  # leading and repeated blank lines
    b"continues in the next file\nbad \xff byte\n" + b"y" * 40 + b"\n\nthird\n",
    b"",  # an empty file
    b"no newline at the end",
    b"fourth\n\n" + b"long " * 30 + b"\nafter the long line\n\n",
]


def _write(tmp_path):
    paths = []
    for i, data in enumerate(FILES):
        path = tmp_path / f"part{i}.txt"
        path.write_bytes(data)
        paths.append(str(path))
    return paths


def _sequential(paths, **kw):
    counters = documents.InputCounters()
    lines = documents.iter_lines(paths, counters, on_undecodable="skip", max_line_bytes=kw["max_line_bytes"])
    docs = list(documents.iter_documents(lines, str.strip, counters,
                                         max_document_bytes=kw["max_document_bytes"]))
    return docs, counters


def _by_blocks(paths, block_bytes, **kw):
    corpus = corpus_blocks.layout(paths, [os.path.getsize(p) for p in paths], block_bytes)
    reader = corpus_blocks.BlockReader(corpus, str.strip, **kw)
    counters = documents.InputCounters(files=len(paths))
    docs = []
    for index in reversed(range(corpus.num_blocks)):  # any order: blocks are independent
        docs = reader.read(index, counters) + docs
    return docs, counters


@pytest.mark.parametrize("block_bytes", [1, 2, 3, 7, 16, 50, 1000])
@pytest.mark.parametrize("max_document_bytes", [0, 30])
def test_blocks_hold_the_sequential_documents_once(tmp_path, block_bytes, max_document_bytes):
    paths = _write(tmp_path)
    kw = dict(max_line_bytes=64, max_document_bytes=max_document_bytes)
    expected, expected_counts = _sequential(paths, **kw)
    docs, counts = _by_blocks(paths, block_bytes, **kw)
    assert [d.lines for d in docs] == expected
    assert dataclasses.asdict(counts) == dataclasses.asdict(expected_counts)
    assert counts.undecodable_lines == 1 and counts.overlong_lines == 1
    assert counts.split_documents == (4 if max_document_bytes else 0)
    # A document's name is the stream offset of its first line, whatever the block size.
    assert docs[0].offset == 4 and docs == sorted(docs)


def test_documents_are_named_by_offset_not_by_block(tmp_path):
    paths = _write(tmp_path)
    small, _ = _by_blocks(paths, 5, max_line_bytes=64)
    large, _ = _by_blocks(paths, 10_000, max_line_bytes=64)
    assert small == large


def test_fail_names_the_file_and_line(tmp_path):
    paths = _write(tmp_path)
    with pytest.raises(documents.InputError, match=r"part1\.txt:2: undecodable UTF-8"):
        _by_blocks(paths, 8, on_undecodable="fail")


def test_rb_mode_drops_bad_bytes_and_counts_once(tmp_path):
    paths = _write(tmp_path)
    docs, counts = _by_blocks(paths, 3, ignore_decode_errors=True)
    assert ["second doc", "continues in the next file", "bad  byte", "y" * 40] in [d.lines for d in docs]
    assert counts.undecodable_lines == 1
