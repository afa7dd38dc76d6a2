"""The adaptive-neighbour similarity graph of Nie, Wang & Huang ("Clustering and projected clustering
with adaptive neighbors", KDD 2014), used as the prior graph S of the optimal-graph methods and
as the graph of the authors' NDFS and RUFS code.

Row i solves min_{s_i in simplex} sum_j d_ij s_ij + gamma_i ||s_i||^2 with gamma_i chosen so that
s_i has exactly k non-zeros; the closed form (KDD 2014, Eq. (17)-(20); SOGFS Eq. (26)) is

    s_ij = (d_{i,k+1} - d_ij) / (k d_{i,k+1} - sum_{t<=k} d_it)   for the k nearest j, else 0,

with d_ij the squared Euclidean distances sorted ascending per row (the sample itself excluded).
:func:`adaptive_weights` is that formula, once; :func:`adaptive_neighbor_graph` applies it to
an n x n distance matrix (row-stochastic, not symmetric),
:func:`adaptive_neighbor_graph_of_samples` to the samples themselves (the same graph without
the n x n distances on large n) and :func:`adaptive_affinity` too ((A + A^T) / 2, sparse).
Import them by their module path (``from ufsbench.numerics.adaptive_neighbors import ...``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ufsbench.numerics.graphs import knn_indices, nearest_neighbors, squared_distances


def adaptive_weights(dist: np.ndarray, k: int) -> np.ndarray:
    """The closed-form weights (n, k) from each sample's k + 1 nearest squared distances.

    Parameters
    ----------
    dist : ndarray (n, >= k + 1)
        Squared distances to the nearest samples, ascending per row (the sample itself
        excluded); columns after the (k + 1)-th are not read.
    k : int
        Neighbours per row.

    Returns
    -------
    ndarray (n, k)
        (d_{k+1} - d_j) / (k d_{k+1} - sum_{t<=k} d_t); a row whose k + 1 distances are all
        equal (zero denominator, up to 1e-12 relative) gets the uniform weights 1/k.
    """
    d_k, d_next = dist[:, :k], dist[:, k:k + 1]
    denom = k * d_next - d_k.sum(axis=1, keepdims=True)
    flat = denom <= 1e-12 * np.maximum(np.abs(d_next), 1e-300)
    return np.where(flat, 1.0 / k, (d_next - d_k) / np.where(flat, 1.0, denom))


def adaptive_neighbor_graph(distances: np.ndarray, k: int) -> np.ndarray:
    """Row-stochastic (n, n) graph with k non-zeros per row from squared distances (n, n).

    Not symmetric (symmetrise with (S + S^T) / 2 when a Laplacian is needed). Neighbours and ties
    follow :func:`knn_indices` (stable, by index). With k >= n - 1 every other sample is a
    neighbour and d_{k+1} is taken as the largest distance plus 1.
    """
    n = distances.shape[0]
    idx = knn_indices(distances, min(k + 1, n - 1))
    rows = np.arange(n)[:, None]
    d_sorted = distances[rows, idx]
    if idx.shape[1] <= k:            # n - 1 <= k: every other sample is a neighbour
        k = idx.shape[1]
        nbrs, d_sorted = idx, np.hstack([d_sorted, d_sorted[:, -1:] + 1.0])
    else:
        nbrs = idx[:, :k]
    S = np.zeros((n, n))
    S[rows, nbrs] = adaptive_weights(d_sorted, k)
    return S


def adaptive_neighbor_graph_of_samples(X: np.ndarray, k: int,
                                       large: bool | None = None) -> np.ndarray:
    """``adaptive_neighbor_graph(squared_distances(X), k)`` (row-stochastic, n x n) without the
    n x n distance matrix where the samples are many.

    Neighbours and distances come from :func:`ufsbench.numerics.graphs.nearest_neighbors`:
    below ``SPARSE_MIN_SAMPLES`` samples its dense path, the same bits as the n x n form; from
    there on its blockwise search (cdist's distances, the same as ``squared_distances`` below
    ``GRAM_FORM_MIN_FEATURES`` features). With k >= n - 1 the n x n form is used.
    """
    n = X.shape[0]
    if k + 1 > n - 1:
        return adaptive_neighbor_graph(squared_distances(X), k)
    idx, weights = _adaptive_rows(X, k, large)
    S = np.zeros((n, n))
    S[np.arange(n)[:, None], idx] = weights
    return S


def _adaptive_rows(X: np.ndarray, k: int, large: bool | None) -> tuple[np.ndarray, np.ndarray]:
    """(neighbours (n, k), their closed-form weights (n, k)) of every sample; k + 1 <= n - 1."""
    idx, dist = nearest_neighbors(X, k + 1, large=large)
    return idx[:, :k], adaptive_weights(dist, k)


def adaptive_affinity(X: np.ndarray, k: int = 5, large: bool | None = None) -> sp.csr_matrix:
    """(A + A^T) / 2 of the adaptive-neighbour graph A on the rows of X, as a CSR matrix.

    Neighbours and distances come from :func:`ufsbench.numerics.graphs.nearest_neighbors`
    (``large``: None chooses the dense or the blockwise search by size, True / False forces
    one); on the dense path A is ``adaptive_neighbor_graph(squared_distances(X), k)``. Needs
    k + 1 <= n - 1.
    """
    n = X.shape[0]
    idx, weights = _adaptive_rows(X, k, large)
    A = sp.csr_matrix((weights.ravel(), (np.repeat(np.arange(n), k), idx.ravel())),
                      shape=(n, n))
    return sp.csr_matrix(0.5 * (A + A.T))
