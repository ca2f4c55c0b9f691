"""Example sources (albert_tf.tasks.classification.sources): which source `--task_name` picks, texts
held in memory read as your own files are, and in-memory features equal to the cached file's;
the run config keeps every flag's name and default."""

import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import tokenization
from albert_tf.cli import config_defaults
from albert_tf.errors import InputError
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification.config import ClassifierRunConfig, FilesConfig
from albert_tf.tasks.classification.files import Columns, CustomReader
from albert_tf.tasks.classification.sources import (FileSource, GlueSource, MemorySource,
                                                    source_for)
from support.paths import REPO

SEQ = 16


def _config(spm_model, tmp_path, **values):
    return ClassifierRunConfig.from_flat(dict(spm_model_file=spm_model,
                                              output_dir=str(tmp_path / "out"), **values))


def test_task_name_picks_the_source(tmp_path):
    for name, kind in (("csv", FileSource), ("TSV", FileSource), ("jsonl", FileSource),
                       ("mrpc", GlueSource), (None, GlueSource)):
        assert type(source_for(ClassifierRunConfig(task_name=name))) is kind


def test_flags_keep_their_names_and_defaults():
    defaults = config_defaults(ClassifierRunConfig)
    assert {k: defaults[k] for k in ("train_file", "dev_file", "test_file", "text_a_column",
                                     "text_b_column", "label_column", "id_column", "label_list",
                                     "task_type", "train_step", "warmup_step")} == {
        "train_file": None, "dev_file": None, "test_file": None, "text_a_column": "text",
        "text_b_column": None, "label_column": "label", "id_column": None, "label_list": None,
        "task_type": "classification", "train_step": 1000, "warmup_step": 0}
    config = ClassifierRunConfig.from_flat({"task_name": "tsv", "train_file": "t.tsv",
                                            "text_b_column": "b", "train_step": 7})
    assert config.files == FilesConfig(train_file="t.tsv", text_b_column="b")
    assert config.reads_files and config.schedule.num_train_steps == 7


def test_memory_reads_as_a_file_does(spm_model, tmp_path):
    texts = [("Héllo  World", "a Pair"), ("Second ONE", "b")]
    path = tmp_path / "d.jsonl"
    path.write_text('{"a": "Héllo  World", "b": "a Pair", "y": "pos"}\n'
                    '{"a": "Second ONE", "b": "b", "y": "neg"}\n', encoding="utf-8")
    config = _config(spm_model, tmp_path, do_train=True)
    memory = MemorySource(config, {"train": (texts, ["pos", "neg"]), "test": (texts, None)},
                          pair=True)
    files = CustomReader("jsonl", Columns("a", "b", "y"), process_text=memory.process_text)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in memory.examples("train")] == \
        [(e.guid, e.text_a, e.text_b, e.label) for e in files.read(str(path), "train")]
    assert memory.examples("train")[0].text_a == "hello world"  # the SentencePiece text rule
    assert memory.labels == ["neg", "pos"]  # the sorted set of the training labels
    assert [e.label for e in memory.examples("test")] == ["neg", "neg"]  # a filler id
    assert memory.source_file("test") is None and memory.is_pair and memory.name == "memory"


def test_memory_dev_labels_are_checked(spm_model, tmp_path):
    config = _config(spm_model, tmp_path, do_eval=True)
    memory = MemorySource(config, {"dev": (["x y"], ["c"])}, pair=False, label_list=["a", "b"])
    with pytest.raises(InputError, match=r"^dev\[0\]: label 'c' is not in --label_list"):
        memory.examples("dev")


@pytest.mark.parametrize("regression", [False, True])
def test_in_memory_features_equal_the_cached_file(spm_model, tmp_path, regression):
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    labels = [None] if regression else ["neg", "pos"]
    config = _config(spm_model, tmp_path, do_train=True)
    texts = ["a short text", "another rather longer text that the sequence length cuts", "ok"]
    memory = MemorySource(config, {"train": (texts, [0.5, 1.0, 2.5] if regression else
                                             ["pos", "neg", "pos"])}, pair=False,
                          task_type="regression" if regression else "classification")
    examples = memory.examples("train")
    arrays = F.feature_arrays(examples, labels, SEQ, tokenizer, memory.name)
    path, count = F.cached_features(examples, labels, SEQ, tokenizer, str(tmp_path / "f.tf_record"),
                                    memory.name, {"case": regression})
    from_file = F.read_features(path, SEQ, regression)
    assert count == 3 and set(arrays) == set(from_file)
    for name, values in from_file.items():
        assert arrays[name].dtype == values.dtype, name
        np.testing.assert_array_equal(arrays[name], values, err_msg=name)
    batches = [F.input_fn_builder(data, SEQ, False, False, regression)(2) for data in (arrays, path)]
    for got, want in zip(*batches):
        for name in want:
            np.testing.assert_array_equal(got[name].numpy(), want[name].numpy())
            assert got[name].dtype == want[name].dtype == (
                tf.float32 if name == "label_ids" and regression else tf.int32)


def test_the_config_imports_without_tensorflow():
    code = ("import sys, albert_tf.tasks.classification.config; "
            "print('tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split() == ["False"], done.stderr[-2000:]
