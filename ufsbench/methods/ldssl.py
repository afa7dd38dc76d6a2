"""LDSSL, reconstructed (Shang, Meng, Wang, Shang & Jiao, "Local discriminative based sparse subspace
learning for feature selection", Pattern Recognition 92 (2019) 219-230): matrix-factorisation
subspace learning X ~ X W H with a kernelised local discriminant regulariser and sparse W."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError
from ufsbench.methods._checks import check_choice, check_int, check_number
from ufsbench.methods.base import UFSSelector, register
from ufsbench.numerics import knn_indices, row_norms, squared_distances
from ufsbench.numerics.local_discriminant import local_discriminant_laplacian
from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part

PREPROCESS = ("shift", "none")


def ldssl_graph(X: np.ndarray, k: int, sigma: float | None, lam: float):
    """The kernelised local discriminant Laplacian of X (heat kernel on the kNN sets): depends on
    (X, k, sigma, lam) only, so a grid sweep reads it from the disk cache (ufsbench.cache)."""
    D = squared_distances(X)
    nbrs = knn_indices(D, min(k, X.shape[0] - 1))
    if sigma is None:
        sigma = float(np.mean(D[np.arange(X.shape[0])[:, None], nbrs])) or 1.0
    return local_discriminant_laplacian(np.exp(-D / sigma), nbrs, lam)


@register("ldssl")
class LDSSL(UFSSelector):
    """LDSSL (reconstructed, not a faithful reproduction): X ~ XWH, local discriminant graph, sparse W.

    Ronghua Shang, Yang Meng, Wenbing Wang, Fanhua Shang, Licheng Jiao, "Local discriminative
    based sparse subspace learning for feature selection", Pattern Recognition 92 (2019) 219-230,
    doi:10.1016/j.patcog.2019.03.026. RECONSTRUCTED: no paper text or public code was available
    (searched again for this module: only the abstract is public). The abstract fixes the
    ingredients -- subspace learning (a matrix decomposition) as the framework, a local
    discriminant model preserving local discriminant and geometric structure, kernelised, an
    "L-1-norm" making the feature selection matrix sparse, iterative update rules with a
    convergence proof -- and ``papers/baselines.md`` §10 ("BL10") the family form (MFFS, Wang et
    al. PR 2015; SGFS, Shang et al. KBS 2016). Equation numbers of the paper are unknown; comments
    cite BL10. Report rows of this method must say "reconstructed".

    Model (X n x d, samples as rows; W d x q, H q x d):

        min_{W >= 0, H >= 0} ||X - X W H||_F^2 + alpha Tr(W^T X^T L_ld X W) + beta ||W||_1
                             + (rho / 2) ||W^T W - I_q||_F^2                          (BL10 + MFFS)

    L_ld = sum_i S_i Hc (Hc K_i Hc + lam I)^{-1} Hc S_i^T (BL10), K_i the Gaussian kernel on x_i and
    its k nearest neighbours: the kernelised UDFS local discriminant Laplacian (PSD, L_ld 1 = 0).
    Score of feature r: ||w_r||_2.

    Updates (split multiplicative, Ding et al. 2010; A = X^T L_ld X, products never form d x d):

        H <- H * (W^T X^T X) / (W^T X^T X W H)                                       (BL10 H)
        W <- W * [(X^T X H^T + alpha A- W + rho W)
                  / (X^T X W H H^T + alpha A+ W + rho W W^T W + beta/2)]^eta          (BL10 W)

    Decisions (the paper is unavailable; all documented, the tested ones marked *):

    * The MFFS orthogonality penalty (rho/2)||W^T W - I||^2 is kept: without any scale constraint
      the model is ill-posed (W -> s W, H -> H / s lowers both penalties for s -> 0 at equal fit),
      so alpha and beta would fade away during the iterations. rho = 1 by default (X is scaled to
      max 1 by the preprocessing, so the data terms are O(1) per entry).
    * Element-wise l1 ("L-1-norm" in the abstract), not l2,1. q = n_components, default n_clusters
      (MFFS takes q = number of selected features, which would make the fit depend on h; pass
      n_components to get that).
    * Preprocessing "shift" (default): subtract each feature's minimum and divide by the global
      maximum, so X >= 0 (multiplicative updates need X^T X >= 0; SCFS's code shifts X too) while
      the features keep their relative scales. "none" requires X >= 0.
    * A's split: A+- = X^T L_ld+- X with L_ld = L_ld+ - L_ld- split element-wise (n x n); with X >= 0
      both are non-negative, a valid (not minimal) split that avoids the d x d matrix.
    * H-step exponent 1 (Lee & Seung; X^T X >= 0, so it is an exact MM step).* W-step exponent
      eta = 1/4 for the quartic orthogonality term (as in the project's other mixed-degree
      multiplicative updates); the objective is tested to be non-increasing.*
    * Kernel: Gaussian exp(-||x_i - x_j||^2 / sigma); SCFS fixes sigma = 1 for explicit graphs.
      sigma = None uses the mean squared kNN distance. Local ridge lam = 1 (UDFS's lambda; value
      unknown for LDSSL). k = 5.
    * Start: W, H uniform in (0, 1) from ``random_state``; at most ``max_iter`` (300) iterations,
      stop when the relative objective decrease is below ``tol`` (1e-6).

    Parameters
    ----------
    alpha : weight of the local discriminant term (SCFS grid {1e-4, 1e-2, 1, 1e2, 1e4}).
    beta : weight of ||W||_1 (same grid).
    rho : weight of the orthogonality penalty.
    n_components : q (None = n_clusters).
    k, sigma, lam : neighbours, Gaussian kernel width, local ridge of L_ld.
    preprocess : "shift" or "none".
    """

    reconstructed = True

    def __init__(self, n_features_to_select=None, n_clusters=2, random_state=None, alpha=1.0,
                 beta=1.0, rho=1.0, n_components=None, k=5, sigma=None, lam=1.0,
                 preprocess="shift", max_iter=300, tol=1e-6, eta=0.25):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.rho = rho
        self.n_components = n_components
        self.k = k
        self.sigma = sigma
        self.lam = lam
        self.preprocess = preprocess
        self.max_iter = max_iter
        self.tol = tol
        self.eta = eta

    def _check_params(self, X):
        owner = type(self).__name__
        for name in ("alpha", "beta", "rho"):
            check_number(owner, name, getattr(self, name), low=0.0)
        check_number(owner, "lam", self.lam, low=0.0, low_open=True,
                     hint="the local ridge, e.g. 1.0")
        check_choice(owner, "preprocess", self.preprocess, PREPROCESS)
        if self.preprocess == "none" and X.min() < 0:
            raise UFSBenchError("LDSSL: X has negative entries; multiplicative updates need X >= 0, "
                                "use preprocess='shift'")
        check_int(owner, "n_components", self.n_components, none_ok=True)
        check_number(owner, "eta", self.eta, 0.0, 1.0, low_open=True)

    def _graph(self, X):
        return cached_call(ldssl_graph, X, k=self.k, sigma=self.sigma, lam=self.lam)

    def _objective(self, X, W, H, L):
        XW = X @ W
        WtW = W.T @ W
        return (float(np.sum((X - XW @ H) ** 2))
                + self.alpha * float(np.einsum("ij,ij->", XW, L @ XW))
                + self.beta * float(W.sum())
                + 0.5 * self.rho * float(np.sum((WtW - np.eye(W.shape[1])) ** 2)))

    def _fit(self, X):
        self._check_params(X)
        n, d = X.shape
        if self.preprocess == "shift":
            X = X - X.min(axis=0)
            X = X / (X.max() if X.max() > 0 else 1.0)
        q = int(self.n_components or self.n_clusters_)
        L = self._graph(X)
        L_pos, L_neg = pos_part(L), neg_part(L)
        rng = check_random_state(self.random_state)
        W = rng.uniform(0.0, 1.0, (d, q))
        H = rng.uniform(0.0, 1.0, (q, d))
        history = []
        for it in range(int(self.max_iter)):
            XW = X @ W
            H = multiplicative_step(H, XW.T @ X, (XW.T @ XW) @ H)                # BL10 H
            numer = X.T @ (X @ H.T + self.alpha * (L_neg @ XW)) + self.rho * W
            denom = (X.T @ (XW @ (H @ H.T) + self.alpha * (L_pos @ XW))
                     + self.rho * (W @ (W.T @ W)) + 0.5 * self.beta)
            W = W * multiplicative_step(np.ones_like(W), numer, denom) ** self.eta   # BL10 W
            history.append(self._objective(X, W, H, L))
            if it > 0 and abs(history[-2] - history[-1]) < self.tol * max(abs(history[-2]), 1e-300):
                break
        self.W_, self.H_, self.laplacian_ = W, H, L
        self.objective_history_ = history
        self.n_iter_ = len(history)
        self.scores_ = row_norms(W)
