"""Long documents (`--long_document=windows`): the windows of a text (Python and in the graph,
which must agree), the pooling of their logits, training weights, serve_text reading past the
first window, and run_classifier.py / TextClassifier with windows on real passages."""

import json

import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, tokenization
from albert_tf.errors import UsageError
from albert_tf.models import AlbertClassifier, classifier_outputs
from albert_tf.tasks.classification import features as F
from albert_tf.tasks.classification import windows as W
from albert_tf.tasks.classification.examples import InputExample
from albert_tf.tasks.classification.export import ClassifierServing
from support.configs import GLUE_TINY
from support.entry_points import run_entry_point
from support.released_model import passages as book_passages, write_model_folder

SEQ = 16
CLS, SEP = 1001, 1002


def test_window_starts_cover_every_piece_once_a_stride():
    assert W.window_starts(10, 14, 5) == [0]              # fits: one window, the first
    assert W.window_starts(70, 30, 10) == [0, 10, 20, 30, 40]
    assert W.window_starts(31, 30, 100) == [0, 30]        # a stride past the window is clamped
    assert W.window_length(0, 32) == 30                    # single text: [CLS] A [SEP]
    assert W.window_length(5, 32) == 24                    # pair: B keeps its 5 pieces
    assert W.window_length(40, 32) == 15                   # a long B: A keeps half the budget


def _python_windows(a, b, stride):
    packed = W.window_tokens(list(a), list(b) if b else None, SEQ, stride)
    ids = [[{"[CLS]": CLS, "[SEP]": SEP}.get(t, t) for t in tokens] for tokens, _ in packed]
    return [(row + [0] * (SEQ - len(row)), s + [0] * (SEQ - len(s)))
            for row, (_, s) in zip(ids, packed)]


@pytest.mark.parametrize("pair", [False, True])
def test_graph_windows_equal_the_python_windows(pair):
    texts_a = [list(range(1, 41)), list(range(100, 105)), list(range(200, 215))]
    texts_b = [list(range(300, 304)), [], list(range(400, 420))] if pair else [None] * 3
    stride = 6
    features, row = W.window_inputs(
        tf.ragged.constant(texts_a, tf.int32),
        tf.ragged.constant(texts_b, tf.int32, ragged_rank=1) if pair else None,
        SEQ, stride, CLS, SEP)
    want, rows = [], []
    for i, (a, b) in enumerate(zip(texts_a, texts_b)):
        windows = _python_windows(a, b, stride)
        want += windows
        rows += [i] * len(windows)
    assert row.numpy().tolist() == rows
    assert features["input_ids"].numpy().tolist() == [ids for ids, _ in want]
    assert features["segment_ids"].numpy().tolist() == [s for _, s in want]
    assert len(rows) > 3  # the long texts have several windows


def test_pooling_mean_and_max_in_numpy_and_in_the_graph():
    logits = np.array([[1.0, -2.0], [3.0, 0.0], [0.5, 0.5], [-1.0, 4.0]], np.float32)
    index = np.array([0, 0, 1, 1])
    assert W.pool(logits, index, 2).tolist() == [[2.0, -1.0], [-0.25, 2.25]]
    assert W.pool(logits, index, 2, "max").tolist() == [[3.0, 0.0], [0.5, 4.0]]
    for pooling in ("mean", "max"):
        np.testing.assert_allclose(W.pool_tf(logits, index, 2, pooling).numpy(),
                                   W.pool(logits, index, 2, pooling))


def test_features_hold_every_window_with_its_weight(spm_model):
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    long_text = " ".join(["the whale swam far out to sea"] * 6)
    examples = [InputExample("1", "a short text", None, ("x",)),
                InputExample("2", long_text, None, ("x", "y"))]
    arrays = F.feature_arrays(examples, ["x", "y"], SEQ, tokenizer, "csv",
                              F.Layout(multi_label=True, stride=5))
    pieces = len(tokenizer.tokenize(long_text))
    windows = len(W.window_starts(pieces, SEQ - 2, 5))
    assert arrays["example_index"].tolist() == [0] + [1] * windows
    np.testing.assert_allclose(arrays["window_weight"], [1.0] + [1.0 / windows] * windows)
    assert arrays["label_ids"].tolist() == [[1, 0]] + [[1, 1]] * windows
    first = F.feature_arrays(examples, ["x", "y"], SEQ, tokenizer, "csv", F.Layout(True))
    assert len(first["input_ids"]) == 2 and "example_index" not in first
    np.testing.assert_array_equal(first["input_ids"][1], arrays["input_ids"][1])


@pytest.fixture(scope="module")
def model():
    config = AlbertConfig(**dict(GLUE_TINY, max_position_embeddings=SEQ))
    built = AlbertClassifier(config, 3, multi_label=True, threshold=0.5)
    built({name: tf.zeros([1, SEQ], tf.int32)
           for name in ("input_ids", "input_mask", "segment_ids")})
    # Seeded weights ten times the initializer's spread: at 0.02 a one-layer model moved the
    # probabilities by less than 1e-6 between texts on some runs, too close to call.
    rng = np.random.default_rng(7)
    for variable in built.weights:
        if "gamma" not in variable.path:
            variable.assign(rng.normal(0.0, 0.2, variable.shape).astype(np.float32))
    return built


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_serve_text_reads_past_the_first_window_and_pools_as_the_cli(model, spm_model, pooling):
    pytest.importorskip("tensorflow_text")
    first_window = "call me ishmael some years ago never mind how long precisely having"
    later = "little or no money in my purse and nothing particular to interest me on shore"
    texts = [first_window, first_window + " " + later]
    first = ClassifierServing(model, SEQ, spm_model, True, False, label_names=["a", "b", "c"])
    windowed = ClassifierServing(model, SEQ, spm_model, True, False, label_names=["a", "b", "c"],
                                 windows=(4, pooling))
    by_first = first.serve_single(tf.constant(texts))["probabilities"].numpy()
    by_windows = windowed.serve_single(tf.constant(texts))
    tokenizer = tokenization.FullTokenizer(None, True, spm_model)
    assert len(tokenizer.tokenize(first_window)) >= SEQ - 2  # it fills the first window
    # The first window is all the `first` export reads: the later text changes nothing (the
    # same ids; rows of one batch may round apart in the last bit). With windows, the later
    # text counts.
    np.testing.assert_allclose(by_first[0], by_first[1], atol=1e-6)
    moved = np.abs(by_windows["probabilities"].numpy()[0]
                   - by_windows["probabilities"].numpy()[1]).max()
    assert moved > 1e-3, moved
    # And the graph pools as run_classifier.py's features and pooling do.
    examples = [InputExample(str(i), tokenization.preprocess_text(t, lower=True), None, ())
                for i, t in enumerate(texts)]
    arrays = F.feature_arrays(examples, ["a", "b", "c"], SEQ, tokenizer, "csv",
                              F.Layout(True, 4))
    logits = model({k: arrays[k] for k in ("input_ids", "input_mask", "segment_ids")})["logits"]
    pooled = W.pool(logits.numpy(), arrays["example_index"], 2, pooling)
    want = classifier_outputs(tf.constant(pooled), multi_label=True)
    np.testing.assert_allclose(by_windows["probabilities"].numpy(),
                               want["probabilities"].numpy(), atol=1e-5)


@pytest.fixture(scope="module")
def passages(data_dir):
    books = {"austen": "austen-emma.txt", "melville": "melville-moby_dick.txt"}
    found = {label: book_passages(data_dir / "pretrain" / "nltk_gutenberg" / name, 10)
             for label, name in books.items()}
    return [(p, label) for label, ps in found.items() for p in ps]


def test_run_classifier_windows_trains_on_every_window(passages, spm_model, tmp_path):
    import csv

    with open(tmp_path / "d.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows(passages)
    (tmp_path / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    done = run_entry_point("run_classifier.py", [
        "--task_name=csv", f"--train_file={tmp_path / 'd.csv'}", f"--dev_file={tmp_path / 'd.csv'}",
        f"--test_file={tmp_path / 'd.csv'}", f"--albert_config_file={tmp_path / 'albert_config.json'}",
        f"--spm_model_file={spm_model}", f"--output_dir={tmp_path / 'out'}", f"--max_seq_length={SEQ}",
        "--long_document=windows", "--doc_stride=7", "--window_pooling=max", "--do_train",
        "--do_eval", "--do_predict", "--train_step=2", "--save_checkpoints_steps=2",
        "--train_batch_size=8", "--seed=1"])
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    assert json.loads((out / "labels.json").read_text()) == {
        "labels": ["austen", "melville"], "long_document": "windows", "doc_stride": 7,
        "window_pooling": "max"}
    records = sum(1 for _ in tf.data.TFRecordDataset(str(out / "csv_train.tf_record")))
    assert records > 2 * len(passages)  # passages of 15-80 words: several windows each
    rows = (out / "test_predictions.tsv").read_text().splitlines()
    assert len(rows) == len(passages) + 1  # one prediction per document, not per window
    assert "eval_accuracy" in (out / "eval_results.txt").read_text()


def test_text_classifier_multi_label_with_windows(passages, spm_model, tmp_path_factory):
    import albert_tf.tasks

    folder = write_model_folder(tmp_path_factory.mktemp("albert_tiny"), spm_model)
    texts = [text for text, _ in passages]
    sets = [[label] + (["long"] if len(text.split()) > 40 else []) for text, label in passages]
    clf = albert_tf.tasks.TextClassifier.from_pretrained(
        folder, max_seq_length=SEQ, output_dir=tmp_path_factory.mktemp("clf"), seed=1,
        multi_label=True, threshold=0.4, long_document="windows", doc_stride=6)
    clf.fit(texts, sets, epochs=1, batch_size=8, learning_rate=1e-3,
            validation_data=(texts[:6], sets[:6]))
    assert clf.labels == ["austen", "long", "melville"]
    chosen, probabilities = clf.predict(texts[:5])
    assert probabilities.shape == (5, 3)
    assert chosen == [[n for n, p in zip(clf.labels, row) if p >= 0.4] for row in probabilities]
    metrics = clf.evaluate(texts[:6], sets[:6])
    assert {"eval_micro_f1", "eval_macro_f1", "eval_exact_match", "eval_f1_long"} <= set(metrics)
    # Reopened on its output_dir, the classifier keeps its settings (labels.json).
    again = albert_tf.tasks.TextClassifier.from_pretrained(folder, output_dir=clf.output_dir,
                                                           max_seq_length=SEQ)
    assert again.multi_label and again.settings.long_document == "windows"
    assert again.settings.threshold == 0.4 and again.settings.doc_stride == 6
    np.testing.assert_allclose(again.predict(texts[:5])[1], probabilities, atol=1e-6)
    with pytest.raises(UsageError, match=r"^labels\[0\]: a multi-label classifier takes a list"):
        clf.fit(texts[:2], ["austen", "melville"])  # a name, not a list, per text
    with pytest.raises(UsageError, match="^window_pooling must be mean or max, got 'median'"):
        albert_tf.tasks.TextClassifier.from_pretrained(folder, window_pooling="median")
