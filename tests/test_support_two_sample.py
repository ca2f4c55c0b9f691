"""Chi-square tail and the cluster-corrected two-sample homogeneity test."""

import numpy as np
import pytest

from support import two_sample


@pytest.mark.parametrize("statistic,dof,expected", [
    (3.841458820694124, 1, 0.05), (6.634896601021214, 1, 0.01), (18.307038053275146, 10, 0.05),
    (124.34211340400407, 100, 0.05), (0.5, 3, 0.9188914), (50.0, 2, 1.3887943864964021e-11),
    (2.0, 2, np.exp(-1.0)),
])
def test_chi2_sf_known_values(statistic, dof, expected):
    assert two_sample.chi2_sf(statistic, dof) == pytest.approx(expected, rel=1e-6)


def _sample(rng, probs, records, per_cluster):
    values = [[int(rng.choice(len(probs), p=probs))] for _ in range(records)]
    clusters = np.arange(records) // per_cluster
    return values, clusters


def test_same_distribution_is_not_flagged():
    rng = np.random.default_rng(0)
    p_values = []
    for _ in range(20):
        a = _sample(rng, [0.5, 0.3, 0.2], 2000, 1)
        b = _sample(rng, [0.5, 0.3, 0.2], 1500, 1)
        result = two_sample.homogeneity(a[0], a[1], b[0], b[1])
        assert result.dof == pytest.approx(2, rel=0.2)
        p_values.append(result.p_value)
    assert min(p_values) > 1e-3 and np.mean(p_values) > 0.3


def test_different_distributions_are_flagged():
    rng = np.random.default_rng(1)
    a = _sample(rng, [0.5, 0.3, 0.2], 3000, 1)
    b = _sample(rng, [0.45, 0.3, 0.25], 3000, 1)
    assert two_sample.homogeneity(a[0], a[1], b[0], b[1]).p_value < 1e-3


def test_duplicated_observations_are_corrected_by_clustering():
    """Each record copied 4 times: the plain test overstates the evidence, the corrected one not."""
    rng = np.random.default_rng(2)
    a = [[int(rng.choice(3, p=[0.5, 0.3, 0.2]))] for _ in range(500)]
    b = [[int(rng.choice(3, p=[0.45, 0.33, 0.22]))] for _ in range(500)]
    a4, b4 = [v for v in a for _ in range(4)], [v for v in b for _ in range(4)]
    plain = two_sample.homogeneity(a4, np.arange(2000), b4, np.arange(2000))
    clustered = two_sample.homogeneity(a4, np.arange(2000) // 4, b4, np.arange(2000) // 4)
    once = two_sample.homogeneity(a, np.arange(500), b, np.arange(500))
    assert clustered.design_effect == pytest.approx(4, rel=0.15)
    assert clustered.statistic == pytest.approx(once.statistic, rel=0.15)
    assert plain.pearson == pytest.approx(4 * once.pearson, rel=1e-9)
    assert plain.statistic == pytest.approx(4 * once.statistic, rel=0.01)


def test_sparse_bins_are_merged_and_several_values_per_record():
    a = [[1, 1, 2]] * 50 + [[40]]
    b = [[1, 2, 2]] * 50 + [[41]]
    result = two_sample.homogeneity(a, np.arange(51), b, np.arange(51))
    # By hand: 40 and 41 (one value each) join the 2s, leaving the 2x2 table [[100, 51],
    # [50, 101]], expected 75 and 76 per cell: Pearson's statistic 2*25²/75 + 2*25²/76, 1 dof.
    assert result.pearson == pytest.approx(2 * 25 ** 2 / 75 + 2 * 25 ** 2 / 76, rel=1e-12)
    assert result.dof == 1.0 and result.p_value < 1e-9
    same = two_sample.homogeneity(a, np.arange(51), a[:50] + [[41]], np.arange(51))
    assert same.pearson == pytest.approx(0.0, abs=1e-12) and same.p_value == pytest.approx(1.0)


def test_empty_sample_is_an_error():
    with pytest.raises(ValueError, match="empty sample"):
        two_sample.homogeneity([[1]], [0], [[]], [0])
