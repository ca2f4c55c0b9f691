import pytest

from albert_tf import param_counts
from albert_tf.config import preset

KERAS_HUB_COUNTS = {"base": 11_683_584, "large": 17_683_968, "xlarge": 58_724_864, "xxlarge": 222_595_584}


@pytest.mark.parametrize("size", ["base", "large"])
def test_released_sizes_match_keras_hub_counts(size):
    assert param_counts.encoder_params(preset(f"albert_{size}_v2")) == KERAS_HUB_COUNTS[size]


def test_large_released_sizes_by_formula():
    # xlarge/xxlarge are too big to build quickly in CI; their blocks follow the same formula,
    # checked against the built base/large models above.
    for size in ("xlarge", "xxlarge"):
        c = preset(f"albert_{size}_v2")
        h, i, e = c.hidden_size, c.intermediate_size, c.embedding_size
        block = 4 * (h * h + h) + 4 * h + (h * i + i) + (i * h + h)
        total = (c.vocab_size + c.max_position_embeddings + c.type_vocab_size) * e + 2 * e
        total += e * h + h + block + h * h + h
        assert total == KERAS_HUB_COUNTS[size]


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
    # `python -m albert_tf.param_counts` prints every row; xlarge/xxlarge take minutes to build.
    param_counts.main(released=("base",), ablations=False)
    out = capsys.readouterr().out
    assert "albert_base (released)" in out and "11,683,584" in out and "11,092,992" in out
