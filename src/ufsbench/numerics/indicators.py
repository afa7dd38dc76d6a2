"""Cluster indicators: starts from K-means on the data (RUFS, EUFS, SCFS; NDFS and RSFS through
``spectral.spectral_soft_indicator``), and the products of a scaled indicator with the data or
with itself (UFSOL's X^T V^T V X).

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state


def kmeans_scaled_indicator(X: np.ndarray, n_clusters: int, random_state=None, n_init: int = 10,
                            offset: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(Y, labels): K-means on the rows of X and its scaled indicator Y_ij = [l_i = j] / sqrt(n_j).

    Y has orthonormal columns (Y^T Y = I), the usual relaxed indicator of orthogonal NMF models.
    K-means uses k-means++ with ``n_init`` restarts seeded from ``random_state``. With
    ``offset > 0``, ``offset`` times the mean non-zero entry is added to every entry and the
    columns are rescaled to unit norm: a strictly positive start, which multiplicative updates
    need (an entry that starts at 0 stays 0, freezing the memberships); Y^T Y = I then holds only
    on the diagonal.
    """
    rng = check_random_state(random_state)
    n = X.shape[0]
    labels = KMeans(n_clusters=n_clusters, init="k-means++", n_init=n_init,
                    random_state=rng.randint(np.iinfo(np.int32).max)).fit_predict(X)
    Y = np.zeros((n, n_clusters))
    Y[np.arange(n), labels] = 1.0
    sizes = Y.sum(axis=0)
    Y[:, sizes > 0] /= np.sqrt(sizes[sizes > 0])
    if offset > 0:
        Y += offset * Y[Y > 0].mean()
        Y /= np.linalg.norm(Y, axis=0)
    return Y, labels


def indicator_projection(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """V X (c x d) for the scaled indicator V of ``labels``: row k = sum_{i in k} x_i / sqrt(n_k).

    So X^T V^T V X = (V X)^T (V X) without the n x n V^T V of :func:`indicator_gram`.
    """
    present, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    n = X.shape[0]
    V = sp.csr_matrix((1.0 / np.sqrt(counts)[inverse], (inverse, np.arange(n))),
                      shape=(len(present), n))                       # sparse V (c x n)
    return np.asarray(V @ X)


def indicator_gram(labels: np.ndarray) -> np.ndarray:
    """V^T V for the scaled indicator V_kj = 1/sqrt(n_k) [j in cluster k] (V >= 0, V V^T = I).

    (V^T V)_ij = 1/n_k when i and j are both in cluster k, else 0; empty clusters add nothing.
    """
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    same = inverse[:, None] == inverse[None, :]
    return np.where(same, 1.0 / counts[inverse][:, None], 0.0)
