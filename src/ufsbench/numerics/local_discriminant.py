"""Local discriminant Laplacians from a sample Gram or kernel matrix (UDFS-style, kernelised).

For each sample i, its local set N_i is i and its k nearest neighbours (k + 1 samples). With
H = I - 11^T/(k+1) the local centring matrix and K_i the (k+1) x (k+1) block of a Gram/kernel
matrix K on N_i, the local discriminant model contributes

    B_i = H (H K_i H + lam I)^{-1} H,   L = sum_i S_i B_i S_i^T   (n x n),

with S_i selecting the rows of N_i (Yang et al., IJCAI 2011, for the linear kernel K = X X^T;
any positive semi-definite kernel gives the kernelised version). L is symmetric PSD and L 1 = 0.
Import it by its module path.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ufsbench.numerics.linalg import sym


def local_discriminant_laplacian(K: np.ndarray, neighbours: np.ndarray, lam: float) -> np.ndarray:
    """L = sum_i S_i H (H K_i H + lam I)^{-1} H S_i^T from an (n, n) PSD kernel matrix K.

    ``neighbours`` (n, k) holds each sample's k nearest neighbours (e.g. ``knn_indices``); the
    sample itself is prepended to form its local set. ``lam`` > 0 is the local ridge.
    """
    idx = _local_sets(neighbours)
    blocks = _local_blocks(K[idx[:, :, None], idx[:, None, :]], lam)
    n = idx.shape[0]
    L = np.zeros((n, n))
    np.add.at(L, (idx[:, :, None], idx[:, None, :]), blocks)
    return sym(L)


def linear_local_discriminant_laplacian(X: np.ndarray, neighbours: np.ndarray,
                                        lam: float) -> sp.csr_matrix:
    """:func:`local_discriminant_laplacian` for the linear kernel K = X X^T, as a CSR matrix.

    Only the (k+1) x (k+1) local Gram blocks X_{N_i} X_{N_i}^T are formed (never the n x n
    X X^T), and L has at most n (k+1)^2 stored entries: the form for large n (UDFS on USPS).
    The local sets' rows are gathered ``LOCAL_GATHER_CELLS`` entries at a time from a row-major
    copy of X (all at once they would be 465 MB on BASEHOCK, read from memory instead of the
    cache); each block is the same einsum over the same rows, so the result does not depend on
    the chunking.
    """
    idx = _local_sets(neighbours)
    n, m = idx.shape
    X = np.ascontiguousarray(X)
    rows = max(1, LOCAL_GATHER_CELLS // (m * max(X.shape[1], 1)))
    local = np.empty((n, m, m))
    for start in range(0, n, rows):
        Xi = X[idx[start:start + rows]]                                      # (rows, k+1, d)
        local[start:start + rows] = np.einsum("nid,njd->nij", Xi, Xi)
    return _assembled(idx, _local_blocks(local, lam))


#: Entries of the (rows, k+1, d) local sets gathered at once by
#: :func:`linear_local_discriminant_laplacian` (8 MB of float64: they stay in cache).
LOCAL_GATHER_CELLS = 1 << 20


#: Entries of the (rows, k+1, k+1, d) differences formed at once by
#: :func:`heat_local_discriminant_laplacian` (32 MB of float64).
LOCAL_DIFFERENCE_CELLS = 1 << 22


def heat_local_discriminant_laplacian(X: np.ndarray, neighbours: np.ndarray, sigma: float,
                                      lam: float) -> sp.csr_matrix:
    """:func:`local_discriminant_laplacian` for the heat kernel exp(-||x_a - x_b||^2 / sigma),
    as a CSR matrix: the kernel only on each local set, from the squared differences of its
    k + 1 samples (never the n x n distances), at most n (k+1)^2 stored entries."""
    idx = _local_sets(neighbours)
    n, m = idx.shape
    rows = max(1, LOCAL_DIFFERENCE_CELLS // (m * m * X.shape[1]))
    local = np.empty((n, m, m))
    for start in range(0, n, rows):
        Xi = X[idx[start:start + rows]]                                      # (rows, k+1, d)
        diff = Xi[:, :, None, :] - Xi[:, None, :, :]
        local[start:start + rows] = np.einsum("nijd,nijd->nij", diff, diff)
    return _assembled(idx, _local_blocks(np.exp(-local / sigma), lam))


def _assembled(idx: np.ndarray, blocks: np.ndarray) -> sp.csr_matrix:
    """sum_i S_i B_i S_i^T as a CSR matrix, exactly symmetric."""
    n, m = idx.shape
    rows = np.broadcast_to(idx[:, :, None], (n, m, m)).ravel()
    cols = np.broadcast_to(idx[:, None, :], (n, m, m)).ravel()
    L = sp.csr_matrix((blocks.ravel(), (rows, cols)), shape=(n, n))          # sums duplicates
    return sp.csr_matrix(0.5 * (L + L.T))


def _local_sets(neighbours: np.ndarray) -> np.ndarray:
    """(n, k+1): each sample followed by its k neighbours."""
    n = neighbours.shape[0]
    return np.hstack([np.arange(n)[:, None], neighbours])


def _local_blocks(local: np.ndarray, lam: float) -> np.ndarray:
    """H (H K_i H + lam I)^{-1} H for every local kernel block K_i (n, k+1, k+1)."""
    m = local.shape[1]
    H = np.eye(m) - 1.0 / m
    centred = H @ local @ H
    vals, vecs = np.linalg.eigh(0.5 * (centred + centred.transpose(0, 2, 1)))
    inv = np.einsum("nij,nj,nkj->nik", vecs, 1.0 / (np.maximum(vals, 0.0) + lam), vecs)
    return H @ inv @ H
