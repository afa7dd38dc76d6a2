"""Tests of RSFS (Shi, Du & Shen, ICDM 2014): Y >= 0, Huber Z-step, monotone objective."""

import numpy as np
import pytest
import scipy.sparse as sp

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.rsfs import row_normalised_laplacian
from ufsbench.numerics import knn_graph
from ufsbench.numerics.prox import soft_threshold
from ufsbench.testing import (
    assert_fit_matches_reference,
    fit_blas_threads,
    fits_cache_off_cold_warm,
    peak_traced_bytes,
)


@pytest.fixture(scope="module")
def fitted(data):
    return make_selector("rsfs", n_clusters=3, alpha=1e-2, beta=1e2, nu=1.0, random_state=0,
                         tol=0.0, max_iter=20).fit(data.X)


def test_graph_laplacian(data):
    L = row_normalised_laplacian(knn_graph(data.X, k=5, weight="heat", sigma=None))
    assert np.allclose(L, L.T)
    assert np.allclose(L @ np.ones(len(L)), 0.0, atol=1e-12)
    assert np.linalg.eigvalsh(L).min() > -1e-10


def test_nonnegative_unit_columns_and_orthogonal(fitted):
    Y = fitted.Y_
    assert np.all(np.isfinite(Y)) and Y.min() >= 0.0
    assert np.allclose(np.linalg.norm(Y, axis=0), 1.0)
    assert np.abs(Y.T @ Y - np.eye(3)).max() < 1e-4


def test_objective_non_increasing(fitted):
    h = np.asarray(fitted.objective_history_)
    assert len(h) == 20
    # From the second record on (the first W-step starts from D = I, not from a W).
    assert np.all(np.diff(h[1:]) <= 1e-6 * np.abs(h[1:-1]))


def test_z_step_is_soft_threshold_and_vanishes_for_large_nu(data):
    A = np.array([[1.5, -0.2], [-3.0, 0.7]])
    assert np.allclose(soft_threshold(A, 1.0), [[0.5, 0.0], [-2.0, 0.0]])
    sel = make_selector("rsfs", n_clusters=3, nu=1e6, max_iter=3, tol=0.0,
                        random_state=0).fit(data.X)
    assert not np.any(sel.Z_)
    sel = make_selector("rsfs", n_clusters=3, alpha=1e2, nu=1e-3, max_iter=3, tol=0.0,
                        random_state=0).fit(data.X)
    assert np.count_nonzero(sel.Z_) > 0


def test_stays_finite_nonnegative_on_mixed_sign_data(data):
    X = data.X - 5.0 * data.X.mean()
    for gamma in (1e8, 1e-3):
        sel = make_selector("rsfs", n_clusters=3, gamma=gamma, max_iter=5, tol=0.0,
                            random_state=0).fit(X)
        assert np.all(np.isfinite(sel.Y_)) and sel.Y_.min() >= 0.0


def test_planted_features_ranked_first(fitted, data):
    assert set(fitted.top_features(6)) == set(data.informative)


def test_deterministic(data):
    a = make_selector("rsfs", n_clusters=3, random_state=4, max_iter=5).fit(data.X)
    b = make_selector("rsfs", n_clusters=3, random_state=4, max_iter=5).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)


def test_woodbury_matches_dense_when_d_exceeds_n(wide_data):
    X = wide_data.X
    kw = dict(n_clusters=3, max_iter=8, tol=0.0, random_state=0)
    dense = make_selector("rsfs", solver="dense", **kw).fit(X)
    fast = make_selector("rsfs", solver="woodbury", **kw).fit(X)
    assert np.allclose(dense.scores_, fast.scores_, rtol=1e-7, atol=1e-10)


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="'nu' parameter"):
        make_selector("rsfs", nu=-1.0).fit(data.X)


# -- the fast fit against a frozen reference fit ---------------------------------------------------

def reference_rsfs_scores(sel, X):
    """RSFS's fit in its plain form: dense Laplacian, Gram formed in every W-step, no cache.
    Returns (scores, objective history)."""
    from ufsbench.methods.rsfs import row_normalised_laplacian
    from ufsbench.numerics import l21_reweight
    from ufsbench.numerics.gram_solve import solve_gram_plus_diag
    from ufsbench.numerics.irls import SOLVER_METHODS
    from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part
    from ufsbench.numerics.spectral import spectral_soft_indicator, unit_columns

    n, d = X.shape
    L = row_normalised_laplacian(knn_graph(X, k=min(sel.k, n - 1), weight="heat", sigma=None))
    Y, _ = spectral_soft_indicator(L, sel.n_clusters, sel.random_state, sel.init_offset)
    Z, weights, history = np.zeros((n, sel.n_clusters)), np.ones(d), []
    for _ in range(sel.max_iter):
        W = solve_gram_plus_diag(X, Y - Z, (sel.beta / sel.alpha) * weights,
                                 method=SOLVER_METHODS[sel.solver])
        weights = l21_reweight(W, eps=sel.eps)
        XW = X @ W
        Z = soft_threshold(Y - XW, sel.nu / (2.0 * sel.alpha))
        A = XW + Z
        num = neg_part(L) @ Y + sel.gamma * Y + sel.alpha * pos_part(A)
        den = (pos_part(L) @ Y + sel.alpha * Y + sel.gamma * Y @ (Y.T @ Y)
               + sel.alpha * neg_part(A))
        Y = unit_columns(multiplicative_step(Y, np.sqrt(num), np.sqrt(den)))
        history.append(sel.objective(X, Y, W, Z, L))
        if len(history) > 1 and (history[-2] - history[-1]) < sel.tol * abs(history[-1]):
            break
    return np.linalg.norm(W, axis=1), history


@pytest.mark.parametrize("which, solver", [("data", "auto"), ("wide_data", "auto"),
                                           ("wide_data", "dense")])
@pytest.mark.parametrize("alpha, beta, nu", [(1.0, 1.0, 1.0), (1e-3, 1e-3, 1e-3), (1e3, 1e3, 1e3),
                                             (1e-3, 1e3, 1e3), (1e2, 1e-2, 1e-1)])
def test_fit_equals_the_reference_fit(request, which, solver, alpha, beta, nu):
    X = request.getfixturevalue(which).X
    sel = make_selector("rsfs", n_clusters=3, random_state=0, alpha=alpha, beta=beta, nu=nu,
                        solver=solver).fit(X)
    with fit_blas_threads(sel):                       # the reference rounds as the fit does
        reference = reference_rsfs_scores(sel, X)
    assert_fit_matches_reference(sel, *reference)


@pytest.mark.parametrize("shape", [(210, 480), (480, 210)])          # n x n and d x d forms
def test_disk_cached_start_gives_the_same_fit(shape, tmp_path):
    # >= 100,000 cells: the graph, spectral start and X^T X go through the disk cache; a second
    # fit reads them back and must reproduce the first bit for bit.
    from ufsbench.datasets.synthetic import make_synthetic

    X = make_synthetic(n_samples=shape[0], n_features=shape[1], n_informative=6, n_clusters=3,
                       random_state=2).X
    kw = dict(n_clusters=3, random_state=5, max_iter=3)
    direct, first, second = fits_cache_off_cold_warm("rsfs", X, tmp_path, **kw)
    assert any(tmp_path.rglob("*.pkl"))
    assert np.array_equal(first.scores_, second.scores_)
    assert np.array_equal(direct.scores_, first.scores_)


def test_stop_test_and_cap(data):
    # (obj_old - obj_new) / obj_new < tol ends the fit (first time it holds); the cap warns.
    from sklearn.exceptions import ConvergenceWarning

    kw = dict(n_clusters=3, alpha=1e-2, beta=1e2, nu=1.0, random_state=0)
    sel = make_selector("rsfs", max_iter=500, tol=1e-3, **kw).fit(data.X)
    h = np.asarray(sel.objective_history_)
    ratio = (h[:-1] - h[1:]) / np.abs(h[1:])
    assert sel.converged_ and sel.n_iter_ == len(h) < 500
    assert ratio[-1] < 1e-3 and np.all(ratio[:-1] >= 1e-3)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        capped = make_selector("rsfs", max_iter=3, **kw).fit(data.X)
    assert not capped.converged_ and capped.n_iter_ == 3



def test_large_n_takes_the_spectral_start_from_lanczos_on_the_sparse_laplacian(monkeypatch):
    # From graphs.SPARSE_MIN_SAMPLES samples on, the c smallest eigenvectors of L come from
    # Lanczos on the sparse L instead of a dense n x n eigh; the start is the K-means labels of
    # their rows, so the fit is the dense start's.
    from ufsbench.methods import rsfs as module
    from ufsbench.numerics import graphs

    X = np.random.default_rng(3).normal(size=(240, 30))
    X[:80, :4] += 4.0
    X[80:160, 4:8] += 4.0
    kw = dict(n_clusters=3, random_state=0, max_iter=5)
    dense = make_selector("rsfs", **kw).fit(X)
    inputs = []
    real = module.spectral_soft_indicator
    monkeypatch.setattr(module, "spectral_soft_indicator",
                        lambda L, *args: inputs.append(L) or real(L, *args))
    monkeypatch.setattr(graphs, "SPARSE_MIN_SAMPLES", 200)
    lanczos = make_selector("rsfs", **kw).fit(X)
    assert len(inputs) == 1 and sp.issparse(inputs[0])
    dense_L = module.row_normalised_laplacian(knn_graph(X, k=5, weight="heat", sigma=None))
    np.testing.assert_allclose(inputs[0].toarray(), dense_L, rtol=1e-13, atol=1e-15)
    assert np.array_equal(lanczos.support_, dense.support_)
    np.testing.assert_allclose(lanczos.scores_, dense.scores_, rtol=1e-9,
                               atol=1e-12 * dense.scores_.max())


def test_large_n_forms_no_n_by_n_array():
    """At n = 3000 one n x n float64 array is 72 MB; from graphs.SPARSE_MIN_SAMPLES samples on
    the graph, L and the spectral start stay far below it."""
    X = np.random.default_rng(0).standard_normal((3000, 20))
    sel = make_selector("rsfs", n_clusters=3, random_state=0, max_iter=3)
    _, peak = peak_traced_bytes(lambda: sel.fit(X))
    assert sel.n_iter_ == 3
    assert peak < 0.5 * 8 * 3000 ** 2
