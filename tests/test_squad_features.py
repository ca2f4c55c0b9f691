"""SQuAD features equal the original's golden features (train and eval) and bad input is handled."""

import dataclasses
import json

import pytest

from albert_tf.tasks.squad import features, reader
from albert_tf.tokenization import load_sentencepiece


@pytest.fixture(scope="module")
def golden(fixtures_dir):
    return json.loads((fixtures_dir / "squad" / "squad_golden.json").read_text())


@pytest.fixture(scope="module")
def sp(spm_model):
    return load_sentencepiece(spm_model)


def _convert(examples, sp, args, training):
    return features.convert_examples_to_features(
        examples, sp, args["max_seq_length"], args["doc_stride"], args["max_query_length"],
        training, do_lower_case=args["do_lower_case"])


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_features_equal_original_golden(mode, golden, sp, fixtures_dir):
    examples = reader.read_squad_examples(fixtures_dir / "squad" / "squad_v2_tiny.json",
                                          is_training=mode == "train")
    ours = _convert(examples, sp, golden["args"], mode == "train")
    theirs = golden[mode]["features"]
    assert len(ours) == len(theirs) == 124
    for feature, expected in zip(ours, theirs):
        row = dataclasses.asdict(feature)
        row["token_is_max_context"] = {str(k): v for k, v in row["token_is_max_context"].items()}
        assert set(expected) <= set(row)
        for key, value in expected.items():
            assert row[key] == value, (feature.unique_id, key)


def test_long_question_is_truncated_to_max_query_length(golden, sp, fixtures_dir):
    examples = reader.read_squad_examples(fixtures_dir / "squad" / "squad_v2_tiny.json", False)
    long_index = [e.qas_id for e in examples].index("q5_long_question")
    feature = next(f for f in _convert(examples, sp, golden["args"], False)
                   if f.example_index == long_index)
    assert feature.tokens.index("[SEP]") == 1 + golden["args"]["max_query_length"]


def test_empty_context_gets_no_feature(sp, caplog):
    examples = [reader.SquadExample("empty", "Who?", ""),
                reader.SquadExample("blank", "Who?", "   "),
                reader.SquadExample("ok", "Who?", "Bob ran home.")]
    result = features.convert_examples_to_features(examples, sp, 32, 8, 8, is_training=False)
    assert {f.example_index for f in result} == {2}
    assert "MISMATCH DETECTED" in caplog.text


def test_impossible_and_out_of_window_targets_point_at_cls(sp):
    context = " ".join(f"word{i}" for i in range(60)) + " answer here."
    start = context.index("answer")
    examples = [reader.SquadExample("a", "Where?", context, "answer", start),
                reader.SquadExample("b", "Where?", context, "", -1, is_impossible=True)]
    result = features.convert_examples_to_features(examples, sp, 32, 8, 8, is_training=True)
    answer_windows = [f for f in result[:len(result) // 2] if not f.is_impossible]
    assert answer_windows and all(f.start_position > 0 for f in answer_windows)
    for f in answer_windows:
        piece = f.tokens[f.start_position]
        assert "answer".startswith(piece.lstrip("▁")) or piece.lstrip("▁") in "answer"
    assert all((f.start_position, f.end_position) == (0, 0) for f in result if f.is_impossible)


def test_doc_spans_and_max_context():
    assert features.doc_spans(10, 4, 3) == [(0, 4), (3, 4), (6, 4)]
    assert features.doc_spans(3, 4, 3) == [(0, 3)]
    spans = features.doc_spans(10, 4, 3)
    assert features.is_max_context(spans, 1, 4) and not features.is_max_context(spans, 0, 4)


def test_max_seq_length_must_leave_room_for_the_query(sp):
    with pytest.raises(ValueError, match="max_query_length"):
        features.convert_examples_to_features([], sp, 10, 4, 8, is_training=False)
