"""numerics.exact_kmeans: scikit-learn's KMeans labels without its per-call overhead.

UFSOL's V-step and the evaluation protocol's seeded runs (tests/test_evaluation.py) go through
it, and the stored results were made with KMeans itself: every test here compares labels bit
for bit.
"""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from ufsbench.numerics.exact_kmeans import kmeans_labels


def _kmeans_inputs():
    """Small Y like the V-step's, plus tied (rounded) and duplicated points."""
    rng = np.random.default_rng(11)
    cases = []
    for n, c, d in [(60, 3, 3), (200, 7, 7), (150, 20, 20), (90, 5, 2)]:
        Y = rng.standard_normal((n, d)) + 3 * rng.standard_normal((c, d))[rng.integers(0, c, n)]
        cases.append((Y, c))
    Y = np.round(rng.standard_normal((120, 4)), 1)                    # many exact ties
    Y[:50] = Y[0]                                                      # duplicated points
    cases.append((Y, 6))
    return cases


def test_kmeans_labels_equal_scikit_learn_bit_for_bit():
    for i, (Y, c) in enumerate(_kmeans_inputs()):
        seed = 1000 + i
        ref = KMeans(c, init="k-means++", n_init=10, random_state=seed).fit(Y)
        got = kmeans_labels(Y, c, n_init=10, random_state=seed)
        assert got.dtype == ref.labels_.dtype
        np.testing.assert_array_equal(got, ref.labels_)
        centres = np.vstack([Y[ref.labels_ == lab].mean(0) for lab in np.unique(ref.labels_)])
        shifted = centres + 0.3                                       # Lloyd from given centres
        np.testing.assert_array_equal(kmeans_labels(Y, len(centres), init=shifted),
                                      KMeans(len(centres), init=shifted, n_init=1).fit(Y).labels_)


def test_kmeans_labels_warns_like_scikit_learn_on_duplicates():
    Y = np.repeat(np.arange(3.0)[:, None], 10, axis=0)                # 3 distinct points
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(3\) found smaller than "
                                                r"n_clusters \(4\)"):
        labels = kmeans_labels(Y, 4, n_init=2, random_state=0)
    with pytest.warns(ConvergenceWarning):
        ref = KMeans(4, n_init=2, random_state=0).fit(Y).labels_
    np.testing.assert_array_equal(labels, ref)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_per_seed_runs_equal_kmeans_for_both_dtypes(dtype):
    """KMeans keeps float32 data in float32; kmeans_labels_per_seed must give its labels."""
    from ufsbench.numerics.exact_kmeans import kmeans_labels_per_seed
    for Y, c in _kmeans_inputs():
        Y = Y.astype(dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            got = kmeans_labels_per_seed(Y, c, [5, 6, 7], init="k-means++", max_iter=50)
            for seed, labels in zip([5, 6, 7], got):
                ref = KMeans(c, init="k-means++", n_init=1, random_state=seed, max_iter=50,
                             algorithm="lloyd").fit_predict(Y)
                np.testing.assert_array_equal(labels, ref)


def test_kmeans_labels_needs_one_restart():
    Y = np.random.default_rng(0).standard_normal((20, 2))
    with pytest.raises(ValueError, match="n_init"):
        kmeans_labels(Y, 2, n_init=0, random_state=0)


def test_descent_step_never_increases_the_sse_of_the_previous_partition():
    from ufsbench.numerics.exact_kmeans import (
        descent_kmeans_labels,
        first_smallest_sse,
        within_cluster_sse,
    )

    rng = np.random.default_rng(7)
    Y = rng.standard_normal((60, 2))
    np.testing.assert_array_equal(descent_kmeans_labels(Y, 3, None, 2, 5),
                                  kmeans_labels(Y, 3, n_init=2, random_state=5))
    for seed in range(5):
        previous = kmeans_labels(Y, 3, n_init=1, random_state=seed)
        labels = descent_kmeans_labels(Y, 3, previous, 1, seed + 10)
        assert within_cluster_sse(Y, labels) <= within_cluster_sse(Y, previous)
    # the first of equal candidates wins; a repeated candidate is not evaluated twice
    a, b = np.repeat([0, 1, 2], 20), rng.integers(0, 3, 60)
    better = 0 if within_cluster_sse(Y, b) <= within_cluster_sse(Y, a) else 1
    assert first_smallest_sse(Y, [b, a, a.copy()]) == better
    assert first_smallest_sse(Y, [a, a.copy()]) == 0
    # the SSE is the sum of squared distances to the cluster means
    expected = sum(np.sum((Y[a == k] - Y[a == k].mean(axis=0)) ** 2) for k in range(3))
    assert within_cluster_sse(Y, a) == pytest.approx(expected, rel=1e-12)
