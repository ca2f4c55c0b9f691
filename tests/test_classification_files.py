"""Your own files (albert_tf.tasks.classification.files): CSV per RFC 4180, TSV, JSONL, and one line
naming file, line and column for every bad file."""

import json

import pytest

from albert_tf import labels
from albert_tf.tasks.classification import files as D
from albert_tf.tasks.classification.files import Columns, CustomDataError, CustomReader


def _write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def _jsonl(tmp_path, rows, name="d.jsonl"):
    return _write(tmp_path, name, "".join(json.dumps(r) + "\n" for r in rows))


CSV = ('id,text,label\r\n'
       '7,"Hello, world",greeting\r\n'
       '8,"She said ""no""\nand left.",quote\r\n'
       '9,plain text,greeting\r\n')


def _labels(examples, path, given=None):
    return labels.derive([(e.label, e.source) for e in examples], path, given,
                         error=D.CustomDataError)


def test_csv_rfc4180_quotes_commas_and_newlines(tmp_path):
    path = _write(tmp_path, "d.csv", CSV)
    examples = CustomReader("csv", Columns(id="id")).read(path, "train")
    assert [(e.guid, e.text_a, e.label) for e in examples] == [
        ("7", "Hello, world", "greeting"), ("8", 'She said "no"\nand left.', "quote"),
        ("9", "plain text", "greeting")]
    # The third record starts on line 5: the second spans lines 3-4.
    assert examples[2].source.startswith(f"{path}:5:")
    assert _labels(examples, path) == ["greeting", "quote"]


def test_tsv_and_jsonl_pairs_and_ids_default_to_row_numbers(tmp_path):
    tsv = _write(tmp_path, "d.tsv", "q\tp\ty\nWhy?\tBecause.\tyes\nWho?\tNobody.\tno\n")
    columns = Columns(text_a="q", text_b="p", label="y")
    examples = CustomReader("tsv", columns).read(tsv, "train")
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in examples] == [
        ("1", "Why?", "Because.", "yes"), ("2", "Who?", "Nobody.", "no")]
    jsonl = _jsonl(tmp_path, [{"q": "Why?", "p": "Because.", "y": 1}, {},
                              {"q": "Who?", "p": "Nobody.", "y": 0}][::2])
    examples = CustomReader("jsonl", columns).read(jsonl, "train")
    assert [e.label for e in examples] == ["1", "0"]


def test_test_file_without_labels_and_regression(tmp_path):
    path = _write(tmp_path, "t.csv", "text\nfirst\nsecond\n")
    examples = CustomReader("csv", Columns()).read(path, "test", with_labels=False)
    assert [(e.guid, e.label) for e in examples] == [("1", None), ("2", None)]
    path = _write(tmp_path, "r.csv", "text,label\na,0.5\nb,-2\n")
    assert [e.label for e in CustomReader("csv", Columns(), regression=True).read(path, "train")] \
        == [0.5, -2.0]


def _error(call):
    with pytest.raises(CustomDataError, match=r"^[^\n]+$") as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_column_names_it_and_the_header(tmp_path):
    path = _write(tmp_path, "d.csv", "sentence,label\nhi,a\n")
    message = _error(lambda: CustomReader("csv", Columns()).read(path, "train"))
    assert message.startswith(f"{path}:1: no column 'text' (--text_a_column)")
    assert "sentence, label" in message
    path = _jsonl(tmp_path, [{"text": "a", "label": "x"}, {"text": "b"}])
    message = _error(lambda: CustomReader("jsonl", Columns()).read(path, "train"))
    assert message.startswith(f"{path}:2: no key 'label' (--label_column)")


def test_label_errors(tmp_path):
    train = CustomReader("csv", Columns()).read(
        _write(tmp_path, "train.csv", "text,label\na,x\nb,y\nc,z\n"), "train")
    message = _error(lambda: _labels(train, "train.csv", ["x", "y"]))
    assert message.startswith(f"{tmp_path / 'train.csv'}:4: column 'label' (--label_column): "
                              "label 'z' is not in --label_list (x, y)")
    dev = CustomReader("csv", Columns()).read(
        _write(tmp_path, "dev.csv", "text,label\na,x\nb,w\n"), "dev")
    message = _error(lambda: labels.check_known([(e.label, e.source) for e in dev],
                                                ["x", "y", "z"], False, error=D.CustomDataError))
    assert message.startswith(f"{tmp_path / 'dev.csv'}:3: column 'label'")
    assert "'w' was never seen in training" in message
    one = CustomReader("csv", Columns()).read(
        _write(tmp_path, "one.csv", "text,label\na,x\nb,x\n"), "train")
    assert "1 class (x); a classifier needs at least 2" in _error(
        lambda: _labels(one, "one.csv"))


def test_empty_text_non_numeric_target_and_non_utf8(tmp_path):
    path = _write(tmp_path, "e.csv", 'text,label\na,x\n"  ",y\n')
    assert _error(lambda: CustomReader("csv", Columns()).read(path, "train")) == \
        f"{path}:3: column 'text' (--text_a_column): empty text"
    path = _write(tmp_path, "r.tsv", "text\tlabel\na\t1.5\nb\thigh\n")
    assert _error(lambda: CustomReader("tsv", Columns(), regression=True).read(path, "train")) == \
        f"{path}:3: column 'label' (--label_column): regression target 'high' is not a number"
    path = _write(tmp_path, "b.csv", b"text,label\nok,x\ncaf\xe9,y\n", mode="wb")
    message = _error(lambda: CustomReader("csv", Columns()).read(path, "train"))
    assert message.startswith(f"{path}:3: not valid UTF-8") and "column 4" in message


def test_malformed_files(tmp_path):
    path = _write(tmp_path, "w.csv", "text,label\na,x,extra\n")
    assert _error(lambda: D.read_rows(path, "csv")).startswith(
        f"{path}:2: 3 CSV fields but the header has 2")
    path = _write(tmp_path, "h.csv", "text,label\n")
    assert "only a header row" in _error(lambda: D.read_rows(path, "csv"))
    path = _write(tmp_path, "j.jsonl", '{"text": "a"}\n{"text": \n')
    assert _error(lambda: D.read_rows(path, "jsonl")).startswith(
        f"{path}:2: column 10: not valid JSON")
    assert "no such file" in _error(lambda: D.read_rows(str(tmp_path / "none.csv"), "csv"))
