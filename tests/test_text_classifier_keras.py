"""TextClassifier.fit from Keras users' inputs: a tf.data.Dataset of (text, label) examples,
and Keras callbacks called per epoch (EarlyStopping-style stops included), on real passages."""

import json

import keras
import pytest
import tensorflow as tf

from albert_tf.errors import UsageError
from albert_tf.tasks import TextClassifier
from albert_tf.training.checkpoint_files import list_checkpoints
from support.released_model import passages, write_model_folder


@pytest.fixture(scope="module")
def model_dir(spm_model, tmp_path_factory):
    return write_model_folder(tmp_path_factory.mktemp("albert_tiny"), spm_model)


@pytest.fixture(scope="module")
def examples(data_dir):
    books = data_dir / "pretrain" / "nltk_gutenberg"
    austen = passages(books / "austen-emma.txt", 12)
    melville = passages(books / "melville-moby_dick.txt", 12)
    train = [(p, "austen") for p in austen[:8]] + [(p, "melville") for p in melville[:8]]
    dev = [(p, "austen") for p in austen[8:]] + [(p, "melville") for p in melville[8:]]
    return train, dev


class Recorder(keras.callbacks.Callback):
    def __init__(self, stop_after=None):
        super().__init__()
        self.calls, self.stop_after = [], stop_after

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin", self.model is not None))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, dict(logs or {})))
        if self.stop_after is not None and epoch + 1 >= self.stop_after:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        self.calls.append(("train_end",))


def test_fit_on_datasets_with_callbacks(model_dir, examples, tmp_path, capsys):
    train, dev = examples
    clf = TextClassifier.from_pretrained(model_dir, labels=["austen", "melville"],
                                         max_seq_length=32, output_dir=tmp_path / "out", seed=1)
    dataset = tf.data.Dataset.from_tensor_slices(([t for t, _ in train],
                                                  [l for _, l in train])).batch(5)
    dev_dataset = tf.data.Dataset.from_tensor_slices(([t for t, _ in dev],
                                                      [l for _, l in dev]))
    recorder = Recorder()
    csv_log = keras.callbacks.CSVLogger(str(tmp_path / "epochs.csv"))  # a built-in callback
    capsys.readouterr()
    clf.fit(dataset, epochs=2, batch_size=8, learning_rate=1e-3, validation_data=dev_dataset,
            callbacks=[recorder, csv_log], verbose=2)
    # verbose=2, as Keras' fit: a header and one line per epoch, with its evaluation
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("Epoch")] == ["Epoch 1/2", "Epoch 2/2"]
    epochs = [line for line in lines if line.startswith("2/2 ")]
    assert len(epochs) == 2 and all("loss: " in line and "eval_accuracy: " in line
                                    for line in epochs), lines
    kinds = [call[0] for call in recorder.calls]
    assert kinds == ["train_begin", "epoch_begin", "epoch_end", "epoch_begin", "epoch_end",
                     "train_end"]
    assert recorder.calls[0][1] is True
    ends = [call for call in recorder.calls if call[0] == "epoch_end"]
    assert [epoch for _, epoch, _ in ends] == [0, 1]
    # Each epoch's logs are the evaluation the run recorded (eval_results.json), an accuracy of
    # k in len(dev) texts.
    recorded = json.loads((tmp_path / "out" / "eval_results.json").read_text())["evaluations"]
    assert len(recorded) == 2
    for (_, _, logs), written in zip(ends, recorded):
        assert logs["eval_accuracy"] == pytest.approx(written["eval_accuracy"], abs=1e-9)
        assert logs["eval_loss"] == pytest.approx(written["eval_loss"], abs=1e-9)
        right = logs["eval_accuracy"] * len(dev)
        assert right == pytest.approx(round(right), abs=1e-6)
    assert [step for step, _ in list_checkpoints(tmp_path / "out")] == [2, 4]
    rows = (tmp_path / "epochs.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("epoch,eval_accuracy,eval_loss")
    names, _ = clf.predict([t for t, _ in dev[:2]])
    assert set(names) <= {"austen", "melville"}


def test_a_callback_stops_training_at_an_epoch(model_dir, examples, tmp_path, capsys):
    train, _ = examples
    clf = TextClassifier.from_pretrained(model_dir, num_classes=2, max_seq_length=32,
                                         output_dir=tmp_path / "out", seed=1)
    # Pairs with class ids, unbatched.
    dataset = tf.data.Dataset.from_tensor_slices(
        (([t for t, _ in train], [t[::-1] for t, _ in train]),
         [int(l == "melville") for _, l in train]))
    recorder = Recorder(stop_after=1)
    capsys.readouterr()
    clf.fit(dataset, epochs=3, batch_size=8, callbacks=[recorder], verbose=0)
    assert capsys.readouterr().out == ""  # verbose=0: silent
    assert [call[0] for call in recorder.calls] == ["train_begin", "epoch_begin", "epoch_end",
                                                    "train_end"]
    assert [step for step, _ in list_checkpoints(tmp_path / "out")] == [2]
    assert clf.is_pair is True and clf.labels == ["0", "1"]


def test_dataset_argument_errors(model_dir, tmp_path):
    clf = TextClassifier.from_pretrained(model_dir, labels=["a", "b"], max_seq_length=32,
                                         output_dir=tmp_path / "out")
    dataset = tf.data.Dataset.from_tensor_slices((["x y z"], ["a"]))
    with pytest.raises(UsageError, match="labels: must be None"):
        clf.fit(dataset, ["a"])
    with pytest.raises(UsageError, match=r"labels: required"):
        clf.fit(["x y z"])
    with pytest.raises(UsageError, match=r"texts: a tf.data.Dataset of \(text, label\)"):
        clf.fit(tf.data.Dataset.from_tensor_slices(["x y z"]))
    with pytest.raises(UsageError, match=r"verbose= must be 0 \(silent\), 1 \(a progress bar\), "
                                         r"2 \(one line per epoch\) or 'auto', got 3"):
        clf.fit(["x y z", "z y x"], ["a", "b"], verbose=3)
