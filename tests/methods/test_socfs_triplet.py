"""Tests of SOCFS + triplet (UFSOL Table 2): reduces to SOCFS at alpha=0, PSD graph, monotone."""

import numpy as np
import pytest

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.testing import peak_traced_bytes


def test_alpha_zero_is_socfs(data):
    kw = dict(n_clusters=3, random_state=4, max_iter=8, inner_iter=10)
    a = make_selector("socfs_triplet", alpha=0.0, **kw).fit(data.X)
    b = make_selector("socfs", **kw).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)
    assert a.objective_history_ == b.objective_history_


def test_triplet_penalty_is_psd_laplacian(data):
    sel = make_selector("socfs_triplet", alpha=3.0, k=5)
    P = sel._graph_penalty(data.X - data.X.mean(axis=0)).toarray()
    assert np.allclose(P, P.T)
    assert np.allclose(P @ np.ones(len(P)), 0.0)
    assert np.linalg.eigvalsh(P).min() > -1e-9
    # alpha scales the Laplacian linearly
    P1 = make_selector("socfs_triplet", alpha=1.0, k=5)._graph_penalty(
        data.X - data.X.mean(axis=0)).toarray()
    assert np.allclose(P, 3.0 * P1)


def test_constraints_objective_and_planted_features(data):
    sel = make_selector("socfs_triplet", n_clusters=3, random_state=0, alpha=1.0,
                        n_features_to_select=6, max_iter=30, inner_iter=20, tol=0.0).fit(data.X)
    assert np.allclose(sel.E_.T @ sel.E_, np.eye(3), atol=1e-10)
    assert np.allclose(sel.B_.T @ sel.B_, np.eye(3), atol=1e-10)
    assert sel.H_.min() >= 0.0
    h = np.asarray(sel.objective_history_)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))
    assert set(sel.top_features(6)) == set(data.informative)


def test_larger_alpha_makes_projection_smoother_on_triplet_graph(data):
    """The graph term acts: a larger alpha lowers the relative graph energy of XW."""
    Xc = data.X - data.X.mean(axis=0)
    L = make_selector("socfs_triplet", alpha=1.0)._graph_penalty(Xc)
    energies = []
    for alpha in (1e-3, 1e4):
        s = make_selector("socfs_triplet", n_clusters=3, random_state=0, alpha=alpha,
                          max_iter=10, inner_iter=10).fit(data.X)
        XW = Xc @ s.W_
        energies.append(np.sum(XW * (L @ XW)) / np.sum(XW ** 2))
    assert energies[1] < 0.7 * energies[0]


def test_deterministic_and_validated(data):
    a = make_selector("socfs_triplet", n_clusters=3, random_state=2, max_iter=4).fit(data.X)
    b = make_selector("socfs_triplet", n_clusters=3, random_state=2, max_iter=4).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)
    with pytest.raises(UFSBenchError, match="'alpha' parameter"):
        make_selector("socfs_triplet", n_clusters=3, alpha=-1.0).fit(data.X)


def test_sparse_penalty_fit_equals_dense_penalty_fit(data, monkeypatch):
    # The sparse L_t (large-n form) gives the fit of the dense n x n L_t of UFSOL Eq. (2).
    from ufsbench.methods.socfs import SOCFSTriplet
    from ufsbench.numerics.triplet import ordinal_laplacian, triplet_weights

    kw = dict(n_clusters=3, random_state=1, alpha=2.0, max_iter=6, inner_iter=10, tol=0.0)
    sparse_fit = make_selector("socfs_triplet", **kw).fit(data.X)
    Xc = data.X - data.X.mean(axis=0)
    dense_P = 2.0 * ordinal_laplacian(triplet_weights(Xc, k=5))
    np.testing.assert_allclose(make_selector("socfs_triplet", **kw)._graph_penalty(Xc).toarray(),
                               dense_P, atol=1e-13)
    monkeypatch.setattr(SOCFSTriplet, "_graph_penalty", lambda self, X: dense_P)
    dense_fit = make_selector("socfs_triplet", **kw).fit(data.X)
    np.testing.assert_allclose(sparse_fit.scores_, dense_fit.scores_, rtol=1e-8)
    np.testing.assert_allclose(sparse_fit.objective_history_, dense_fit.objective_history_,
                               rtol=1e-10)


def test_large_n_fit_forms_no_n_by_n_array():
    from ufsbench.datasets.synthetic import make_synthetic

    n = 3000
    X = make_synthetic(n_samples=n, n_features=20, n_informative=4, n_clusters=3,
                       random_state=0).X
    sel = make_selector("socfs_triplet", n_clusters=3, random_state=0, max_iter=2,
                        inner_iter=3)
    _, peak = peak_traced_bytes(lambda: sel.fit(X))
    assert peak < 8 * n * n / 2                     # one float64 n x n array: 72 MB
