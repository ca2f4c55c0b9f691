"""The keyed feature cache: reused only under the same key, one build, and with records."""

import json
import os

import pytest

from albert_tf.data import feature_cache


def _build(texts, count=1, calls=None):
    def build(*tmps):
        if calls is not None:
            calls.append(tmps)
        for tmp, text in zip(tmps, texts):
            with open(tmp, "w") as writer:
                writer.write(text)
        return count
    return build


def test_reused_only_under_the_same_key(tmp_path):
    path = str(tmp_path / "f.rec")
    calls = []
    record = feature_cache.cached(path, {"a": 1}, _build(["one"], 3, calls))
    assert record["num_records"] == 3 and open(path).read() == "one"
    assert json.load(open(path + ".key.json"))["key"] == {"a": 1}
    feature_cache.cached(path, {"a": 1}, _build(["two"], 3, calls))
    assert len(calls) == 1 and open(path).read() == "one"
    feature_cache.cached(path, {"a": 2}, _build(["two"], 3, calls))
    assert len(calls) == 2 and open(path).read() == "two"


def test_a_file_without_key_or_with_no_records_is_rebuilt(tmp_path):
    path = str(tmp_path / "f.rec")
    open(path, "w").write("left by an older run")
    feature_cache.cached(path, {"a": 1}, _build(["new"], 0))
    assert open(path).read() == "new"
    calls = []
    feature_cache.cached(path, {"a": 1}, _build(["newer"], 2, calls))  # 0 records: never reused
    assert calls and open(path).read() == "newer"


def test_a_failed_build_leaves_no_key_and_no_file(tmp_path):
    path = str(tmp_path / "f.rec")
    feature_cache.cached(path, {"a": 1}, _build(["old"], 1))

    def failing(tmp):
        open(tmp, "w").write("half")
        raise RuntimeError("killed")
    with pytest.raises(RuntimeError, match="killed"):
        feature_cache.cached(path, {"a": 2}, failing)
    assert not os.path.exists(path + ".key.json")
    assert sorted(os.listdir(tmp_path)) == ["f.rec"]  # the old file, no temporaries, no key
    calls = []
    feature_cache.cached(path, {"a": 1}, _build(["again"], 1, calls))
    assert calls  # the old file lost its key: rebuilt, not trusted


def test_a_pair_is_reused_only_from_one_build(tmp_path):
    a, b = str(tmp_path / "a.rec"), str(tmp_path / "b.jsonl")
    feature_cache.cached([a, b], {"k": 1}, _build(["a1", "b1"]))
    # another build rewrites only b under the same key (say b was shared by two runs)
    c = str(tmp_path / "c.rec")
    feature_cache.cached([c, b], {"k": 1}, _build(["c2", "b2"]))
    calls = []
    feature_cache.cached([a, b], {"k": 1}, _build(["a3", "b3"], 1, calls))
    assert calls and open(a).read() == "a3" and open(b).read() == "b3"


def test_digests_follow_bytes(tmp_path):
    one, two = tmp_path / "1.txt", tmp_path / "2.txt"
    one.write_text("x")
    two.write_text("y")
    assert feature_cache.file_digest(one) != feature_cache.file_digest(two)
    assert feature_cache.files_digest([one, two]) != feature_cache.files_digest([two, one])
    assert feature_cache.file_digest(None) is None
    identity = feature_cache.tokenizer_identity(str(one), str(two))
    assert identity == {"spm_model_sha256": feature_cache.file_digest(one), "vocab_sha256": None}
