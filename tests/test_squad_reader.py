"""SQuAD JSON reading: fields, training targets and clear errors for bad files."""

import json
import logging

import pytest

from albert_tf.tasks.squad import reader
from support.golden import SQUAD_SEEDED_ORDER


def _write(tmp_path, data, name="data.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _squad(context, answers, is_impossible=False, question="Who?"):
    return {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": "q", "question": question, "answers": answers, "is_impossible": is_impossible}]}]}]}


def test_golden_examples_match_original(fixtures_dir):
    golden = json.loads((fixtures_dir / "squad" / "squad_golden.json").read_text())
    for mode, training in (("train", True), ("eval", False)):
        examples = reader.read_squad_examples(fixtures_dir / "squad" / "squad_v2_tiny.json", training)
        assert len(examples) == len(golden[mode]["examples"])
        for ours, theirs in zip(examples, golden[mode]["examples"]):
            assert vars(ours) == theirs


def test_malformed_json_names_file_and_line(tmp_path):
    path = _write(tmp_path, '{"version": "1.1",\n "data": [ {"title": }\n]}')
    with pytest.raises(reader.SquadFormatError, match=r"data\.json: not valid JSON .*line 2"):
        reader.read_squad_examples(path, is_training=False)


def test_missing_field_names_its_place(tmp_path):
    data = _squad("Some text.", [])
    del data["data"][0]["paragraphs"][0]["qas"][0]["question"]
    with pytest.raises(reader.SquadFormatError, match=r"qas\[0\]: missing field 'question'"):
        reader.read_squad_examples(_write(tmp_path, data), is_training=False)


def test_training_needs_exactly_one_answer(tmp_path):
    data = _squad("Bob ran.", [{"text": "Bob", "answer_start": 0}, {"text": "Bob", "answer_start": 0}])
    with pytest.raises(reader.SquadFormatError, match="exactly 1 answer, found 2"):
        reader.read_squad_examples(_write(tmp_path, data), is_training=True)
    # prediction ignores answers
    assert reader.read_squad_examples(_write(tmp_path, data), is_training=False)[0].start_position is None


def test_answer_not_at_answer_start_warns_and_keeps_offset(tmp_path, caplog):
    data = _squad("Alice met Bob.", [{"text": "Bob", "answer_start": 0}])
    with caplog.at_level(logging.WARNING):
        example, = reader.read_squad_examples(_write(tmp_path, data), is_training=True)
    assert "not at answer_start 0" in caplog.text
    assert (example.start_position, example.orig_answer_text) == (0, "Bob")


def test_answer_outside_context_is_an_error(tmp_path):
    data = _squad("Alice met Bob.", [{"text": "Bob", "answer_start": 40}])
    with pytest.raises(reader.SquadFormatError, match="outside the context"):
        reader.read_squad_examples(_write(tmp_path, data), is_training=True)


def test_impossible_question_has_no_target(tmp_path):
    data = _squad("Alice met Bob.", [], is_impossible=True)
    example, = reader.read_squad_examples(_write(tmp_path, data), is_training=True)
    assert (example.is_impossible, example.start_position, example.orig_answer_text) == (True, -1, "")


def test_split_by_article_keeps_every_question_once(data_dir):
    data = reader.load_squad_json(data_dir / "squad" / "v1.1" / "dev-v1.1.json")
    train, held_out = reader.split_by_article(data)
    assert len(train["data"]) + len(held_out["data"]) == len(data["data"])
    ids = [qa["id"] for half in (train, held_out) for a in half["data"]
           for p in a["paragraphs"] for qa in p["qas"]]
    assert sorted(ids) == sorted(qa["id"] for a in data["data"] for p in a["paragraphs"]
                                 for qa in p["qas"])
    assert reader.examples_from_json(train, is_training=True)  # one answer each now


def test_shuffle_is_the_originals_seeded_order(fixtures_dir):
    examples = reader.read_squad_examples(fixtures_dir / "squad" / "squad_v2_tiny.json", True)
    shuffled = reader.shuffle_training_examples(examples)
    assert [e.qas_id for e in shuffled] == SQUAD_SEEDED_ORDER
    assert [e.qas_id for e in examples][0] == "q1_early"  # the input list is left as it was
    # The same seed on every call, not one drawn per process or per call.
    assert reader.shuffle_training_examples(list(range(20))) == [
        16, 18, 3, 8, 19, 10, 7, 14, 12, 1, 5, 2, 15, 17, 4, 6, 11, 9, 0, 13]


def test_v1_training_on_v2_data_says_which_flag(tmp_path):
    data = _squad("Alice met Bob.", [], is_impossible=True)
    path = _write(tmp_path, data)
    with pytest.raises(reader.SquadFormatError, match=r"data\.json: question q has no answer "
                                                      r"\(is_impossible\).*--version_2_with_negative"):
        reader.read_squad_examples(path, is_training=True, version_2_with_negative=False)
    data = _squad("Alice met Bob.", [])  # no answers, no is_impossible: still v2 data
    with pytest.raises(reader.SquadFormatError, match="--version_2_with_negative"):
        reader.read_squad_examples(_write(tmp_path, data, "v2.json"), True,
                                   version_2_with_negative=False)
    example, = reader.read_squad_examples(path, True, version_2_with_negative=True)
    assert example.is_impossible
    assert reader.read_squad_examples(path, False, version_2_with_negative=False)


def test_non_utf8_file_names_file_and_line(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"version": "1.1",\n "data": [{"title": "caf\xe9"}]}')
    with pytest.raises(reader.InputError, match=r"latin1\.json:2: not valid UTF-8"):
        reader.read_squad_examples(str(path), is_training=False)
