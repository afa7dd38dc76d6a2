"""Fuzzy c-means (Bezdek 1981) as scikit-fuzzy's ``cmeans`` computes it, and the start that the
SCFS authors' code draws from it.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

#: The call of the SCFS authors' code: ``skfuzzy.cluster.cmeans(X.T, c, m=1.0005, error=1e-4,
#: maxiter=300)`` (fuzzifier, stop on ||U - U_prev||_F < error, iteration cap).
CMEANS_FUZZIFIER = 1.0005
CMEANS_ERROR = 1e-4
CMEANS_MAX_ITER = 300


def fuzzy_cmeans(X: np.ndarray, u0: np.ndarray, m: float = CMEANS_FUZZIFIER,
                 error: float = CMEANS_ERROR, max_iter: int = CMEANS_MAX_ITER) -> np.ndarray:
    """Fuzzy c-means memberships U (c x n, columns sum to 1) from the start ``u0`` (c x n).

    The steps of scikit-fuzzy's ``cmeans`` (Ross, Fuzzy Logic with Engineering Applications,
    eqs. 10.28-10.35): per iteration the columns of U are normalised and floored at machine
    epsilon, the centres are the U^m-weighted means of the samples, and U_ji is proportional to
    d_ji^(-2/(m-1)) for the Euclidean distances d_ji of sample i to centre j, evaluated as
    scikit-fuzzy does (distances scaled by their column maximum and minimum before the power,
    so that m close to 1, where the exponent is -4000, neither overflows nor underflows).

    Parameters
    ----------
    X : ndarray (n, d)
        Samples as rows.
    u0 : ndarray (c, n)
        Initial memberships (non-negative).
    m : float > 1, default ``CMEANS_FUZZIFIER``
        Fuzzifier.
    error, max_iter : float, int
        Stop when ||U - U_prev||_F < ``error`` or after ``max_iter`` iterations.

    Returns
    -------
    ndarray (c, n)
        The memberships after the last iteration.
    """
    tiny = np.finfo(np.float64).eps
    u = np.fmax(u0, tiny)
    for _ in range(int(max_iter)):
        previous = u
        um = np.fmax(previous / previous.sum(axis=0, keepdims=True), tiny) ** m
        centres = (um @ X) / um.sum(axis=1)[:, None]
        dist = np.fmax(cdist(X, centres).T, tiny)                  # c x n
        u = normalised_power_columns(dist, -2.0 / (m - 1.0))
        if np.linalg.norm(u - previous) < error:
            break
    return u


def normalised_power_columns(dist: np.ndarray, exponent: float) -> np.ndarray:
    """Columns of dist**exponent (exponent < 0) normalised to sum 1, without overflow: each
    column is scaled to [eps, 1] by its maximum, then to [1, 1/eps] by its minimum."""
    x = np.fmax(dist / dist.max(axis=0, keepdims=True), np.finfo(np.float64).eps)
    x = (x / x.min(axis=0, keepdims=True)) ** exponent
    return x / x.sum(axis=0, keepdims=True)


def cmeans_start(X: np.ndarray, n_clusters: int, rng: np.random.RandomState) -> np.ndarray:
    """G0 (n x c) of the SCFS authors' code: fuzzy c-means (:func:`fuzzy_cmeans`, its default
    settings) from u0 = uniform [0, 1) draws (``rng.rand(c, n)``, the draws
    ``np.random.seed(s); np.random.rand(c, n)`` make for ``rng = RandomState(s)``) with columns
    normalised, then G0_ij = U_ji / sqrt(sum_i U_ji)."""
    u0 = rng.rand(n_clusters, X.shape[0])
    U = fuzzy_cmeans(X, u0 / u0.sum(axis=0, keepdims=True))
    return (U / np.sqrt(U.sum(axis=1, keepdims=True))).T
