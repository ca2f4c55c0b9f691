"""SQuAD heads: shapes, masking, beam ≡ teacher forcing, losses, TF1 checkpoint names."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.weights import tf1_checkpoint as checkpoint, tf1_names as checkpoint_names
from albert_tf.models import AlbertSquadV1, AlbertSquadV2, squad_v1_loss, squad_v2_loss


def _inputs(batch=2, seq=12):
    rng = np.random.default_rng(0)
    p_mask = np.zeros((batch, seq), "int32")
    p_mask[:, 1:4] = 1
    p_mask[:, -2:] = 1
    return {"input_ids": rng.integers(5, 50, (batch, seq)).astype("int32"),
            "input_mask": np.ones((batch, seq), "int32"),
            "segment_ids": np.zeros((batch, seq), "int32"), "p_mask": p_mask}


def test_v1_logits_and_loss(tiny_config):
    model = AlbertSquadV1(tiny_config)
    x = _inputs()
    out = model(x)
    sequence = model.encoder(x)["sequence_output"].numpy()
    expected = sequence @ model.output_weights.numpy().T + model.output_bias.numpy()
    np.testing.assert_allclose(out["start_logits"], expected[..., 0], atol=1e-5)
    np.testing.assert_allclose(out["end_logits"], expected[..., 1], atol=1e-5)
    features = {"start_positions": np.array([4, 5]), "end_positions": np.array([6, 0])}
    loss = float(squad_v1_loss(out, features))

    def ce(logits, pos):
        logits = logits.numpy().astype("float64")
        logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        return -np.mean(logp[np.arange(2), pos])
    assert loss == pytest.approx(0.5 * (ce(out["start_logits"], [4, 5]) +
                                        ce(out["end_logits"], [6, 0])), rel=1e-5)


def test_v2_beam_equals_teacher_forcing_and_respects_p_mask(tiny_config):
    model = AlbertSquadV2(tiny_config, start_n_top=3, end_n_top=2, dropout_prob=0.0)
    x = _inputs()
    beam = {k: v.numpy() for k, v in model(x).items()}
    assert beam["end_top_index"].shape == (2, 6) and beam["cls_logits"].shape == (2,)
    masked = np.flatnonzero(x["p_mask"][0])
    assert not np.isin(beam["start_top_index"], masked).any()
    assert not np.isin(beam["end_top_index"], masked).any()
    for i in range(3):
        forced = model({**x, "start_positions": beam["start_top_index"][:, i]})
        end = forced["end_log_probs"].numpy()
        for b in range(2):
            top = np.argsort(-end[b], kind="stable")[:2]
            np.testing.assert_array_equal(beam["end_top_index"][b, 2 * i:2 * i + 2], top)
            np.testing.assert_allclose(beam["end_top_log_probs"][b, 2 * i:2 * i + 2],
                                       end[b, top], atol=1e-5)
        np.testing.assert_allclose(forced["cls_logits"], beam["cls_logits"], atol=1e-5)
        np.testing.assert_allclose(np.exp(forced["start_log_probs"].numpy()).sum(-1), 1, atol=1e-5)


def test_v2_loss_matches_definition(tiny_config):
    model = AlbertSquadV2(tiny_config, dropout_prob=0.0)
    x = _inputs()
    features = {"start_positions": np.array([4, 0]), "end_positions": np.array([6, 0]),
                "is_impossible": np.array([0, 1])}
    out = {k: v.numpy().astype("float64") for k, v in
           model({**x, "start_positions": features["start_positions"]}).items()}
    span = -0.5 * (out["start_log_probs"][[0, 1], [4, 0]].mean() +
                   out["end_log_probs"][[0, 1], [6, 0]].mean())
    z, y = out["cls_logits"], np.array([0.0, 1.0])
    answer = np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))
    assert float(squad_v2_loss(out, features)) == pytest.approx(span + 0.5 * answer, rel=1e-5)


@pytest.mark.parametrize("cls, head", [(AlbertSquadV1, checkpoint_names.SQUAD_V1_HEAD),
                                       (AlbertSquadV2, checkpoint_names.SQUAD_V2_HEAD)])
def test_tf1_checkpoint_round_trip(cls, head, tmp_path, tiny_config):
    model = cls(tiny_config)
    prefix = checkpoint.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt"), global_step=7)
    names = {name for name, _ in tf.train.list_variables(prefix)}
    for name, _, _ in head:
        assert name in names
    other = cls(tiny_config)
    checkpoint.load_tf1_checkpoint(other, prefix)
    for a, b in zip(checkpoint.model_entries(model), checkpoint.model_entries(other)):
        np.testing.assert_array_equal(a.variable.numpy(), b.variable.numpy())
    assert "answer_class/dense_1/bias" not in names  # the original's answer head has no bias
