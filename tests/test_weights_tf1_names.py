"""The name table, both ways: every model weight has exactly one TF1 name and back."""

import keras
import pytest

from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer
from albert_tf.weights import tf1_checkpoint as checkpoint, tf1_names as checkpoint_names
from albert_tf.models import (AlbertClassifier, AlbertMultipleChoice, AlbertSquadV1,
                              AlbertSquadV2)
from support import configs

CONFIGS = [
    dict(num_hidden_layers=4, num_hidden_groups=1, inner_group_num=1),
    dict(num_hidden_layers=6, num_hidden_groups=3, inner_group_num=2),
    dict(num_hidden_layers=5, num_hidden_groups=2, inner_group_num=1, share_parameters="attention"),
    dict(num_hidden_layers=3, num_hidden_groups=1, inner_group_num=2,
         embedding_size=configs.TINY["hidden_size"]),
]


@pytest.mark.parametrize("overrides", CONFIGS)
def test_every_weight_has_one_name_and_back(overrides):
    model = AlbertPretrainer(configs.tiny_config(**overrides))
    entries = checkpoint.model_entries(model)
    names = [e.name for e in entries]
    assert len(names) == len(set(names))
    by_id = {id(e.variable): e.name for e in entries}
    assert len(by_id) == len(entries)  # no weight under two names
    assert set(by_id) == {id(w) for w in model.weights}  # every Keras weight is mapped
    by_name = {e.name: e.variable for e in entries}
    for entry in entries:  # TF1 name → weight → TF1 name
        assert by_id[id(by_name[entry.name])] == entry.name


@pytest.mark.parametrize("overrides", CONFIGS)
def test_shapes_from_config_keys_agree_with_weights(overrides):
    config = configs.tiny_config(**overrides)
    for entry in checkpoint.model_entries(AlbertPretrainer(config)):
        expected = tuple(k if isinstance(k, int) else getattr(config, k) for k in entry.shape_keys)
        assert tuple(entry.variable.shape) == expected, entry.name


def test_original_variable_list_is_covered_exactly(fixtures_dir):
    config = AlbertConfig.from_json_file(fixtures_dir / "model" / "albert_config.json")
    original = {line.split("\t")[0] for line in
                (fixtures_dir / "model" / "variables.txt").read_text().splitlines() if line}
    ours = {e.name for e in checkpoint.model_entries(AlbertPretrainer(config))}
    assert ours == original - {"global_step"}


def test_block_rows_have_the_original_suffixes():
    suffixes = {row[0] for row in checkpoint_names.ATTENTION + checkpoint_names.FFN}
    assert "ffn_1/intermediate/output/dense/kernel" in suffixes
    assert {"LayerNorm/gamma", "LayerNorm_1/gamma"} <= suffixes
    assert len(suffixes) == 16


def test_encoder_alone_has_no_heads():
    names = {e.name for e in checkpoint.model_entries(AlbertModel(configs.tiny_config()))}
    assert not any(n.startswith("cls/") for n in names)
    assert "bert/pooler/dense/kernel" in names


TASK_MODELS = {
    "classifier": lambda c: AlbertClassifier(c, 3),
    "regression": lambda c: AlbertClassifier(c, 1),
    "squad_v1": AlbertSquadV1,
    "squad_v2": AlbertSquadV2,
    "multiple_choice": AlbertMultipleChoice,
}


@pytest.mark.parametrize("build", list(TASK_MODELS.values()), ids=list(TASK_MODELS))
def test_task_model_weights_have_one_name_and_back(build, tiny_config):
    model = build(tiny_config)
    entries = checkpoint.model_entries(model)
    by_id = {id(e.variable): e.name for e in entries}
    assert len({e.name for e in entries}) == len(entries) == len(by_id)
    assert set(by_id) == {id(w) for w in model.weights}
    for entry in entries:  # shapes from the table's keys, with num_labels read from the model
        assert tuple(entry.variable.shape) == checkpoint.dimensions(entry.shape_keys, model), entry.name
    head = {e.name for e in entries} - {e.name for e in checkpoint.model_entries(model.encoder)}
    assert head == {row[0] for row in checkpoint.head_rows(model)}


def test_a_head_shape_mismatch_names_its_key(tiny_config, tmp_path):
    prefix = checkpoint.save_tf1_checkpoint(AlbertClassifier(tiny_config, 3), str(tmp_path / "ckpt"))
    with pytest.raises(checkpoint.CheckpointError, match=r"output_weights .*the num_labels this model was built with \(2: its labels\)"):
        checkpoint.load_tf1_checkpoint(AlbertClassifier(tiny_config, 2), prefix)


def test_a_model_without_names_is_refused(tiny_config):
    class Unnamed(keras.Model):
        def __init__(self, config):
            super().__init__()
            self.config, self.encoder = config, AlbertModel(config)

    with pytest.raises(TypeError, match="Unnamed has no TF1 names"):
        checkpoint.model_entries(Unnamed(tiny_config))


def test_every_head_has_rows_and_every_row_group_is_a_head():
    from albert_tf.models import HEAD_CLASSES
    from albert_tf.weights.heads import HEADS

    assert list(checkpoint_names.HEAD_ROWS) == list(HEADS) == [
        head for cls in HEAD_CLASSES for head in cls.HEADS]
    assert checkpoint_names.PRETRAINING_HEADS == sum(
        (checkpoint_names.HEAD_ROWS[h] for h in AlbertPretrainer.HEADS), ())
