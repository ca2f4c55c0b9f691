"""Models whose outputs depend on their inputs, for tests that compare two serving paths.

At the initializer's spread (0.02) a tiny model gives nearly the same probabilities for every
input (0.52450 ± 2e-6 over MRPC's 1,725 test rows), so two paths compared at 1e-5 agree even
when one of them swaps text_a and text_b, drops text_b, skips lower-casing or reverses the rows.
Seeded weights ten times that spread move the outputs by 1e-2 and more between inputs; each test
asserts that spread (`assert_spread`) before it trusts an agreement.
"""

import numpy as np


def spread_weights(model, seed: int = 7, std: float = 0.2):
    """Every weight of a built `model` but the LayerNorm scales drawn from N(0, std) (seeded)."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        if "gamma" not in variable.path:
            variable.assign(rng.normal(0.0, std, variable.shape).astype(np.float32))
    return model


def assert_spread(outputs, minimum: float):
    """The rows of `outputs` [B, ...] differ pairwise by more than `minimum` (max abs): a path
    that mixes up, drops or reorders inputs cannot agree with another within a tolerance below
    `minimum`."""
    rows = np.asarray(outputs, np.float64).reshape(len(outputs), -1)
    gaps = np.abs(rows[:, None] - rows[None]).max(-1)
    closest = gaps[~np.eye(len(rows), dtype=bool)].min()
    assert closest > minimum, f"two inputs gave outputs within {closest:.2e} (want > {minimum})"


def assert_moves(reference, other, minimum: float, what: str):
    """`other` (a wrong way to serve the same inputs) differs from `reference` by more than
    `minimum` somewhere: a comparison at a tolerance below `minimum` tells them apart."""
    a = np.asarray(reference, np.float64).reshape(len(reference), -1)
    b = np.asarray(other, np.float64).reshape(len(other), -1)
    moved = np.abs(a - b).max()
    assert moved > minimum, f"{what} moved the outputs by only {moved:.2e} (want > {minimum})"
