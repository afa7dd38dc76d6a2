"""The l2,1 solvers' W-step on mostly-zero wide data: the n x n matrix from the non-zero entries
of the sparse columns (``ufsbench.numerics.sparse_gram``) fits as the dense syrk form does."""

import numpy as np
import pytest

from ufsbench.methods import make_selector
from ufsbench.numerics.sparse_gram import sparse_outer_gram


def bag_of_words(n=60, d=400, seed=0):
    """Mostly-zero d > n counts (3 % non-zero, 3 clusters on their own 20 words, 3 words in
    every row): the data on which the W-step forms its n x n matrix from the sparse columns."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 3
    rate = np.full((n, d), 0.02)
    rate[np.arange(n)[:, None], 20 * labels[:, None] + np.arange(20)] = 0.4
    X = rng.integers(1, 6, size=(n, d)) * (rng.random((n, d)) < rate)
    X[:, [60, 200, 399]] = rng.integers(1, 4, size=(n, 3))
    return X.astype(float)


# (method, the module's name of the constructor that turns the sparse form on, max_iter)
SPARSE_W_STEPS = [("ndfs", "sparse_outer_gram", 15), ("rsfs", "sparse_outer_gram", 15),
                  ("rufs", "dual_outer_gram", 8)]


@pytest.mark.parametrize(("method", "switch", "max_iter"), SPARSE_W_STEPS)
def test_mostly_zero_wide_data_fits_the_same_with_the_sparse_gram(monkeypatch, method, switch,
                                                                   max_iter):
    # The n x n W-step matrix from the non-zero entries of the sparse columns is the syrk one up
    # to round-off: the same selection, scores equal far beyond the ranking's resolution.
    import importlib

    module = importlib.import_module(f"ufsbench.methods.{method}")
    X = bag_of_words()
    assert sparse_outer_gram(X) is not None
    kw = dict(n_clusters=3, random_state=0, max_iter=max_iter)
    fast = make_selector(method, **kw).fit(X)
    monkeypatch.setattr(module, switch, lambda X: None)
    plain = make_selector(method, **kw).fit(X)
    assert fast.n_iter_ == plain.n_iter_
    assert np.array_equal(fast.support_, plain.support_)
    np.testing.assert_allclose(fast.scores_, plain.scores_, rtol=1e-8,
                               atol=1e-10 * plain.scores_.max())
