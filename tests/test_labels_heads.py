"""Labels and heads checked on every path (issue 47, item 3): a labels.json that does not fit
the head, a missing one, labels or a head of another size than the folder's, another task's
folder; and a new head of another class count trained from a fine-tuned encoder (one warning)."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bad_inputs import one_error_line
from support.configs import tiny_config
from support.interop import interop

from albert_tf.errors import CheckpointError, UsageError
from albert_tf.models import AlbertClassifier, AlbertTokenClassifier
from albert_tf.weights import loading
from albert_tf.weights.readers import open_source
from albert_tf.weights.run_inputs import InputsConflictError, resolve_inputs


def _folder(root, name, model, labels=None):
    """An output_dir as a run leaves it: albert_config.json, model.ckpt-2, labels.json."""
    folder = root / name
    folder.mkdir()
    (folder / "albert_config.json").write_text(model.config.to_json_string())
    tf.train.Checkpoint(model=model).write(str(folder / "model.ckpt-2"))
    if labels is not None:
        (folder / "labels.json").write_text(json.dumps(labels))
    return folder


def _built(model):
    ids = tf.zeros([1, 4], tf.int32)
    model({"input_ids": ids, "input_mask": tf.ones_like(ids), "segment_ids": ids})
    return model


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("heads")
    config = tiny_config()
    three = _built(AlbertClassifier(config, 3))
    return {"config": config, "three_model": three,
            "three": _folder(root, "three", three, ["a", "b", "c"]),
            "two": _folder(root, "two", _built(AlbertClassifier(config, 2)), ["neg", "pos"]),
            "ner": _folder(root, "ner", _built(AlbertTokenClassifier(config, 3)),
                           ["O", "B-X", "I-X"])}


def _copy(folders, name, tmp_path):
    return shutil.copytree(folders[name], tmp_path / name)


@pytest.mark.parametrize("names", [["neg"], ["neg", "neu", "pos"]])
def test_a_labels_json_of_another_count_is_one_error_naming_it_and_the_head(folders, tmp_path,
                                                                            names, capsys):
    """Export (and every reader) took such a file as "no names" and dropped `labels` silently;
    another run's labels.json copied into the folder is the same case."""
    folder = _copy(folders, "two", tmp_path)
    (folder / "labels.json").write_text(json.dumps(names))
    line = one_error_line(lambda: resolve_inputs(init_checkpoint=str(folder), head="classifier",
                                                 need_tokenizer=False), capsys)
    assert line == (f"error: {folder / 'labels.json'} names {len(names)} labels "
                    f"({', '.join(names)}) but the classifier head of {folder / 'model.ckpt-2'} "
                    "has 2 outputs (another run's labels.json?); put back the run's own, or "
                    "remove it to serve class ids")


def test_a_deleted_labels_json_warns_when_the_export_serves_class_ids(folders, tmp_path,
                                                                      monkeypatch):
    from albert_tf.serving import head_export

    warned = []
    monkeypatch.setattr(head_export.logging, "warning", lambda *a: warned.append(a[0] % a[1:]))
    folder = _copy(folders, "two", tmp_path)
    source = open_source(str(folder))
    assert head_export.text_labels(source, 2) == ["neg", "pos"] and warned == []
    (folder / "labels.json").unlink()
    assert head_export.text_labels(open_source(str(folder)), 2) is None
    assert warned == [f"{folder / 'labels.json'} not found: the export cannot name the 2 classes "
                      "its run trained (it serves class ids, or LABEL_i); put back the run's "
                      "labels.json"]


def test_labels_or_a_head_of_another_size_than_the_folders_are_one_error(folders, tmp_path,
                                                                         capsys):
    """--do_predict --label_list=<3 names>, from_pretrained(labels=<3 names>) then predict,
    a regression --do_predict: one line naming both counts, not a raw restore ValueError."""
    folder = str(folders["two"])
    line = one_error_line(lambda: resolve_inputs(init_checkpoint=folder, head="classifier",
                                                 labels="x,y,z", need_tokenizer=False), capsys)
    assert (f"--label_list ['x', 'y', 'z'] contradicts {folder}/labels.json ['neg', 'pos'] "
            "(3 labels for a head of 2 outputs)") in line, line
    # Without labels.json to compare with (and for the Python API, which may still fit): the
    # load names both counts.
    for wanted, what in ((3, "3: pass that model's labels (or none, to use its own), a "
                             "checkpoint of this task"),
                         (1, "1 (a regression): pass a regression model's checkpoint")):
        with pytest.raises(CheckpointError) as raised:
            loading.load(AlbertClassifier(folders["config"], wanted), folder, require_head=True)
        assert str(raised.value) == (
            f"{folder} holds a classifier head with 2 outputs (neg, pos), but this run's has "
            f"{what}, or --do_train to train a new head from its encoder")


def test_race_from_a_classifier_folder_is_the_head_error(folders):
    """A RACE head is a one-output classifier to our checkpoints: a 2-class one is not RACE's."""
    with pytest.raises(InputsConflictError) as raised:
        resolve_inputs(init_checkpoint=str(folders["two"]), head="multiple_choice",
                       need_tokenizer=False)
    assert str(raised.value) == (
        f"--init_checkpoint={folders['two']} holds a classifier head of 2 outputs, but this run "
        "serves a multiple_choice head: pass a checkpoint of this task (or --do_train to train "
        "its head from that encoder)")


def test_a_token_classifier_folder_is_named_as_what_it_is(folders):
    with pytest.raises(CheckpointError) as raised:
        loading.load(AlbertClassifier(folders["config"], 3), str(folders["ner"]),
                     require_head=True)
    assert str(raised.value) == (
        f"{folders['ner']} holds no trained head for AlbertClassifier (it holds a "
        "token_classifier head, another task's): train first (--do_train) or pass a fine-tuned "
        "--init_checkpoint of this task")


def test_a_new_head_of_another_class_count_trains_from_a_fine_tuned_encoder(folders,
                                                                           monkeypatch):
    warned = []
    monkeypatch.setattr(loading.logging, "warning", lambda *a: warned.append(a[0] % a[1:]))
    model = AlbertClassifier(folders["config"], 2)
    description = loading.load(model, str(folders["three"]), new_head=True)
    assert warned == [f"{folders['three']}: its classifier head has 3 outputs (a, b, c), this "
                      "run's 2: the encoder is loaded and the head trained new"]
    assert "classifier head new" in description, description
    source = folders["three_model"].encoder.weights
    assert len(model.encoder.weights) == len(source)
    for mine, theirs in zip(model.encoder.weights, source):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    # The same load that is not a training run's start names both counts instead.
    with pytest.raises(CheckpointError, match="holds a classifier head with 3 outputs"):
        loading.load(AlbertClassifier(folders["config"], 2), str(folders["three"]))


def test_hf_placeholders_are_the_labels_with_the_heads_count(tmp_path):
    """An HF classifier whose id2label is LABEL_0..LABEL_2 serves those names (it said "the
    classifier has no labels yet"); a run's own names of that count agree with them."""
    folder = interop("hf", "classifier")
    inputs = resolve_inputs(init_checkpoint=folder, head="classifier", need_tokenizer=False)
    assert inputs.labels == ["LABEL_0", "LABEL_1", "LABEL_2"]
    assert resolve_inputs(init_checkpoint=folder, head="classifier", labels="a,b,c",
                          need_tokenizer=False).labels == ["a", "b", "c"]
    with pytest.raises(UsageError, match=r"\(2 labels for a head of 3 outputs\)"):
        resolve_inputs(init_checkpoint=folder, head="classifier", labels="a,b",
                       need_tokenizer=False)
    # TextClassifier serves them: its predictions are the argmax's placeholder.
    from albert_tf.tasks.classification.text_classifier import TextClassifier

    classifier = TextClassifier.from_pretrained(folder, max_seq_length=32,
                                                output_dir=str(tmp_path / "out"))
    names, probabilities = classifier.predict(["a fine day", "bad"])
    assert classifier.labels == ["LABEL_0", "LABEL_1", "LABEL_2"]
    assert names == [f"LABEL_{i}" for i in np.argmax(probabilities, axis=-1)]


def test_fit_with_another_class_count_than_the_models_trains_a_new_head(tmp_path, monkeypatch):
    """The training run's start (the driver's initializer) drops the old head with one warning."""
    from albert_tf.tasks.classification.text_classifier import TextClassifier

    warned = []
    monkeypatch.setattr(loading.logging, "warning", lambda *a: warned.append(a[0] % a[1:]))
    folder = interop("hf", "classifier")
    classifier = TextClassifier.from_pretrained(folder, labels=["neg", "pos"], max_seq_length=32,
                                                output_dir=str(tmp_path / "out"))
    classifier.fit(["good film", "bad film"], ["pos", "neg"], epochs=1, batch_size=2, verbose=0)
    assert warned == [f"{folder}: its classifier head has 3 outputs (LABEL_0, LABEL_1, LABEL_2), "
                      "this run's 2: the encoder is loaded and the head trained new"]
    names, probabilities = classifier.predict(["good film"])
    assert probabilities.shape == (1, 2) and names == [["neg", "pos"][probabilities.argmax()]]
