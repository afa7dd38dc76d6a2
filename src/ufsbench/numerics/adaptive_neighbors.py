"""The adaptive-neighbour similarity graph of Nie, Wang & Huang ("Clustering and projected clustering
with adaptive neighbors", KDD 2014), used as the prior graph S of the optimal-graph methods.

Row i solves min_{s_i in simplex} sum_j d_ij s_ij + gamma_i ||s_i||^2 with gamma_i chosen so that
s_i has exactly k non-zeros; the closed form (KDD 2014, Eq. (17)-(20); SOGFS Eq. (26)) is

    s_ij = (d_{i,k+1} - d_ij) / (k d_{i,k+1} - sum_{t<=k} d_it)   for the k nearest j, else 0,

with d_ij the squared Euclidean distances sorted ascending per row (the sample itself excluded).
Import it by its module path (``from ufsbench.numerics.adaptive_neighbors import ...``).
"""

from __future__ import annotations

import numpy as np

from ufsbench.numerics.graphs import knn_indices


def adaptive_neighbor_graph(distances: np.ndarray, k: int) -> np.ndarray:
    """Row-stochastic (n, n) graph with k non-zeros per row from squared distances (n, n).

    Not symmetric (symmetrise with (S + S^T) / 2 when a Laplacian is needed). Neighbours and ties
    follow :func:`knn_indices` (stable, by index). A row whose k+1 nearest distances are all equal
    (zero denominator) gets uniform weights 1/k on its k nearest neighbours.
    """
    n = distances.shape[0]
    idx = knn_indices(distances, min(k + 1, n - 1))
    rows = np.arange(n)[:, None]
    d_sorted = distances[rows, idx]
    if idx.shape[1] <= k:            # n - 1 <= k: every other sample is a neighbour
        d_kp1 = d_sorted[:, -1:] + 1.0
        nbrs, d_k = idx, d_sorted
        k = idx.shape[1]
    else:
        nbrs, d_k, d_kp1 = idx[:, :k], d_sorted[:, :k], d_sorted[:, k:k + 1]
    numer = d_kp1 - d_k
    denom = k * d_kp1 - d_k.sum(axis=1, keepdims=True)
    flat = denom[:, 0] <= 1e-12 * np.maximum(np.abs(d_kp1[:, 0]), 1e-300)
    weights = np.where(flat[:, None], 1.0 / k, numer / np.where(flat[:, None], 1.0, denom))
    S = np.zeros((n, n))
    S[rows, nbrs] = weights
    return S
