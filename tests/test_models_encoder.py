import numpy as np
import pytest
import tensorflow as tf
import keras

from albert_tf import AlbertConfig, AlbertModel, AlbertPretrainer, models
from albert_tf.weights import tf1_checkpoint as checkpoint
from support.configs import GROUPED, tiny_config

TOL = dict(atol=1e-5, rtol=1e-5)


@pytest.fixture(scope="module")
def golden(fixtures_dir):
    return dict(np.load(fixtures_dir / "model" / "forward_golden.npz"))


@pytest.fixture(scope="module")
def golden_model(fixtures_dir):
    config = AlbertConfig.from_json_file(fixtures_dir / "model" / "albert_config.json")
    model = AlbertPretrainer(config)
    checkpoint.load_tf1_checkpoint(model, str(fixtures_dir / "model" / "ckpt" / "model.ckpt"))
    return model


def _features(golden):
    return {k: golden[k] for k in ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")}


def test_forward_matches_original(golden, golden_model):
    out = golden_model(_features(golden), training=False)
    np.testing.assert_allclose(out["word_embedding_output"], golden["word_embedding_output"], **TOL)
    np.testing.assert_allclose(out["embedding_output"], golden["embedding_output"], **TOL)
    assert len(out["encoder_outputs"]) == len(golden["all_encoder_layers"])
    for ours, theirs in zip(out["encoder_outputs"], golden["all_encoder_layers"]):
        np.testing.assert_allclose(ours, theirs, **TOL)
    np.testing.assert_allclose(out["sequence_output"], golden["sequence_output"], **TOL)
    np.testing.assert_allclose(out["pooled_output"], golden["pooled_output"], **TOL)
    batch, preds = golden["masked_lm_positions"].shape
    np.testing.assert_allclose(np.reshape(out["masked_lm_logits"], (batch * preds, -1)),
                               golden["masked_lm_logits"], **TOL)
    np.testing.assert_allclose(out["sentence_order_logits"], golden["sentence_order_logits"], **TOL)


def test_losses_match_original(golden, golden_model):
    out = golden_model(_features(golden), training=False)
    features = {"masked_lm_ids": golden["masked_lm_ids"], "masked_lm_weights": golden["masked_lm_weights"],
                "next_sentence_labels": golden["sentence_order_labels"]}
    total, mlm, sop = models.pretraining_losses(out, features)
    np.testing.assert_allclose(mlm, golden["masked_lm_loss"], **TOL)
    np.testing.assert_allclose(sop, golden["sentence_order_loss"], **TOL)
    np.testing.assert_allclose(total, golden["total_loss"], **TOL)
    per_example = models.masked_lm_example_loss(out["masked_lm_logits"], golden["masked_lm_ids"])
    np.testing.assert_allclose(np.reshape(per_example, -1), golden["masked_lm_example_loss"], **TOL)


def test_attention_probabilities_match_original(golden, golden_model):
    out = golden_model.encoder(_features(golden), return_attention=True)
    assert len(out["attention_probs"]) == len(golden["attention_probs"])
    for ours, theirs in zip(out["attention_probs"], golden["attention_probs"]):
        np.testing.assert_allclose(ours, theirs, **TOL)


def test_inputs_default_to_full_mask_and_segment_zero(golden, golden_model):
    ids = golden["input_ids"][:1, :10]
    implicit = golden_model.encoder({"input_ids": ids})
    explicit = golden_model.encoder({"input_ids": ids, "input_mask": np.ones_like(ids),
                                     "segment_ids": np.zeros_like(ids)})
    np.testing.assert_allclose(implicit["sequence_output"], explicit["sequence_output"], atol=1e-6)


def _small(**overrides):
    # vocab_size 50: the logits shape asserted below.
    return tiny_config(**{**GROUPED, "vocab_size": 50, **overrides})


def _batch(config, batch=2, length=8, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, length), "int32")
    mask[1, length // 2:] = 0
    return {"input_ids": rng.integers(0, config.vocab_size, (batch, length)).astype("int32"),
            "input_mask": mask, "segment_ids": (np.arange(length) >= length // 2).astype("int32")[None].repeat(batch, 0),
            "masked_lm_positions": np.array([[1, 2, 0], [3, 0, 0]], "int32")}


def test_output_shapes_and_encoder_output_count():
    config = _small()
    out = AlbertPretrainer(config)(_batch(config))
    assert len(out["encoder_outputs"]) == 8  # L·K
    assert out["sequence_output"].shape == (2, 8, 16) and out["pooled_output"].shape == (2, 16)
    assert out["embedding_output"].shape == (2, 8, 8)
    assert out["masked_lm_logits"].shape == (2, 3, 50) and out["sentence_order_logits"].shape == (2, 2)


def test_shared_blocks_exist_once():
    model = AlbertModel(_small(num_hidden_layers=6, num_hidden_groups=1, inner_group_num=1))
    assert len(model.transformer.attention_layers) == 1 and len(model.transformer.ffn_layers) == 1


def test_share_none_equals_one_group_per_layer():
    none = AlbertModel(_small(share_parameters="none"))
    per_layer = AlbertModel(_small(num_hidden_groups=4))
    assert [w.shape for w in none.weights] == [w.shape for w in per_layer.weights]
    for a, b in zip(none.weights, per_layer.weights):
        b.assign(a)
    batch = _batch(none.config)
    np.testing.assert_allclose(none(batch)["sequence_output"], per_layer(batch)["sequence_output"], atol=1e-6)


def test_dropout_only_in_training():
    config = _small(hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3)
    model = AlbertModel(config)
    batch = _batch(config)
    a = model(batch, training=False)["sequence_output"]
    b = model(batch, training=False)["sequence_output"]
    c = model(batch, training=True)["sequence_output"]
    np.testing.assert_array_equal(a, b)
    assert np.abs(np.asarray(a) - np.asarray(c)).max() > 1e-3


def test_padding_key_mask_and_all_padding_row_is_finite():
    config = _small()
    model = AlbertModel(config)
    batch = _batch(config)
    changed = {k: v.copy() for k, v in batch.items()}
    changed["input_ids"][1, 6:] = (changed["input_ids"][1, 6:] + 1) % config.vocab_size
    a, b = model(batch)["sequence_output"], model(changed)["sequence_output"]
    np.testing.assert_allclose(np.asarray(a)[1, :4], np.asarray(b)[1, :4], atol=1e-6)  # keys masked
    batch["input_mask"][0] = 0
    assert np.isfinite(np.asarray(model(batch)["sequence_output"])).all()


# Mixed precision against the float32 run of the same (seeded) weights: (logits, losses)
# tolerances 10x the errors measured on 2026-11-29 (bf16: logits 1.9e-3, losses 4.2e-4; fp16:
# logits 2.2e-4, losses 1.2e-5). The logits' standard deviation is 0.05.
MIXED_TOLERANCE = {"mixed_bfloat16": (2e-2, 4e-3), "mixed_float16": (2e-3, 1.2e-4)}


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_keeps_logits_and_losses_float32(policy):
    config = _small()
    keras.utils.set_random_seed(11)
    reference = AlbertPretrainer(config)
    keras.mixed_precision.set_global_policy(policy)
    try:
        model = AlbertPretrainer(config)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert len(model.weights) == len(reference.weights)
    for a, b in zip(model.weights, reference.weights):
        assert a.dtype == "float32"
        a.assign(b)
    batch = _batch(config)
    out, want = model(batch), reference(batch)
    assert out["masked_lm_logits"].dtype == tf.float32 and out["sentence_order_logits"].dtype == tf.float32
    assert out["sequence_output"].dtype == (tf.bfloat16 if policy == "mixed_bfloat16" else tf.float16)
    logits_tolerance, loss_tolerance = MIXED_TOLERANCE[policy]
    for name in ("masked_lm_logits", "sentence_order_logits"):
        np.testing.assert_allclose(out[name], want[name], atol=logits_tolerance, err_msg=name)
    labels = {"masked_lm_ids": np.array([[3, 7, 0], [11, 0, 0]], "int32"),
              "masked_lm_weights": np.array([[1, 1, 0], [1, 0, 0]], "float32"),
              "next_sentence_labels": np.array([0, 1], "int32")}
    losses = models.pretraining_losses(out, labels)
    for loss, expected in zip(losses, models.pretraining_losses(want, labels)):
        assert loss.dtype == tf.float32
        assert float(loss) == pytest.approx(float(expected), abs=loss_tolerance)


def test_jit_compile_matches_eager():
    # Two layers sharing one block: sharing under XLA, at half the compile time of GROUPED.
    config = _small(num_hidden_layers=2, num_hidden_groups=1, inner_group_num=1)
    model = AlbertPretrainer(config)
    batch = _batch(config)
    compiled = tf.function(lambda x: model(x)["masked_lm_logits"], jit_compile=True)
    np.testing.assert_allclose(compiled(batch), model(batch)["masked_lm_logits"], atol=1e-5)


def test_runs_inside_a_distribution_strategy():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    config = _small()
    with strategy.scope():
        model = AlbertPretrainer(config)
    batch = _batch(config)
    out = strategy.run(tf.function(lambda x: model(x)["sentence_order_logits"]), args=(batch,))
    assert out.shape == (2, 2)


def test_keras_config_round_trip():
    model = AlbertModel(_small())
    again = AlbertModel.from_config(model.get_config())
    assert again.config == model.config


@pytest.mark.parametrize("overrides", [{}, {"share_parameters": "attention"}])
def test_object_checkpoints_hold_every_weight(tmp_path, overrides):
    model = AlbertPretrainer(_small(**overrides))
    assert len(model.weights) == len({id(w) for w in model.weights})
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
    saved = [n for n in tf.train.load_checkpoint(path).get_variable_to_shape_map() if n.startswith("model/")]
    assert len(saved) == len(model.weights)
    again = AlbertPretrainer(_small(**overrides))
    tf.train.Checkpoint(model=again).read(path).assert_existing_objects_matched()
    batch = _batch(again.config)
    np.testing.assert_array_equal(model(batch)["masked_lm_logits"], again(batch)["masked_lm_logits"])


def test_heads_only_gives_the_full_passes_logits_and_gradients():
    """Pretraining runs the last block only at [CLS] and the masked positions: same losses,
    same gradients for every variable, and sequence_output holds just the masked rows."""
    config = _small(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = AlbertPretrainer(config)
    batch = _batch(config)
    labels = {"masked_lm_ids": np.array([[4, 5, 0], [6, 0, 0]], "int32"),
              "masked_lm_weights": np.array([[1, 1, 0], [1, 0, 0]], "float32"),
              "next_sentence_labels": np.array([[0], [1]], "int32")}

    def run(heads_only):
        with tf.GradientTape() as tape:
            out = model(batch, training=True, heads_only=heads_only)
            loss = models.pretraining_losses(out, labels)[0]
        grads = tape.gradient(loss, model.trainable_variables)
        return out, loss, [tf.convert_to_tensor(g) for g in grads]

    full, full_loss, full_grads = run(False)
    sparse, sparse_loss, sparse_grads = run(True)
    np.testing.assert_allclose(sparse_loss, full_loss, atol=1e-6)
    for key in ("masked_lm_logits", "sentence_order_logits", "pooled_output"):
        np.testing.assert_allclose(sparse[key], full[key], atol=1e-5)
    rows = np.take_along_axis(np.asarray(full["sequence_output"]),
                              batch["masked_lm_positions"][:, :, None], axis=1)
    np.testing.assert_allclose(sparse["sequence_output"], rows, atol=1e-5)
    assert sparse["sequence_output"].shape == (2, 3, 16)
    for variable, a, b in zip(model.trainable_variables, full_grads, sparse_grads):
        np.testing.assert_allclose(b, a, atol=1e-6, err_msg=variable.path)


def test_heads_only_with_attention_probs_and_a_single_block():
    config = _small(num_hidden_layers=1, num_hidden_groups=1, inner_group_num=1)
    model = AlbertModel(config)
    batch = _batch(config)
    full = model(batch, return_attention=True)
    sparse = model(batch, return_attention=True, output_positions=batch["masked_lm_positions"])
    assert sparse["attention_probs"][-1].shape == (2, 2, 4, 8)  # [CLS] + 3 query rows
    np.testing.assert_allclose(sparse["attention_probs"][-1][:, :, 0], full["attention_probs"][-1][:, :, 0],
                               atol=1e-6)
    np.testing.assert_allclose(sparse["pooled_output"], full["pooled_output"], atol=1e-6)


def test_pooled_only_gives_the_full_passes_pooled_output_and_gradients():
    config = _small(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = AlbertModel(config)
    batch = _batch(config)

    def run(pooled_only):
        with tf.GradientTape() as tape:
            out = model(batch, training=True, pooled_only=pooled_only)
            loss = tf.reduce_sum(tf.square(out["pooled_output"]))
        return out, [tf.convert_to_tensor(g) if g is not None else None
                     for g in tape.gradient(loss, model.trainable_variables)]

    (full, full_grads), (cls, cls_grads) = run(False), run(True)
    np.testing.assert_allclose(cls["pooled_output"], full["pooled_output"], atol=1e-6)
    assert cls["sequence_output"].shape == (2, 0, 16)
    for variable, a, b in zip(model.trainable_variables, full_grads, cls_grads):
        if a is None:
            assert b is None, variable.path
        else:
            np.testing.assert_allclose(b, a, atol=1e-6, err_msg=variable.path)
