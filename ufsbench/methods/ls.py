"""Laplacian Score (He, Cai & Niyogi, "Laplacian Score for Feature Selection", NIPS 2005)."""

import numpy as np

from ufsbench.cache import cached_call
from ufsbench.methods.base import UFSSelector, register
from ufsbench.numerics.graphs import sparse_knn_graph


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
    """

    def __init__(self, n_features_to_select=None, n_clusters=2, random_state=None, k=5,
                 weight="heat", sigma=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.k = k
        self.weight = weight
        self.sigma = sigma

    def _fit(self, X):
        k = min(self.k, X.shape[0] - 1)
        # The graph depends on X and (k, weight, sigma) only: computed once per data set and
        # setting, then read from the disk cache by every later fit (ufsbench.cache). Sparse
        # (n k entries; built by a neighbour search, no n x n matrix on large n).
        S = cached_call(sparse_knn_graph, X, k=k, weight=self.weight, sigma=self.sigma)
        degree = np.asarray(S.sum(axis=1)).ravel()
        # The scores on a row-major copy: data read from .mat files arrives column-major, and the
        # sparse S @ X product strides through it (prostate_ge: 21 ms instead of 5 ms). Same
        # values. The graph above is built from X as passed: its Gram product's round-off depends
        # on the memory order, enough to flip near-tied neighbours (lymphoma).
        X = np.ascontiguousarray(X)
        centred = X - (degree @ X) / max(degree.sum(), np.finfo(float).tiny)
        # f^T L f = f^T D f - f^T S f, computed for all features at once.
        spread = np.einsum("i,ij,ij->j", degree, centred, centred)
        smoothness = spread - np.einsum("ij,ij->j", centred, S @ centred)
        informative = spread > 1e-12 * max(spread.max(initial=0.0), 1.0)
        self.laplacian_scores_ = np.full(X.shape[1], np.inf)
        self.laplacian_scores_[informative] = smoothness[informative] / spread[informative]
        self.scores_ = -self.laplacian_scores_
