"""Figure 1's numbers on hand-made states: per layer, L2 distance and cosine between a layer's
input and output, over the real tokens only."""

import math

import numpy as np
import pytest

from albert_tf.paper.smoothness import TransitionStats, layer_transitions, smoothness_summary

# One sequence of three positions, H=2: two real tokens and one padding token (garbage values).
X0 = [[1.0, 0.0], [1.0, 1.0], [9.0, -9.0]]
X1 = [[0.0, 1.0], [1.0, 1.0], [5.0, 5.0]]
X2 = [[0.0, 2.0], [-1.0, -1.0], [7.0, 0.0]]
MASK = [[1, 1, 0]]


def _states():
    return [np.array([x]) for x in (X0, X1, X2)]


def test_hand_made_case():
    result = layer_transitions(_states(), MASK)
    assert result["layers"] == [1, 2] and result["tokens"] == 2
    # Layer 1: token a moves (1,0)->(0,1): L2 √2, cos 0, 90°; token b stays: 0, 1, 0°.
    # Layer 2: a (0,1)->(0,2): 1, 1, 0°; b (1,1)->(-1,-1): 2√2, -1, 180°.
    assert result["l2_distance"] == pytest.approx([math.sqrt(2) / 2, (1 + 2 * math.sqrt(2)) / 2])
    assert result["cosine_similarity"] == pytest.approx([0.5, 0.0])
    assert result["angle_degrees"] == pytest.approx([45.0, 90.0])


def test_batches_accumulate_as_one():
    rng = np.random.default_rng(0)
    states = [rng.normal(size=(4, 5, 3)) for _ in range(4)]
    mask = (rng.random((4, 5)) > 0.3).astype(int)
    whole = layer_transitions(states, mask)
    stats = TransitionStats()
    stats.add([s[:1] for s in states], mask[:1])
    stats.add([s[1:] for s in states], mask[1:])
    parts = stats.result()
    for key in ("l2_distance", "cosine_similarity", "angle_degrees"):
        assert parts[key] == pytest.approx(whole[key])
    assert parts["tokens"] == whole["tokens"] == int(mask.sum())


def test_nothing_measured_is_an_error():
    with pytest.raises(ValueError, match="no token"):
        TransitionStats().result()


def test_smoothness_is_the_mean_change_between_layers():
    curves = {"smooth": {"l2_distance": [1.0, 1.1, 1.2], "cosine_similarity": [0.9, 0.9, 0.9]},
              "jumpy": {"l2_distance": [1.0, 3.0, 1.0], "cosine_similarity": [0.9, 0.1, 0.9]}}
    summary = smoothness_summary(curves)
    assert summary["smooth"]["l2_distance_mean_change"] == pytest.approx(0.1)
    assert summary["jumpy"]["l2_distance_mean_change"] == pytest.approx(2.0)
    assert summary["jumpy"]["cosine_similarity_mean_change"] == pytest.approx(0.8)
    assert summary["smooth"]["cosine_similarity_mean_change"] == pytest.approx(0.0)
