import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer
from albert_tf.weights import tf1_checkpoint as checkpoint
from albert_tf.weights.tf1_checkpoint import CheckpointError
from support.configs import GROUPED, TINY, tiny_config


@pytest.fixture(scope="module")
def model_dir(fixtures_dir):
    return fixtures_dir / "model"


@pytest.fixture(scope="module")
def config(model_dir):
    return AlbertConfig.from_json_file(model_dir / "albert_config.json")


def _batch(config, seed=0):
    rng = np.random.default_rng(seed)
    return {"input_ids": rng.integers(0, config.vocab_size, (2, 8)).astype("int32"),
            "input_mask": np.ones((2, 8), "int32"), "segment_ids": np.zeros((2, 8), "int32"),
            "masked_lm_positions": np.array([[1, 2], [3, 4]], "int32")}


def _fixture_variables(model_dir):
    rows = [line.split("\t") for line in (model_dir / "variables.txt").read_text().splitlines() if line]
    return {name: (eval(shape), dtype) for name, shape, dtype in rows}


def test_loads_every_original_variable(model_dir, config):
    model = AlbertPretrainer(config)
    report = checkpoint.load_tf1_checkpoint(model, str(model_dir / "ckpt" / "model.ckpt"))
    assert len(report.loaded) == 32 and report.missing == [] and report.unused == []
    reader = tf.train.load_checkpoint(str(model_dir / "ckpt" / "model.ckpt"))
    np.testing.assert_array_equal(model.encoder.embeddings.word_embeddings.numpy(),
                                  reader.get_tensor("bert/embeddings/word_embeddings"))


def test_directory_means_latest_checkpoint(model_dir, config):
    report = checkpoint.load_tf1_checkpoint(AlbertPretrainer(config), str(model_dir / "ckpt"))
    assert len(report.loaded) == 32


def test_training_checkpoint_slots_and_step_are_ignored(model_dir, config):
    report = checkpoint.load_tf1_checkpoint(AlbertPretrainer(config), str(model_dir / "train_lamb" / "ckpt" / "model.ckpt"))
    assert report.unused == [] and len(report.loaded) == 32


def test_save_writes_original_names_shapes_and_dtypes(tmp_path, model_dir, config):
    model = AlbertPretrainer(config)
    checkpoint.load_tf1_checkpoint(model, str(model_dir / "ckpt" / "model.ckpt"))
    prefix = checkpoint.save_tf1_checkpoint(model, str(tmp_path / "out" / "model.ckpt"), global_step=7)
    reader = tf.train.load_checkpoint(prefix)
    shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    expected = _fixture_variables(model_dir)
    assert set(shapes) == set(expected)
    for name, (shape, dtype) in expected.items():
        assert list(shapes[name]) == shape and dtypes[name].name == dtype, name
    assert reader.get_tensor("global_step") == 7
    assert tf.train.latest_checkpoint(str(tmp_path / "out")) == prefix
    assert not list((tmp_path / "out").glob("*.tmp-*"))
    again = AlbertPretrainer(config)
    checkpoint.load_tf1_checkpoint(again, prefix)
    batch = _batch(config)
    a, b = model(batch), again(batch)
    for key in ("sequence_output", "pooled_output", "masked_lm_logits", "sentence_order_logits"):
        np.testing.assert_array_equal(a[key], b[key])


def _grouped(**overrides):
    return tiny_config(**{**GROUPED, "num_hidden_layers": 6, "num_hidden_groups": 3, **overrides})


@pytest.mark.parametrize("overrides", [{}, {"share_parameters": "attention"}, {"share_parameters": "ffn"},
                                       {"embedding_size": TINY["hidden_size"]}])
def test_grouped_round_trip_through_tf1_names(tmp_path, overrides):
    config = _grouped(**overrides)
    model = AlbertPretrainer(config)
    prefix = checkpoint.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt"))
    names = set(tf.train.load_checkpoint(prefix).get_variable_to_shape_map())
    assert "bert/encoder/transformer/group_2/inner_group_1/attention_1/self/query/kernel" in names
    assert ("bert/encoder/embedding_hidden_mapping_in/kernel" in names) == (config.embedding_size != config.hidden_size)
    again = AlbertPretrainer(config)
    checkpoint.load_tf1_checkpoint(again, prefix)
    batch = _batch(config)
    np.testing.assert_array_equal(model(batch)["masked_lm_logits"], again(batch)["masked_lm_logits"])


def test_unused_groups_get_no_variables(tmp_path):
    config = _grouped(num_hidden_layers=22, num_hidden_groups=22, inner_group_num=1)
    prefix = checkpoint.save_tf1_checkpoint(AlbertModel(config), str(tmp_path / "model.ckpt"))
    groups = {n.split("/")[3] for n in tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
              if "/transformer/" in n}
    assert "group_15" not in groups and len(groups) == 21


def test_shape_mismatch_names_variable_shapes_and_config_key(model_dir, config):
    wrong = config.replace(embedding_size=24)
    with pytest.raises(CheckpointError, match="embedding_size") as error:
        checkpoint.load_tf1_checkpoint(AlbertPretrainer(wrong), str(model_dir / "ckpt" / "model.ckpt"))
    text = str(error.value)
    assert "bert/embeddings/word_embeddings" in text and "[1500, 16]" in text and "[1500, 24]" in text
    assert "embedding_size" in text


def test_vocab_mismatch_names_vocab_size(model_dir, config):
    with pytest.raises(CheckpointError, match="vocab_size"):
        checkpoint.load_tf1_checkpoint(AlbertModel(config.replace(vocab_size=30000)), str(model_dir / "ckpt"))


def test_failed_load_leaves_model_untouched(model_dir, config):
    model = AlbertModel(config.replace(intermediate_size=40))
    before = model.embeddings.word_embeddings.numpy().copy()
    with pytest.raises(CheckpointError, match="intermediate_size"):
        checkpoint.load_tf1_checkpoint(model, str(model_dir / "ckpt"))
    np.testing.assert_array_equal(before, model.embeddings.word_embeddings.numpy())


def test_missing_group_and_init_from_group0(model_dir, config):
    two_groups = config.replace(num_hidden_groups=2)
    with pytest.raises(CheckpointError, match="group_1.*init_from_group0"):
        checkpoint.load_tf1_checkpoint(AlbertModel(two_groups), str(model_dir / "ckpt"))
    model = AlbertModel(two_groups)
    report = checkpoint.load_tf1_checkpoint(model, str(model_dir / "ckpt"), init_from_group0=True)
    assert len(report.from_group0) == 16
    np.testing.assert_array_equal(model.transformer.attention_for(1, 0).query.kernel.numpy(),
                                  model.transformer.attention_for(0, 0).query.kernel.numpy())


def test_checkpoint_without_heads_loads_into_pretrainer(tmp_path, model_dir, config):
    encoder = AlbertModel(config)
    checkpoint.load_tf1_checkpoint(encoder, str(model_dir / "ckpt"))
    prefix = checkpoint.save_tf1_checkpoint(encoder, str(tmp_path / "model.ckpt"))
    report = checkpoint.load_tf1_checkpoint(AlbertPretrainer(config), prefix)
    assert sorted(report.missing) == sorted(n for n in _fixture_variables(model_dir) if n.startswith("cls/"))


def test_encoder_only_model_reports_unused_heads(model_dir, config):
    report = checkpoint.load_tf1_checkpoint(AlbertModel(config), str(model_dir / "ckpt"))
    assert len(report.unused) == 7 and all(n.startswith("cls/") for n in report.unused)


def test_hub_module_prefix_is_understood(tmp_path, model_dir, config):
    reader = tf.train.load_checkpoint(str(model_dir / "ckpt" / "model.ckpt"))
    values = {"module/" + n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
    prefix = checkpoint.write_tf1_checkpoint(values, str(tmp_path / "model.ckpt"))
    report = checkpoint.load_tf1_checkpoint(AlbertPretrainer(config), prefix)
    assert len(report.loaded) == 32


def test_missing_and_corrupt_checkpoints(tmp_path, config):
    with pytest.raises(CheckpointError, match="not found"):
        checkpoint.load_tf1_checkpoint(AlbertModel(config), str(tmp_path / "nothing.ckpt"))
    with pytest.raises(CheckpointError, match="no checkpoint"):
        checkpoint.load_tf1_checkpoint(AlbertModel(config), str(tmp_path))
    (tmp_path / "bad.ckpt.index").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="cannot read"):
        checkpoint.load_tf1_checkpoint(AlbertModel(config), str(tmp_path / "bad.ckpt"))
