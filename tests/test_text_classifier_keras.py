"""TextClassifier.fit from Keras users' inputs: a tf.data.Dataset of (text, label) examples,
and Keras callbacks called per epoch (EarlyStopping-style stops included), on real passages."""

import json
import re
import shutil

import keras
import pytest
import tensorflow as tf

from albert_tf.errors import UsageError
from albert_tf.tasks import TextClassifier
from albert_tf.training.checkpoint_files import list_checkpoints
from support.configs import GLUE_TINY


def _passages(path, count, skip=40):
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return [p for p in paragraphs[skip:] if 15 <= len(p.split()) <= 60][:count]


@pytest.fixture(scope="module")
def model_dir(spm_model, tmp_path_factory):
    from albert_tf import AlbertConfig, AlbertPretrainer
    from albert_tf.weights.tf1_checkpoint import save_tf1_checkpoint

    folder = tmp_path_factory.mktemp("albert_tiny")
    (folder / "albert_config.json").write_text(json.dumps(GLUE_TINY))
    shutil.copy(spm_model, folder / "30k-clean.model")
    save_tf1_checkpoint(AlbertPretrainer(AlbertConfig(**GLUE_TINY)),
                        str(folder / "model.ckpt-best"))
    return folder


@pytest.fixture(scope="module")
def examples(data_dir):
    books = data_dir / "pretrain" / "nltk_gutenberg"
    austen = _passages(books / "austen-emma.txt", 12)
    melville = _passages(books / "melville-moby_dick.txt", 12)
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


def test_fit_on_datasets_with_callbacks(model_dir, examples, tmp_path):
    train, dev = examples
    clf = TextClassifier.from_pretrained(model_dir, labels=["austen", "melville"],
                                         max_seq_length=32, output_dir=tmp_path / "out", seed=1)
    dataset = tf.data.Dataset.from_tensor_slices(([t for t, _ in train],
                                                  [l for _, l in train])).batch(5)
    dev_dataset = tf.data.Dataset.from_tensor_slices(([t for t, _ in dev],
                                                      [l for _, l in dev]))
    recorder = Recorder()
    csv_log = keras.callbacks.CSVLogger(str(tmp_path / "epochs.csv"))  # a built-in callback
    clf.fit(dataset, epochs=2, batch_size=8, learning_rate=1e-3, validation_data=dev_dataset,
            callbacks=[recorder, csv_log])
    kinds = [call[0] for call in recorder.calls]
    assert kinds == ["train_begin", "epoch_begin", "epoch_end", "epoch_begin", "epoch_end",
                     "train_end"]
    assert recorder.calls[0][1] is True
    ends = [call for call in recorder.calls if call[0] == "epoch_end"]
    assert [epoch for _, epoch, _ in ends] == [0, 1]
    for _, _, logs in ends:
        assert 0.0 <= logs["eval_accuracy"] <= 1.0 and logs["eval_loss"] > 0
    assert [step for step, _ in list_checkpoints(tmp_path / "out")] == [2, 4]
    rows = (tmp_path / "epochs.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("epoch,eval_accuracy,eval_loss")
    names, _ = clf.predict([t for t, _ in dev[:2]])
    assert set(names) <= {"austen", "melville"}


def test_a_callback_stops_training_at_an_epoch(model_dir, examples, tmp_path):
    train, _ = examples
    clf = TextClassifier.from_pretrained(model_dir, num_classes=2, max_seq_length=32,
                                         output_dir=tmp_path / "out", seed=1)
    # Pairs with class ids, unbatched.
    dataset = tf.data.Dataset.from_tensor_slices(
        (([t for t, _ in train], [t[::-1] for t, _ in train]),
         [int(l == "melville") for _, l in train]))
    recorder = Recorder(stop_after=1)
    clf.fit(dataset, epochs=3, batch_size=8, callbacks=[recorder])
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
