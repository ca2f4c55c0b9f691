"""Result files: the original's formats and the leaderboard names."""

import numpy as np
import pytest

from albert_tf.tasks.classification import results as glue_results


def test_eval_block_sorted_keys_then_best_and_rule():
    text = glue_results.eval_block({"loss": np.float32(0.25), "eval_accuracy": 0.875, "global_step": 7},
                              0.5)
    assert text == ("eval_accuracy = 0.875\nglobal_step = 7\nloss = 0.25\nbest = 0.5\n"
                    + "=" * 50 + "\n")


def test_append_eval_results_keeps_previous_blocks(tmp_path):
    path = str(tmp_path / "eval_results.txt")
    glue_results.append_eval_results(path, {"eval_accuracy": 0.5}, float("-inf"))
    glue_results.append_eval_results(path, {"eval_accuracy": 0.75}, 0.5)
    text = open(path).read()
    assert text.count("=" * 50) == 2 and "best = -inf" in text and "best = 0.5" in text


def test_prediction_files_classification(tmp_path):
    probabilities = np.array([[0.25, 0.75], [0.875, 0.125]], np.float32)
    paths = glue_results.write_predictions(str(tmp_path), "rte", ["0", "1"], probabilities,
                                      np.array([1, 0]), ["entailment", "not_entailment"])
    assert open(paths["test_results"]).read() == "0.25\t0.75\n0.875\t0.125\n"
    submit = "index\tprediction\n0\tnot_entailment\n1\tentailment\n"
    assert open(paths["submit_results"]).read() == submit
    assert paths["leaderboard"].endswith("RTE.tsv") and open(paths["leaderboard"]).read() == submit


def test_prediction_files_regression_and_leaderboard_names(tmp_path):
    scores = np.array([3.25, 0.5], np.float32)
    paths = glue_results.write_predictions(str(tmp_path), "sts-b", ["7", "8"], scores[:, None], scores,
                                      [None])
    assert open(paths["test_results"]).read() == "3.25\n0.5\n"
    assert open(paths["submit_results"]).read() == "index\tprediction\n7\t3.25\n8\t0.5\n"
    assert paths["leaderboard"].endswith("STS-B.tsv")
    for task, name in [("mnli", "MNLI-m"), ("mismnli", "MNLI-mm"), ("ax", "AX")]:
        got = glue_results.write_predictions(str(tmp_path), task, ["0"], np.ones((1, 3)), [0],
                                        ["contradiction", "entailment", "neutral"])
        assert got["leaderboard"].endswith(name + ".tsv")


def test_prediction_count_mismatch_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="2 test examples"):
        glue_results.write_predictions(str(tmp_path), "sst-2", ["0", "1"], np.ones((1, 2)), [0],
                                  ["0", "1"])


def test_labels_json_and_label_predictions(tmp_path):
    from albert_tf.errors import UsageError

    from albert_tf.labels import LabelFile

    LabelFile.read(str(tmp_path)).check_or_write(["b", "a"])
    assert LabelFile.read(str(tmp_path)).names == ["b", "a"]
    LabelFile.read(str(tmp_path)).check_or_write(["b", "a"])  # the same labels: fine
    with pytest.raises(UsageError, match="labels.json holds the labels"):
        LabelFile.read(str(tmp_path)).check_or_write(["a", "b"])
    text = glue_results.format_label_predictions(["x1", "x\t2"], [1, 0], ["b", "a"])
    assert text == 'id\tlabel\nx1\ta\n"x\t2"\tb\n'  # a tab in an id is quoted
    assert glue_results.format_label_predictions(["1"], [0.25], None) == "id\tlabel\n1\t0.25\n"
