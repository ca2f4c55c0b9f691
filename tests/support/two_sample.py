"""Two-sample tests on histograms of clustered observations (numpy only, no scipy).

`homogeneity` is Pearson's chi-square test that two samples share one categorical distribution,
with the Rao–Scott second-order correction for cluster sampling: pretraining records of one
document share its text and its random target length, so they are not independent, and the
plain test would see differences that are only document-level noise. With every observation in
its own cluster the correction is ≈ 1 and the plain test remains.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np


def _regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): a series below a + 1, a continued fraction (Lentz) above."""
    if x <= 0:
        return 1.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(100_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return math.exp(log_prefix) * h


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X ≥ statistic) for X ~ chi-square with `dof` degrees of freedom."""
    if dof <= 0:
        return 1.0
    if statistic <= 0:
        return 1.0
    return _regularized_gamma_q(dof / 2.0, statistic / 2.0)


@dataclasses.dataclass(frozen=True)
class TestResult:
    statistic: float  # the corrected chi-square statistic
    dof: float  # degrees of freedom after the correction
    p_value: float
    pearson: float  # the uncorrected statistic
    design_effect: float  # the mean Rao–Scott design effect


def _merged_bins(totals: np.ndarray, shares: np.ndarray, min_expected: float) -> np.ndarray:
    """Bin index per (ordered) category, merging neighbours until expected counts are ≥ min."""
    mapping = np.zeros(len(totals), dtype=np.int64)
    current, accumulated = 0, 0.0
    for j, total in enumerate(totals):
        mapping[j] = current
        accumulated += total
        if (shares * accumulated >= min_expected).all():
            current += 1
            accumulated = 0.0
    if current > 0 and (mapping == current).any():
        mapping[mapping == current] = current - 1  # a short tail joins the last full bin
    return mapping


def _cluster_table(values: list, clusters, keys: dict, num_bins: int, mapping) -> np.ndarray:
    """Counts [cluster, bin] from per-record lists of observed values."""
    cluster_ids, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    table = np.zeros((len(cluster_ids), num_bins))
    rows, cols = [], []
    for record, record_values in enumerate(values):
        for value in record_values:
            rows.append(inverse[record])
            cols.append(mapping[keys[value]])
    np.add.at(table, (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)), 1)
    return table


def _cluster_covariance(table: np.ndarray) -> np.ndarray:
    """Cluster-robust covariance of the bin shares (ratio estimators over clusters)."""
    clusters = table.shape[0]
    sizes = table.sum(axis=1, keepdims=True)
    total = sizes.sum()
    share = table.sum(axis=0) / total
    if clusters < 2:
        return (np.diag(share) - np.outer(share, share)) / total
    residual = table - share * sizes
    return clusters / (clusters - 1) * residual.T @ residual / total ** 2


def homogeneity(values_a: list, clusters_a, values_b: list, clusters_b,
                min_expected: float = 5.0) -> TestResult:
    """Tests that two samples' observations come from one distribution.

    `values_x[i]` is the list of values record i contributes; `clusters_x[i]` its cluster.
    """
    keys = {value: j for j, value in enumerate(sorted({v for vs in values_a + values_b for v in vs}))}
    if not keys:
        raise ValueError("no observations to compare")
    identity = np.arange(len(keys))
    table_a = _cluster_table(values_a, clusters_a, keys, len(keys), identity)
    table_b = _cluster_table(values_b, clusters_b, keys, len(keys), identity)
    totals = np.stack([table_a.sum(axis=0), table_b.sum(axis=0)])
    n = totals.sum(axis=1)
    if n.min() == 0:
        raise ValueError("cannot compare with an empty sample")
    mapping = _merged_bins(totals.sum(axis=0), n / n.sum(), min_expected)
    bins = int(mapping.max()) + 1
    if bins < 2:
        return TestResult(0.0, 0, 1.0, 0.0, 1.0)
    merge = np.zeros((len(keys), bins))
    merge[identity, mapping] = 1
    table_a, table_b, totals = table_a @ merge, table_b @ merge, totals @ merge

    expected = n[:, None] * totals.sum(axis=0) / n.sum()
    pearson = float(((totals - expected) ** 2 / expected).sum())
    # Rao–Scott second order: eigenvalues of the design-effect matrix (cluster covariance of the
    # share differences over the multinomial one), first their mean, then their spread.
    pooled = totals.sum(axis=0) / n.sum()
    multinomial = (np.diag(pooled) - np.outer(pooled, pooled)) * (1 / n[0] + 1 / n[1])
    clustered = _cluster_covariance(table_a) + _cluster_covariance(table_b)
    effects = np.linalg.eigvals(np.linalg.solve(multinomial[:-1, :-1], clustered[:-1, :-1])).real
    mean_effect = float(effects.mean())
    spread = float(((effects - mean_effect) ** 2).mean() / mean_effect ** 2)
    statistic = pearson / mean_effect / (1 + spread)
    dof = (bins - 1) / (1 + spread)
    return TestResult(statistic, dof, chi2_sf(statistic, dof), pearson, mean_effect)
