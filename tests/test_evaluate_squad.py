"""`python -m albert_tf.evaluate_squad` has the official scripts' command line and output keys."""

import json
import runpy
import subprocess
import sys

import pytest

from albert_tf import evaluate_squad
from support.paths import REPO


def test_v1_command_line_prints_official_keys(data_dir, capsys):
    folder = data_dir / "squad" / "v1.1"
    evaluate_squad.main([str(folder / "dev-v1.1.json"),
                         str(folder / "predictions" / "rnet_plus_ensemble_msra.json")])
    result = json.loads(capsys.readouterr().out)
    assert list(result) == ["exact_match", "f1"]
    assert result["exact_match"] == 82.46925260170293 and result["f1"] == 88.47785965423249


def test_v2_with_na_prob_file(data_dir, tmp_path):
    folder = data_dir / "squad" / "v2.0"
    out = tmp_path / "eval.json"
    evaluate_squad.main([str(folder / "dev-v2.0.derived-full.json"),
                         str(folder / "predictions" / "nstats_bert_predictions.json"),
                         "--na-prob-file", str(folder / "predictions" / "nstats_bert_null_odds.json"),
                         "-t", "0.0", "-o", str(out)])
    result = json.loads(out.read_text())
    assert list(result) == ["exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
                            "NoAns_exact", "NoAns_f1", "NoAns_total", "best_exact",
                            "best_exact_thresh", "best_f1", "best_f1_thresh"]
    assert round(result["best_f1"], 4) == 76.1034 and round(result["best_f1_thresh"], 4) == -4.9532


def test_bad_prediction_file_is_a_clear_error(data_dir, tmp_path):
    bad = tmp_path / "pred.json"
    bad.write_text("{oops")
    with pytest.raises(SystemExit, match=r"pred\.json: not valid JSON"):
        evaluate_squad.main([str(data_dir / "squad" / "v1.1" / "dev-v1.1.json"), str(bad)])


def test_runs_as_a_module(fixtures_dir, tmp_path, monkeypatch, capsys):
    preds = tmp_path / "p.json"
    data = json.loads((fixtures_dir / "squad" / "squad_v2_tiny.json").read_text())
    ids = [qa["id"] for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]]
    preds.write_text(json.dumps({qid: "" for qid in ids}))
    # what `python -m albert_tf.evaluate_squad DATA PRED` runs, without a second interpreter
    monkeypatch.setattr(sys, "argv", ["evaluate_squad", str(fixtures_dir / "squad" /
                                                            "squad_v2_tiny.json"), str(preds)])
    monkeypatch.delitem(sys.modules, "albert_tf.evaluate_squad", raising=False)
    runpy.run_module("albert_tf.evaluate_squad", run_name="__main__")
    result = json.loads(capsys.readouterr().out)
    assert result["total"] == 8 and result["NoAns_exact"] == 100.0 and result["HasAns_f1"] == 0.0


def _tiny(fixtures_dir):
    path = fixtures_dir / "squad" / "squad_v2_tiny.json"
    data = json.loads(path.read_text())
    return path, [qa["id"] for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]]


@pytest.mark.parametrize("predictions, message", [
    (["a", "b"], r"pred\.json: expected a JSON object of question id → answer string, got a list"),
    ({"ID": 3}, r"pred\.json: the answer of id 'ID' should be a string, got int 3"),
])
def test_predictions_that_are_not_id_to_string_name_the_id(fixtures_dir, tmp_path, predictions,
                                                           message):
    data, ids = _tiny(fixtures_dir)
    if isinstance(predictions, dict):
        predictions = {**{qid: "" for qid in ids}, ids[1]: 3}
        message = message.replace("ID", ids[1])
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(predictions))
    with pytest.raises(SystemExit, match="^error: prediction file .*" + message):
        evaluate_squad.main([str(data), str(pred)])


def test_na_prob_file_missing_an_id_names_it(fixtures_dir, tmp_path):
    data, ids = _tiny(fixtures_dir)
    pred, na = tmp_path / "pred.json", tmp_path / "na.json"
    pred.write_text(json.dumps({qid: "" for qid in ids}))
    na.write_text(json.dumps({qid: 0.5 for qid in ids[1:]}))
    with pytest.raises(SystemExit, match=rf"^error: no-answer file .*na\.json: no probability "
                                         rf"for id '{ids[0]}' \(1 of {len(ids)}"):
        evaluate_squad.main([str(data), str(pred), "--na-prob-file", str(na)])
    na.write_text(json.dumps({**{qid: 0.5 for qid in ids}, ids[2]: "high"}))
    with pytest.raises(SystemExit, match=rf"probability of id '{ids[2]}' should be a number"):
        evaluate_squad.main([str(data), str(pred), "-n", str(na)])


def test_command_line_error_is_one_line_without_traceback(fixtures_dir, tmp_path):
    data, _ = _tiny(fixtures_dir)
    pred = tmp_path / "pred.json"
    pred.write_bytes(b'{"q1": "caf\xe9"}')
    done = subprocess.run([sys.executable, "-m", "albert_tf.evaluate_squad", str(data), str(pred)],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    # (TensorFlow's own start-up lines, printed when the albert_tf package imports it, may come
    # first: they are not this module's to silence)
    assert done.stderr.strip().splitlines()[-1] == \
        f"error: prediction file {pred}:1: not valid UTF-8"


@pytest.mark.parametrize("flag", ["--helpshort", "--helpfull", "--help"])
def test_every_help_flag_of_the_other_programs_prints_the_usage_and_exits_0(flag, capsys):
    # The absl programs' --helpshort / --helpfull were "unrecognized arguments" here (exit 2).
    with pytest.raises(SystemExit) as done:
        evaluate_squad.main([flag])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and "--na-prob-file" in out and "--helpshort" not in out
