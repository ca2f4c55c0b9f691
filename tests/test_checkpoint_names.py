"""The name table, both ways: every model weight has exactly one TF1 name and back."""

import pytest

from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer, checkpoint, checkpoint_names

CONFIGS = [
    dict(num_hidden_layers=4, num_hidden_groups=1, inner_group_num=1),
    dict(num_hidden_layers=6, num_hidden_groups=3, inner_group_num=2),
    dict(num_hidden_layers=5, num_hidden_groups=2, inner_group_num=1, share_parameters="attention"),
    dict(num_hidden_layers=3, num_hidden_groups=1, inner_group_num=2, embedding_size=12),
]


def _config(**overrides):
    values = dict(vocab_size=30, embedding_size=8, hidden_size=12, num_attention_heads=3,
                  intermediate_size=10, max_position_embeddings=16)
    values.update(overrides)
    return AlbertConfig(**values)


@pytest.mark.parametrize("overrides", CONFIGS)
def test_every_weight_has_one_name_and_back(overrides):
    model = AlbertPretrainer(_config(**overrides))
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
    config = _config(**overrides)
    for entry in checkpoint.model_entries(AlbertPretrainer(config)):
        expected = tuple(k if isinstance(k, int) else getattr(config, k) for k in entry.shape_keys)
        assert tuple(entry.variable.shape) == expected, entry.name


def test_original_variable_list_is_covered_exactly(fixtures_dir):
    config = AlbertConfig.from_json_file(fixtures_dir / "model" / "albert_config.json")
    original = {line.split("\t")[0] for line in
                (fixtures_dir / "model" / "variables.txt").read_text().splitlines() if line}
    ours = {e.name for e in checkpoint.model_entries(AlbertPretrainer(config))}
    assert ours == original - {"global_step"}


def test_block_rows_match_the_spec_suffixes():
    suffixes = {row[0] for row in checkpoint_names.ATTENTION + checkpoint_names.FFN}
    assert "ffn_1/intermediate/output/dense/kernel" in suffixes
    assert {"LayerNorm/gamma", "LayerNorm_1/gamma"} <= suffixes
    assert len(suffixes) == 16


def test_encoder_alone_has_no_heads():
    names = {e.name for e in checkpoint.model_entries(AlbertModel(_config()))}
    assert not any(n.startswith("cls/") for n in names)
    assert "bert/pooler/dense/kernel" in names
