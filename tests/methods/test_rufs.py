"""Tests of RUFS (Qian & Zhai, IJCAI 2013), IRLS / split-multiplicative solver."""

import numpy as np
import pytest

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.rufs import local_learning_matrix, local_learning_weights, residual_row_norms
from ufsbench.numerics import row_norms
from ufsbench.testing import (
    assert_fit_matches_reference,
    fit_blas_threads,
    fits_cache_off_cold_warm,
    peak_traced_bytes,
)


@pytest.fixture(scope="module")
def fitted(data):
    # beta / alpha = 100: the regression has no intercept while the indicator G has positive
    # column means, so a weak l2,1 weight lets noise features fit that offset.
    return make_selector("rufs", n_clusters=3, random_state=0, n_features_to_select=6,
                         alpha=0.01, beta=1.0, nu=1.0, max_iter=30, tol=0.0).fit(data.X)


def test_factors_non_negative_and_finite_on_negative_data(fitted, data):
    assert data.X.min() < 0
    for M in (fitted.G_, fitted.F_, fitted.W_):
        assert np.all(np.isfinite(M))
    assert fitted.G_.min() >= 0.0 and fitted.F_.min() >= 0.0


def test_orthogonality_penalty_holds(fitted):
    G = fitted.G_
    assert np.abs(G.T @ G - np.eye(3)).max() < 1e-3


def test_objective_non_increasing(fitted):
    h = np.asarray(fitted.objective_history_)
    assert len(h) == 30
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))
    assert h[-1] < h[0]


def test_objective_non_increasing_with_knn_graph_and_strong_graph_term(data):
    sel = make_selector("rufs", n_clusters=3, random_state=1, graph="knn", nu=100.0,
                        alpha=1.0, beta=1.0, max_iter=15, tol=0.0).fit(data.X)
    h = np.asarray(sel.objective_history_)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))


def test_planted_features_and_clusters(fitted, data):
    assert set(fitted.top_features(6)) == set(data.informative)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(data.y, fitted.labels_) > 0.95


def test_deterministic_for_fixed_seed(data):
    kw = dict(n_clusters=3, max_iter=5)
    a = make_selector("rufs", random_state=3, **kw).fit(data.X)
    b = make_selector("rufs", random_state=3, **kw).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)
    assert np.array_equal(a.G_, b.G_)


def test_local_learning_matrix():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((25, 4))
    A = local_learning_weights(X, k=5, lambda_r=0.1, sigma=2.0).toarray()
    T = local_learning_matrix(X, k=5, lambda_r=0.1, sigma=2.0).toarray()
    assert np.allclose(T, (np.eye(25) - A).T @ (np.eye(25) - A))
    assert np.allclose(T, T.T)
    assert np.linalg.eigvalsh(T).min() > -1e-10
    # Every row of A is the kernel ridge regression of x_i on its 5 nearest other samples,
    # with the dense RBF block (diagonal 1) over the neighbourhood.
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    for i in (0, 7, 24):
        others = np.argsort(np.where(np.arange(25) == i, np.inf, D[i]), kind="stable")
        nb = others[:5]
        K = np.exp(-D[np.ix_(nb, nb)] / 2.0)
        a = np.linalg.solve(K + 0.1 * np.eye(5), np.exp(-D[i, nb] / 2.0))
        assert np.count_nonzero(A[i]) == 5
        assert np.allclose(A[i, nb], a)


@pytest.mark.parametrize("graph", ["local_learning", "knn"])
def test_large_n_neighbour_path_gives_the_same_fit(data, graph, monkeypatch):
    # The blockwise neighbour search (used from SPARSE_MIN_SAMPLES samples on) gives the same
    # graph and fit as the dense distance matrix; forced here on small data.
    from ufsbench.numerics import graphs

    kw = dict(n_clusters=3, random_state=0, graph=graph, max_iter=4)
    small = make_selector("rufs", **kw).fit(data.X)
    L_small = small.graph_matrix(data.X).toarray()
    monkeypatch.setattr(graphs, "SPARSE_MIN_SAMPLES", 2)
    large = make_selector("rufs", **kw).fit(data.X)
    np.testing.assert_allclose(large.graph_matrix(data.X).toarray(), L_small, atol=1e-12)
    np.testing.assert_allclose(large.scores_, small.scores_, rtol=1e-9)


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="'alpha' parameter"):
        make_selector("rufs", n_clusters=3, alpha=0.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="'graph' parameter"):
        make_selector("rufs", n_clusters=3, graph="heat").fit(data.X)


def test_large_n_fit_forms_no_n_by_n_array():
    from ufsbench.datasets.synthetic import make_synthetic

    n = 3000
    X = make_synthetic(n_samples=n, n_features=20, n_informative=4, n_clusters=3,
                       random_state=0).X
    sel = make_selector("rufs", n_clusters=3, random_state=0, max_iter=2)
    _, peak = peak_traced_bytes(lambda: sel.fit(X))
    assert peak < 8 * n * n / 2                     # one float64 n x n array: 72 MB


# -- the fast fit against a frozen reference fit ---------------------------------------------------

def reference_rufs_scores(sel, X, same_products=False):
    """RUFS's fit in its plain form (every Gram formed by general products, every residual
    recomputed, no cache) or, ``same_products=True``, with the three products formed as the fit
    forms them (the shared Gram solves, (Q_r G)^T X): then the fit must equal it bit for bit.
    Returns (scores, history)."""
    from ufsbench.numerics import l21_reweight
    from ufsbench.numerics.gram_solve import solve_gram_plus_diag
    from ufsbench.numerics.indicators import kmeans_scaled_indicator
    from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part

    def plain_solve(X, B, reg, weights=None):
        # (X^T Q X + R) W = X^T B by general products and a general solver; for d > n through
        # W = R^{-1} X^T (Q X R^{-1} X^T + I)^{-1} B, the well-conditioned form
        n, d = X.shape
        QX = X if weights is None else weights[:, None] * X
        reg = np.broadcast_to(np.asarray(reg, dtype=float), d)
        if d <= n:
            return np.linalg.solve(X.T @ QX + np.diag(reg), X.T @ B)
        XtR = X.T / reg[:, None]
        return XtR @ np.linalg.solve(QX @ XtR + np.eye(n), B)

    now = same_products
    solve = solve_gram_plus_diag if now else plain_solve
    c, (alpha, beta, nu, zeta, eps) = sel.n_clusters, (sel.alpha, sel.beta, sel.nu, sel.zeta,
                                                       sel.eps)
    L = sel.graph_matrix(X)
    G, _ = kmeans_scaled_indicator(X, c, sel.random_state, offset=0.2)
    F = np.maximum(np.linalg.lstsq(G, X, rcond=None)[0], 0.0)
    F += 0.2 * F[F > 0].mean()
    W = solve(X, G, beta / alpha)
    history = []
    for _ in range(sel.max_iter):
        q_h = l21_reweight(X @ W - G, eps)
        W = solve(X, q_h[:, None] * G, (beta / alpha) * l21_reweight(W, eps), q_h)
        XW, XF = X @ W, X @ F.T
        q_r = l21_reweight(X - G @ F, eps)[:, None]
        q_h = l21_reweight(XW - G, eps)[:, None]
        grad_pos = (q_r * (G @ (F @ F.T)) + q_r * neg_part(XF) + nu * (pos_part(L) @ G)
                    + alpha * q_h * G + alpha * q_h * neg_part(XW) + 0.5 * zeta * (G @ (G.T @ G)))
        grad_neg = (q_r * pos_part(XF) + nu * (neg_part(L) @ G) + alpha * q_h * pos_part(XW)
                    + 0.5 * zeta * G)
        G = multiplicative_step(G, grad_neg ** sel.exponent, grad_pos ** sel.exponent)
        q_r = l21_reweight(X - G @ F, eps)[:, None]
        GQX = (q_r * G).T @ X if now else G.T @ (q_r * X)
        F = multiplicative_step(F, pos_part(GQX), (G.T @ (q_r * G)) @ F + neg_part(GQX))
        history.append(sel.objective(X, G, F, W, L))
        if len(history) > 1 and history[-2] - history[-1] <= sel.tol * abs(history[-2]):
            break
    return row_norms(W), history


@pytest.mark.parametrize("which", ["data", "wide_data"])          # d x d and n x n W-steps
@pytest.mark.parametrize("nu, alpha, beta", [(1.0, 1.0, 1.0), (1e-6, 1e-6, 1e-6), (1e6, 1e6, 1e6),
                                             (1e6, 1e-6, 1e6), (1e-2, 1e2, 1e-4)])
def test_fit_equals_the_reference_fit(request, which, nu, alpha, beta):
    X = request.getfixturevalue(which).X
    sel = make_selector("rufs", n_clusters=3, random_state=0, nu=nu, alpha=alpha, beta=beta,
                        max_iter=8).fit(X)
    with fit_blas_threads(sel):                       # the reference rounds as the fit does
        reference = reference_rufs_scores(sel, X)
    assert_fit_matches_reference(sel, *reference)


@pytest.mark.parametrize("shape", [(210, 480), (480, 210)])          # n x n and d x d forms
def test_disk_cached_start_gives_the_same_fit(shape, tmp_path):
    # >= 100,000 cells, so that the K-means start, the graph and X^T X go through the disk cache;
    # a second fit reads them back and must reproduce the first bit for bit.
    from ufsbench.datasets.synthetic import make_synthetic

    X = make_synthetic(n_samples=shape[0], n_features=shape[1], n_informative=6, n_clusters=3,
                       random_state=2).X
    kw = dict(n_clusters=3, random_state=5, max_iter=3, alpha=1e-2)
    direct, first, second = fits_cache_off_cold_warm("rufs", X, tmp_path, **kw)
    assert any(tmp_path.rglob("*.pkl"))
    assert np.array_equal(first.scores_, second.scores_)
    assert np.array_equal(direct.scores_, first.scores_)


def test_unseeded_start_is_not_cached(data, tmp_path, monkeypatch):
    # random_state=None or a RandomState must never be served from the cache (not a key).
    from ufsbench import cache

    calls = []
    monkeypatch.setattr(cache, "cached_call", lambda *a, **k: calls.append(1))
    rs = np.random.RandomState(0)
    make_selector("rufs", n_clusters=3, random_state=rs, max_iter=2,
                  memory=str(tmp_path)).fit(data.X)
    assert calls == []


# -- bitwise equivalence of the faster forms with the formulas they replace -----------------------
# RUFS amplifies round-off at small beta / alpha (one ulp in the residual norms moves coil20's
# scores by 1e-7 relative), so the stored grid results stay reproducible only if every
# intermediate is bitwise the same: these tests compare with array_equal, not allclose.

@pytest.mark.parametrize("x_order", ["C", "F"])
@pytest.mark.parametrize("f_order", ["C", "F"])
def test_residual_row_norms_bitwise_equal_the_plain_formula(x_order, f_order):
    from ufsbench.numerics.irls import smoothed_row_norms

    rng = np.random.default_rng(7)
    X = np.asarray(rng.standard_normal((53, 37)), order=x_order)
    G = rng.random((53, 4))
    F = np.asarray(rng.random((4, 37)), order=f_order)
    buf = np.full(X.shape, np.nan)
    got = residual_row_norms(np.ascontiguousarray(X), G, F, 1e-8, buf)
    assert np.array_equal(got, smoothed_row_norms(X - G @ F, 1e-8))
    assert np.array_equal(buf, X - G @ F)                        # the buffer holds the residual


@pytest.mark.parametrize("which", ["data", "wide_data"])          # d x d and n x n W-steps
@pytest.mark.parametrize("nu, alpha, beta", [(1.0, 1.0, 1.0), (1e-6, 1e6, 1e-6), (1e6, 1e-6, 1e6),
                                             (1e-2, 1e2, 1e-4)])
def test_fit_bitwise_equals_the_reference_with_the_same_products(request, which, nu, alpha, beta):
    X = request.getfixturevalue(which).X
    sel = make_selector("rufs", n_clusters=3, random_state=0, nu=nu, alpha=alpha, beta=beta,
                        max_iter=6).fit(X)
    with fit_blas_threads(sel):
        scores, history = reference_rufs_scores(sel, X, same_products=True)
    assert np.array_equal(sel.scores_, scores)
    assert sel.objective_history_ == history


@pytest.mark.parametrize("shape", [(210, 480), (480, 210)])          # n x n and d x d forms
def test_first_steps_read_back_for_another_setting_with_the_same_ratio(shape, tmp_path):
    # Everything before the first G-step is cached by beta / alpha: a fit at another nu and
    # (alpha, beta) with the same ratio adds no cache entry and equals its fit without the cache
    # bit for bit; another ratio adds exactly one entry (the start and the graph are shared).
    from ufsbench.datasets.synthetic import make_synthetic

    X = make_synthetic(n_samples=shape[0], n_features=shape[1], n_informative=6, n_clusters=3,
                       random_state=2).X
    kw = dict(n_clusters=3, random_state=5, max_iter=3)
    kw["memory"] = str(tmp_path)
    entries = lambda: len(list(tmp_path.rglob("output.pkl")))          # noqa: E731
    make_selector("rufs", nu=1.0, alpha=0.5, beta=0.25, **kw).fit(X)
    first = entries()
    warm = make_selector("rufs", nu=1e3, alpha=2.0, beta=1.0, **kw).fit(X)
    assert entries() == first
    make_selector("rufs", nu=1e3, alpha=1.0, beta=1.0, **kw).fit(X)
    assert entries() == first + 1
    kw["memory"] = None
    direct = make_selector("rufs", nu=1e3, alpha=2.0, beta=1.0, **kw).fit(X)
    assert np.array_equal(warm.scores_, direct.scores_)
    assert warm.objective_history_ == direct.objective_history_


# -- the released preset: Qian's projected L-BFGS blocks and the spectral 0/1 start ---------------
def test_given_kmeans_starts_fix_the_start_partition(data):
    from ufsbench.methods.rufs import start_labels
    from ufsbench.numerics.spectral import kmeans_from_sample_starts, spectral_clustering_labels

    starts = np.array([[0, 40, 80], [5, 45, 85], [10, 11, 12]])
    sel = make_selector("rufs", n_clusters=3, graph="adaptive")
    L = sel.graph_matrix(data.X)
    np.testing.assert_array_equal(start_labels(data.X, L, 3, "kmeans", starts),
                                  kmeans_from_sample_starts(data.X, starts))
    np.testing.assert_array_equal(start_labels(data.X, L, 3, "spectral", starts),
                                  spectral_clustering_labels(L, 3, starts))
    fit = make_selector("rufs", n_clusters=3, clustering="spectral", start="indicator",
                        init=starts, max_iter=2, tol=0.0).fit(data.X)
    np.testing.assert_array_equal(fit.init_labels_, spectral_clustering_labels(
        fit.graph_matrix(data.X), 3, starts))


@pytest.mark.parametrize("bad, match", [
    (dict(init=[[0, 1]]), "init must be sample indices"),
    (dict(init=[[0, 0, 1]]), "distinct samples"),
    (dict(init=[[0, 1, 900]]), "sample index 900"),
    (dict(gamma_f=1e-4), "only solver='lbfgs'"),
    (dict(mu=0.1), "only solver='lbfgs'"),
    (dict(solver="bfgs"), "'solver' parameter"),
    (dict(clustering="dbscan"), "'clustering' parameter")])
def test_bad_start_and_solver_parameters_are_refused(data, bad, match):
    with pytest.raises(UFSBenchError, match=match):
        make_selector("rufs", n_clusters=3, **bad).fit(data.X)


@pytest.fixture(scope="module")
def released(data):
    return make_selector("rufs", preset="released", n_clusters=3, random_state=0,
                         n_features_to_select=6).fit(data.X)


def test_released_fit_keeps_the_constraints_and_stops_by_its_test(released, data):
    assert released.converged_ and 1 <= released.n_iter_ < released.max_iter
    assert len(released.objective_history_) == released.n_iter_
    assert released.G_.min() >= 0 and released.F_.min() >= 0
    assert np.all(np.isfinite(released.scores_))
    assert set(np.unique(released.init_labels_)) == {0, 1, 2}


def test_released_blocks_do_not_increase_their_objectives(released, data):
    """W and G blocks: Armijo steps on their exact objectives (W: unconstrained, G: projected
    along a descent direction), so each ends no higher than it started."""
    import scipy.sparse as sp

    from ufsbench.numerics.gram_solve import solve_gram_plus_diag
    sel, X = released, data.X
    L = sp.csr_matrix(sel.nu * sel.graph_matrix(X))
    G, F = sel._start_factors(X, sel.graph_matrix(X))
    W = solve_gram_plus_diag(X, G, sel.beta / sel.alpha)

    def w_value(W):
        return sel.alpha * row_norms(X @ W - G).sum() + sel.beta * row_norms(W).sum()

    def g_value(G):
        gram = G.T @ G - np.eye(3)
        return (row_norms(G @ F - X).sum() + sel.mu * G.sum() + np.sum(G * (L @ G))
                + sel.alpha * row_norms(G - X @ W1).sum() + sel.zeta / 4 * np.sum(gram ** 2))

    W1, _ = sel._w_block(X, G, W)
    assert w_value(W1) <= w_value(W)
    G1, _ = sel._g_block(X, L, F, W1, G)
    assert g_value(G1) < g_value(G)


def test_lbfgs_block_ends_on_a_direction_without_an_acceptable_step():
    from ufsbench.methods.rufs import lbfgs_block

    def value(x):
        return (float("nan") if np.any(x != 1.0) else 0.0), None

    x, _ = lbfgs_block(np.ones(3), value, lambda x, state: np.ones(3), projected=False,
                       ftol=1e-3)
    np.testing.assert_array_equal(x, np.ones(3))


@pytest.mark.parametrize("density", [0.03, 1.0])
def test_neighbourhood_distances_bitwise_equal_the_full_sums(density):
    # Skipping the columns where a whole neighbourhood is zero drops only exact +0.0 terms of
    # the in-order sums: the same floats as the sums over every feature (as cdist), so the
    # local-learning graph is unchanged bit for bit on mostly-zero data.
    from ufsbench.methods.rufs import neighbourhood_sq_distances
    from ufsbench.numerics.graphs import nearest_neighbors, sq_distances_at

    rng = np.random.default_rng(11)
    X = rng.normal(size=(70, 300)) * (rng.random((70, 300)) < density)
    idx, _ = nearest_neighbors(X, 5)
    got = neighbourhood_sq_distances(X, idx)
    assert np.array_equal(got, sq_distances_at(X, idx[:, :, None], idx[:, None, :]))
