"""Every weight of a new model draws its own values, as the original's TF1 variables did.

A Keras initializer instance repeats its draw when reused, so layers that shared one (a layer's
query, key, value and output kernels; the word, type and position embeddings) started from the
same matrix: a symmetry that only the gradients could break, and tf2onnx stored the equal
matrices once."""

import itertools

import keras
import numpy as np

from albert_tf import AlbertPretrainer
from albert_tf.layers.initializers import TruncatedNormal
from support.configs import GROUPED, tiny_config


def _built(seed):
    keras.utils.set_random_seed(seed)
    model = AlbertPretrainer(tiny_config(**GROUPED, hidden_size=16, intermediate_size=16))
    ids = np.ones((1, 4), "int32")
    model(dict(input_ids=ids, input_mask=ids, segment_ids=0 * ids,
               masked_lm_positions=np.zeros((1, 1), "int32")))
    return {w.path: np.asarray(w) for w in model.weights}


def test_no_two_random_weights_start_equal():
    weights = _built(7)
    drawn = {path: w for path, w in weights.items()
             if w.ndim == 2 and np.std(w) > 0}  # kernels and embeddings (not LayerNorm, biases)
    assert len(drawn) >= 12, sorted(drawn)
    for (a, x), (b, y) in itertools.combinations(drawn.items(), 2):
        n = min(x.size, y.size)
        assert not np.array_equal(x.ravel()[:n], y.ravel()[:n]), (a, b)


def test_draws_follow_keras_seed_and_the_original_distribution():
    first, again, other = _built(7), _built(7), _built(8)
    for path in first:
        np.testing.assert_array_equal(first[path], again[path])
    assert any(not np.array_equal(first[p], other[p]) for p in first if np.std(first[p]) > 0)
    values = np.asarray(TruncatedNormal(stddev=0.02)((400, 400)))
    assert np.abs(values).max() <= 0.04 + 1e-7  # redrawn beyond 2 stddev
    assert abs(values.std() - 0.02 * 0.8796) < 3e-4  # a 2-sigma truncated normal's stddev
    assert TruncatedNormal.from_config(TruncatedNormal(0.5).get_config()).stddev == 0.5
