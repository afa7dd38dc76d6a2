"""RSFS (Shi, Du & Shen, "Robust Spectral Learning for Unsupervised Feature Selection", ICDM 2014)."""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call, cached_seeded_call
from ufsbench.methods.base import (
    MEMORY_CONSTRAINT,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    UFSSelector,
    register,
)
from ufsbench.numerics import graphs, knn_graph, l21_reweight, laplacian, row_norms
from ufsbench.numerics.gram_solve import data_gram, data_outer_gram, solve_gram_plus_diag
from ufsbench.numerics.irls import SOLVER_METHODS, smoothed_l21_norm
from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part
from ufsbench.numerics.prox import soft_threshold
from ufsbench.numerics.sparse_gram import sparse_outer_gram
from ufsbench.numerics.spectral import orthogonality_penalty, spectral_soft_indicator, unit_columns


def row_normalised_laplacian(S):
    """L of RSFS's code: P = D^{-1} S, L = diag((P + P^T) 1) - (P + P^T) (zero degrees guarded).

    A ``scipy.sparse`` S gives a CSR L with the same entries up to the order of the degree sums.
    """
    degree = np.asarray(S.sum(axis=1)).ravel()
    inv = np.zeros_like(degree)
    inv[degree > 0] = 1.0 / degree[degree > 0]
    P = sp.csr_matrix(sp.diags(inv) @ S) if sp.issparse(S) else inv[:, None] * S
    return laplacian(P + P.T)


def rsfs_start(X: np.ndarray, k: int, sigma, n_clusters: int, random_state, init_offset: float):
    """(L, Y0, labels): the graph Laplacian of RSFS's code (sparse CSR, for the iterations) and
    the spectral-clustering start. Data, graph parameters and seed only: cached per data set.

    Y0 comes from the c smallest eigenvectors of L: a dense subset eigh below
    ``graphs.SPARSE_MIN_SAMPLES`` samples, Lanczos on the sparse L from there on (a dense eigh
    of USPS's 9298 x 9298 L took 66 of the fit's 77 CPU s), where S and L are built sparse too
    (no n x n array: 3.3 GB at 10000 samples). The returned L is sparse either way (L has
    O(n k) non-zeros, and the iterations' L Y products cost O(n k c) instead of O(n^2 c))."""
    large = X.shape[0] >= graphs.SPARSE_MIN_SAMPLES
    graph = graphs.sparse_knn_graph if large else knn_graph
    L = row_normalised_laplacian(graph(X, k=k, weight="heat", sigma=sigma))
    L_sparse = sp.csr_matrix(L)
    Y, labels = spectral_soft_indicator(L_sparse if large else L, n_clusters, random_state,
                                        init_offset)
    return L_sparse, Y, labels


@register("rsfs")
class RSFS(UFSSelector):
    """RSFS: non-negative spectral embedding with a robust (Huber-type) l2,1 spectral regression.

    Shi, Du & Shen (2014). The paper's text is not available here; the model is the one stated
    in the authors' public code (LeiShiCS/RSFS, ``RSFS.m``, v1.0 Oct 2014; restated in
    ``papers/baselines.md`` §8; equation numbers unverified):

        min_{Y >= 0, W, Z} Tr(Y^T L Y) + alpha ||Y - X W - Z||_F^2 + beta ||W||_{2,1}
                           + nu ||Z||_1 + (gamma/2) ||Y^T Y - I||_F^2,   gamma = 1e8.

    Z is a sparse label-noise term; minimising over Z turns the loss on Y - XW into a Huber loss
    (the paper's M-estimator link). Block steps per iteration (code order):
    W = (X^T X + (beta/alpha) D)^{-1} X^T (Y - Z) with D_ii = 1/(2 sqrt(||w^i||^2 + eps));
    Z = soft(Y - X W, nu / (2 alpha)); with A = X W + Z,
    Y <- Y * sqrt((L^- Y + gamma Y + alpha A^+) / (L^+ Y + alpha Y + gamma Y Y^T Y + alpha A^-)),
    then unit columns. Features are ranked by ||w^i|| (decreasing).

    Decisions where the paper is silent or the code deviates:

    * Graph (code): kNN (k = 5) heat kernel S, P = D^{-1} S, L = diag((P+P^T)1) - (P+P^T); not
      the robust local-learning graph of the abstract (which graph produced the paper's tables is
      not established). Heat width ``sigma=None`` = mean squared kNN distance (the code's
      constructW default is exp(-d^2 / (2 t^2)), t = mean pairwise distance).
    * Start (deviation): the code starts Y from the hard 0/1 K-means indicator of the spectral
      embedding, which freezes the memberships under multiplicative updates; we add
      ``init_offset`` (0.2) times the mean non-zero entry (``spectral_soft_indicator``).
      W = 0, Z = 0, D = I at the start, as in the code.
    * The monitored objective uses the Frobenius penalty (gamma/2)||Y^T Y - I||_F^2 that the
      update corresponds to (the code's getObj uses an l2,1 norm there). Stop when
      (obj_old - obj_new) / obj_new < ``tol`` = 1e-3 (an increase also stops), else after
      ``max_iter`` = 20 iterations (code) with a ``ConvergenceWarning``. With the soft start
      Y_0^T Y_0 != I, and the gamma = 1e8 penalty dominates J for about 25 iterations while it
      decays (J falls by 30-45 % a step at iteration 20), so the cap ends the fits: every one of
      the 343 grid points on jaffe, and the default on jaffe, srbct, umist and coil20, whose
      top-100 sets share 99, 95, 100 and 92 features with 100-iteration fits.
    * The d > n case uses the n x n (Woodbury) form of the W-step (``solver="auto"``).
    * Cost (same results up to round-off): the graph, its Laplacian and the spectral start depend
      on the data and the seed only and are cached at ``memory`` (:func:`rsfs_start`); the
      d x d W-step reuses one X^T X (only D changes), the n x n one forms X R^{-1} X^T by
      a symmetric rank-k product (on mostly-zero X, a bag of words such as basehock, from the
      non-zero entries of the sparse columns: ``ufsbench.numerics.sparse_gram``, the same
      matrix up to round-off, 5x faster there); the iterations multiply by the sparse L.
    * ``labels_`` = argmax of each row of Y.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of Y, W and Z (the clusters of the spectral start and of
        ``labels_``).
    random_state : int, RandomState instance or None, default None
        Seeds the K-means of the spectral start.
    alpha : float, default 1.0
        Weight of the regression term ||Y - X W - Z||^2 (grid {1e-3, ..., 1e3}).
    beta : float, default 1.0
        Weight of ||W||_{2,1} (same grid).
    nu : float, default 1.0
        Weight of ||Z||_1, the sparse label-noise term (same grid).
    gamma : weight of the orthogonality penalty (1e8).
    k : int, default 5
        Neighbours of the kNN heat-kernel graph.
    sigma : float or None, default None
        Heat-kernel width (None: mean squared kNN distance).
    max_iter : int, default 20
        Iteration cap (the authors' code: 20).
    tol : float, default 1e-3
        Stop when the relative decrease (obj_old - obj_new) / obj_new is below ``tol`` (an
        increase also stops; 0 stops only then).
    eps : smoothing inside the reweighting 1 / (2 sqrt(||w^i||^2 + eps)).
    init_offset : added to the hard spectral-clustering start (0.2 times its mean entry).
    solver : W-step form: "dense" (d x d), "woodbury" (n x n) or "auto" (d x d when d <= n).
    memory : None, str or joblib.Memory, default None
        Where to cache the Gram X^T X or X X^T (it depends on X only) and, for an integer
        ``random_state``, the graph Laplacian with the spectral start (X, k, sigma, n_clusters,
        init_offset and the seed only); None computes them on every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w^i||, the row norms of W.
    labels_ : ndarray (n_samples,)
        argmax of each row of Y.
    init_labels_ : ndarray (n_samples,)
        The partition of the spectral start.
    Y_ : ndarray (n_samples, n_clusters)
        The final Y.
    W_ : ndarray (n_features, n_clusters)
        The final W.
    Z_ : ndarray (n_samples, n_clusters)
        The final Z.
    objective_history_ : list of float
        The monitored objective after each iteration.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the ``tol`` test (not ``max_iter``) ended the fit.
    """

    single_threaded_blas = True         # no fit of it was faster on two BLAS threads
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        # beta / alpha and nu / (2 alpha) divide by alpha.
        "alpha": POSITIVE,
        "beta": POSITIVE,
        "nu": NON_NEGATIVE,
        "gamma": POSITIVE,
        "k": POSITIVE_INT,
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "max_iter": POSITIVE_INT,
        # 0 stops only when the objective rises.
        "tol": NON_NEGATIVE,
        # Keeps the reweighting 1 / (2 sqrt(||w^i||^2 + eps)) finite at a zero row of W.
        "eps": POSITIVE,
        # A zero entry of Y stays zero under multiplicative updates.
        "init_offset": POSITIVE,
        "solver": [StrOptions(set(SOLVER_METHODS))],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1.0,
                 beta=1.0, nu=1.0, gamma=1e8, k=5, sigma=None, max_iter=20, tol=1e-3, eps=1e-8,
                 init_offset=0.2, solver="auto", memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.nu = nu
        self.gamma = gamma
        self.k = k
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.init_offset = init_offset
        self.solver = solver
        self.memory = memory

    def objective(self, X, Y, W, Z, L) -> float:
        """The penalised objective of the docstring (``objective_history_``)."""
        return self._objective(X @ W, Y, W, Z, L)

    def _objective(self, XW, Y, W, Z, L) -> float:
        """The objective with X W given (the iteration has it already)."""
        R = Y - XW - Z
        return (float(np.sum(Y * (L @ Y))) + self.alpha * float(np.sum(R * R))
                + self.beta * smoothed_l21_norm(W, self.eps) + self.nu * float(np.abs(Z).sum())
                + 0.5 * self.gamma * orthogonality_penalty(Y))

    def _w_step(self, X, B, weights, gram, outer=None):
        """W = (X^T X + (beta/alpha) D)^{-1} X^T B: the d x d form from the cached X^T X
        (``gram``; only D changes between iterations), else the n x n (Woodbury) form, with
        the cached X X^T for D = I (``weights`` None, the first step) and a syrk Gram after;
        ``outer`` (a mostly-zero X) forms every n x n matrix, the first one included, from the
        non-zero entries of the sparse columns."""
        ratio = self.beta / self.alpha
        if gram is not None:
            reg = ratio if weights is None else ratio * weights
            return solve_gram_plus_diag(X, B, reg, method="primal", gram=gram)
        if weights is None and outer is None:
            return solve_gram_plus_diag(X, B, ratio, method="dual",
                                        gram=cached_call(self.memory, data_outer_gram, X))
        reg = ratio if weights is None else ratio * weights
        return solve_gram_plus_diag(X, B, reg, method="dual", outer=outer)

    def _fit(self, X):
        n, d = X.shape
        c = self.n_clusters_
        L, Y, self.init_labels_ = cached_seeded_call(
            self.memory, rsfs_start, X, self.random_state, k=self._neighbours(n), sigma=self.sigma,
            n_clusters=c, init_offset=self.init_offset)
        Lp, Lm = pos_part(L), neg_part(L)
        method = SOLVER_METHODS[self.solver]
        primal = method == "primal" or (method == "auto" and d <= n)
        gram = cached_call(self.memory, data_gram, X) if primal else None   # X^T X, once per X
        outer = None if primal else sparse_outer_gram(X)             # mostly-zero X, d > n
        Z = np.zeros((n, c))
        weights = None                                               # D = I
        history, converged = [], False
        for _ in range(self.max_iter):
            W = self._w_step(X, Y - Z, weights, gram, outer)
            weights = l21_reweight(W, eps=self.eps)
            XW = X @ W
            Z = soft_threshold(Y - XW, self.nu / (2.0 * self.alpha))
            A = XW + Z
            num = Lm @ Y + self.gamma * Y + self.alpha * pos_part(A)
            den = Lp @ Y + self.alpha * Y + self.gamma * Y @ (Y.T @ Y) + self.alpha * neg_part(A)
            Y = unit_columns(multiplicative_step(Y, np.sqrt(num), np.sqrt(den)))
            history.append(self._objective(XW, Y, W, Z, L))
            if len(history) > 1 and (history[-2] - history[-1]) < self.tol * abs(history[-1]):
                converged = True
                break
        self.Y_, self.W_, self.Z_ = Y, W, Z
        self.labels_ = np.argmax(Y, axis=1)
        self.objective_history_ = history
        self._stopped(len(history), converged, test="(obj_old - obj_new) / obj_new < tol")
        self.scores_ = row_norms(W)
