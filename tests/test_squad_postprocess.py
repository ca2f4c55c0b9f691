"""v1 and v2 post-processing on the golden fake outputs equal the original's JSON files."""

import json

import pytest

from albert_tf.tasks.squad import features, postprocess, reader
from albert_tf.tokenization import load_sentencepiece


@pytest.fixture(scope="module")
def setup(fixtures_dir, spm_model):
    squad = fixtures_dir / "squad"
    golden = json.loads((squad / "squad_golden.json").read_text())
    examples = reader.read_squad_examples(squad / "squad_v2_tiny.json", is_training=False)
    args = golden["args"]
    feats = features.convert_examples_to_features(
        examples, load_sentencepiece(spm_model), args["max_seq_length"], args["doc_stride"],
        args["max_query_length"], False, do_lower_case=args["do_lower_case"])
    return squad, golden["postprocessing"], examples, feats


def _same_file(ours, theirs):
    assert json.loads(ours.read_text()) == json.loads(theirs.read_text())
    assert ours.read_text() == theirs.read_text()  # 4-space indent, key order


def test_v1_matches_original(setup, tmp_path):
    squad, post, examples, feats = setup
    results = [postprocess.RawResult(**r) for r in post["v1_raw_results"]]
    result_dict = {}
    postprocess.accumulate_predictions_v1(result_dict, examples, feats, results,
                                          post["n_best_size"], post["max_answer_length"])
    postprocess.write_predictions_v1(result_dict, examples, feats, results, post["n_best_size"],
                                     post["max_answer_length"], tmp_path / "p.json",
                                     tmp_path / "n.json")
    _same_file(tmp_path / "p.json", squad / "predictions_v1.json")
    _same_file(tmp_path / "n.json", squad / "nbest_predictions_v1.json")


def test_v2_matches_original(setup, tmp_path):
    squad, post, examples, feats = setup
    results = [postprocess.RawResultV2(**r) for r in post["v2_raw_results"]]
    result_dict, cls_dict = {}, {}
    postprocess.accumulate_predictions_v2(result_dict, cls_dict, examples, feats, results,
                                          post["n_best_size"], post["max_answer_length"],
                                          post["v2_start_n_top"], post["v2_end_n_top"])
    postprocess.write_predictions_v2(result_dict, cls_dict, examples, feats, results,
                                     post["n_best_size"], post["max_answer_length"],
                                     tmp_path / "p.json", tmp_path / "n.json", tmp_path / "o.json",
                                     post["v2_null_score_diff_threshold"])
    _same_file(tmp_path / "p.json", squad / "predictions_v2.json")
    _same_file(tmp_path / "n.json", squad / "nbest_predictions_v2.json")
    _same_file(tmp_path / "o.json", squad / "null_odds_v2.json")


def test_questions_without_features_get_the_fallback_answer():
    examples = [reader.SquadExample("gone", "Who?", "")]
    preds, _ = postprocess.write_predictions_v1({0: {}}, examples, [], [], 5, 8)
    assert preds == {"gone": "empty"}
    preds, odds = postprocess.write_predictions_v2({0: {}}, {0: [1e6]}, examples, [], [], 5, 8)
    assert preds == {"gone": ""} and odds == {"gone": 1e6}


def test_best_indexes_and_softmax():
    assert postprocess.best_indexes([0.1, 0.5, 0.5, -1.0], 3) == [1, 2, 0]
    assert postprocess.softmax([]) == []
    assert postprocess.softmax([0.0, 0.0]) == [0.5, 0.5]
