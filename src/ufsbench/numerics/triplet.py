"""Triplet-induced ordinal-locality weights (UFSOL Eq. (2)) and their Laplacian.

Guo, Guo, Kong & He, "Unsupervised Feature Selection with Ordinal Locality", ICME 2017, §3.1.
Shared by UFSOL (``ufsbench.methods.ufsol``) and any method with a "+ triplet" regulariser
(e.g. SOCFS + triplet, UFSOL Table 2). Import by module path; nothing is exported from
``ufsbench.numerics``.

The algebra, with d_ij = dist(x_i, x_j) and N_i the k nearest neighbours of x_i (x_i excluded):

* S^i_uv = d_iu - d_iv (antisymmetric), and Eq. (2) gives, for j in N_i,
  C_ij = sum_{u in N_i} S^i_uj = sum_{u in N_i} d_iu - k d_ij = k (mean_{u in N_i} d_iu - d_ij),
  so nearer-than-average neighbours get positive, farther ones negative weights and every row of
  the raw C sums to zero.
* Proposition 1, made exact: for every embedding Y the loss (1) equals
  sum_i sum_{u,v in N_i} S^i_uv [dist(y_i, y_u) - dist(y_i, y_v)] = -2 sum_ij C_ij dist(y_i, y_j),
  so maximising (1) is minimising sum_ij C_ij dist(y_i, y_j) (tested against brute force).

Normalisation (§4.3, "normalize each nonzero C_ij to [0,1] by row"; the paper does not say how).
We use **min-max over the k neighbour entries of each row**:

    C~_ij = (C_ij - min_{l in N_i} C_il) / (max_{l in N_i} C_il - min_{l in N_i} C_il)
          = (max_{l in N_i} d_il - d_ij) / (max_{l in N_i} d_il - min_{l in N_i} d_il).

Reasons: it is the only one of the candidate maps that actually lands in [0, 1] (the raw row has
both signs, so dividing by the row maximum leaves negative entries and dividing by max |C_ij|
gives [-1, 1]; neither makes L positive semi-definite, which is what §4.3 wants the normalisation
for); it is a positive affine map per row, so the ordinal information (the ranking of each
sample's neighbours) is kept exactly; and it no longer depends on k. Consequences, documented and
tested: the nearest neighbour of each row gets weight 1, the farthest of the k gets weight 0 (it
stays in N_i but carries no weight), and a row whose k neighbours are all equidistant (no ordinal
information, e.g. duplicated samples) gets weight 1 on all k neighbours (a plain kNN row).
Note that the normalised C no longer reproduces loss (1) exactly: per row,
sum_j C~_ij dist(y_i, y_j) = [sum_j C_ij dist(y_i, y_j) - min_l C_il sum_{j in N_i} dist(y_i, y_j)]
/ (max_l C_il - min_l C_il), i.e. loss (1) plus a (row-scaled) doublet locality term.

Distances: squared Euclidean by default, the metric §3.1 adopts "for simplicity" for the
projected pairs; the paper does not say which metric builds S^i on the input side, so
``metric="euclidean"`` is available too (the ranking N_i is the same, the weights differ).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ufsbench.numerics.graphs import knn_indices, nearest_neighbors, squared_distances


def _distances(X: np.ndarray, metric: str) -> np.ndarray:
    D = squared_distances(np.asarray(X, dtype=float))
    if metric == "sqeuclidean":
        return D
    if metric == "euclidean":
        return np.sqrt(D)
    raise ValueError(f"unknown metric {metric!r}; use 'sqeuclidean' or 'euclidean'")


def triplet_weights(X: np.ndarray, k: int = 5, normalize: bool = True,
                    metric: str = "sqeuclidean") -> np.ndarray:
    """The (n, n) triplet weighting matrix C of UFSOL Eq. (2); samples are the rows of X.

    Row i is non-zero only on N_i (the k nearest neighbours of x_i, itself excluded, ties broken by
    index as in :func:`ufsbench.numerics.graphs.knn_indices`). ``normalize=False`` returns the raw
    Eq. (2) weights C_ij = k (mean_{u in N_i} d_iu - d_ij); ``normalize=True`` (default) the §4.3
    per-row min-max normalisation to [0, 1] described in the module docstring. C is not symmetric.
    """
    idx, values = _triplet_entries(X, k, normalize, metric, large=False)
    n = idx.shape[0]
    C = np.zeros((n, n))
    C[np.arange(n)[:, None], idx] = values
    return C


def sparse_triplet_weights(X: np.ndarray, k: int = 5, normalize: bool = True,
                           metric: str = "sqeuclidean", large: bool | None = None) -> sp.csr_matrix:
    """:func:`triplet_weights` as a CSR matrix (n k stored entries), for large n.

    Neighbours and distances from :func:`ufsbench.numerics.graphs.nearest_neighbors` (``large``
    as there: None = by size), so no n x n matrix is formed on the large path.
    """
    idx, values = _triplet_entries(X, k, normalize, metric, large=large)
    n = idx.shape[0]
    return sp.csr_matrix((values.ravel(), (np.repeat(np.arange(n), k), idx.ravel())),
                         shape=(n, n))


def _triplet_entries(X, k, normalize, metric, large):
    """N_i (n, k) and the Eq. (2) weights on it (normalised per row or raw)."""
    if metric not in ("sqeuclidean", "euclidean"):
        raise ValueError(f"unknown metric {metric!r}; use 'sqeuclidean' or 'euclidean'")
    idx, d = nearest_neighbors(np.asarray(X, dtype=float), k, large=large)   # N_i, d_ij
    if metric == "euclidean":
        d = np.sqrt(d)
    if normalize:
        dmax = d.max(axis=1, keepdims=True)
        spread = dmax - d.min(axis=1, keepdims=True)
        tied = spread[:, 0] <= 1e-12 * np.maximum(dmax[:, 0], 1.0)
        values = np.ones_like(d)
        values[~tied] = (dmax[~tied] - d[~tied]) / spread[~tied]
    else:
        values = d.sum(axis=1, keepdims=True) - k * d        # Eq. (2): sum_u S^i_uj
    return idx, values


def triplet_loss(Y: np.ndarray, X: np.ndarray, k: int = 5, metric: str = "sqeuclidean") -> float:
    """Brute-force value of the ordinal-locality loss (1) (to be maximised), samples as rows.

    sum_i sum_{u in N_i} sum_{v in N_i} S^i_uv [dist(y_i, y_u) - dist(y_i, y_v)], with N_i and
    S^i from X and the same ``metric`` on both sides. O(n k^2); a reference for tests.
    """
    DX = _distances(X, metric)
    DY = _distances(Y, metric)
    idx = knn_indices(DX, k)
    total = 0.0
    for i in range(DX.shape[0]):
        for u in idx[i]:
            for v in idx[i]:
                total += (DX[i, u] - DX[i, v]) * (DY[i, u] - DY[i, v])
    return float(total)


def ordinal_laplacian(C: np.ndarray) -> np.ndarray:
    """L = D - (C + C^T)/2 with D_ii = sum_j (C_ij + C_ji)/2 (UFSOL §3.1).

    Tr(Y^T L Y) = (1/2) sum_ij C_ij ||y_i - y_j||^2 for Y with samples as rows. L is symmetric;
    it is positive semi-definite whenever C >= 0 (e.g. the normalised triplet weights), and the
    diagonal of C does not matter. A ``scipy.sparse`` C gives a sparse (CSR) L.
    """
    if sp.issparse(C):
        Cs = sp.csr_matrix(0.5 * (C + C.T), dtype=float)
        return sp.csr_matrix(sp.diags(np.asarray(Cs.sum(axis=1)).ravel()) - Cs)
    C = np.asarray(C, dtype=float)
    Cs = 0.5 * (C + C.T)
    return np.diag(Cs.sum(axis=1)) - Cs
