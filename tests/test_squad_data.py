"""SQuAD feature caches are keyed: a new source file or setting rebuilds them, a failed or empty
build is never reused, and v1.1 training on v2.0 data names the flag to pass."""

import json
import os

import pytest
import tensorflow as tf

from albert_tf.errors import InputError
from albert_tf.tasks.squad import data, feature_io
from support.golden import SQUAD_SEEDED_ORDER

SETTINGS = data.FeatureSettings(max_seq_length=64, doc_stride=16, max_query_length=16)


def _count(path):
    return sum(1 for _ in tf.data.TFRecordDataset(str(path)))


@pytest.fixture()
def files(fixtures_dir, tmp_path):
    source = json.loads((fixtures_dir / "squad" / "squad_v2_tiny.json").read_text())
    first = tmp_path / "a.json"
    first.write_text(json.dumps(source))
    # the second file: only the first paragraph of the first article, its questions renamed
    article = source["data"][0]
    paragraph = dict(article["paragraphs"][0])
    paragraph["qas"] = [dict(qa, id="new-" + qa["id"]) for qa in paragraph["qas"]]
    second = tmp_path / "b.json"
    second.write_text(json.dumps({"version": "v2.0", "data": [
        dict(article, paragraphs=[paragraph])]}))
    return str(first), str(second), tmp_path


def _predict(source, tmp_path, spm_model, settings=SETTINGS):
    return data.prepare_predict_features(source, str(tmp_path / "p.tfrecord"),
                                         str(tmp_path / "p.jsonl"), spm_model, settings)


def test_a_new_predict_file_rebuilds_both_feature_files(files, spm_model):
    first, second, tmp_path = files
    examples, features = _predict(first, tmp_path, spm_model)
    stamp = os.stat(tmp_path / "p.jsonl").st_mtime_ns
    again, reused = _predict(first, tmp_path, spm_model)  # same file and settings: reused
    assert os.stat(tmp_path / "p.jsonl").st_mtime_ns == stamp
    assert [f.unique_id for f in reused] == [f.unique_id for f in features]
    examples, features = _predict(second, tmp_path, spm_model)
    assert all(e.qas_id.startswith("new-") for e in examples)
    assert _count(tmp_path / "p.tfrecord") == len(features)
    back = feature_io.read_feature_metadata(tmp_path / "p.jsonl")
    assert max(f.example_index for f in back) < len(examples)
    assert [f.tokens for f in back] == [f.tokens for f in features]


def test_another_setting_rebuilds(files, spm_model):
    first, _, tmp_path = files
    _predict(first, tmp_path, spm_model)
    _, features = _predict(first, tmp_path, spm_model,
                           data.FeatureSettings(max_seq_length=48, doc_stride=16,
                                                max_query_length=16))
    batch = next(iter(feature_io.dataset(str(tmp_path / "p.tfrecord"), 48, False, 2)))
    assert batch["input_ids"].shape == (2, 48) and all(len(f.tokens) <= 48 for f in features)


def test_an_empty_feature_file_from_a_failed_run_is_not_reused(files, spm_model):
    first, _, tmp_path = files
    with tf.io.TFRecordWriter(str(tmp_path / "p.tfrecord")):
        pass  # what a failed run of the old code left behind
    (tmp_path / "p.jsonl").write_text("")
    _, features = _predict(first, tmp_path, spm_model)
    assert features and _count(tmp_path / "p.tfrecord") == len(features)


def test_a_failed_build_leaves_nothing_to_reuse(files, spm_model, monkeypatch):
    first, _, tmp_path = files

    def broken(*args, **kwargs):
        raise RuntimeError("killed half-way")
    monkeypatch.setattr(data, "convert_examples_to_features", broken)
    with pytest.raises(RuntimeError, match="killed half-way"):
        _predict(first, tmp_path, spm_model)
    assert sorted(os.listdir(tmp_path)) == ["a.json", "b.json"]


def test_train_features_follow_their_source(files, spm_model):
    first, second, tmp_path = files
    settings = data.FeatureSettings(max_seq_length=64, doc_stride=16, max_query_length=16,
                                    version_2_with_negative=True)
    out = str(tmp_path / "train.tfrecord")
    assert data.prepare_train_features(first, out, spm_model, settings) == 8
    before = _count(out)
    assert data.prepare_train_features(second, out, spm_model, settings) < 8
    assert _count(out) < before


def test_train_features_are_the_originals_in_its_seeded_order(fixtures_dir, files, spm_model):
    """The golden features (written in reading order) regrouped per question in the order the
    original's random.Random(12345) shuffle gives (support.golden)."""
    first, _, tmp_path = files
    settings = data.FeatureSettings(max_seq_length=64, doc_stride=16, max_query_length=16,
                                    version_2_with_negative=True)
    out = str(tmp_path / "train.tfrecord")
    data.prepare_train_features(first, out, spm_model, settings)
    golden = json.loads((fixtures_dir / "squad" / "squad_golden.json").read_text())["train"]
    per_question = []
    for feature in golden["features"]:
        if feature["doc_span_index"] == 0:
            per_question.append([])
        per_question[-1].append(feature["input_ids"])
    order = [e["qas_id"] for e in golden["examples"]]
    want = [ids for qas_id in SQUAD_SEEDED_ORDER for ids in per_question[order.index(qas_id)]]
    got = [list(tf.train.Example.FromString(raw.numpy()).features.feature["input_ids"]
                .int64_list.value) for raw in tf.data.TFRecordDataset(out)]
    assert len(per_question) == 8 and got == want


def test_v1_training_on_v2_data_names_the_flag(files, spm_model):
    first, _, tmp_path = files
    with pytest.raises(InputError, match=r"a\.json: question \S+ has no answer .*"
                                         r"--version_2_with_negative"):
        data.prepare_train_features(first, str(tmp_path / "t.tfrecord"), spm_model, SETTINGS)
    assert not os.path.exists(tmp_path / "t.tfrecord")
