"""Laplacian Score (He, Cai & Niyogi, "Laplacian Score for Feature Selection", NIPS 2005)."""

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.methods.base import MEMORY_CONSTRAINT, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics.graphs import sparse_knn_graph

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
    k : neighbours of the kNN graph (the papers: 5).
    weight : "heat" (exp(-||x_i-x_j||^2 / sigma)) or "binary" (the t -> infinity limit).
    sigma : heat-kernel width; ``None`` uses the mean squared kNN distance, since sigma = 1
        underflows every weight to 0 on raw pixel data.
    memory : None, str or joblib.Memory, default None
        Where to cache the kNN graph (it depends on X, k, weight and sigma only); None computes
        it on every fit.
    """

    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "k": POSITIVE_INT,
        "weight": [StrOptions({"heat", "binary"})],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
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
        k = min(self.k, X.shape[0] - 1)
        # The graph depends on X and (k, weight, sigma) only: read from the disk cache at
        # ``memory`` where that is cheaper than computing it (ufsbench.cache). Sparse (n k entries; built by a
        # neighbour search, no n x n matrix on large n). Built from X as passed: its Gram
        # product's round-off depends on the memory order, enough to flip near-tied neighbours
        # (lymphoma).
        S = cached_call(self.memory, sparse_knn_graph, X, k=k, weight=self.weight,
                        sigma=self.sigma)
        spread, smoothness = laplacian_scores(X, S)
        informative = spread > 1e-12 * max(spread.max(initial=0.0), 1.0)
        self.laplacian_scores_ = np.full(X.shape[1], np.inf)
        self.laplacian_scores_[informative] = smoothness[informative] / spread[informative]
        self.scores_ = -self.laplacian_scores_
