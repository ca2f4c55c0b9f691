"""Figure 1's numbers (NumPy only): per layer, how far each layer moves its input.

For layer l (1..L), with x_{l-1} its input and x_l its output at one token (x_0 is the embedding
after the E→H projection, the first layer's input), over the non-padding tokens:
- `l2_distance`: mean of ||x_l − x_{l-1}||₂;
- `cosine_similarity`: mean of x_l·x_{l-1} / (||x_l||·||x_{l-1}||);
- `angle_degrees`: mean of arccos of that cosine, in degrees (the paper's figure speaks of
  "cosine similarity (in terms of degree)").
"""

from __future__ import annotations

import math

import numpy as np


class TransitionStats:
    """Accumulates the per-layer sums over batches; `result()` gives the means."""

    def __init__(self):
        self.l2 = None
        self.cosine = None
        self.angle = None
        self.tokens = 0

    def add(self, states, mask) -> None:
        """`states`: L+1 arrays [B,S,H] (x_0 … x_L); `mask`: [B,S], 1 for real tokens."""
        keep = np.asarray(mask).astype(bool)
        vectors = [np.asarray(s, dtype=np.float64)[keep] for s in states]  # each [T,H]
        l2, cosine, angle = [], [], []
        for before, after in zip(vectors[:-1], vectors[1:]):
            l2.append(np.linalg.norm(after - before, axis=-1).sum())
            norms = np.linalg.norm(after, axis=-1) * np.linalg.norm(before, axis=-1)
            cos = np.clip((after * before).sum(-1) / np.maximum(norms, 1e-12), -1.0, 1.0)
            cosine.append(cos.sum())
            angle.append(np.degrees(np.arccos(cos)).sum())
        sums = np.array([l2, cosine, angle])
        if self.l2 is None:
            self.l2, self.cosine, self.angle = sums
        else:
            self.l2, self.cosine, self.angle = np.array([self.l2, self.cosine, self.angle]) + sums
        self.tokens += int(keep.sum())

    def result(self) -> dict:
        if self.l2 is None or not self.tokens:
            raise ValueError("no token was measured")
        n = float(self.tokens)
        return {"layers": list(range(1, len(self.l2) + 1)),
                "l2_distance": [float(v / n) for v in self.l2],
                "cosine_similarity": [float(v / n) for v in self.cosine],
                "angle_degrees": [float(v / n) for v in self.angle],
                "tokens": self.tokens}


def layer_transitions(states, mask) -> dict:
    """The Figure 1 values of one batch (see the module docstring)."""
    stats = TransitionStats()
    stats.add(states, mask)
    return stats.result()


def smoothness_summary(curves: dict) -> dict:
    """How smooth each curve is: the mean absolute change between consecutive layers (the paper's
    claim: sharing makes the layer-to-layer transitions smoother)."""
    summary = {}
    for name, curve in curves.items():
        for key in ("l2_distance", "cosine_similarity"):
            values = curve[key]
            steps = [abs(b - a) for a, b in zip(values[:-1], values[1:])]
            summary.setdefault(name, {})[f"{key}_mean_change"] = (
                float(np.mean(steps)) if steps else math.nan)
    return summary
