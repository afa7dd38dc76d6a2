"""Tests of MCFS (Cai, Zhang & He, KDD 2010): embedding, cardinality, planted features."""

import numpy as np
import pytest

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.mcfs import sparse_spectral_coefficients
from ufsbench.numerics import knn_graph
from ufsbench.numerics.spectral import generalized_spectral_embedding


@pytest.fixture(scope="module")
def data():
    # separation 2: the kNN graph has two components, so the trivial eigenvalue 0 is double and
    # the deflation of the constant vector is exercised; the other eigenvalues are distinct.
    return make_synthetic(n_samples=90, n_features=60, n_informative=6, n_clusters=3,
                          separation=2.0, random_state=0)


@pytest.fixture(scope="module")
def fitted(data):
    return make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(data.X)


def test_embedding_is_generalised_eigenbasis(data):
    S = knn_graph(data.X, k=5, weight="heat", sigma=None)
    D = np.diag(S.sum(axis=1))
    Y, lam = generalized_spectral_embedding(S, 3)
    assert np.allclose(Y.T @ D @ Y, np.eye(3), atol=1e-10)          # Y^T D Y = I
    assert np.allclose(Y.T @ D @ np.ones(len(Y)), 0.0, atol=1e-10)  # trivial vector dropped
    assert np.allclose((D - S) @ Y, D @ Y * lam, atol=1e-10)         # L Y = D Y Lambda
    assert np.all(lam > -1e-10) and np.all(np.diff(lam) >= -1e-12)


def test_exact_cardinality_and_nonnegative_scores(fitted, data):
    assert np.all(fitted.cardinality_ == 6)
    assert np.all(np.count_nonzero(fitted.coef_, axis=0) == 6)
    assert np.allclose(np.linalg.norm(fitted.coef_, axis=0), 1.0)
    assert np.all(fitted.scores_ >= 0)
    assert np.array_equal(fitted.scores_, np.abs(fitted.coef_).max(axis=1))
    assert fitted.support_.sum() == 6


def test_cardinality_above_n_samples_reachable_with_ridge():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 50))
    Y = rng.standard_normal((20, 2))
    A, reached = sparse_spectral_coefficients(X, Y, cardinality=30, ridge=1e-3)
    assert np.all(reached == 30)
    assert np.all(np.count_nonzero(A, axis=0) == 30)


def test_feature_equal_to_eigenvector_has_top_score():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 25))
    Y = rng.standard_normal((40, 2))
    X[:, 7] = -3.0 * Y[:, 0]           # negative multiple: the score must use |coef|
    A, _ = sparse_spectral_coefficients(X, Y, cardinality=5)
    scores = np.abs(A).max(axis=1)
    assert np.argmax(scores) == 7
    assert A[7, 0] < 0


def test_planted_features_selected(fitted, data):
    # The 2 cluster eigenvectors regress on the planted features only; with K = c = 3 the third
    # (within-cluster) eigenvector adds noise features, so the planted ones fill the top 10.
    sel = make_selector("mcfs", n_clusters=3, n_features_to_select=6, n_eigenvectors=2)
    assert set(np.flatnonzero(sel.fit(data.X).support_)) == set(data.informative)
    sel = make_selector("mcfs", n_clusters=3, n_features_to_select=10).fit(data.X)
    assert set(data.informative) <= set(np.flatnonzero(sel.support_))


def test_deterministic_and_feature_permutation_equivariant():
    # A connected graph with distinct eigenvalues (the embedding is then unique up to sign).
    X = make_synthetic(n_samples=90, n_features=40, n_informative=6, n_clusters=3,
                       separation=1.5, random_state=0).X
    a = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(X)
    b = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(X)
    assert np.array_equal(a.scores_, b.scores_)
    assert np.min(np.diff(a.eigenvalues_)) > 1e-3
    perm = np.random.default_rng(3).permutation(X.shape[1])
    c = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(X[:, perm])
    assert np.allclose(c.scores_, a.scores_[perm], atol=1e-8)


def test_refit_per_count_is_subset_kind(data):
    sel = make_selector("mcfs", n_clusters=3, n_features_to_select=10).fit(data.X)
    assert sel.selection_kind == "subset"
    assert len(sel.top_features(10)) == 10
    with pytest.raises(UFSBenchError):
        sel.top_features(5)


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="n_eigenvectors"):
        make_selector("mcfs", n_eigenvectors=500).fit(data.X)
    with pytest.raises(UFSBenchError, match="ridge"):
        make_selector("mcfs", ridge=-1.0).fit(data.X)


@pytest.mark.parametrize("n, d, K, h", [(40, 150, 3, 10), (30, 200, 2, 45), (60, 25, 3, 8)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_implicit_lars_equals_gram_form(n, d, K, h, seed):
    # The implicit-Gram LARS (used for d > n) against scikit-learn on the formed d x d Gram (the
    # form MCFS used before, still used for d <= n): same supports, coefficients to round-off,
    # same selection; d > n with h < n and h > n (the ridge lets the path pass n), and d < n.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, K))
    A_gram, r_gram = sparse_spectral_coefficients(X, Y, cardinality=h, solver="gram")
    A_impl, r_impl = sparse_spectral_coefficients(X, Y, cardinality=h, solver="implicit")
    assert np.array_equal(r_gram, r_impl)
    assert np.array_equal(A_gram != 0, A_impl != 0)
    assert np.max(np.abs(A_gram - A_impl)) < 1e-8
    top = [np.sort(np.argsort(-np.abs(A).max(axis=1), kind="stable")[:h]) for A in (A_gram, A_impl)]
    assert np.array_equal(*top)


def test_selector_same_selection_with_either_solver(monkeypatch):
    # d > n: the selector takes the implicit path ("auto"); forcing the Gram form changes nothing.
    X = make_synthetic(n_samples=40, n_features=300, n_informative=6, n_clusters=3,
                       separation=2.0, random_state=1).X
    fast = make_selector("mcfs", n_clusters=3, n_features_to_select=12).fit(X)
    import ufsbench.methods.mcfs as mcfs_module

    defaults = list(mcfs_module.sparse_spectral_coefficients.__defaults__)
    defaults[-1] = "gram"
    monkeypatch.setattr(mcfs_module.sparse_spectral_coefficients, "__defaults__", tuple(defaults))
    slow = make_selector("mcfs", n_clusters=3, n_features_to_select=12).fit(X)
    assert np.array_equal(fast.support_, slow.support_)
    assert np.max(np.abs(fast.coef_ - slow.coef_)) < 1e-8


def test_unknown_solver():
    with pytest.raises(ValueError, match="solver"):
        sparse_spectral_coefficients(np.eye(3), np.ones((3, 1)), 1, solver="dense")


def test_sparse_embedding_equals_dense_embedding(data):
    # Large n: sparse graph + Lanczos (implicit deflation) gives the dense eigenvectors.
    from ufsbench.numerics.graphs import sparse_knn_graph

    S = knn_graph(data.X, k=5, weight="heat", sigma=None)
    Y, lam = generalized_spectral_embedding(S, 3)
    Ys, lams = generalized_spectral_embedding(
        sparse_knn_graph(data.X, k=5, weight="heat", sigma=None, large=True), 3)
    np.testing.assert_allclose(lams, lam, atol=1e-9)
    np.testing.assert_allclose(Ys, Y, atol=1e-7)


def test_large_n_path_selects_the_same_features(data, monkeypatch):
    from ufsbench.numerics import graphs

    dense = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(data.X)
    monkeypatch.setattr(graphs, "SPARSE_MIN_SAMPLES", 2)
    large = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(data.X)
    assert np.array_equal(dense.support_, large.support_)
    np.testing.assert_allclose(large.scores_, dense.scores_, atol=1e-7)
