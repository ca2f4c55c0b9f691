"""albert_tf.weights.run_inputs: a run's inputs resolved once, each with where it came from, and
every contradiction between the flags and the model folder one error naming both sides."""

import json
import os
import re
import shutil

import pytest

from bad_inputs import one_error_line
from support.interop import interop
from support.source_reads import counting_hf_reads

TAGS = ["B-LOC", "I-LOC", "O"]


def _hf_folder(tmp_path, name, architecture=None, **values):
    """A copy of the HF classifier fixture (3 outputs), its config.json updated."""
    folder = tmp_path / name
    shutil.copytree(interop("hf", "classifier"), folder)
    config = json.loads((folder / "config.json").read_text())
    if architecture:
        config["architectures"] = [architecture]
    config.update(values)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _named(names):
    return {str(i): name for i, name in enumerate(names)}


def test_the_source_is_opened_once_and_its_weights_read_on_first_need_once(tmp_path):
    from albert_tf.weights.run_inputs import resolve_inputs

    folder = _hf_folder(tmp_path, "clf", id2label=_named(["neg", "neu", "pos"]))
    with counting_hf_reads() as counts:
        inputs = resolve_inputs(init_checkpoint=str(folder), max_seq_length=32)
        assert counts == {"opened": 1, "read": 0}  # config and tokenizer: no weights read
        assert inputs.albert_config.hidden_size == 32
        assert inputs.origins["albert_config"] == f"the model config of {folder}"
        assert inputs.spm_model_file == str(folder / "spiece.model")
        assert inputs.heads == ("classifier",) and inputs.source.arrays is inputs.source.arrays
        assert inputs.weights(str(folder)) is inputs.source  # what `weights.load` is handed
        assert inputs.weights("elsewhere/model.ckpt-3") == "elsewhere/model.ckpt-3"
    assert counts == {"opened": 1, "read": 1}


def test_the_labels_come_from_id2label_with_where_they_came_from(tmp_path):
    from albert_tf.weights.run_inputs import resolve_inputs

    folder = _hf_folder(tmp_path, "clf", id2label=_named(["neg", "neu", "pos"]))
    inputs = resolve_inputs(init_checkpoint=str(folder), head="classifier", max_seq_length=32)
    assert inputs.labels == ["neg", "neu", "pos"]
    assert inputs.origins["labels"] == f"id2label of {folder / 'config.json'}"
    # HF's placeholders name nothing: the run's own labels are free.
    plain = resolve_inputs(init_checkpoint=interop("hf", "classifier"), head="classifier",
                           labels="a,b,c", max_seq_length=32)
    assert plain.labels == ["a", "b", "c"] and plain.origins["labels"] == "--label_list"


def test_run_ner_predict_with_the_tags_in_another_order_is_refused_naming_both(tmp_path,
                                                                                capsys):
    from albert_tf.tasks.driver import Driver
    from albert_tf.tasks.token_classification.config import NerRunConfig
    from albert_tf.tasks.token_classification.task import NerTask

    folder = _hf_folder(tmp_path, "ner", "AlbertForTokenClassification", id2label=_named(TAGS))
    (tmp_path / "test.txt").write_text("Paris O\n")
    config = NerRunConfig.from_flat(dict(
        init_checkpoint=str(folder), do_predict=True, test_file=str(tmp_path / "test.txt"),
        output_dir=str(tmp_path / "out"), max_seq_length=32, label_list="O,B-LOC,I-LOC"))
    line = one_error_line(lambda: Driver.create(NerTask, config), capsys)
    assert "--label_list ['O', 'B-LOC', 'I-LOC']" in line, line
    assert f"id2label of {folder / 'config.json'} {TAGS}" in line, line
    assert "another order" in line, line
    # The same tags in the model's order: accepted, taken as the run's.
    config.label_list = ",".join(TAGS)
    assert Driver.create(NerTask, config).task.labels == TAGS


def test_run_classifier_with_other_labels_than_an_hf_classifier_is_refused(tmp_path, capsys):
    from albert_tf.tasks.classification.config import ClassifierRunConfig
    from albert_tf.tasks.classification.task import ClassificationTask
    from albert_tf.tasks.driver import Driver

    folder = _hf_folder(tmp_path, "clf", id2label=_named(["neg", "neu", "pos"]))
    (tmp_path / "test.tsv").write_text("text\nfine\n")
    flags = dict(task_name="tsv", init_checkpoint=str(folder), do_predict=True,
                 test_file=str(tmp_path / "test.tsv"), output_dir=str(tmp_path / "out"),
                 max_seq_length=32)
    config = ClassifierRunConfig.from_flat(dict(flags, label_list="pos,neu,neg"))
    line = one_error_line(lambda: Driver.create(ClassificationTask, config), capsys)
    assert "['pos', 'neu', 'neg'] contradicts" in line and "['neg', 'neu', 'pos']" in line, line
    # Without --label_list, a prediction run serves the folder's own names (it said "no labels").
    task = Driver.create(ClassificationTask, ClassifierRunConfig.from_flat(flags)).task
    assert task.source.labels == ["neg", "neu", "pos"]


def test_a_run_that_serves_a_head_the_source_does_not_hold_is_refused(tmp_path):
    from albert_tf.weights.run_inputs import InputsConflictError, resolve_inputs

    folder = _hf_folder(tmp_path, "ner", "AlbertForTokenClassification")
    with pytest.raises(InputsConflictError, match="holds a token_classifier head") as raised:
        resolve_inputs(init_checkpoint=str(folder), head="classifier", max_seq_length=32)
    assert "holds a token_classifier head" in str(raised.value)
    assert "serves a classifier head" in str(raised.value)
    # Training a classifier from that encoder is fine (its head is left unused).
    resolve_inputs(init_checkpoint=str(folder), head="classifier", trains=True,
                   max_seq_length=32)


def test_casing_against_the_model_is_one_error_naming_both(tmp_path):
    from albert_tf.tokenization.settings import CasingConflictError
    from albert_tf.weights.run_inputs import resolve_inputs

    preset = interop("keras_hub", "classifier")
    inputs = resolve_inputs(init_checkpoint=preset, max_seq_length=32)
    assert inputs.do_lower_case is False and "keras-hub" in inputs.origins["do_lower_case"]
    with pytest.raises(CasingConflictError, match=f"--do_lower_case contradicts {preset}"):
        resolve_inputs(init_checkpoint=preset, do_lower_case=True, max_seq_length=32)
    folder = _hf_folder(tmp_path, "cased")
    (folder / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    assert resolve_inputs(init_checkpoint=str(folder), max_seq_length=32).do_lower_case is False
    with pytest.raises(CasingConflictError, match="tokenizer_config.json, which records"):
        resolve_inputs(init_checkpoint=str(folder), do_lower_case=True, max_seq_length=32)


def test_vocabulary_and_sequence_length_against_the_config_name_both(tmp_path):
    from albert_tf.config import AlbertConfig
    from albert_tf.errors import UsageError
    from albert_tf.weights.run_inputs import resolve_inputs

    spm = interop("hf", "classifier", "spiece.model")
    small = tmp_path / "small.json"
    AlbertConfig(vocab_size=100, max_position_embeddings=16).to_json_file(small)
    with pytest.raises(UsageError, match=f"{spm} has 1500 pieces but the model's vocab_size is "
                                         "100"):
        resolve_inputs(albert_config_file=str(small), spm_model_file=spm, max_seq_length=8)
    folder = _hf_folder(tmp_path, "clf")
    with pytest.raises(UsageError, match=r"--max_seq_length \(64\) exceeds the model's "
                                         r"max_position_embeddings \(48\)"):
        resolve_inputs(init_checkpoint=str(folder), max_seq_length=64)


@pytest.mark.parametrize("values, words", [
    ({"id2label": ["neg", "neu", "pos"]}, "key id2label must be a JSON object"),
    ({"num_labels": "3"}, 'key num_labels must be an integer, got "3"'),
    ({"id2label": {"zero": "neg"}}, "key id2label maps ids"),
    ({"architectures": "AlbertForSequenceClassification"}, "key architectures must be a list"),
    ({"layer_norm_eps": "1e-12"}, 'config key layer_norm_eps must be a number, got "1e-12"'),
])
def test_wrong_types_in_an_hf_config_name_the_file_and_key(tmp_path, values, words):
    from albert_tf.weights import SourceError, open_source

    folder = _hf_folder(tmp_path, "clf", **values)
    with pytest.raises(SourceError, match=r"config\.json: ") as raised:
        open_source(folder)
    assert str(raised.value).startswith(f"{folder / 'config.json'}: "), raised.value
    assert words in str(raised.value)


def test_an_id2label_missing_an_id_says_which(tmp_path):
    from albert_tf.weights import SourceError, open_source

    folder = _hf_folder(tmp_path, "clf", id2label={"0": "neg", "1": "pos"})
    with pytest.raises(SourceError, match=r"config.json: key id2label names ids \[0, 1\] but "
                                          "the head has 3 outputs: id 2 has no label"):
        open_source(folder).labels


@pytest.mark.parametrize("text, words", [
    ('{"do_lower_case": "false"}', 'key do_lower_case must be true or false (a JSON boolean), '
                                   'got "false"'),
    ('[{"do_lower_case": false}]', "holds a JSON list, expected an object"),
])
def test_wrong_types_in_tokenizer_config_name_the_file_and_key(tmp_path, text, words):
    from albert_tf.errors import InputError
    from albert_tf.weights import open_source

    folder = _hf_folder(tmp_path, "clf")
    (folder / "tokenizer_config.json").write_text(text)
    with pytest.raises(InputError, match=r"tokenizer_config\.json: ") as raised:
        open_source(folder)
    assert str(raised.value).startswith(f"{folder / 'tokenizer_config.json'}: "), raised.value
    assert words in str(raised.value)


@pytest.mark.parametrize("key, value, words", [
    ("doc_stride", "auto", 'key doc_stride must be an integer, got "auto"'),
    ("threshold", "high", 'key threshold must be a number, got "high"'),
])
def test_wrong_types_in_labels_json_name_the_file_and_key(tmp_path, key, value, words):
    from albert_tf.errors import UsageError
    from albert_tf.labels import LabelFile

    (tmp_path / "labels.json").write_text(json.dumps(
        {"labels": ["a", "b"], "task_type": "multi_label", key: value}))
    with pytest.raises(UsageError, match=r"labels\.json: ") as raised:
        LabelFile.read(str(tmp_path))
    assert str(raised.value) == f"{os.path.join(str(tmp_path), 'labels.json')}: {words}"


def test_the_callers_config_is_left_as_given(tmp_path):
    from albert_tf.tasks.classification.config import ClassifierRunConfig
    from albert_tf.weights.run_inputs import resolve_inputs

    folder = _hf_folder(tmp_path, "clf")
    config = ClassifierRunConfig.from_flat(dict(init_checkpoint=str(folder), max_seq_length=32))
    inputs = resolve_inputs(config)
    filled = inputs.run_config(config)
    assert config.albert_config is None and config.spm_model_file is None
    assert filled.albert_config is inputs.albert_config
    assert filled.spm_model_file == str(folder / "spiece.model")


@pytest.mark.parametrize("name, text, words", [
    ("preprocessor.json", '{"config": {"sequence_length": "64"}}',
     'key sequence_length must be an integer, got "64"'),
    ("preprocessor.json", '{"config": [64]}', "key config must be an object, got [64]"),
    ("task.json", '["AlbertTextClassifier"]', "holds a JSON list, expected an object"),
])
def test_wrong_types_in_a_keras_hub_preset_name_the_file_and_key(tmp_path, name, text, words):
    from albert_tf.weights import SourceError, open_source

    folder = tmp_path / "preset"
    shutil.copytree(interop("keras_hub", "classifier"), folder)
    (folder / name).write_text(text)
    with pytest.raises(SourceError, match=re.escape(words)) as raised:
        open_source(folder)
    assert str(raised.value) == f"{folder / name}: {words}"


def test_a_glue_task_whose_model_names_its_labels_in_another_order_is_refused(tmp_path, capsys,
                                                                               fixtures_dir):
    from safetensors.numpy import load_file, save_file

    from albert_tf.tasks.classification.config import GlueRunConfig
    from albert_tf.tasks.classification.task import ClassificationTask
    from albert_tf.tasks.driver import Driver

    folder = _hf_folder(tmp_path, "mrpc", id2label=_named(["1", "0"]))
    tensors = load_file(folder / "model.safetensors")
    for name in ("classifier.weight", "classifier.bias"):
        tensors[name] = tensors[name][:2]
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    flags = dict(task_name="mrpc", data_dir=str(fixtures_dir / "glue" / "data"), do_eval=True,
                 init_checkpoint=str(folder), output_dir=str(tmp_path / "out"), max_seq_length=32)
    line = one_error_line(lambda: Driver.create(ClassificationTask,
                                                GlueRunConfig.from_flat(flags)), capsys)
    assert "the labels of --task_name=mrpc ['0', '1'] contradicts id2label of" in line, line
    assert "['1', '0'] (the same labels in another order" in line, line
    # Names that differ only in case are the same names (an HF MNLI model's ENTAILMENT).
    config = json.loads((folder / "config.json").read_text())
    config["id2label"] = _named(["Not_Equivalent", "Equivalent"])
    (folder / "config.json").write_text(json.dumps(config))
    task = Driver.create(ClassificationTask, GlueRunConfig.from_flat(flags)).task
    task.inputs.check_labels(["not_equivalent", "equivalent"], "labels=")
    assert task.inputs.checks[-1].startswith("labels: labels= agrees with id2label of")


def test_run_squad_and_run_race_serving_another_tasks_head_are_refused_naming_both(tmp_path,
                                                                                   capsys):
    from albert_tf.tasks.driver import Driver
    from albert_tf.tasks.race.config import RaceRunConfig
    from albert_tf.tasks.race.task import RaceTask
    from albert_tf.tasks.squad.config import SquadRunConfig
    from albert_tf.tasks.squad.task import SquadTask
    from albert_tf.weights.heads import reported_as

    classifier = _hf_folder(tmp_path, "clf")
    flags = dict(init_checkpoint=str(classifier), do_predict=True,
                 output_dir=str(tmp_path / "out"), max_seq_length=32)
    for version_2, head in ((False, "squad_v1"), (True, "squad_v2")):
        config = SquadRunConfig.from_flat(dict(flags, version_2_with_negative=version_2))
        line = one_error_line(lambda: Driver.create(SquadTask, config), capsys)
        assert f"{classifier} holds a classifier head, but this run serves a {head} head" in line
    tagger = _hf_folder(tmp_path, "ner", "AlbertForTokenClassification")
    config = RaceRunConfig.from_flat(dict(flags, init_checkpoint=str(tagger), do_train=False,
                                         max_qa_length=16))
    line = one_error_line(lambda: Driver.create(RaceTask, config), capsys)
    assert f"{tagger} holds a token_classifier head, but this run serves a multiple_choice" in line
    # Where a format cannot tell two heads apart, the one it reports serves: our run_squad v1
    # output_dir holds a root [2, H] head, a classifier by its attributes.
    assert reported_as("squad_v1", "albert_tf") == "classifier"
    assert reported_as("squad_v1", "hf") == "squad_v1"
    assert reported_as("multiple_choice", "tf1") == "classifier"


def test_an_output_dirs_labels_json_against_the_models_labels_is_refused_naming_both(tmp_path,
                                                                                      capsys):
    from albert_tf.tasks.classification.config import ClassifierRunConfig
    from albert_tf.tasks.classification.task import ClassificationTask
    from albert_tf.tasks.driver import Driver
    from albert_tf.tasks.token_classification.config import NerRunConfig
    from albert_tf.tasks.token_classification.task import NerTask

    folder = _hf_folder(tmp_path, "clf", id2label=_named(["neg", "neu", "pos"]))
    out = tmp_path / "out"
    out.mkdir()
    (out / "labels.json").write_text('["pos", "neu", "neg"]')
    (tmp_path / "test.tsv").write_text("text\nfine\n")
    flags = dict(task_name="tsv", init_checkpoint=str(folder), do_predict=True,
                 test_file=str(tmp_path / "test.tsv"), output_dir=str(out), max_seq_length=32)
    line = one_error_line(
        lambda: Driver.create(ClassificationTask, ClassifierRunConfig.from_flat(flags)), capsys)
    assert (f"{out / 'labels.json'} ['pos', 'neu', 'neg'] contradicts id2label of "
            f"{folder / 'config.json'} ['neg', 'neu', 'pos']") in line, line
    # With a checkpoint of its own, the output_dir's model is served: its labels.json names it.
    (out / "model.ckpt-1.index").write_bytes(b"")
    task = Driver.create(ClassificationTask, ClassifierRunConfig.from_flat(flags)).task
    assert task.source.labels == ["pos", "neu", "neg"]

    tagger = _hf_folder(tmp_path, "ner", "AlbertForTokenClassification", id2label=_named(TAGS))
    (tmp_path / "tags").mkdir()
    (tmp_path / "tags" / "labels.json").write_text('["O", "B-LOC", "I-LOC"]')
    (tmp_path / "test.txt").write_text("Paris O\n")
    config = NerRunConfig.from_flat(dict(
        init_checkpoint=str(tagger), do_predict=True, test_file=str(tmp_path / "test.txt"),
        output_dir=str(tmp_path / "tags"), max_seq_length=32))
    line = one_error_line(lambda: Driver.create(NerTask, config).task.labels, capsys)
    assert f"labels.json ['O', 'B-LOC', 'I-LOC'] contradicts id2label of" in line, line
    assert f"{TAGS} (the same labels in another order" in line, line
