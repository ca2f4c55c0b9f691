"""The re-implemented official metrics reproduce the official scripts' scores on real predictions."""

import json

import pytest

from albert_tf.tasks.squad import metrics


def _decimals(value):
    text = repr(value)
    return len(text.split(".")[1]) if "." in text else 0


def _check(result, expected):
    for key, value in expected.items():
        assert round(result[key], _decimals(value)) == value, key


def _load(path):
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def expected(data_dir):
    return _load(data_dir / "squad" / "EXPECTED_SCORES.json")


def test_v1_1_leaderboard_scores(data_dir, expected):
    folder = data_dir / "squad" / "v1.1"
    dataset = _load(folder / "dev-v1.1.json")["data"]
    for name, scores in expected["v1.1/dev-v1.1.json"].items():
        _check(metrics.evaluate_v1(dataset, _load(folder / name)), scores)


@pytest.mark.parametrize("data_name", ["dev-v2.0.derived-full.json", "dev-v2.0.first5articles.json"])
def test_v2_0_leaderboard_scores(data_dir, expected, data_name):
    folder = data_dir / "squad" / "v2.0"
    dataset = _load(folder / data_name)["data"]
    for name, scores in expected[f"v2.0/{data_name}"].items():
        if " + -n " in name:
            pred_name, rest = name.split(" + -n ")
            na_name, threshold = rest.split(" -t ")
            result = metrics.evaluate_v2(dataset, _load(folder / pred_name), _load(folder / na_name),
                                         float(threshold))
            assert {"best_exact", "best_f1_thresh", "HasAns_exact", "NoAns_total"} <= set(result)
        else:
            result = metrics.evaluate_v2(dataset, _load(folder / name))
            assert "best_f1" not in result
        _check(result, scores)


def test_v2_no_answer_rules():
    assert metrics.compute_f1("", "") == 1 and metrics.compute_f1("", "x") == 0
    assert metrics.compute_exact("The Cat!", "cat") == 1
    dataset = [{"paragraphs": [{"qas": [{"id": "a", "answers": []},
                                        {"id": "b", "answers": [{"text": "red fox"}]}]}]}]
    result = metrics.evaluate_v2(dataset, {"a": "", "b": "red"}, {"a": 0.9, "b": 0.1})
    assert result["exact"] == 50.0 and result["f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    assert result["NoAns_total"] == 1 and result["HasAns_total"] == 1


def test_version_from_data_file():
    assert metrics.is_version_2({"version": "v2.0", "data": []})
    assert not metrics.is_version_2({"version": "1.1", "data": []})
