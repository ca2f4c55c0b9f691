"""Smoke run: build a small ALBERT, run it, and round-trip it through a TF1-named checkpoint."""

import argparse
import os
import tempfile

import numpy as np

from albert_tf import AlbertConfig, AlbertPretrainer
from albert_tf.weights import tf1_checkpoint as checkpoint


def main():
    config = AlbertConfig(vocab_size=1000, embedding_size=32, hidden_size=64, num_hidden_layers=4,
                          num_hidden_groups=2, inner_group_num=2, num_attention_heads=4,
                          intermediate_size=128, max_position_embeddings=64)
    model = AlbertPretrainer(config)
    rng = np.random.default_rng(0)
    features = {"input_ids": rng.integers(5, 1000, (2, 16)).astype("int32"),
                "input_mask": np.ones((2, 16), "int32"), "segment_ids": np.zeros((2, 16), "int32"),
                "masked_lm_positions": np.array([[1, 2], [3, 4]], "int32")}
    out = model(features)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = checkpoint.save_tf1_checkpoint(model, os.path.join(tmp, "model.ckpt"))
        again = AlbertPretrainer(config)
        report = checkpoint.load_tf1_checkpoint(again, prefix)
        diff = np.abs(np.asarray(again(features)["masked_lm_logits"]) - np.asarray(out["masked_lm_logits"])).max()
    print(f"encoder outputs: {len(out['encoder_outputs'])}, sequence_output {tuple(out['sequence_output'].shape)}, "
          f"TF1 variables round-tripped: {len(report.loaded)}, max diff after reload: {diff:.2e}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__).parse_args()  # --help, and no stray flags
    main()
