"""albert_tf.tasks.TextClassifier: from a released-style model folder (albert_config.json, a TF1
checkpoint, 30k-clean.model) through fit / evaluate / predict / export on real passages (Austen
and Melville, from ../shared/data), with a tiny model; and its one-message argument errors."""

import json

import numpy as np
import pytest

from support.informative import assert_spread
from support.released_model import passages as book_passages, write_model_folder
from support.source_reads import counted

SOURCES = {"austen": "austen-emma.txt", "melville": "melville-moby_dick.txt"}


@pytest.fixture(scope="module")
def model_dir(spm_model, tmp_path_factory):
    """The layout of a released archive, with a tiny pretrained model whose weights are spread
    (support/informative.py): from the initializer's spread every text got nearly the same
    probabilities, and the export checks could not tell a wrong serving path from the right one."""
    return write_model_folder(tmp_path_factory.mktemp("albert_tiny"), spm_model, spread_seed=3)


@pytest.fixture(scope="module")
def passages(data_dir):
    found = {label: book_passages(data_dir / "pretrain" / "nltk_gutenberg" / name, 16)
             for label, name in SOURCES.items()}
    assert all(len(p) == 16 for p in found.values())
    train = [(p, label) for label, ps in found.items() for p in ps[:12]]
    dev = [(p, label) for label, ps in found.items() for p in ps[12:]]
    return train, dev


def counting(monkeypatch):
    """{"build": model builds, "load": checkpoint loads} of the tasks' drivers from now on."""
    from albert_tf.tasks.classification.task import ClassificationTask
    from albert_tf.tasks.driver import Driver
    from albert_tf.tasks.token_classification.task import NerTask

    counts = {"build": 0, "load": 0}
    for task in (ClassificationTask, NerTask):
        monkeypatch.setattr(task, "build_model", counted(counts, "build", task.build_model))
    monkeypatch.setattr(Driver, "load", counted(counts, "load", Driver.load))
    return counts


def test_fit_evaluate_predict_export(model_dir, passages, tmp_path, monkeypatch):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SentencePiece op of serve_text)

    import albert_tf.tasks

    train, dev = passages
    clf = albert_tf.tasks.TextClassifier.from_pretrained(
        model_dir, labels=["austen", "melville"], max_seq_length=32,
        output_dir=tmp_path / "out", seed=1)
    assert clf.spm_model_file.endswith("30k-clean.model")
    assert clf.inputs.source.checkpoint_prefix.endswith("model.ckpt-best")
    texts, labels = [t for t, _ in train], [l for _, l in train]
    # Labels as names or as ids.
    ids = [["austen", "melville"].index(label) for label in labels]
    summary = clf.fit(texts, ids, epochs=2, batch_size=8, learning_rate=1e-3,
                      validation_data=([t for t, _ in dev], [l for _, l in dev]))
    out = tmp_path / "out"
    assert json.loads((out / "labels.json").read_text()) == ["austen", "melville"]
    assert (out / "model.ckpt-best.index").exists() and (out / "model.ckpt-6.index").exists()
    assert "train" in summary and "eval" in summary
    assert not list(out.glob("api_data_*"))  # the call's data files are gone
    listing = sorted(p.name for p in out.iterdir())
    counts = counting(monkeypatch)

    metrics = clf.evaluate([t for t, _ in dev], [l for _, l in dev])
    assert {"eval_accuracy", "eval_macro_f1", "eval_loss", "global_step"} <= set(metrics)
    best_step = int((out / "best_trial.txt").read_text().split(":")[1])
    assert metrics["global_step"] == best_step  # the served model is the best checkpoint

    queries = [t for t, _ in dev[:3]] + [t for t, _ in dev[-3:]]
    names, probabilities = clf.predict(queries)
    assert probabilities.shape == (6, 2) and np.allclose(probabilities.sum(-1), 1, atol=1e-5)
    assert names == [["austen", "melville"][i] for i in probabilities.argmax(-1)]
    # fit's model served both calls: the best checkpoint loaded into it once, nothing built
    assert counts == {"build": 0, "load": 1}
    again_names, again_probabilities = clf.predict(queries)
    assert counts == {"build": 0, "load": 1}  # a second call loads nothing
    assert again_names == names and np.array_equal(again_probabilities, probabilities)
    # evaluate's accuracy is that of predict's names on the same texts.
    dev_names, _ = clf.predict([t for t, _ in dev])
    right = [name == label for name, (_, label) in zip(dev_names, dev)]
    assert metrics["eval_accuracy"] == pytest.approx(np.mean(right), abs=1e-6)
    # evaluate and predict run in memory: no data or feature file, nothing in output_dir changes
    assert sorted(p.name for p in out.iterdir()) == listing
    assert not [p for p in listing if p.endswith((".jsonl", ".tf_record"))]

    path = clf.export(tmp_path / "export")
    assert path == str(tmp_path / "export" / "1")
    served = tf.saved_model.load(path).signatures["serve_text"](text_a=tf.constant(queries))
    assert [b.decode() for b in served["labels"].numpy()] == names
    # The spread start makes the six texts' probabilities differ (closest pair 1.0e-4 apart,
    # measured): an export that reordered the rows or skipped lower-casing moves them by more
    # than the tolerance. The two paths measured 0 apart; 1e-6 is ~10 float32 steps at 0.5.
    assert_spread(probabilities, 5e-5)
    np.testing.assert_allclose(served["probabilities"].numpy(), probabilities, atol=1e-6)

    # Reopened on the same output_dir: the labels come from labels.json, nothing retrains.
    again = albert_tf.tasks.TextClassifier.from_pretrained(model_dir, max_seq_length=32,
                                                           output_dir=out)
    assert again.labels == ["austen", "melville"]
    assert again.predict(queries)[0] == names
    assert counts == {"build": 1, "load": 2}
    np.testing.assert_array_equal(again.predict(queries)[1], probabilities)
    assert counts == {"build": 1, "load": 2}
    (out / "model.ckpt-best.index").touch()  # as a run in another process changing the folder
    (out / "note.txt").write_text("changed")
    assert again.predict(queries)[0] == names
    assert counts == {"build": 1, "load": 3}  # the checkpoint reloaded into the same model



def test_pairs_with_labels_from_the_training_set(model_dir, passages, tmp_path):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    from albert_tf.tasks import TextClassifier

    train, _ = passages
    # Does the second passage come from the same author as the first?
    pairs = [((a, b), "same" if la == lb else "different")
             for (a, la), (b, lb) in zip(train, train[6:] + train[:6])]
    clf = TextClassifier.from_pretrained(model_dir, max_seq_length=32,
                                         output_dir=tmp_path / "out")
    clf.fit([p for p, _ in pairs], [l for _, l in pairs], epochs=1, batch_size=8,
            learning_rate=1e-3)
    assert clf.labels == ["different", "same"]  # the sorted set, as --label_list unset
    assert clf.is_pair
    names, probabilities = clf.predict([p for p, _ in pairs[:3]])
    assert probabilities.shape == (3, 2) and set(names) <= {"different", "same"}
    with pytest.raises(ValueError, match=r"^texts: single texts but this classifier was "
                                         r"trained on pairs$"):
        clf.predict(["one text"])
    served = tf.saved_model.load(clf.export(tmp_path / "export")).signatures["serve_text"](
        text_a=tf.constant([a for (a, _), _ in pairs[:3]]),
        text_b=tf.constant([b for (_, b), _ in pairs[:3]]))
    assert [b.decode() for b in served["labels"].numpy()] == names

def test_argument_errors_are_one_message(model_dir, tmp_path):
    from albert_tf.errors import UsageError
    from albert_tf.tasks import TextClassifier

    clf = TextClassifier.from_pretrained(model_dir, labels=["a", "b"], max_seq_length=32,
                                         output_dir=tmp_path / "o")
    with pytest.raises(UsageError, match=r"^texts: 3 texts but 2 labels$"):
        clf.fit(["x y", "y z", "z w"], ["a", "b"])
    with pytest.raises(UsageError, match=r"^labels\[1\]: unknown label 'c'; the classifier's "
                                         r"labels are a, b$"):
        clf.fit(["x y", "y z"], ["a", "c"])
    with pytest.raises(UsageError, match=r"^labels\[0\]: class id 2 is out of range \(0..1\)$"):
        clf.fit(["x y", "y z"], [2, 0])
    with pytest.raises(UsageError, match=r"^validation_data\[1\]\[0\]: unknown label 'c'"):
        clf.fit(["x y", "y z"], ["a", "b"], validation_data=(["w"], ["c"]))
    with pytest.raises(UsageError, match=r"^labels: 1 class \(a\); a classifier needs at least 2$"):
        TextClassifier.from_pretrained(model_dir, output_dir=tmp_path / "p").fit(["x", "y"],
                                                                                 ["a", "a"])
    with pytest.raises(UsageError, match=r"^texts\[1\]: empty text$"):
        clf.predict(["x y", "  "])
    with pytest.raises(UsageError, match=r"^texts\[1\]: expected a str like texts\[0\]"):
        clf.predict(["x y", ("a", "b")])
    with pytest.raises(UsageError, match=r"^the classifier is not fine-tuned yet: call fit"):
        clf.predict(["x y"])  # never fitted: the pretrained checkpoint has no classifier head
    with pytest.raises(UsageError, match=r"'albert_base_v2' is a preset: a configuration "
                                         r"without weights"):
        TextClassifier.from_pretrained("albert_base_v2", num_classes=2)
    with pytest.raises(UsageError, match=r"labels= names 2 classes but num_classes=3"):
        TextClassifier.from_pretrained(model_dir, labels=["a", "b"], num_classes=3)
    with pytest.raises(UsageError, match=r"labels\.json holds the labels \['a', 'b'\] but "
                                         r"labels= is \['b', 'a'\]"):
        (tmp_path / "o" / "labels.json").write_text('["a", "b"]\n')
        TextClassifier.from_pretrained(model_dir, labels=["b", "a"], output_dir=tmp_path / "o")


def test_importing_tasks_stays_light():
    import subprocess
    import sys

    from support.paths import REPO

    code = ("import sys, albert_tf.tasks; "
            "print('tensorflow' in sys.modules, 'keras' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split() == ["False", "False"], done.stderr[-2000:]


def test_from_pretrained_reads_a_keras_hub_classifier_and_predicts_as_keras_hub(tmp_path):
    """A keras-hub AlbertTextClassifier preset (config, weights, head, spm model inside) predicts
    keras-hub's own probabilities for its raw texts, with no other argument."""
    from support.interop import expected, interop

    from albert_tf.tasks import TextClassifier

    want = expected("keras_hub", "classifier")
    clf = TextClassifier.from_pretrained(interop("keras_hub", "classifier"), num_classes=4,
                                         max_seq_length=20, do_lower_case=False,
                                         output_dir=tmp_path / "clf")
    _, probabilities = clf.predict([str(t) for t in want["texts"]])
    logits = want["text_logits"]
    softmax = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(probabilities, softmax / softmax.sum(-1, keepdims=True),
                               atol=1e-4)
    assert (tmp_path / "clf" / "albert_config.json").exists()  # the preset's config, written


def test_from_pretrained_takes_the_labels_an_hf_classifier_names(tmp_path):
    """An HF AlbertForSequenceClassification's id2label are the classifier's labels (it said
    "no labels yet: fit it first"); the same names in another order are refused."""
    import shutil

    from support.interop import interop
    from support.source_reads import counting_hf_reads

    from albert_tf.errors import UsageError
    from albert_tf.tasks import TextClassifier

    folder = tmp_path / "hf"
    shutil.copytree(interop("hf", "classifier"), folder)
    values = json.loads((folder / "config.json").read_text())
    values.update(id2label={"0": "sad", "1": "calm", "2": "glad"})
    (folder / "config.json").write_text(json.dumps(values))
    with counting_hf_reads() as counts:
        clf = TextClassifier.from_pretrained(folder, max_seq_length=16,
                                             output_dir=tmp_path / "out")
        assert clf.labels == ["sad", "calm", "glad"]
        names, probabilities = clf.predict(["a calm day", "it rained"])
        assert clf.predict(["a calm day", "it rained"])[0] == names
    assert names == [["sad", "calm", "glad"][i] for i in probabilities.argmax(-1)]
    assert counts == {"opened": 1, "read": 1}  # the folder opened, its weights read, once
    with pytest.raises(UsageError, match=r"labels= \['glad', 'calm', 'sad'\] contradicts id2label "
                                         r"of .*config.json \['sad', 'calm', 'glad'\]"):
        TextClassifier.from_pretrained(folder, labels=["glad", "calm", "sad"], max_seq_length=16)
