import numpy as np
import pytest

from ufsbench.numerics.adaptive_neighbors import (
    adaptive_affinity,
    adaptive_neighbor_graph,
    adaptive_neighbor_graph_of_samples,
    adaptive_weights,
)
from ufsbench.numerics.graphs import squared_distances
from ufsbench.numerics.linalg import project_simplex_rows


@pytest.fixture(scope="module")
def X():
    """90 samples in three Gaussian clusters (d = 60), rounded to one decimal: distance ties."""
    rng = np.random.default_rng(0)
    centres = 3.0 * rng.standard_normal((3, 60))
    return np.round(centres[np.arange(90) % 3] + rng.standard_normal((90, 60)), 1)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_each_row_is_the_simplex_projection_with_the_gamma_of_k_neighbours(X, k):
    # s_i = argmin_{s in simplex} ||s + d_i / (2 gamma_i)||^2, gamma_i = (k d_{k+1} - sum d) / 2
    D = squared_distances(X)
    S = adaptive_neighbor_graph(D, k)
    n = D.shape[0]
    off = ~np.eye(n, dtype=bool)
    d = D[off].reshape(n, n - 1)
    ds = np.sort(d, axis=1)
    gamma = 0.5 * (k * ds[:, k] - ds[:, :k].sum(axis=1))
    expected = project_simplex_rows(-d / (2.0 * gamma[:, None]))
    np.testing.assert_allclose(S[off].reshape(n, n - 1), expected, atol=1e-12)
    assert np.all(np.diag(S) == 0)
    assert np.all(np.count_nonzero(S, axis=1) == k)
    np.testing.assert_allclose(S.sum(axis=1), 1.0, rtol=1e-12)


def test_equal_distances_give_uniform_weights():
    dist = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])
    np.testing.assert_array_equal(adaptive_weights(dist, 2)[0], [0.5, 0.5])
    np.testing.assert_allclose(adaptive_weights(dist, 2)[1], [(4 - 1) / 5, (4 - 2) / 5])


def test_every_other_sample_is_a_neighbour_when_k_reaches_n():
    D = squared_distances(np.array([[0.0], [1.0], [3.0]]))
    S = adaptive_neighbor_graph(D, 5)
    assert np.count_nonzero(S) == 6
    np.testing.assert_allclose(S.sum(axis=1), 1.0)


def test_affinity_is_the_symmetrised_graph_on_both_neighbour_searches(X):
    A = adaptive_neighbor_graph(squared_distances(X), 5)
    dense = adaptive_affinity(X, 5).toarray()
    np.testing.assert_array_equal(dense, dense.T)
    np.testing.assert_allclose(dense, 0.5 * (A + A.T), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(adaptive_affinity(X, 5, large=True).toarray(), dense,
                               rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("k", [1, 5])
def test_graph_of_samples_is_the_graph_of_their_distances(X, k):
    """Bit for bit on both searches: the dense one is the n x n form's, and the blockwise one
    (large n) returns cdist's distances, which squared_distances also takes below
    GRAM_FORM_MIN_FEATURES features (d = 60 here), with the same ties by index."""
    S = adaptive_neighbor_graph(squared_distances(X), k)
    np.testing.assert_array_equal(adaptive_neighbor_graph_of_samples(X, k, large=False), S)
    np.testing.assert_array_equal(adaptive_neighbor_graph_of_samples(X, k, large=True), S)


def test_graph_of_samples_takes_every_other_sample_when_k_reaches_n():
    Z = np.array([[0.0], [1.0], [3.0]])
    np.testing.assert_array_equal(adaptive_neighbor_graph_of_samples(Z, 5),
                                  adaptive_neighbor_graph(squared_distances(Z), 5))
