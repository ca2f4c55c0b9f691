"""albert_tf.labels: the one home of label sets (TensorFlow-free): parsing, deriving from
training data, agreement between two sets (order, case, HF's LABEL_i placeholders), labels.json."""

import json
import subprocess
import sys

import pytest

from albert_tf import labels as L
from albert_tf.errors import UsageError
from support.paths import REPO


def test_parse_takes_a_flag_or_a_list():
    assert L.parse("neg, pos ,,neu") == ["neg", "pos", "neu"]
    assert L.parse(["a", 1]) == ["a", "1"]
    assert L.parse("") is None and L.parse(None) is None and L.parse(" , ") is None


def test_derive_sorts_checks_case_and_counts():
    pairs = [("pos", "t:2"), ("neg", "t:3"), ("pos", "t:4")]
    assert L.derive(pairs, "t") == ["neg", "pos"]
    assert L.derive(pairs, "t", ["pos", "neg", "neu"]) == ["pos", "neg", "neu"]
    with pytest.raises(UsageError, match=r"^t:3: label 'neg' is not in --label_list \(pos\)$"):
        L.derive(pairs, "t", ["pos"])
    with pytest.raises(UsageError, match=r"^--label_list names a label twice: pos, pos$"):
        L.derive(pairs, "t", ["pos", "pos"])
    with pytest.raises(UsageError, match=r"^labels 'Pos' \(t:5\) and 'pos' \(t:2\) differ only "
                                         r"in case: one class or two\?"):
        L.derive(pairs + [("Pos", "t:5")], "t")
    with pytest.raises(UsageError, match=r"^t: 1 tag \(O\); a tagger needs at least 2$"):
        L.derive([("O", "t:1")], "t", words=L.TAGS)
    with pytest.raises(UsageError, match=r"^t: 0 labels \(\); a multi-label classifier needs "
                                         r"at least 1$"):
        L.derive([], "t", words=L.LABEL_SETS, minimum=1)


def test_check_known_names_the_row_and_the_set():
    with pytest.raises(UsageError, match=r"^d:7: tag 'B-Z' was never seen in training \(the "
                                         r"training tags are O, B-X; pass --label_list"):
        L.check_known([("O", "d:6"), ("B-Z", "d:7")], ["O", "B-X"], False, words=L.TAGS)


@pytest.mark.parametrize("given, own, how", [
    (["neg", "pos"], ["neg", "pos"], None),
    (["ENTAILMENT", "neutral"], ["entailment", "NEUTRAL"], None),  # case-only: the same names
    (["pos", "neg"], ["neg", "pos"], "order"),
    (["a", "b", "c"], ["neg", "pos"], "count"),
    (["a", "b"], ["neg", "pos"], "names"),
    (["a", "b", "c"], ["LABEL_0", "LABEL_1", "LABEL_2"], None),  # HF's placeholders name none
    (["a", "b"], ["LABEL_0", "LABEL_1", "LABEL_2"], "count"),
    (["LABEL_0", "LABEL_1"], ["neg", "pos"], None),
])
def test_disagreement(given, own, how):
    assert L.disagreement(given, own) == how


def test_placeholders():
    assert L.placeholders(3) == ["LABEL_0", "LABEL_1", "LABEL_2"]
    assert L.are_placeholders(["LABEL_0", "LABEL_1"])
    assert not L.are_placeholders(["LABEL_1", "LABEL_0"]) and not L.are_placeholders([])


def test_label_file_reads_writes_and_checks_a_heads_count(tmp_path):
    found = L.LabelFile.read(tmp_path)
    assert found.names is None and found.settings == {}
    found.check_or_write(["b", "a"], settings={"task_type": "multi_label", "threshold": 0.3})
    assert json.loads((tmp_path / "labels.json").read_text()) == {
        "labels": ["b", "a"], "task_type": "multi_label", "threshold": 0.3}
    again = L.LabelFile.read(tmp_path)
    assert again.names == ["b", "a"] and again.task_type == "multi_label"
    assert again.for_head(2, "classifier", "m") == ["b", "a"]
    with pytest.raises(UsageError, match=r"labels\.json names 2 labels \(b, a\) but the "
                                         r"classifier head of m has 3 outputs"):
        again.for_head(3, "classifier", "m")
    with pytest.raises(UsageError, match=r"--task_type=multi_label run but this run has "
                                         r"--task_type=classification"):
        again.check_or_write(["b", "a"])
    (tmp_path / "labels.json").write_text("[1, 2]")
    with pytest.raises(UsageError, match=r"expected a JSON list of label names"):
        L.LabelFile.read(tmp_path)


def test_the_module_loads_no_tensorflow():
    code = ("import sys, albert_tf.labels; "
            "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_labels_have_one_home():
    """The LABEL_i rule and the case check live in albert_tf/labels.py only, and the token
    classifier takes nothing from the text classifier's package."""
    package = REPO / "albert_tf"
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name != "labels.py":
            assert 'f"LABEL_{i}"' not in text and "def case_clash" not in text, path
    for path in (package / "tasks" / "token_classification").glob("*.py"):
        assert "albert_tf.tasks.classification" not in path.read_text(encoding="utf-8"), path
