"""Graph numerics: distances, kNN graphs and Laplacians, and on large n the blockwise neighbour
search and sparse graphs, which must equal the dense forms."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from ufsbench.numerics import graphs
from ufsbench.numerics.graphs import (
    GRAM_FORM_MIN_FEATURES,
    connected_components_count,
    knn_graph,
    knn_indices,
    knn_search,
    laplacian,
    nearest_neighbors,
    sparse_knn_graph,
    squared_distances,
)
from ufsbench.testing import peak_traced_bytes


def _datasets():
    rng = np.random.default_rng(0)
    return {
        "gaussian": rng.standard_normal((150, 12)),
        "ties": np.round(rng.standard_normal((150, 3)), 1),           # many equal distances
        "duplicates": np.vstack([np.ones((8, 5)), rng.standard_normal((60, 5))]),
        "offset_wide": rng.standard_normal((80, 600)) + 30.0,          # Gram form of the dense path
    }


@pytest.mark.parametrize("name", list(_datasets()))
def test_knn_search_equals_dense_cdist_neighbours(name):
    X = _datasets()[name]
    D = cdist(X, X, metric="sqeuclidean")
    idx, dist = knn_search(X, 5, block_cells=X.shape[0] * 7)         # several small blocks
    np.testing.assert_array_equal(idx, knn_indices(D, 5))           # ties by index, as dense
    np.testing.assert_array_equal(dist, np.take_along_axis(D, idx, axis=1))   # bitwise cdist


@pytest.mark.parametrize("name", list(_datasets()))
@pytest.mark.parametrize("k", [1, 5, 40])
def test_knn_indices_are_the_first_k_of_a_stable_sort(name, k):
    """The partitioned search keeps the full sort's indices, ties by index included: on rounded
    data and duplicated samples ties cross the candidate cut and those rows are sorted whole."""
    X = _datasets()[name]
    D = cdist(X, X, metric="sqeuclidean")
    full = D.copy()
    np.fill_diagonal(full, np.inf)
    expected = np.argsort(full, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(knn_indices(D, k), expected)


def test_knn_indices_resolve_ties_across_the_candidate_cut():
    # Integer distances: every row has dozens of entries equal to its k-th smallest.
    D = np.random.default_rng(1).integers(0, 4, size=(120, 120)).astype(float)
    D = D + D.T
    full = D.copy()
    np.fill_diagonal(full, np.inf)
    for k in (3, 10):
        np.testing.assert_array_equal(knn_indices(D, k),
                                      np.argsort(full, axis=1, kind="stable")[:, :k])


def test_knn_search_falls_back_when_candidates_are_not_enough():
    # All samples equidistant from sample 0's neighbourhood boundary: extra=0 leaves no margin,
    # so rows must be redone exactly and still match the dense answer.
    X = np.vstack([np.zeros((1, 2)), np.eye(2), -np.eye(2), np.ones((3, 2)) * 5])
    idx, _ = knn_search(X, 2, extra=0)
    np.testing.assert_array_equal(idx, knn_indices(cdist(X, X, "sqeuclidean"), 2))


def test_nearest_neighbors_small_path_is_the_dense_one():
    X = _datasets()["gaussian"]
    D = squared_distances(X)
    idx, dist = nearest_neighbors(X, 4, large=False)
    np.testing.assert_array_equal(idx, knn_indices(D, 4))
    np.testing.assert_array_equal(dist, np.take_along_axis(D, idx, axis=1))


@pytest.mark.parametrize("weight", ["binary", "heat", "cosine"])
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("sigma", [None, 3.0])
def test_sparse_knn_graph_equals_dense_graph(weight, symmetric, sigma):
    X = _datasets()["duplicates"]
    dense = knn_graph(X, 5, weight=weight, sigma=sigma, symmetric=symmetric)
    for large in (False, True):
        S = sparse_knn_graph(X, 5, weight=weight, sigma=sigma, symmetric=symmetric, large=large)
        assert sp.issparse(S)
        np.testing.assert_allclose(S.toarray(), dense, atol=1e-14)


def test_knn_graph_large_path_and_sparse_laplacian(monkeypatch):
    X = _datasets()["gaussian"]
    dense = knn_graph(X, 5, weight="heat", sigma=None)
    monkeypatch.setattr(graphs, "SPARSE_MIN_SAMPLES", 10)
    np.testing.assert_allclose(knn_graph(X, 5, weight="heat", sigma=None), dense, atol=1e-14)
    S = sparse_knn_graph(X, 5, weight="heat", sigma=None)
    for normalized in (False, True):
        L = laplacian(S, normalized=normalized)
        assert sp.issparse(L)
        np.testing.assert_allclose(L.toarray(), laplacian(dense, normalized=normalized),
                                   atol=1e-14)
    assert connected_components_count(S) == connected_components_count(dense)


def test_knn_search_memory_stays_below_an_n_by_n_matrix():
    n = 3000
    X = np.random.default_rng(1).standard_normal((n, 20))
    _, peak = peak_traced_bytes(lambda: knn_search(X, 5))
    assert peak < 8 * n * n / 2                       # one float64 n x n matrix: 72 MB


def test_sparse_eigh_handles_multiple_components_like_dense_eigh():
    # Three components (one large enough for Lanczos): eigenvalue 0 of L is triple and 1 of the
    # deflated affinity double; the sparse solver must return the dense invariant subspaces.
    from ufsbench.numerics.linalg import eigh_smallest
    from ufsbench.numerics.spectral import generalized_spectral_embedding, sparse_eigh

    rng = np.random.default_rng(3)
    X = np.vstack([rng.standard_normal((260, 3)), rng.standard_normal((30, 3)) + 100,
                   rng.standard_normal((20, 3)) - 100])
    S = sparse_knn_graph(X, 5, weight="heat", sigma=None)
    assert connected_components_count(S) == 3
    L = laplacian(S, normalized=True)
    vals, vecs = sparse_eigh(L, 4, "SA")
    ref_vals, ref_vecs = eigh_smallest(L.toarray(), 4)
    np.testing.assert_allclose(vals, ref_vals, atol=1e-9)
    np.testing.assert_allclose(vecs @ vecs.T, ref_vecs @ ref_vecs.T, atol=1e-7)   # same span
    Y, lam = generalized_spectral_embedding(S, 3)
    Yd, lamd = generalized_spectral_embedding(S.toarray(), 3)
    np.testing.assert_allclose(lam, lamd, atol=1e-9)
    D = np.asarray(S.sum(axis=1)).ravel()
    np.testing.assert_allclose((Y * D[:, None]).T @ Y, np.eye(3), atol=1e-8)      # Y^T D Y = I
    np.testing.assert_allclose(Y.T @ D, 0.0, atol=1e-8)                          # trivial dropped


@pytest.mark.parametrize("d", [5, GRAM_FORM_MIN_FEATURES + 10])
def test_squared_distances_match_cdist_on_both_paths(d):
    rng = np.random.default_rng(0)
    X = 1e3 + 50 * rng.random((40, d))  # far from the origin: the Gram form must centre
    Y = 1e3 + 50 * rng.random((7, d))
    D = squared_distances(X)
    np.testing.assert_allclose(D, cdist(X, X, "sqeuclidean"), rtol=1e-10, atol=1e-8)
    assert np.all(np.diag(D) == 0) and np.array_equal(D, D.T)
    np.testing.assert_allclose(squared_distances(X, Y), cdist(X, Y, "sqeuclidean"), rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_squared_distances_below_the_gram_form_are_cdists_bits(seed):
    """Below GRAM_FORM_MIN_FEATURES the distances of X to itself are cdist's exactly (each pair
    computed once, by the same loop): ties and duplicated rows break the same way."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 120)), int(rng.integers(1, GRAM_FORM_MIN_FEATURES))
    X = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-4, 4)
    X[rng.integers(0, n, size=n // 3)] = X[0]                           # duplicated rows
    if seed % 2:
        X = np.round(X, 1)                                              # many exact ties
    assert np.array_equal(squared_distances(X), cdist(X, X, "sqeuclidean"))


def test_knn_graph_is_symmetric_binary_with_k_neighbours():
    X = np.arange(10.0)[:, None]  # on a line: the 2 nearest of 0 are 1 and 2
    S = knn_graph(X, k=2, weight="binary")
    assert np.array_equal(S, S.T) and set(np.unique(S)) == {0.0, 1.0}
    assert np.flatnonzero(S[0]).tolist() == [1, 2]
    assert np.all(S.sum(axis=1) >= 2) and np.all(np.diag(S) == 0)


def test_laplacian_is_psd_with_constant_null_vector():
    S = knn_graph(np.random.default_rng(1).random((30, 4)), k=3, weight="heat", sigma=None)
    L = laplacian(S)
    np.testing.assert_allclose(L @ np.ones(30), 0, atol=1e-12)
    assert np.linalg.eigvalsh(L).min() > -1e-10
    Ln = laplacian(S, normalized=True)
    assert np.linalg.eigvalsh(Ln).max() <= 2 + 1e-10


def test_gram_squared_distances_are_exactly_symmetric_with_a_zero_diagonal():
    from ufsbench.numerics.graphs import gram_squared_distances

    rng = np.random.default_rng(5)
    Z = rng.standard_normal((50, 7)) + 100.0                 # far from the origin: centred first
    D = gram_squared_distances(Z)
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_array_equal(np.diag(D), 0.0)
    assert D.min() >= 0
    # the Gram form's round-off is ~1e-16 of the squared (centred) row norms
    np.testing.assert_allclose(D, cdist(Z, Z, "sqeuclidean"), rtol=1e-10, atol=1e-11)
