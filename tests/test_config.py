import json

import pytest

from albert_tf.config import PRESETS, AlbertConfig, ConfigError, preset
from support.configs import TINY, tiny_config

RELEASED_BASE_V2 = {
    "attention_probs_dropout_prob": 0, "hidden_act": "gelu", "hidden_dropout_prob": 0,
    "embedding_size": 128, "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "max_position_embeddings": 512, "num_attention_heads": 12,
    "num_hidden_layers": 12, "num_hidden_groups": 1, "net_structure_type": 0, "gap_size": 0,
    "num_memory_blocks": 0, "inner_group_num": 1, "down_scale_factor": 1, "type_vocab_size": 2,
    "vocab_size": 30000}


def test_released_config_loads_unchanged(tmp_path):
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(RELEASED_BASE_V2))
    config = AlbertConfig.from_json_file(path)
    for key, value in RELEASED_BASE_V2.items():
        assert getattr(config, key) == value
    assert config.share_parameters == "all"


def test_xxlarge_layers_to_keep_is_accepted():
    config = AlbertConfig.from_dict({**RELEASED_BASE_V2, "layers_to_keep": []})
    assert config.layers_to_keep == []


def test_fixture_config(fixtures_dir):
    config = AlbertConfig.from_json_file(fixtures_dir / "model" / "albert_config.json")
    assert (config.vocab_size, config.embedding_size, config.hidden_size) == (1500, 16, 32)


def test_json_round_trip_sorted_two_space():
    config = AlbertConfig.from_dict(RELEASED_BASE_V2)
    text = config.to_json_string()
    assert text.endswith("}\n") and '\n  "attention_probs_dropout_prob"' in text
    keys = list(json.loads(text))
    assert keys == sorted(keys)
    assert AlbertConfig.from_dict(json.loads(text)) == config


def test_defaults_are_the_original_constructors():
    config = AlbertConfig(vocab_size=99)
    assert (config.hidden_size, config.num_attention_heads, config.intermediate_size) == (4096, 64, 16384)
    assert config.hidden_dropout_prob == 0 and config.hidden_act == "gelu"


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match="'hiden_size'"):
        AlbertConfig.from_dict({**RELEASED_BASE_V2, "hiden_size": 768})


def test_missing_vocab_size():
    values = dict(RELEASED_BASE_V2)
    del values["vocab_size"]
    with pytest.raises(ConfigError, match="vocab_size"):
        AlbertConfig.from_dict(values)


@pytest.mark.parametrize("change, message", [
    ({"num_attention_heads": 7}, "not a multiple of num_attention_heads"),
    ({"num_hidden_groups": 13}, "exceeds num_hidden_layers"),
    ({"hidden_size": 0}, "hidden_size"),
    ({"hidden_act": "swishy"}, "hidden_act"),
    ({"hidden_dropout_prob": 1.5}, "hidden_dropout_prob"),
    ({"share_parameters": "some"}, "share_parameters"),
    ({"num_hidden_layers": "12"}, "num_hidden_layers"),
])
def test_impossible_values(change, message):
    with pytest.raises(ConfigError, match=message):
        AlbertConfig.from_dict({**RELEASED_BASE_V2, **change})


def test_bad_json_file_is_named(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="broken.json"):
        AlbertConfig.from_json_file(path)
    with pytest.raises(ConfigError, match="not found"):
        AlbertConfig.from_json_file(tmp_path / "absent.json")


def test_presets_v1_v2_differ_only_in_dropout():
    for size in ("base", "large", "xlarge", "xxlarge"):
        v1, v2 = PRESETS[f"albert_{size}_v1"], PRESETS[f"albert_{size}_v2"]
        diff = {k for k in v1 if v1[k] != v2[k]}
        assert diff <= {"hidden_dropout_prob", "attention_probs_dropout_prob"}
        assert v2["hidden_dropout_prob"] == 0
    assert PRESETS["albert_base_v1"]["hidden_dropout_prob"] == 0.1
    assert preset("base").hidden_size == 768 and preset("albert_large_v1").num_hidden_layers == 24


@pytest.mark.parametrize("layers, groups, expected", [
    (12, 3, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]),
    (24, 5, [0] * 5 + [1] * 5 + [2] * 5 + [3] * 5 + [4] * 4),
    (12, 1, [0] * 12),
])
def test_group_index_float_expression(layers, groups, expected):
    config = tiny_config(num_hidden_layers=layers, num_hidden_groups=groups)
    assert [config.group_index(l) for l in range(layers)] == expected


@pytest.mark.parametrize("n, missing", [(22, 15), (23, 13)])
def test_group_rounding_anomalies(n, missing):
    config = tiny_config(num_hidden_layers=n, num_hidden_groups=n)
    used = {config.group_index(l) for l in range(n)}
    assert missing not in used and len(used) == n - 1


def test_share_parameters_group_map():
    base = dict(TINY, num_hidden_layers=4, num_hidden_groups=2)
    assert AlbertConfig(**base).group_map() == [(0, 0), (0, 0), (1, 1), (1, 1)]
    assert AlbertConfig(**base, share_parameters="attention").group_map() == [(0, 0), (0, 1), (1, 2), (1, 3)]
    assert AlbertConfig(**base, share_parameters="ffn").group_map() == [(0, 0), (1, 0), (2, 1), (3, 1)]
    assert AlbertConfig(**base, share_parameters="none").group_map() == [(0, 0), (1, 1), (2, 2), (3, 3)]
