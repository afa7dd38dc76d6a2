"""Tests of SOCFS (Han & Kim, CVPR 2015): constraints, monotone objective, planted features."""

import numpy as np
import pytest

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.numerics import l21_reweight, orthonormal_polar
from ufsbench.numerics.gram_solve import solve_gram_plus_diag
from ufsbench.testing import fit_blas_threads


@pytest.fixture(scope="module")
def fitted(data):
    return make_selector("socfs", n_clusters=3, random_state=0, n_features_to_select=6,
                         max_iter=30, inner_iter=20, tol=0.0).fit(data.X)


def test_orthogonality_and_nonnegative_split(fitted):
    c = 3
    assert np.allclose(fitted.E_.T @ fitted.E_, np.eye(c), atol=1e-10)
    assert np.allclose(fitted.B_.T @ fitted.B_, np.eye(c), atol=1e-10)
    assert fitted.H_.min() >= 0.0
    # H is the exact projection of E onto the non-negative orthant.
    assert np.array_equal(fitted.H_, np.maximum(fitted.E_, 0.0))


def test_objective_non_increasing(fitted):
    h = np.asarray(fitted.objective_history_)
    assert len(h) == fitted.n_iter_ == 30
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))


def test_planted_features_ranked_first(fitted, data):
    assert set(fitted.top_features(6)) == set(data.informative)
    # ranking is DESCENDING in ||w_i|| (two circulating copies of the code sort ascending)
    norms = np.linalg.norm(fitted.W_, axis=1)
    assert norms[fitted.ranking_[0]] == norms.max()
    assert fitted.scores_[fitted.ranking_[-1]] == norms.min()


def test_larger_lambda2_pushes_e_towards_nonnegative(data):
    negative_mass = []
    for lam2 in (1e-4, 1e-2, 1.0):
        sel = make_selector("socfs", n_clusters=3, random_state=1, lambda2=lam2, max_iter=15,
                            inner_iter=20, tol=0.0).fit(data.X)
        negative_mass.append(np.linalg.norm(np.minimum(sel.E_, 0.0)))
    assert negative_mass[0] > negative_mass[1] > negative_mass[2]
    assert negative_mass[2] < 0.01


def test_deterministic_for_fixed_seed(data):
    a = make_selector("socfs", n_clusters=3, random_state=7, max_iter=5).fit(data.X)
    b = make_selector("socfs", n_clusters=3, random_state=7, max_iter=5).fit(data.X)
    c = make_selector("socfs", n_clusters=3, random_state=8, max_iter=5).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)
    assert not np.array_equal(a.scores_, c.scores_)


def test_w_step_solves_its_normal_equations():
    """The W-step is the exact minimiser of the reweighted problem, in both the d x d and n x n forms."""
    rng = np.random.default_rng(0)
    for n, d in ((30, 12), (12, 30)):
        X = rng.standard_normal((n, d))
        T = orthonormal_polar(rng.standard_normal((n, 3)))
        reg = 5.0 * l21_reweight(rng.standard_normal((d, 3)), 1e-8)
        W = solve_gram_plus_diag(X, T, reg)
        residual = X.T @ (X @ W - T) + reg[:, None] * W
        assert np.abs(residual).max() < 1e-9


def test_centering_makes_fit_shift_invariant(data):
    a = make_selector("socfs", n_clusters=3, random_state=0, max_iter=5).fit(data.X)
    b = make_selector("socfs", n_clusters=3, random_state=0, max_iter=5).fit(data.X + 10.0)
    assert np.allclose(a.scores_, b.scores_, rtol=1e-6, atol=1e-10)


def test_n_components_must_be_at_least_c(data):
    with pytest.raises(UFSBenchError, match="n_components=2 must not be below n_clusters=3"):
        make_selector("socfs", n_clusters=3, n_components=2).fit(data.X)
    sel = make_selector("socfs", n_clusters=3, n_components=5, max_iter=3,
                        random_state=0).fit(data.X)
    assert sel.W_.shape == (60, 5) and sel.B_.shape == (5, 3)


@pytest.mark.parametrize("method", ["socfs", "socfs_triplet"])
def test_deprecated_m_warns_and_fits_as_n_components(data, method):
    with pytest.raises(UFSBenchError, match="m=2 must not be below n_clusters=3"):
        make_selector(method, n_clusters=3, m=2).fit(data.X)
    with pytest.warns(FutureWarning, match="use n_components"):
        old = make_selector(method, n_clusters=3, m=5, max_iter=3, random_state=0).fit(data.X)
    new = make_selector(method, n_clusters=3, n_components=5, max_iter=3,
                        random_state=0).fit(data.X)
    np.testing.assert_array_equal(old.W_, new.W_)
    assert old.objective_history_ == new.objective_history_


def test_finite_on_high_dimensional_input():
    """d > n uses the n x n form of the W-step; SOCFS is weaker there (its regression can fit
    any target), but the two best-ranked features are still planted ones."""
    ds = make_synthetic(n_samples=60, n_features=300, n_informative=5, n_clusters=2,
                        separation=5.0, random_state=3)
    sel = make_selector("socfs", n_clusters=2, random_state=0, max_iter=20,
                        inner_iter=20).fit(ds.X)
    assert np.all(np.isfinite(sel.scores_))
    assert set(sel.ranking_[:2]) <= set(ds.informative)


# -- exact fast paths against the plain computation --------------------------------------------
@pytest.mark.parametrize("shape", [(40, 12), (20, 50)])
@pytest.mark.parametrize("kind", ["none", "sparse"])
def test_regression_step_equals_solve_gram_plus_diag(shape, kind):
    import scipy.sparse as sp

    from ufsbench.methods.socfs import regression_step
    rng = np.random.default_rng(3)
    n, d = shape
    X = rng.standard_normal((n, d))
    metric = None
    if kind == "sparse":
        A = sp.random(n, n, density=0.1, random_state=4)
        metric = sp.identity(n, format="csr") + (A @ A.T).tocsr()
    step = regression_step(X, metric)
    for _ in range(3):                                # the cached matrices are not altered
        T, reg = rng.standard_normal((n, 3)), rng.uniform(0.1, 10.0, d)
        expected = solve_gram_plus_diag(X, T, reg, metric)
        if d <= n or metric is None:                  # the same Cholesky of the same matrix
            np.testing.assert_array_equal(step(T, reg), expected)
        else:
            # (K + M^{-1})^{-1} M^{-1} T instead of (M K + I)^{-1} T: round-off apart; both
            # systems have condition numbers below 1e3 here.
            np.testing.assert_allclose(step(T, reg), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("centre", [True, False])
@pytest.mark.parametrize("kind", ["none", "sparse"])
def test_regression_step_on_sparse_columns_equals_solve_gram_plus_diag(centre, kind):
    """d > n with mostly sparse columns (the split form of the n x n matrix, a sparse product
    with a centring correction): the same W as the plain computation up to round-off."""
    import scipy.sparse as sp

    from ufsbench.methods.socfs import centred_columns, regression_step
    rng = np.random.default_rng(5)
    n, d = 60, 150
    raw = rng.poisson(0.03, size=(n, d)).astype(float) * rng.uniform(1, 5, size=(n, d))
    raw[:, :10] = rng.uniform(0, 3, size=(n, 10))     # a few dense columns
    X = raw - raw.mean(axis=0) if centre else raw
    assert centred_columns(X, raw if centre else None) is not None      # the split is taken
    metric = None
    if kind == "sparse":
        A = sp.random(n, n, density=0.05, random_state=6)
        metric = sp.identity(n, format="csr") + (A @ A.T).tocsr()
    step = regression_step(X, metric, raw if centre else None)
    for _ in range(3):
        T, reg = rng.standard_normal((n, 2)), rng.uniform(0.1, 10.0, d)
        # Condition numbers below 1e4 here; round-off of order 1e-15 times that.
        np.testing.assert_allclose(step(T, reg), solve_gram_plus_diag(X, T, reg, metric),
                                   rtol=1e-9, atol=1e-12)


def _reference_socfs(sel, X, P=None):
    """Reference SOCFS loop written plainly (X^T M X formed every outer iteration, X W B inside
    the inner loop): (W, objective history)."""
    import scipy.sparse as sp

    from ufsbench.numerics.irls import smoothed_l21_norm
    n, d = X.shape
    c = sel.n_clusters
    X = X - X.mean(axis=0)
    rng = np.random.RandomState(sel.random_state)
    E = np.linalg.qr(rng.uniform(size=(n, c)))[0]
    B = np.linalg.qr(rng.uniform(size=(c, c)))[0]
    W = rng.uniform(size=(d, c))
    H = rng.uniform(size=(n, c))
    P = sel._graph_penalty(X)
    metric = None if P is None else sp.identity(n, format="csr") + P
    lam, lam2, eps = sel.lambda_, sel.lambda2, sel.eps
    history = []
    for _ in range(sel.max_iter):
        XW = X @ W
        for _ in range(sel.inner_iter):
            E = orthonormal_polar(XW @ B + lam2 * H)
            H = np.maximum(E, 0.0)
        B = orthonormal_polar(XW.T @ E)
        W = solve_gram_plus_diag(X, E @ B.T, lam * l21_reweight(W, eps), metric)
        XW = X @ W
        value = (np.sum((XW - E @ B.T) ** 2) + lam * smoothed_l21_norm(W, eps)
                 + lam2 * np.sum((E - H) ** 2))
        if P is not None:
            value += float(np.sum(XW * (P @ XW)))
        history.append(float(value))
    return W, history


@pytest.mark.parametrize("method,params", [
    ("socfs", dict(lambda_=100.0)), ("socfs", dict(lambda_=1e-4)),
    ("socfs_triplet", dict(lambda_=1.0, alpha=1e2)), ("socfs_triplet", dict(lambda_=1e4, alpha=1.0))])
@pytest.mark.parametrize("d", [15, 70])
def test_fit_equals_reference_computation(method, params, d):
    # Hoisting X^T M X and X W B must not change a single bit of the fit (d <= n, and d > n
    # without the triplet metric). With it and d > n the W-step solves the equivalent symmetric
    # system (K + M^{-1}) Y = M^{-1} T: equal up to round-off.
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, d)) + np.repeat(rng.standard_normal((3, d)), [20, 15, 15], 0)
    sel = make_selector(method, n_clusters=3, random_state=2, max_iter=8, inner_iter=6, tol=0.0,
                        **params)
    with fit_blas_threads(sel):                       # the reference rounds as the fit does
        W, history = _reference_socfs(sel, X)
    sel.fit(X)
    if method == "socfs" or d <= X.shape[0]:
        np.testing.assert_array_equal(sel.W_, W)
        assert sel.objective_history_ == history
    else:
        np.testing.assert_allclose(sel.W_, W, rtol=1e-8, atol=1e-12 * np.abs(W).max())
        np.testing.assert_allclose(sel.objective_history_, history, rtol=1e-10)


# -- the released preset's switches: a given start, D0 = I, the fixed count -----------------------
def _start(rng, n, d, c):
    return {"E": np.linalg.qr(rng.uniform(size=(n, c)))[0],
            "B": np.linalg.qr(rng.uniform(size=(c, c)))[0],
            "W": rng.uniform(size=(d, c)), "H": rng.uniform(size=(n, c))}


@pytest.mark.parametrize("d_init", ["start", "identity"])
def test_given_start_and_first_weights_are_used_as_han_s_code_does(data, d_init):
    """One outer iteration by hand from an injected (E0, B0, W0, H0): the inner E/H rounds, B, then
    W = (X^T X + lambda D0)^{-1} X^T E B^T with D0 = I ("identity") or reweighted from W0."""
    X = data.X - data.X.mean(axis=0)
    n, d = X.shape
    start = _start(np.random.default_rng(3), n, d, 3)
    sel = make_selector("socfs", n_clusters=3, lambda_=5.0, lambda2=2.0, max_iter=1,
                        inner_iter=4, tol=0.0, init=start, d_init=d_init).fit(data.X)
    E, H, XW = start["E"], start["H"], X @ start["W"]
    for _ in range(4):
        E = orthonormal_polar(XW @ start["B"] + 2.0 * H)
        H = np.maximum(E, 0.0)
    B = orthonormal_polar(XW.T @ E)
    D0 = np.ones(d) if d_init == "identity" else l21_reweight(start["W"], sel.eps)
    W = np.linalg.solve(X.T @ X + 5.0 * np.diag(D0), X.T @ E @ B.T)
    np.testing.assert_allclose(sel.W_, W, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(sel.E_, E, atol=1e-12)


def test_given_start_makes_the_fit_independent_of_the_seed(data):
    start = _start(np.random.default_rng(4), *data.X.shape, 3)
    a = make_selector("socfs", n_clusters=3, random_state=0, init=start, max_iter=3,
                      tol=0.0).fit(data.X)
    b = make_selector("socfs", n_clusters=3, random_state=9, init=start, max_iter=3,
                      tol=0.0).fit(data.X)
    np.testing.assert_array_equal(a.scores_, b.scores_)


@pytest.mark.parametrize("bad", [dict(E=None), dict(W=np.ones((5, 3))), dict(Q=np.ones(3))])
def test_a_malformed_start_is_refused(data, bad):
    start = _start(np.random.default_rng(5), *data.X.shape, 3)
    start.update(bad)
    start = {k: v for k, v in start.items() if v is not None}
    with pytest.raises(UFSBenchError, match="init"):
        make_selector("socfs", n_clusters=3, init=start).fit(data.X)


def test_fixed_count_is_the_requested_stop_and_a_capped_tolerance_warns(data):
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fixed = make_selector("socfs", n_clusters=3, random_state=0, max_iter=4, tol=0.0).fit(data.X)
    assert fixed.n_iter_ == 4 and fixed.converged_
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        capped = make_selector("socfs", n_clusters=3, random_state=0, max_iter=2,
                               tol=1e-30).fit(data.X)
    assert capped.n_iter_ == 2 and not capped.converged_
    stopped = make_selector("socfs", n_clusters=3, random_state=0, max_iter=500, tol=1e-4).fit(data.X)
    h = stopped.objective_history_
    assert stopped.converged_ and stopped.n_iter_ == len(h) < 500
    assert h[-2] - h[-1] <= 1e-4 * abs(h[-2])
