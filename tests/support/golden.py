"""The original's golden pretraining batch and 3-step training run (fixtures/original/model),
and the order it gives the golden SQuAD training questions."""

import json
import pathlib

import numpy as np

# The order the original's run_squad gives the golden training questions (fixtures/original/
# squad): it shuffles them with random.Random(12345) before writing features
# (original-albert-spec.md, SQuAD "Flow").
SQUAD_SEEDED_ORDER = ["q4_impossible", "q2_late", "c3_impossible", "q5_long_question",
                      "q3_middle", "q1_early", "c1_accents", "c2_number"]


def golden_features(model_dir):
    """The golden batch (3 examples of 24 tokens, 5 predictions) as pretraining features."""
    z = np.load(model_dir / "forward_golden.npz")
    return {
        "input_ids": z["input_ids"], "input_mask": z["input_mask"],
        "segment_ids": z["segment_ids"], "masked_lm_positions": z["masked_lm_positions"],
        "masked_lm_ids": z["masked_lm_ids"], "masked_lm_weights": z["masked_lm_weights"],
        "next_sentence_labels": z["sentence_order_labels"].reshape(-1, 1),
    }


def assert_matches_golden(golden_dir, weights, losses, lrs, atol=1e-5):
    """Compares per-step losses, learning rates and every variable after step 3."""
    summary = json.loads((golden_dir / "train_summary.json").read_text())
    np.testing.assert_allclose(losses, summary["loss_per_step"], atol=atol, rtol=1e-5)
    np.testing.assert_allclose(lrs, summary["learning_rate_used_per_step"], atol=1e-9, rtol=1e-6)
    golden = np.load(golden_dir / "trainable_vars_after_step3.npz")
    assert sorted(golden.keys()) == sorted(k for k in weights if k != "global_step")
    for name in golden.keys():
        if name.endswith("attention_1/self/key/bias"):
            # Its gradient is mathematically zero (softmax ignores it): golden values are noise.
            np.testing.assert_allclose(weights[name], golden[name], atol=1e-5, rtol=0, err_msg=name)
        else:
            np.testing.assert_allclose(weights[name], golden[name], atol=1e-5, rtol=1e-5,
                                       err_msg=name)


def write_golden_records(model_dir, path, copies=1, features=None):
    """The golden batch as a pretraining TFRecord file (`copies` times its 3 records);
    `features`: golden_features with some changed."""
    import tensorflow as tf

    from albert_tf.data import schema

    features = golden_features(model_dir) if features is None else features
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(copies):
            for i in range(3):
                feats = {k: (schema.float_feature(v[i]) if k == "masked_lm_weights"
                             else schema.int_feature(v[i].ravel())) for k, v in features.items()}
                feats["token_boundary"] = schema.int_feature(np.zeros(24, np.int64))
                writer.write(tf.train.Example(
                    features=tf.train.Features(feature=feats)).SerializeToString())
    return path


def one_layer_config(model_dir, path):
    """The golden model's training config (no dropout) with one layer instead of four, written
    to `path`. Its layers share one group, so the golden checkpoint loads into it unchanged: the
    tests of processes (restarts, several workers) train it at a quarter of the graph."""
    config = json.loads((model_dir / "albert_config_train_nodropout.json").read_text("utf-8"))
    assert config["num_hidden_groups"] == 1 and config["inner_group_num"] == 1
    pathlib.Path(path).write_text(json.dumps({**config, "num_hidden_layers": 1}), "utf-8")
    return path

