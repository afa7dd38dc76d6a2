"""Laplacian Score (He, Cai & Niyogi, "Laplacian Score for Feature Selection", NIPS 2005).

================  ========================  =============================  =====================
setting           paper (as printed)        authors' code (as released)    our default
================  ========================  =============================  =====================
graph             kNN, exp(-d^2 / t),       constructW: kNN k = 5, heat    k = 5, heat,
                  "t a suitable constant"   kernel exp(-d^2 / (2 t^2)),    sigma = mean squared
                                            t = mean Euclidean distance    kNN distance
                                            over all pairs (self-pairs
                                            included)
symmetrisation    either direction          max(W, W^T), no self-loops     either direction
                                                                           (the same values)
cosine weights    --                        rows unit-normalised, cosine   ``weight="cosine"``
                                            on the kNN pairs (the header   (the same graph)
                                            example)
score             L_r, smaller is better    1 - L_r, larger is better      -L_r (the same order)
constant feature  --                        denominator 1e4 (score ~0)     lowest score
================  ========================  =============================  =====================

The ``released`` preset (``sigma="mean_distance"``) is the authors' default call; with
``weight="cosine"`` it is their header's example.
"""

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.methods.base import MEMORY_CONSTRAINT, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics.graphs import mean_distance, nearest_neighbors, sparse_knn_graph

#: The heat-kernel width rules ``sigma`` may name instead of a number.
WIDTH_RULES = ("mean_distance",)

#: Entries (n x block width) of one column block in :func:`laplacian_scores`: 32 K float64 =
#: 256 KB, so a block and its S-product stay in the L2 cache between the passes over it.
BLOCK_CELLS = 1 << 15


def laplacian_scores(X: np.ndarray, S: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(f~^T D f~, f~^T L f~) of every feature f = X[:, r] for the graph S, L = D - S.

    He et al. (2005), §3: D = diag(S 1), f~ = f - (f^T D 1 / 1^T D 1) 1 (Eq. 2's D-weighted
    centring). Column block by column block: each block is copied to a row-major buffer (data
    from .mat files is column-major, and scipy's CSR product strides through column-major data
    3-4x slower), centred in place, and used by the three passes below while it is in cache.
    Per column the arithmetic is that of the whole-matrix form (each column's sums run over the
    samples in order); only the D-weighted mean may differ in the last bit (BLAS gemv blocking).
    """
    degree = np.asarray(S.sum(axis=1)).ravel()
    total = max(degree.sum(), np.finfo(float).tiny)
    n, d = X.shape
    spread, smoothness = np.empty(d), np.empty(d)
    width = max(16, BLOCK_CELLS // n)
    for start in range(0, d, width):
        cols = slice(start, start + width)
        block = np.ascontiguousarray(X[:, cols])
        block -= (degree @ block) / total                          # f~ (Eq. 2)
        spread[cols] = np.einsum("i,ij,ij->j", degree, block, block)   # f~^T D f~
        # f~^T L f~ = f~^T D f~ - f~^T S f~: S has n k entries, a sparse product is O(n k w).
        smoothness[cols] = spread[cols] - np.einsum("ij,ij->j", block, S @ block)
    return spread, smoothness


def cosine_knn_graph(X: np.ndarray, k: int) -> sp.csr_matrix:
    """Cai's ``constructW`` with ``WeightMode = "Cosine"`` (``bSelfConnected = 0``), as CSR.

    The k nearest neighbours by Euclidean distance on X as given; edge weight the cosine of
    the two samples (rows normalised to unit length, a zero row stays zero); symmetrised by
    W = max(W, W^T), so an edge found from one end only keeps its weight when it is positive
    and vanishes when it is negative (the missing reverse entry counts as 0).
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    idx, _ = nearest_neighbors(X, k)
    norms = np.linalg.norm(X, axis=1)
    norms[norms == 0] = 1.0
    unit = X / norms[:, None]
    rows, cols = np.repeat(np.arange(n), idx.shape[1]), idx.ravel()
    values = np.einsum("ij,ij->i", unit[rows], unit[cols])
    directed = sp.csr_matrix((values, (rows, cols)), shape=(n, n))
    S = directed.maximum(directed.T).tocsr()
    S.eliminate_zeros()
    return S


@register("ls")
class LaplacianScore(UFSSelector):
    """Laplacian Score: features that best preserve the kNN graph's locality rank first.

    He et al. (2005), Eqs. (1)-(2) of §3: with S the k-NN heat-kernel graph, D its degree matrix and
    L = D - S, each feature f_r is centred in the D-weighted sense,
    f~_r = f_r - (f_r^T D 1 / 1^T D 1) 1, and scored L_r = f~_r^T L f~_r / f~_r^T D f~_r.
    Small L_r is good, so ``scores_ = -L_r``. A constant feature (f~^T D f~ = 0) carries no
    information and gets the lowest score.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the scores
        do not depend on it.
    n_clusters : int, default 2
        Unused (the scores need no cluster count).
    random_state : int, RandomState instance or None, default None
        Unused: the scores are deterministic and ties are ordered by feature index.
    k : int, default 5
        Neighbours of the kNN graph (the papers: 5).
    weight : {"heat", "binary", "cosine"}, default "heat"
        Edge weight: exp(-||x_i-x_j||^2 / sigma), 1 (the t -> infinity limit), or the cosine
        of the two samples (Cai's ``constructW`` "Cosine": :func:`cosine_knn_graph`).
    sigma : float, None or "mean_distance", default None
        Heat-kernel width. None: the mean squared kNN distance (sigma = 1 underflows every
        weight to 0 on raw pixel data). "mean_distance": Cai's ``constructW`` default,
        exp(-d^2 / (2 t^2)) with t the mean Euclidean distance over all n^2 pairs of samples,
        self-pairs included, i.e. sigma = 2 t^2 (``constructW`` estimates t from 3000 random
        samples when n > 3000; we take all pairs, the value that estimates).
    memory : None, str or joblib.Memory, default None
        Where to cache the kNN graph and the mean distance (they depend on X, k, weight and
        sigma only); None computes them on every fit.
    """

    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "k": POSITIVE_INT,
        "weight": [StrOptions({"heat", "binary", "cosine"})],
        "sigma": [Interval(Real, 0, None, closed="neither"), StrOptions(set(WIDTH_RULES)), None],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, k=5,
                 weight="heat", sigma=None, memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.k = k
        self.weight = weight
        self.sigma = sigma
        self.memory = memory

    def _fit(self, X):
        S = self._graph(X, self._neighbours(X.shape[0]))
        spread, smoothness = laplacian_scores(X, S)
        informative = spread > 1e-12 * max(spread.max(initial=0.0), 1.0)
        self.laplacian_scores_ = np.full(X.shape[1], np.inf)
        self.laplacian_scores_[informative] = smoothness[informative] / spread[informative]
        self.scores_ = -self.laplacian_scores_

    def _graph(self, X: np.ndarray, k: int) -> sp.csr_matrix:
        """The kNN graph S (sparse, n k entries; no n x n matrix on large n), read from the disk
        cache at ``memory`` where that is cheaper than computing it (ufsbench.cache). Built from X
        as passed: its Gram product's round-off depends on the memory order, enough to flip
        near-tied neighbours (lymphoma)."""
        if self.weight == "cosine":
            return cached_call(self.memory, cosine_knn_graph, X, k=k)
        sigma = self.sigma
        if sigma == "mean_distance" and self.weight == "heat":
            sigma = 2.0 * cached_call(self.memory, mean_distance, X) ** 2
        return cached_call(self.memory, sparse_knn_graph, X, k=k, weight=self.weight,
                           sigma=None if isinstance(sigma, str) else sigma)
