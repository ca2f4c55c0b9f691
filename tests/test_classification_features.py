"""Features against the original's golden JSON and TFRecords; the keyed cache; length checks."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.examples import InputExample
from albert_tf.tasks.classification.processors import GlueDataError, get_processor

SEQ = 32


@pytest.fixture(scope="module")
def golden(fixtures_dir):
    with open(fixtures_dir / "glue" / "glue_features.json") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def tokenizer(spm_model):
    return tokenization.FullTokenizer(None, do_lower_case=True, spm_model_file=spm_model)


def _examples(fixtures_dir, task, split):
    processor = get_processor(task, use_spm=True, do_lower_case=True)
    examples = processor.get_examples(str(fixtures_dir / "glue" / "data"), split)
    if task == "sst-2" and split == "test":
        examples.append(F.PaddingInputExample())  # as the golden run did
    return processor, examples


CASES = [(t, s) for t in ("mrpc", "sst-2") for s in ("train", "dev", "test")]


@pytest.mark.parametrize("task,split", CASES)
def test_features_equal_golden_json(fixtures_dir, golden, tokenizer, task, split):
    assert golden["max_seq_length"] == SEQ and golden["do_lower_case"] is True
    processor, examples = _examples(fixtures_dir, task, split)
    expected = golden["tasks"][{"mrpc": "MRPC", "sst-2": "SST-2"}[task]][split]
    assert len(examples) == len(expected)
    for example, want in zip(examples, expected):
        if not isinstance(example, F.PaddingInputExample):
            assert example.guid == want["guid"]
            assert example.text_a == want["text_a_after_process_text"]
            assert example.text_b == want["text_b_after_process_text"]
            assert example.label == want["label"]
        got = F.convert_single_example(example, processor.get_labels(), SEQ, tokenizer, task)
        assert got.input_ids == want["input_ids"]
        assert got.input_mask == want["input_mask"]
        assert got.segment_ids == want["segment_ids"]
        assert got.label_id == want["label_id"]
        assert got.is_real_example == want["is_real_example"]


@pytest.mark.parametrize("task,split", CASES)
def test_cached_tfrecord_equals_original(fixtures_dir, tokenizer, tmp_path, task, split):
    processor, examples = _examples(fixtures_dir, task, split)
    key = F.cache_key(task, split, None, SEQ, tokenizer, True)
    path, count = F.cached_features(examples, processor.get_labels(), SEQ, tokenizer,
                                    str(tmp_path / f"{task}_{split}.tf_record"), task, key)
    assert count == len(examples)
    ours = F.read_features(path, SEQ)
    theirs = F.read_features(str(fixtures_dir / "glue" / f"{task}_{split}.tfrecord"), SEQ)
    assert ours.keys() == theirs.keys()
    for name in theirs:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
    # The raw feature names and value types are the original's.
    raw = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(path))).numpy())
    assert sorted(raw.features.feature) == ["input_ids", "input_mask", "is_real_example",
                                            "label_ids", "segment_ids"]
    assert len(raw.features.feature["label_ids"].int64_list.value) == 1


def test_padding_example_is_zero():
    got = F.convert_single_example(F.PaddingInputExample(), ["0", "1"], 8, None)
    assert got.input_ids == got.input_mask == got.segment_ids == [0] * 8
    assert got.label_id == 0 and got.is_real_example is False


def test_stsb_label_is_float_feature(tokenizer, tmp_path):
    examples = [InputExample("0", "a man", "a woman", 3.8)]
    key = F.cache_key("sts-b", "dev", None, 16, tokenizer, True)
    path, _ = F.cached_features(examples, [None], 16, tokenizer, str(tmp_path / "s.tf_record"),
                                "sts-b", key)
    got = F.read_features(path, 16, regression=True)
    np.testing.assert_allclose(got["label_ids"], [3.8], rtol=1e-6)


def test_stale_cache_is_rebuilt_not_reused(tokenizer, tmp_path):
    examples = [InputExample("train-1", "hello world", None, "1")]
    path = str(tmp_path / "sst-2_train.tf_record")
    key16 = F.cache_key("sst-2", "train", None, 16, tokenizer, True)
    F.cached_features(examples, ["0", "1"], 16, tokenizer, path, "sst-2", key16)
    mtime = os.path.getmtime(path)
    # Same settings: reused (the file is not rewritten).
    F.cached_features(examples, ["0", "1"], 16, tokenizer, path, "sst-2", key16)
    assert os.path.getmtime(path) == mtime
    # Another sequence length or lower-casing: rebuilt with the new shape.
    key24 = F.cache_key("sst-2", "train", None, 24, tokenizer, True)
    F.cached_features(examples, ["0", "1"], 24, tokenizer, path, "sst-2", key24)
    assert F.read_features(path, 24)["input_ids"].shape == (1, 24)
    assert F.cache_key("sst-2", "train", None, 24, tokenizer, False) != key24
    # A file without a key (e.g. written by the original) is never trusted.
    os.remove(path + ".key.json")
    F.cached_features(examples, ["0", "1"], 16, tokenizer, path, "sst-2", key16)
    assert F.read_features(path, 16)["input_ids"].shape == (1, 16)


def test_cache_key_tracks_source_and_tokenizer(tmp_path, spm_model, fixtures_dir):
    src = tmp_path / "dev.tsv"
    src.write_text("sentence\tlabel\nhi\t1\n")
    tok = tokenization.FullTokenizer(None, True, spm_model)
    key = F.cache_key("sst-2", "dev", str(src), 16, tok, True)
    src.write_text("sentence\tlabel\nhello\t1\n")
    assert F.cache_key("sst-2", "dev", str(src), 16, tok, True) != key
    other = tokenization.FullTokenizer(None, True, str(fixtures_dir / "spm" / "spm_digitcomma.model"))
    assert F.cache_key("sst-2", "dev", str(src), 16, other, True)["spm_model_sha256"] != \
        key["spm_model_sha256"]


def test_unknown_label_names_its_source(tokenizer):
    example = InputExample("dev-3", "a", None, "2", source="x/dev.tsv:4")
    with pytest.raises(GlueDataError, match="x/dev.tsv:4"):
        F.convert_single_example(example, ["0", "1"], 8, tokenizer, "sst-2")


def test_max_seq_length_beyond_positions_is_a_clear_error():
    with pytest.raises(ValueError, match="max_position_embeddings"):
        F.check_max_seq_length(1024, 512)
    F.check_max_seq_length(512, 512)


def test_input_fn_batches_int32(fixtures_dir, tokenizer, tmp_path):
    processor, examples = _examples(fixtures_dir, "mrpc", "train")
    key = F.cache_key("mrpc", "train", None, SEQ, tokenizer, True)
    path, _ = F.cached_features(examples, processor.get_labels(), SEQ, tokenizer,
                                str(tmp_path / "t.tf_record"), "mrpc", key)
    batch = next(iter(F.input_fn_builder(path, SEQ, True, True)(4)))
    assert batch["input_ids"].dtype == tf.int32 and batch["input_ids"].shape == (4, SEQ)
    assert batch["label_ids"].dtype == tf.int32 and batch["is_real_example"].shape == (4,)
