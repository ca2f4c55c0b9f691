"""Your own data is read as written or refused in one line naming the file, line and column (or
the argument): no silent coercion (issue 27, items 8 and 10).

The rules: a text is a string; a class label is a string or a whole number (JSON 1 is the class
"1"; true, 0.0 and null are refused); a label's surrounding spaces are dropped, and two labels
that differ only in case are refused unless --label_list names both; a regression target is a
finite number; a header names each column once (a JSON object each key once); a test file's ids
are unique and not empty."""

import json
import re

import numpy as np
import pytest

from bad_inputs import one_error_line

from albert_tf import labels
from albert_tf.tasks.classification import files as D
from albert_tf.tasks.classification.files import Columns, CustomDataError, CustomReader


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


def _jsonl(tmp_path, rows, name="d.jsonl"):
    return _write(tmp_path, name, "".join(
        (r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def _train_labels(path, file_format="csv", label_list=None):
    examples = CustomReader(file_format, Columns()).read(path, "train")
    return labels.derive([(e.label, e.source) for e in examples], path, label_list,
                         error=D.CustomDataError)


# ----------------------------------------------------------------------------- labels' spelling

def test_labels_differing_only_in_case_are_refused_naming_both(tmp_path):
    path = _write(tmp_path, "t.csv", "text,label\na,pos\nb,neg\nc,Pos\n")
    with pytest.raises(CustomDataError, match=re.escape(
            f"labels 'Pos' ({path}:4: column 'label' (--label_column)) and 'pos' ({path}:2: ")):
        _train_labels(path)
    # Naming both in --label_list keeps them apart, on purpose.
    assert _train_labels(path, label_list=["neg", "pos", "Pos"]) == ["neg", "pos", "Pos"]


def test_surrounding_spaces_of_a_label_are_dropped(tmp_path):
    path = _jsonl(tmp_path, [{"text": "a", "label": "pos"}, {"text": "b", "label": " pos "},
                             {"text": "c", "label": "neg"}])
    assert _train_labels(path, "jsonl") == ["neg", "pos"]


def test_one_error_line_for_labels_differing_in_case(tmp_path, capsys):
    path = _write(tmp_path, "t.csv", "text,label\na,Yes\nb,yes\n")
    line = one_error_line(lambda: _train_labels(path), capsys)
    assert path in line and "'Yes'" in line and "'yes'" in line


# ----------------------------------------------------------------------------- JSONL value types

@pytest.mark.parametrize("value, kind", [(["a", "b"], "list"), ({"x": 1}, "object"),
                                         (3, "number"), (None, "null"), (True, "true")])
def test_jsonl_text_that_is_not_a_string_is_refused(value, kind, tmp_path):
    # Was trained on as its JSON text ('["a", "b"]'), or "empty text" for null.
    path = _jsonl(tmp_path, [{"text": "fine", "label": "a"}, {"text": value, "label": "b"}])
    with pytest.raises(CustomDataError, match=re.escape(
            f"{path}:2: key 'text' (--text_a_column): expected a string, got {kind}")):
        CustomReader("jsonl", Columns()).read(path, "train")


@pytest.mark.parametrize("value, kind", [(True, "true"), (0.0, "number 0.0"), (1.5, "number 1.5"),
                                         (None, "null"), ([1], "list")])
def test_jsonl_class_labels_are_strings_or_whole_numbers(value, kind, tmp_path):
    # true and 0.0 became classes "true" and "0.0" beside "1".
    path = _jsonl(tmp_path, [{"text": "a", "label": 1}, {"text": "b", "label": value}])
    with pytest.raises(CustomDataError, match=re.escape(
            f"{path}:2: key 'label' (--label_column): {kind} is not a class label")):
        CustomReader("jsonl", Columns()).read(path, "train")


def test_jsonl_whole_numbers_name_classes(tmp_path):
    path = _jsonl(tmp_path, [{"text": "a", "label": 1}, {"text": "b", "label": "0"},
                             {"text": "c", "label": 0}])
    assert _train_labels(path, "jsonl") == ["0", "1"]


def test_jsonl_regression_targets_are_numbers(tmp_path):
    path = _jsonl(tmp_path, [{"text": "a", "label": 1}, {"text": "b", "label": "2.5"},
                             {"text": "c", "label": -0.5}])
    reader = CustomReader("jsonl", Columns(), regression=True)
    assert [e.label for e in reader.read(path, "train")] == [1.0, 2.5, -0.5]
    path = _jsonl(tmp_path, [{"text": "a", "label": 1}, {"text": "b", "label": True}], "b.jsonl")
    with pytest.raises(CustomDataError, match=re.escape(f"{path}:2: key 'label'")):
        reader.read(path, "train")


# ----------------------------------------------------------------------------- regression targets

@pytest.mark.parametrize("target", ["nan", "inf", "-Infinity", "NaN"])
def test_non_finite_regression_targets_are_refused_at_reading(target, tmp_path):
    # Was "loss is nan at step 1 ... from step None" once training began.
    path = _write(tmp_path, "r.csv", f"text,label\na,0.5\nb,{target}\n")
    with pytest.raises(CustomDataError, match=re.escape(
            f"{path}:3: column 'label' (--label_column): regression target '{target}' is not a "
            "finite number")):
        CustomReader("csv", Columns(), regression=True).read(path, "train")


def test_json_nan_regression_target_is_refused(tmp_path):
    path = _jsonl(tmp_path, ['{"text": "a", "label": 1}', '{"text": "b", "label": NaN}'])
    with pytest.raises(CustomDataError, match=re.escape(f"{path}:2:") + ".*not a finite number"):
        CustomReader("jsonl", Columns(), regression=True).read(path, "train")


# ----------------------------------------------------------------------------- columns and ids

def test_a_header_repeating_a_column_is_refused_naming_it(tmp_path):
    # The last "label" column won, silently.
    path = _write(tmp_path, "t.csv", "text,label,label\na,pos,neg\nb,neg,pos\n")
    with pytest.raises(CustomDataError, match=re.escape(
            f"{path}:1: column 'label' appears twice in the header (columns 2 and 3)")):
        CustomReader("csv", Columns()).read(path, "train")
    path = _write(tmp_path, "t.tsv", "text\tlabel\ttext\na\tpos\tb\n")
    with pytest.raises(CustomDataError, match="column 'text' appears twice"):
        CustomReader("tsv", Columns()).read(path, "train")


def test_a_json_object_repeating_a_key_is_refused_naming_it(tmp_path):
    path = _jsonl(tmp_path, ['{"text": "a", "label": "x"}', '{"text": "b", "label": "x", '
                                                             '"label": "y"}'])
    with pytest.raises(CustomDataError, match=re.escape(f"{path}:2: key 'label' appears twice")):
        CustomReader("jsonl", Columns()).read(path, "train")


@pytest.mark.parametrize("ids, line, problem", [
    (["a1", "a2", "a1"], 4, "id 'a1' repeats line 2"), (["a1", " ", "a3"], 3, "empty id")])
def test_test_ids_are_unique_and_not_empty(ids, line, problem, tmp_path):
    rows = "".join(f"{i},text {n}\n" for n, i in enumerate(ids))
    path = _write(tmp_path, "test.csv", "id,text\n" + rows)
    with pytest.raises(CustomDataError, match=re.escape(
            f"{path}:{line}: column 'id' (--id_column): {problem}")):
        CustomReader("csv", Columns(id="id")).read(path, "test", with_labels=False)


# ----------------------------------------------------------------------------- TextClassifier

@pytest.fixture()
def classifier(spm_model, tmp_path):
    from albert_tf.tasks.classification.text_classifier import TextClassifier
    from support.configs import GLUE_TINY

    (tmp_path / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    return TextClassifier(str(tmp_path / "albert_config.json"), None, spm_model_file=spm_model,
                          output_dir=str(tmp_path / "out"), max_seq_length=32)


@pytest.mark.parametrize("labels, kind", [
    (np.array([1.0, 0.0]), "float64"), ([1.0, 0.0], "float"), (np.array([True, False]), np.bool_.__name__),
    ([True, False], "bool")])
def test_text_classifier_refuses_float_and_bool_labels_alike(classifier, labels, kind):
    # np.array([1.0, 0.0]) made classes "1.0"/"0.0" while Python floats were refused.
    from albert_tf.tasks.classification.text_classifier import TextClassifierError

    with pytest.raises(TextClassifierError, match=re.escape(
            f"labels[0]: a label must be a name (str) or a class id (int), got {kind}")):
        classifier.fit(["a text", "another"], labels)


def test_text_classifier_refuses_labels_differing_in_case(classifier):
    from albert_tf.tasks.classification.text_classifier import TextClassifierError

    with pytest.raises(TextClassifierError, match=re.escape(
            "labels 'Pos' (labels[2]) and 'pos' (labels[0]) differ only in case")):
        classifier.fit(["a", "b", "c"], ["pos", "neg", "Pos"])
    assert classifier.labels is None
