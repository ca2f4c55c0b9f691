"""TSV as it is (albert_tf.tasks.classification.files): `--task_name=tsv` splits each line on
tabs with no quote processing (NSMC-style reviews hold bare `"`); `--quotechar` opts in to
CSV-style quoting; a bad row is one line naming the file, line and column."""

import pytest

from albert_tf.tasks.classification import files as D
from albert_tf.tasks.classification.config import ClassifierRunConfig, FilesConfig
from albert_tf.tasks.classification.files import Columns, CustomDataError, CustomReader
from albert_tf.tasks.classification.sources import FileSource
from albert_tf.errors import UsageError

# NSMC's layout: id, document, label; quotes where a reviewer typed them, unbalanced too.
NSMC = ('id\tdocument\tlabel\n'
        '9976970\t"진짜 짜증나네요 목소리\t0\n'
        '3819312\t흠..."포스터"보고 초딩영화줄\t1\n'
        '10265843\t"너무재밓었다"\t1\n'
        '6483659\t그 "한 장면" 때문에 본다\r\n')


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def test_tsv_keeps_bare_quotes_as_text(tmp_path):
    path = _write(tmp_path, "train.tsv", NSMC.rsplit("\n", 2)[0] + "\n")
    examples = CustomReader("tsv", Columns("document", id="id")).read(path, "train")
    assert [e.text_a for e in examples] == [
        '"진짜 짜증나네요 목소리', '흠..."포스터"보고 초딩영화줄', '"너무재밓었다"']
    assert [e.guid for e in examples] == ["9976970", "3819312", "10265843"]
    assert examples[2].source.startswith(f"{path}:4")


def test_tsv_test_file_without_labels_and_crlf(tmp_path):
    path = _write(tmp_path, "test.tsv", 'id\tdocument\r\n1\t"a\r\n2\tb "c" d\r\n')
    examples = CustomReader("tsv", Columns("document", id="id")).read(path, "test",
                                                                     with_labels=False)
    assert [(e.guid, e.text_a, e.label) for e in examples] == [("1", '"a', None),
                                                               ("2", 'b "c" d', None)]


def test_quotechar_opts_in_to_csv_quoting(tmp_path):
    path = _write(tmp_path, "q.tsv", 'text\tlabel\n"tab\there"\tx\n"said ""hi"""\ty\n')
    assert [r.values["text"] for r in D.read_rows(path, "tsv", quotechar='"')] == \
        ["tab\there", 'said "hi"']
    # As it is, the first row has three fields: one line naming file, line and column.
    with pytest.raises(CustomDataError, match="3 TSV fields but the header has 2") as caught:
        D.read_rows(path, "tsv")
    assert str(caught.value).startswith(
        f"{path}:2: 3 TSV fields but the header has 2 (text, label); column 3 is beyond")


def test_bad_rows_name_file_line_and_column(tmp_path):
    path = _write(tmp_path, "short.tsv", "id\ttext\tlabel\n1\tfine\t0\n2\tno label\n")
    with pytest.raises(CustomDataError, match=r"short.tsv:3: 2 TSV .*; column 3 \('label'\) is missing"):
        D.read_rows(path, "tsv")
    path = _write(tmp_path, "bad.tsv", 'text\tlabel\na\t"b"c\n')
    with pytest.raises(CustomDataError, match=r"bad.tsv:2: column 2: not valid TSV with "
                                              r"--quotechar="):
        D.read_rows(path, "tsv", quotechar='"')


def test_quotechar_flag_is_checked_and_keys_the_cache(tmp_path):
    def source(task_name, quotechar):
        config = ClassifierRunConfig(task_name=task_name, output_dir=str(tmp_path),
                                     files=FilesConfig(train_file="t", quotechar=quotechar))
        return FileSource(config)

    for task_name, quotechar in (("tsv", "ab"), ("tsv", "\t"), ("jsonl", '"')):
        with pytest.raises(UsageError, match="--quotechar"):
            source(task_name, quotechar).validate()
    source("tsv", "'").validate()
    plain, quoted = source("tsv", None), source("tsv", "'")
    plain._labels = quoted._labels = ["a", "b"]
    assert plain.cache_key("train") != quoted.cache_key("train")
