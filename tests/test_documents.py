"""Corpus reading: globs, document boundaries, and each kind of bad input with its count."""

import pytest

from albert_tf.pretraining_data import documents


def _lines(paths, **kwargs):
    counters = documents.InputCounters()
    return list(documents.iter_lines([str(p) for p in paths], counters, **kwargs)), counters


def _docs(text_lines, preprocess=str.strip):
    counters = documents.InputCounters()
    return list(documents.iter_documents(text_lines, preprocess, counters)), counters


def test_globs_expand_in_order_and_sorted(tmp_path):
    for name in ("b.txt", "a.txt", "c.log"):
        (tmp_path / name).write_text("x\n")
    files = documents.expand_input_patterns(f"{tmp_path}/*.txt,{tmp_path}/c.log")
    assert [f.rsplit("/", 1)[1] for f in files] == ["a.txt", "b.txt", "c.log"]


def test_empty_glob_and_missing_file_are_clear_errors(tmp_path):
    with pytest.raises(documents.InputError, match=r"pattern .*\*\.txt.* matched no files"):
        documents.expand_input_patterns(f"{tmp_path}/*.txt")
    with pytest.raises(documents.InputError, match="no such file: .*missing.txt"):
        documents.expand_input_patterns(f"{tmp_path}/missing.txt")
    with pytest.raises(documents.InputError, match="empty"):
        documents.expand_input_patterns("")


def test_lines_split_on_newline_only(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\r\ntwo\rstill two\nlast")
    lines, counters = _lines([path])
    assert lines == ["one\r\n", "two\rstill two\n", "last"]
    assert counters.lines == 3 and counters.input_bytes == path.stat().st_size


def test_undecodable_line_is_skipped_and_counted(tmp_path, caplog):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good\nbad \xff\xfe here\nalso good\n")
    lines, counters = _lines([path])
    assert lines == ["good\n", "also good\n"]
    assert counters.undecodable_lines == 1


def test_undecodable_line_fails_with_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good\n\nbad \xff here\n")
    with pytest.raises(documents.InputError, match=r"bad\.txt:3: undecodable UTF-8"):
        _lines([path], on_undecodable="fail")


def test_rb_mode_drops_undecodable_bytes(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"bad \xff here\n")
    lines, counters = _lines([path], ignore_decode_errors=True)
    assert lines == ["bad  here\n"] and counters.undecodable_lines == 1


def test_overlong_line_is_cut_and_counted(tmp_path):
    path = tmp_path / "long.txt"
    # 'é' is 2 bytes: the cap at 5 bytes falls inside the third one, which is dropped whole.
    path.write_bytes("ééééééé\nnext\n".encode() + b"x" * 50)
    lines, counters = _lines([path], max_line_bytes=5)
    assert lines == ["éé", "next\n", "xxxxx"]
    assert counters.overlong_lines == 2
    assert counters.input_bytes == path.stat().st_size


def test_documents_break_on_blank_lines_and_continue_across_files(tmp_path):
    first, second = tmp_path / "1.txt", tmp_path / "2.txt"
    first.write_text("a1\na2\n\nb1\n")  # no blank line at the end: b continues in the next file
    second.write_text("b2\n\n\n\nc1\n")
    lines, _ = _lines([first, second])
    docs, counters = _docs(lines)
    assert docs == [["a1", "a2"], ["b1", "b2"], ["c1"]]
    assert counters.empty_documents == 2  # the 2nd and 3rd consecutive blank lines


def test_a_line_that_preprocesses_to_nothing_is_a_boundary():
    docs, _ = _docs(["a\n", "\u0301\n", "b\n"], preprocess=lambda s: s.strip().replace("\u0301", ""))
    assert docs == [["a"], ["b"]]


def test_long_documents_are_split_when_asked():
    counters = documents.InputCounters()
    docs = list(documents.iter_documents([f"line{i}\n" for i in range(10)], str.strip, counters,
                                         max_document_bytes=10))
    assert [len(d) for d in docs] == [2, 2, 2, 2, 2] and counters.split_documents == 5


def test_counters_add():
    a, b = documents.InputCounters(lines=2, overlong_lines=1), documents.InputCounters(lines=3)
    a.add(b)
    assert a.lines == 5 and a.overlong_lines == 1


def test_globs_skip_temporaries_and_side_files(tmp_path):
    """A broad glob must not read a killed run's partial output or a run summary as text."""
    for name in ("a.txt", ".a.txt.incomplete-123", ".b.txt.tmp-45-0a1b2c3d", "o.tfrecord.summary.json"):
        (tmp_path / name).write_text("x\n")
    files = documents.expand_input_patterns(f"{tmp_path}/*")
    assert [f.rsplit("/", 1)[1] for f in files] == ["a.txt"]
    with pytest.raises(documents.InputError, match=r"matched no files \(only 2 temporary or summary"):
        documents.expand_input_patterns(f"{tmp_path}/.*")
    assert documents.expand_input_patterns(f"{tmp_path}/o.tfrecord.summary.json")  # named: read
