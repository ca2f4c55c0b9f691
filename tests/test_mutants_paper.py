"""The paper kit's counting against hand-computed values: parameters (Tables 1-5 without the
pooler), the held-out batches, and the two segments of a record. Counting the pooler, leaving
the E->H projection out of the embedding part, reading one batch too many, or cutting segment A
one piece long all passed the paper tests."""

import numpy as np

from albert_tf.config import AlbertConfig
from albert_tf.pretraining_data.heldout import segments
from albert_tf.paper.plan import PaperOptions
from albert_tf.paper.scoring import eval_batches, parameter_counts


def test_parameter_counts_by_hand():
    config = AlbertConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_hidden_layers=3,
                          num_attention_heads=2, intermediate_size=32,
                          max_position_embeddings=64, type_vocab_size=2)
    V, E, H, I, P, T = 30, 8, 16, 32, 64, 2
    tables = V * E + P * E + T * E + 2 * E  # word, position, type tables and their LayerNorm
    projection = E * H + H
    attention = 4 * (H * H + H) + 2 * H  # query, key, value, output; LayerNorm
    ffn = H * I + I + I * H + H + 2 * H  # intermediate, output; LayerNorm_1
    pooler = H * H + H
    # One shared layer however many passes (3): ALBERT's cross-layer sharing.
    assert parameter_counts(config) == {
        "parameters": tables + projection + attention + ffn,
        "parameters_with_pooler": tables + projection + attention + ffn + pooler,
        "embedding_parameters": tables + projection}
    assert tables + projection + attention + ffn == 3152


def test_eval_batches_read_the_held_out_set_once():
    options = PaperOptions(eval_batch_size=32)
    assert eval_batches(96, options) == (32, 3)
    assert eval_batches(100, options) == (32, 3)  # never past the end: 4 batches would be 128
    assert eval_batches(10, options) == (10, 1)  # smaller than one batch: one batch of all
    assert eval_batches(0, options) == (1, 1)


def test_segments_of_a_record():
    # [CLS] 5 6 7 [SEP] 8 9 [SEP] pad pad
    features = {"input_ids": np.array([[2, 5, 6, 7, 3, 8, 9, 3, 0, 0]]),
                "input_mask": np.array([[1, 1, 1, 1, 1, 1, 1, 1, 0, 0]]),
                "segment_ids": np.array([[0, 0, 0, 0, 0, 1, 1, 1, 0, 0]])}
    a, b = segments(features, 0)
    assert [int(i) for i in a] == [5, 6, 7] and [int(i) for i in b] == [8, 9]
