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


def _shifted(results, by: float, cls_by: float):
    return [r._replace(start_top_log_probs=[p + by for p in r.start_top_log_probs],
                       end_top_log_probs=[p + by for p in r.end_top_log_probs],
                       cls_logits=r.cls_logits + cls_by) for r in results]


def test_v2_averages_the_scores_of_every_accumulation(setup, tmp_path):
    # Accumulated twice (the original's loop over its result sets), the golden outputs and a
    # copy 1 higher (null logits 2 higher): each candidate's log probs are the mean of both
    # (golden + 0.5), and so is each question's null score (golden + 1). A sum of the log
    # probs, or the largest null score, passed every test.
    squad, post, examples, feats = setup
    golden = [postprocess.RawResultV2(**r) for r in post["v2_raw_results"]]
    result_dict, cls_dict = {}, {}
    for results in (golden, _shifted(golden, 1.0, 2.0)):
        postprocess.accumulate_predictions_v2(result_dict, cls_dict, examples, feats, results,
                                              post["n_best_size"], post["max_answer_length"],
                                              post["v2_start_n_top"], post["v2_end_n_top"])
    postprocess.write_predictions_v2(result_dict, cls_dict, examples, feats, golden,
                                     post["n_best_size"], post["max_answer_length"],
                                     tmp_path / "p.json", tmp_path / "n.json", tmp_path / "o.json")
    want_odds = json.loads((squad / "null_odds_v2.json").read_text())
    got_odds = json.loads((tmp_path / "o.json").read_text())
    assert got_odds == pytest.approx({k: v + 1.0 for k, v in want_odds.items()}, abs=1e-9)
    want = json.loads((squad / "nbest_predictions_v2.json").read_text())
    got = json.loads((tmp_path / "n.json").read_text())
    assert list(got) == list(want)
    for qid, entries in want.items():
        assert [e["text"] for e in got[qid]] == [e["text"] for e in entries]
        for ours, theirs in zip(got[qid], entries):
            assert ours["start_log_prob"] == pytest.approx(theirs["start_log_prob"] + 0.5, abs=1e-9)
            assert ours["end_log_prob"] == pytest.approx(theirs["end_log_prob"] + 0.5, abs=1e-9)
            assert ours["probability"] == pytest.approx(theirs["probability"], abs=1e-9)


def test_v2_answer_may_start_at_the_first_token_of_the_document(setup):
    # Feature 0: [CLS] who wrote the apache license ? [SEP] the apache license is ... (the
    # document starts at piece 9). A beam whose best span is pieces 9-12 answers "The Apache
    # License"; dropping starts at the document's first piece (<= for <) passed every test.
    squad, post, examples, feats = setup
    results = [postprocess.RawResultV2(**r) for r in post["v2_raw_results"]]
    first = feats[0]
    assert first.tokens.index("[SEP]") + 1 == 9 and first.tokens[9:13] == [
        "▁the", "▁a", "pache", "▁license"]
    top = results[0]
    assert top.unique_id == first.unique_id
    ends = list(top.end_top_index)
    ends[0] = 12
    results[0] = top._replace(start_top_index=[9, *top.start_top_index[1:]],
                              start_top_log_probs=[5.0, *top.start_top_log_probs[1:]],
                              end_top_index=ends,
                              end_top_log_probs=[5.0, *top.end_top_log_probs[1:]])
    result_dict, cls_dict = {}, {}
    postprocess.accumulate_predictions_v2(result_dict, cls_dict, examples, feats, results,
                                          post["n_best_size"], post["max_answer_length"],
                                          post["v2_start_n_top"], post["v2_end_n_top"])
    predictions, _ = postprocess.write_predictions_v2(
        result_dict, cls_dict, examples, feats, results, post["n_best_size"],
        post["max_answer_length"])
    assert predictions[examples[0].qas_id] == "The Apache License"
