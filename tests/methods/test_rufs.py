"""Tests of RUFS (Qian & Zhai, IJCAI 2013), IRLS / split-multiplicative solver."""

import numpy as np
import pytest

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.rufs import local_learning_matrix, local_learning_weights


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
    with pytest.raises(UFSBenchError, match="alpha"):
        make_selector("rufs", n_clusters=3, alpha=0.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="graph"):
        make_selector("rufs", n_clusters=3, graph="heat").fit(data.X)


def test_large_n_fit_forms_no_n_by_n_array():
    import tracemalloc

    from ufsbench.datasets.synthetic import make_synthetic

    n = 3000
    X = make_synthetic(n_samples=n, n_features=20, n_informative=4, n_clusters=3,
                       random_state=0).X
    sel = make_selector("rufs", n_clusters=3, random_state=0, max_iter=2)
    tracemalloc.start()
    sel.fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 * n * n / 2                     # one float64 n x n array: 72 MB
