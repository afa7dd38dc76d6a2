"""Tests of SPUFS (feature self-representation + l2,1 + graph, IRLS)."""

import numpy as np
import pytest
from _reference_spufs import spufs_reference

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.spufs import SPUFS
from ufsbench.numerics import l21_reweight, row_norms
from ufsbench.testing import peak_traced_bytes


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_samples=90, n_features=50, n_informative=5, n_clusters=3,
                          random_state=3)


def test_registered_and_params():
    sel = make_selector("spufs", alpha=0.5, beta=2.0)
    assert isinstance(sel, SPUFS) and sel.alpha == 0.5 and sel.beta == 2.0
    assert sel.selection_kind == "ranking"


def test_w_step_solves_its_linear_system(data):
    """The last W satisfies (X^T X + beta X^T L X + alpha Q) W = X^T X with Q from the previous W."""
    X = data.X
    sel = SPUFS(alpha=1.0, beta=1.0, max_iter=3, tol=0.0).fit(X)
    prev = SPUFS(alpha=1.0, beta=1.0, max_iter=2, tol=0.0).fit(X)
    q = l21_reweight(prev.W_, eps=sel.eps, factor=0.5)
    A = X.T @ X + sel.beta * X.T @ sel.laplacian_ @ X + sel.alpha * np.diag(q)
    assert np.allclose(A, A.T)
    assert np.linalg.eigvalsh(A).min() > 0
    resid = A @ sel.W_ - X.T @ X
    assert np.max(np.abs(resid)) < 1e-8 * np.max(np.abs(X.T @ X))


def test_smoothed_objective_non_increasing(data):
    for alpha, beta in [(1.0, 1.0), (1e2, 1e-2), (1e-2, 1e2)]:
        sel = SPUFS(alpha=alpha, beta=beta, max_iter=30, tol=0.0).fit(data.X)
        h = np.asarray(sel.objective_history_)
        assert len(h) == 30
        assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1])), (alpha, beta)


def test_objective_matches_definition(data):
    X = data.X
    sel = SPUFS(alpha=2.0, beta=0.5, max_iter=5).fit(X)
    W, L = sel.W_, sel.laplacian_
    expected = (np.sum((X - X @ W) ** 2) + 2.0 * np.sum(np.sqrt(np.sum(W ** 2, axis=1) + sel.eps))
                + 0.5 * np.trace(W.T @ X.T @ L @ X @ W))
    assert sel.objective_history_[-1] == pytest.approx(expected, rel=1e-10)


def test_scores_are_row_norms_not_column_norms(data):
    sel = SPUFS(alpha=1.0, beta=1.0).fit(data.X)
    assert np.allclose(sel.scores_, row_norms(sel.W_))
    col = np.linalg.norm(sel.W_, axis=0)
    assert not np.allclose(col, sel.scores_)          # W is not symmetric: the choice matters


def test_no_penalty_gives_identity():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 8))
    sel = SPUFS(alpha=0.0, beta=0.0).fit(X)
    assert np.allclose(sel.W_, np.eye(8), atol=1e-8)
    assert np.allclose(sel.scores_, 1.0, atol=1e-8)


@pytest.mark.parametrize("shape", [(40, 120), (90, 30)])
def test_solvers_give_the_reference_iterates(shape):
    """Both solvers follow the plain IRLS of the BL9 model (tests/methods/_reference_spufs.py),
    on d > n and d < n data."""
    n, d = shape
    ds = make_synthetic(n_samples=n, n_features=d, n_informative=5, n_clusters=2,
                        random_state=5)
    W, history = spufs_reference(ds.X, max_iter=10, tol=0.0)
    for solver in ("primal", "factored"):
        b = SPUFS(solver=solver, max_iter=10, tol=0.0).fit(ds.X)
        assert np.allclose(b.W_, W, atol=1e-8)
        assert np.allclose(b.objective_history_, history, rtol=1e-9)
        assert np.allclose(b.scores_, row_norms(W), atol=1e-8)


@pytest.mark.parametrize("old, new", [("dense", "primal"), ("dual", "factored")])
def test_deprecated_solver_values_warn_and_run_their_replacement(old, new):
    ds = make_synthetic(n_samples=30, n_features=60, n_informative=5, n_clusters=2,
                        random_state=5)
    with pytest.warns(FutureWarning, match=f"solver={new!r}"):
        a = SPUFS(solver=old, max_iter=5, tol=0.0).fit(ds.X)
    b = SPUFS(solver=new, max_iter=5, tol=0.0).fit(ds.X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert a.objective_history_ == b.objective_history_


@pytest.fixture(scope="module")
def wide():
    """d > 2n: the regime where the fit must not form d x d matrices."""
    return make_synthetic(n_samples=30, n_features=200, n_informative=5, n_clusters=2,
                          random_state=7)


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e2, 1e-2), (1e-2, 1e2), (1e4, 1e4)])
def test_factored_path_equals_primal_path(wide, alpha, beta):
    """Same IRLS iterates: objective history, scores, ranking and W (formed on demand)."""
    dense = SPUFS(alpha=alpha, beta=beta, solver="primal", max_iter=15, tol=0.0).fit(wide.X)
    fast = SPUFS(alpha=alpha, beta=beta, solver="factored", max_iter=15, tol=0.0).fit(wide.X)
    assert len(fast.W_factors_) == 2 and len(dense.W_factors_) == 1
    np.testing.assert_allclose(fast.objective_history_, dense.objective_history_, rtol=1e-9)
    np.testing.assert_allclose(fast.scores_, dense.scores_, rtol=1e-7,
                               atol=1e-9 * dense.scores_.max())
    assert np.array_equal(fast.ranking_[:20], dense.ranking_[:20])
    assert np.allclose(fast.W_, dense.W_, atol=1e-8 * np.abs(dense.W_).max())
    assert np.allclose(fast.scores_, row_norms(fast.W_))


def test_auto_uses_factored_path_only_when_d_exceeds_n(wide, data):
    assert len(SPUFS(max_iter=2).fit(wide.X).W_factors_) == 2          # d = 200 > n = 30
    assert len(SPUFS(max_iter=2).fit(data.X).W_factors_) == 1          # d = 50 < n = 90


def test_factored_fit_forms_no_d_by_d_array():
    """At d = 4000, n = 50 one d x d float64 array is 128 MB; the fit stays far below."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4000))
    sel, peak = peak_traced_bytes(lambda: SPUFS(max_iter=5, tol=0.0).fit(X))
    assert sel.n_iter_ == 5
    assert peak < 0.1 * 8 * 4000 ** 2


def test_many_samples_take_the_sparse_metric_with_the_same_scores(data, monkeypatch):
    """From graphs.SPARSE_MIN_SAMPLES samples on, the d x d form takes L and M = I + beta L as
    CSR matrices; the iterates equal the dense metric's up to round-off."""
    import scipy.sparse as sp

    import ufsbench.methods.spufs as spufs_module
    kw = dict(alpha=1.0, beta=2.0, max_iter=8, tol=0.0)
    dense = SPUFS(**kw).fit(data.X)
    monkeypatch.setattr(spufs_module, "SPARSE_MIN_SAMPLES", data.X.shape[0])
    sparse = SPUFS(**kw).fit(data.X)
    assert sp.issparse(sparse.laplacian_) and not sp.issparse(dense.laplacian_)
    np.testing.assert_allclose(sparse.laplacian_.toarray(), dense.laplacian_, rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(sparse.objective_history_, dense.objective_history_, rtol=1e-10)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-8,
                               atol=1e-10 * dense.scores_.max())
    assert np.array_equal(sparse.ranking_[:10], dense.ranking_[:10])


def test_many_samples_form_no_n_by_n_array():
    """At n = 3000 one n x n float64 array is 72 MB; the d x d form's fit stays below half of
    one (the blockwise neighbour search holds ~27 MB)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 20))
    sel, peak = peak_traced_bytes(lambda: SPUFS(max_iter=3, tol=0.0).fit(X))
    assert sel.n_iter_ == 3
    assert peak < 0.5 * 8 * 3000 ** 2


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e2, 1e2), (1e-2, 1.0)])
def test_planted_features_rank_first(data, alpha, beta):
    sel = SPUFS(alpha=alpha, beta=beta, n_features_to_select=5).fit(data.X)
    assert set(sel.top_features(5)) == set(data.informative)


def test_deterministic(data):
    a = SPUFS(random_state=0).fit(data.X)
    b = SPUFS(random_state=1).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="'alpha' parameter"):
        SPUFS(alpha=-1.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="'solver' parameter"):
        SPUFS(solver="magic").fit(data.X)


def test_stop_test_and_cap(data):
    from sklearn.exceptions import ConvergenceWarning

    sel = SPUFS(alpha=1.0, beta=1.0, tol=1e-9, max_iter=500).fit(data.X)
    h = np.asarray(sel.objective_history_)
    change = np.abs(np.diff(h)) / np.abs(h[:-1])
    assert sel.converged_ and sel.n_iter_ == len(h) < 500
    assert change[-1] < 1e-9 and np.all(change[:-1] >= 1e-9)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        capped = SPUFS(alpha=1.0, beta=1.0, tol=1e-12, max_iter=2).fit(data.X)
    assert not capped.converged_ and capped.n_iter_ == 2


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e-2, 1e2), (1e2, 1e-2)])
def test_factored_path_on_mostly_zero_data_equals_primal_path(alpha, beta):
    """Counts with ~3 % non-zeros (as bag-of-words sets): the factored step then forms
    X R^{-1} X^T and X^T (C F) from the non-zero entries; same iterates as the d x d system."""
    from ufsbench.methods.spufs import _FactoredWStep

    rng = np.random.default_rng(5)
    X = rng.poisson(2.0, size=(60, 240)) * (rng.random((60, 240)) < 0.03)
    X[:, :4] += rng.poisson(3.0, size=(60, 4))          # a few dense columns (the syrk part)
    X = X.astype(float)
    assert _FactoredWStep(X, np.eye(60), beta, np.zeros((60, 60))).outer is not None
    dense = SPUFS(alpha=alpha, beta=beta, solver="primal", max_iter=10, tol=0.0).fit(X)
    fast = SPUFS(alpha=alpha, beta=beta, solver="factored", max_iter=10, tol=0.0).fit(X)
    np.testing.assert_allclose(fast.objective_history_, dense.objective_history_, rtol=1e-9)
    np.testing.assert_allclose(fast.scores_, dense.scores_, rtol=1e-7,
                               atol=1e-9 * dense.scores_.max())
    assert np.allclose(fast.W_, dense.W_, atol=1e-8 * np.abs(dense.W_).max())
