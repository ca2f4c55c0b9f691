"""The demo pipeline end to end at a reduced size (the README's first command runs it in full):
the session's small demo folder (support/demo_folder.py), its console and a re-run."""

import json
import os

import pytest
import tensorflow as tf

from albert_tf.demo import corpus
from albert_tf.demo.run import SAMPLE_SENTENCES, next_steps, run_demo
from albert_tf.demo.stages import HELDOUT_PAIRS, read_task_split
from albert_tf.weights.readers import open_source
from albert_tf.weights.resolve import resolve_model_files
from support.demo_folder import FOLDER, shared_demo


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    return shared_demo(tmp_path_factory)


def _assert_k_of_n(share, n):
    right = share * n
    assert n > 0 and 0 <= right <= n and abs(right - round(right)) < 1e-4, (share, n)


def test_demo_runs_end_to_end_and_reuses_finished_stages(demo, monkeypatch, capsys):
    tmp_path, options, summary, table = demo["root"], demo["options"], demo["summary"], \
        demo["console"]
    monkeypatch.chdir(tmp_path)
    for row in ("corpus", "pretraining instances", "held-out MLM accuracy", "held-out SOP accuracy",
                "fine-tuned dev accuracy", "majority class", "export", "serve it",
                "TFLite int8 (device)", "TFLite float32", "int8 TFLite"):
        assert row in table
    # A header for each of the 7 stages, no JSON, the sample sentences whole with their
    # expected label; INFO records went to demo.log, not the console.
    headers = [line.split(":")[0] for line in table.splitlines() if line.startswith("[")]
    assert headers == [f"[{i}/7] {name}" for i, name in enumerate(
        ("corpus", "sentencepiece", "create_pretraining_data", "pretraining", "fine-tuning",
         "serve", "tflite"), 1)]
    assert "{" not in table and "I1" not in table
    assert "      100 %  step 4/4" in table  # progress lines (stdout is no terminal here)
    words = " ".join(table.split())  # the table wraps long sentences
    for sentence in SAMPLE_SENTENCES:
        assert sentence in words
    assert table.count("expected: language reference") == 2
    assert "step 4/4" in (tmp_path / FOLDER / "demo.log").read_text()
    # It closes with the next steps: the page, and a Python call on the classifier folder
    # (tests/test_demo_next_steps.py runs it).
    assert table.splitlines()[-2:] == next_steps(
        options, "Return the absolute value of a number.").splitlines()
    assert table.splitlines()[-1].startswith(
        "  python -c \"from albert_tf.tasks import TextClassifier; clf = TextClassifier."
        "from_pretrained('albert_demo/finetune/model')")
    assert len(table.splitlines()) <= 100
    # SOP is scored on sentence order alone, balanced: pairs of one held-out document, as many
    # in order as swapped, so answering one order always scores exactly 0.5. The generator's
    # own held-out records are not balanced (its other-document pairs are label 1).
    held = json.loads((tmp_path / FOLDER / "records" / "heldout.tfrecord.summary.json").read_text())
    labels = held["sentence_order_labels"]
    scored = summary["pretraining"]["heldout_examples"]
    assert summary["records"]["heldout"].endswith("heldout_order.tfrecord")
    order = [int(tf.train.Example.FromString(r.numpy()).features.feature[
        "next_sentence_labels"].int64_list.value[0]) for r in tf.data.TFRecordDataset(
            summary["records"]["heldout"])]
    assert len(order) == summary["records"]["heldout_instances"] >= scored > 0
    assert 2 * sum(order) == len(order) and 2 * sum(order[:scored]) == scored
    selection = summary["records"]["heldout_selection"]
    assert selection["read"] == labels["0"] + labels["1"]
    sop = next(line for line in table.splitlines() if line.startswith("held-out SOP accuracy"))
    bar = 0.5 + 2 * (0.25 / scored) ** 0.5
    assert sop.endswith(f" on {scored:,} pairs, order alone (chance 0.500, +2 SE {bar:.3f})"), sop
    # No held-out sentence is also a training one (stock sentences and docstrings reached
    # under two names are kept once).
    text = {name: set((tmp_path / FOLDER / "corpus" / name).read_text().splitlines()) - {""}
            for name in ("corpus.txt", "heldout.txt")}
    assert text["heldout.txt"] and not text["corpus.txt"] & text["heldout.txt"]
    # The libraries' docstrings are held-out text only: as pretraining text they cost dev
    # accuracy, and they give the held-out SOP its thousands of pairs.
    numpy_linalg = {s for d in corpus.dependency_documents(("numpy.linalg",)) for s in d}
    assert numpy_linalg & text["heldout.txt"] and not numpy_linalg & text["corpus.txt"]
    assert scored <= HELDOUT_PAIRS
    assert summary["corpus"]["sentences"] > 1000 and summary["records"]["train_instances"] > 100
    assert 0 <= summary["pretraining"]["masked_lm_accuracy"] <= 1
    # Accuracies are shares of whole examples (k of n), not means of batch means or a range.
    pretraining = summary["pretraining"]
    _assert_k_of_n(pretraining["sentence_order_accuracy"], pretraining["heldout_examples"])
    dev = len(read_task_split(options, "dev")[1])
    _assert_k_of_n(summary["fine_tuning"]["eval_accuracy"], dev)
    export = summary["fine_tuning"]["export_dir"]
    assert os.path.exists(os.path.join(export, "saved_model.pb"))
    # Label names from the export, and a folder that later commands need no other flag for.
    names = {"language reference", "library docstring"}
    assert len(summary["predictions"]) == 4 and {p["label"] for p in summary["predictions"]} <= names
    assert {p["label"] for p in summary["tflite_predictions"]} <= names
    for folder in ("finetune/model", "pretrain/model"):
        files = resolve_model_files(init_checkpoint=str(tmp_path / FOLDER / folder))
        assert files.albert_config.vocab_size == options.vocab_size and files.spm_model_file
    assert open_source(str(tmp_path / FOLDER / "finetune" / "model")).labels == sorted(names)
    # The int8 file classifies the same sentences, and its dev accuracy is printed beside the
    # float32 file's, which is the run's own evaluation of the same weights.
    assert len(summary["tflite_predictions"]) == 4
    lite = summary["tflite"]
    assert abs(lite["float32"]["dev_accuracy"] - summary["fine_tuning"]["eval_accuracy"]) < 1e-6
    _assert_k_of_n(lite["dynamic_int8"]["dev_accuracy"], dev)
    assert lite["dynamic_int8"]["megabytes"] < lite["float32"]["megabytes"]
    assert os.listdir(tmp_path) == [FOLDER]  # writes only under its output folder

    again = run_demo(options)
    out = capsys.readouterr().out
    assert out.count("reusing finished stage") == 7  # serve included
    assert again["fine_tuning"]["export_dir"] == export
    with open(tmp_path / FOLDER / "demo_summary.json") as f:
        assert json.load(f)["records"] == summary["records"]
