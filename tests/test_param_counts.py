import pytest
from keras.src.backend.common import global_state

from albert_tf import param_counts
from albert_tf.config import preset

KERAS_HUB_COUNTS = {"base": 11_683_584, "large": 17_683_968, "xlarge": 58_724_864, "xxlarge": 222_595_584}


@pytest.mark.parametrize("size", sorted(KERAS_HUB_COUNTS))
def test_released_sizes_match_keras_hub_counts(size):
    assert param_counts.encoder_params(preset(f"albert_{size}_v2")) == KERAS_HUB_COUNTS[size]


def test_counting_leaves_no_variable_waiting_for_a_value():
    # The counted models' variables never get values; Keras must not be left holding them for
    # the next StatelessScope to initialize (seconds of random numbers for nothing).
    before = list(global_state.get_global_attribute("uninitialized_variables", []) or [])
    param_counts.encoder_params(preset("albert_large_v2"))
    assert list(global_state.get_global_attribute("uninitialized_variables", []) or []) == before


@pytest.mark.parametrize("embedding", sorted(param_counts.PAPER_TABLE3))
def test_paper_table3_within_one_million(embedding):
    not_shared, all_shared = param_counts.PAPER_TABLE3[embedding]
    built_none = param_counts.encoder_params(param_counts.ablation_config(embedding, "none"), pooler=False)
    built_all = param_counts.encoder_params(param_counts.ablation_config(embedding, "all"), pooler=False)
    assert abs(built_none / 1e6 - not_shared) < 1.0
    assert abs(built_all / 1e6 - all_shared) < 1.0


@pytest.mark.parametrize("embedding", sorted(param_counts.PAPER_TABLE4))
def test_paper_table4_within_one_million(embedding):
    _, ffn, attention, _ = param_counts.PAPER_TABLE4[embedding]
    assert abs(param_counts.encoder_params(param_counts.ablation_config(embedding, "ffn"), pooler=False) / 1e6 - ffn) < 1.0
    assert abs(param_counts.encoder_params(param_counts.ablation_config(embedding, "attention"), pooler=False) / 1e6 - attention) < 1.0


def test_table_prints(capsys):
    param_counts.main()  # `python -m albert_tf.param_counts`: every row
    out = capsys.readouterr().out
    assert "albert_base (released)" in out and "11,683,584" in out and "11,092,992" in out
    assert "222,595,584" in out and "base E=128 shared-attention (Table 4)" in out
