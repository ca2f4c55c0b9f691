"""RACE reading (per-article files and all.txt), choice texts, features and TFRecords."""

import json
import shutil

import numpy as np
import pytest

from albert_tf.errors import InputError
from albert_tf.tasks.race import data as race
from albert_tf.tokenization import FullTokenizer


def _all_txt_copy(data_dir, tmp_path):
    """The same data in the layout the original reads: one all.txt per level."""
    for split in ("train", "dev", "test"):
        for level in race.LEVELS:
            source = data_dir / "race" / "RACE" / split / level
            target = tmp_path / "RACE" / split / level
            target.mkdir(parents=True)
            lines = [json.dumps(json.loads(p.read_text())) for p in
                     sorted(source.glob("*.txt"), key=lambda p: int(p.stem))]
            (target / "all.txt").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_per_article_files_and_all_txt_give_the_same_examples(data_dir, tmp_path):
    per_article = race.read_race_examples(data_dir / "race", "dev")
    concatenated = race.read_race_examples(_all_txt_copy(data_dir, tmp_path), "dev")
    assert per_article == concatenated
    assert [e.level for e in per_article] == sorted((e.level for e in per_article),
                                                    key=race.LEVELS.index)
    assert all(len(e.endings) == 4 and 0 <= e.label < 4 for e in per_article)
    assert race.read_race_examples(data_dir / "race", "dev", high_only=True)[0].level == "high"
    assert {e.level for e in race.read_race_examples(data_dir / "race", "dev",
                                                     middle_only=True)} == {"middle"}


def test_cloze_questions_take_the_option_in_the_gap():
    assert race._choice_texts("i like _ a lot", ["tea", "milk"]) == ["i like tea a lot",
                                                                    "i like milk a lot"]
    assert race._choice_texts("what?", ["yes"]) == ["what? yes"]


def test_bad_files_are_named(tmp_path):
    folder = tmp_path / "RACE" / "dev" / "middle"
    folder.mkdir(parents=True)
    (folder / "all.txt").write_text('{"id": "a"}\n{broken\n')
    with pytest.raises(race.RaceFormatError, match=r"all\.txt:2: not valid JSON"):
        race.read_race_examples(tmp_path, "dev", middle_only=True)
    (folder / "all.txt").write_text('{"id": "a", "article": "x"}\n')
    with pytest.raises(race.RaceFormatError, match="lacks field 'questions'"):
        race.read_race_examples(tmp_path, "dev", middle_only=True)
    shutil.rmtree(folder)
    with pytest.raises(race.RaceFormatError, match="not found"):
        race.read_race_examples(tmp_path, "dev", middle_only=True)


def test_features_truncate_context_and_keep_the_end_of_the_ending(data_dir, spm_model, tmp_path):
    tokenizer = FullTokenizer(spm_model_file=spm_model)
    example = race.read_race_examples(data_dir / "race", "dev")[0]
    feature = race.convert_example(example, tokenizer, 48, 8)
    for choice, ending in enumerate(example.endings):
        ids, segments = feature.input_ids[choice], feature.segment_ids[choice]
        assert len(ids) == 48 and ids[0] == tokenizer.vocab["[CLS]"] and ids[-1] == tokenizer.vocab["[SEP]"]
        tail = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(ending)[-8:])
        assert ids[-1 - len(tail):-1] == tail and sum(segments) == len(tail) + 1
    path = tmp_path / "dev.tfrecord"
    race.write_race_tfrecord([example], tokenizer, 48, 8, path)
    batch = next(iter(race.race_dataset(str(path), 48, False, 2)))
    np.testing.assert_array_equal(batch["input_ids"][0], feature.input_ids)
    assert int(batch["label_ids"][0]) == example.label and int(batch["is_real_example"][0]) == 1


def _one_level(tmp_path, text):
    folder = tmp_path / "RACE" / "dev" / "middle"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "all.txt").write_text(text)
    return tmp_path


ARTICLE = {"id": "m1", "article": "Tom has a red cat.", "questions": ["What colour is the cat?"],
           "options": [["red", "blue", "green", "black"]], "answers": ["A"]}


def test_non_utf8_file_names_file_and_line(tmp_path):
    folder = tmp_path / "RACE" / "dev" / "middle"
    folder.mkdir(parents=True)
    (folder / "all.txt").write_bytes(json.dumps(ARTICLE).encode() + b'\n{"article": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"all\.txt:2: not valid UTF-8"):
        race.read_race_examples(tmp_path, "dev", middle_only=True)


def test_cached_tfrecord_is_rebuilt_when_articles_or_settings_change(tmp_path, spm_model):
    tokenizer = FullTokenizer(spm_model_file=spm_model)
    root = _one_level(tmp_path / "data", json.dumps(ARTICLE) + "\n")
    path = tmp_path / "dev.tf_record"
    args = (root, "dev", tokenizer, 32, 8)
    _, examples = race.cached_tfrecord(path, *args, middle_only=True)
    stamp = path.stat().st_mtime_ns
    race.cached_tfrecord(path, *args, middle_only=True)
    assert path.stat().st_mtime_ns == stamp  # same files and settings: reused
    second = dict(ARTICLE, id="m2", answers=["B"])
    _one_level(tmp_path / "data", json.dumps(ARTICLE) + "\n" + json.dumps(second) + "\n")
    _, examples = race.cached_tfrecord(path, *args, middle_only=True)
    labels = [int(b["label_ids"][0]) for b in race.race_dataset(str(path), 32, False, 1)]
    assert labels == [e.label for e in examples] == [0, 1]
    race.cached_tfrecord(path, root, "dev", tokenizer, 24, 8, middle_only=True)
    assert next(iter(race.race_dataset(str(path), 24, False, 2)))["input_ids"].shape == (2, 4, 24)
