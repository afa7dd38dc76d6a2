"""LDSSL, reconstructed (Shang, Meng, Wang, Shang & Jiao, "Local discriminative based sparse subspace
learning for feature selection", Pattern Recognition 92 (2019) 219-230): matrix-factorisation
subspace learning X ~ X W H with a kernelised local discriminant regulariser and sparse W."""

from __future__ import annotations

from numbers import Integral, Real
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import (
    MEMORY_CONSTRAINT,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    UFSSelector,
    register,
)
from ufsbench.numerics import knn_indices, row_norms, squared_distances
from ufsbench.numerics.graphs import SPARSE_MIN_SAMPLES, nearest_neighbors
from ufsbench.numerics.local_discriminant import (
    heat_local_discriminant_laplacian,
    local_discriminant_laplacian,
)
from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part

PREPROCESS = ("shift", "none")
SOLVERS = ("auto", "data", "gram")
#: Below this fraction of non-zero entries the "data" solver keeps X as a CSR matrix, whose thin
#: products cost O(nnz q) instead of O(n d q): 3x faster at 10 % non-zeros, 25x at 1.4 %
#: (basehock, a bag-of-words set); break-even near 30 %.
SPARSE_DENSITY = 0.1


def ldssl_graph(X: np.ndarray, k: int, sigma: float | None, lam: float):
    """The kernelised local discriminant Laplacian of X (heat kernel on the kNN sets): depends on
    (X, k, sigma, lam) only, so a grid sweep may cache it (``memory``, ufsbench.cache).

    From ``graphs.SPARSE_MIN_SAMPLES`` samples on, a CSR matrix from the blockwise neighbour
    search and the kernel on each local set only (no n x n array: USPS's 9298 x 9298 distances
    took a minute); below, dense, bit for bit as before.
    """
    k = min(k, X.shape[0] - 1)
    if X.shape[0] >= SPARSE_MIN_SAMPLES:
        nbrs, dist = nearest_neighbors(X, k)
        if sigma is None:
            sigma = float(np.mean(dist)) or 1.0
        return heat_local_discriminant_laplacian(X, nbrs, sigma, lam)
    D = squared_distances(X)
    nbrs = knn_indices(D, k)
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
      stop when the relative objective change |J_{t-1} - J_t| / |J_{t-1}| is below ``tol``
      (1e-6), else a ``ConvergenceWarning``. The multiplicative steps converge slowly: on jaffe,
      umist, srbct and coil20 (defaults) the cap ends every fit with the objective still falling
      by 0.4 % a step, and the top-100 set keeps moving for thousands of iterations (jaffe:
      Jaccard 0.65 between 300 and 2000 iterations, 0.27 between 3000 and 10000).

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        q, the number of columns of W, when ``n_components`` is None; unused otherwise.
    random_state : int, RandomState instance or None, default None
        Seeds the uniform (0, 1) start of W and H.
    alpha : weight of the local discriminant term (SCFS grid {1e-4, 1e-2, 1, 1e2, 1e4}).
    beta : weight of ||W||_1 (same grid).
    rho : weight of the orthogonality penalty.
    n_components : q (None = n_clusters).
    k : int, default 5
        Neighbours of each x_i in the local kernel K_i of L_ld.
    sigma : float or None, default None
        Width of the Gaussian kernel exp(-||x_i - x_j||^2 / sigma) (None: mean squared kNN
        distance).
    lam : float, default 1.0
        Local ridge of L_ld, (Hc K_i Hc + lam I)^{-1} (UDFS's lambda).
    preprocess : "shift" or "none".
    solver : how an iteration's products with X are formed (same iterates up to round-off):
        "data" (thin products with X, O(n d q), O(nnz(X) q) for an X with fewer than 10 %
        non-zeros, held sparse), "gram" (X^T X and X^T L+- X formed once, O(d^2 q)), "auto" =
        "gram" when d <= n. Neither forms the n x d residual X - XWH.
    memory : None, str or joblib.Memory, default None
        Where to cache the local discriminant Laplacian (it depends on X, k, sigma and lam only);
        None computes it on every fit.
    max_iter : int, default 300
        Iteration cap.
    tol : float, default 1e-6
        Stop when the relative objective change |J_{t-1} - J_t| / |J_{t-1}| is below ``tol``
        (0 runs all ``max_iter`` iterations).
    eta : damping exponent of the multiplicative W-step (0.25; 1 is undamped).

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_i||, the row norms of W.
    W_ : ndarray (n_features, q)
        The final W (d x q).
    H_ : ndarray (q, n_features)
        The final H (q x d).
    laplacian_ : ndarray or scipy.sparse CSR matrix (n_samples, n_samples)
        L_ld (CSR from ``graphs.SPARSE_MIN_SAMPLES`` samples on).
    objective_history_ : list of float
        The objective after each iteration.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the ``tol`` test (not ``max_iter``) ended the fit.
    """

    reconstructed = True
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "alpha": NON_NEGATIVE,
        "beta": NON_NEGATIVE,
        "rho": NON_NEGATIVE,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "k": POSITIVE_INT,
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        # The local ridge keeps Hc K_i Hc + lam I invertible.
        "lam": POSITIVE,
        "preprocess": [StrOptions(set(PREPROCESS))],
        "max_iter": POSITIVE_INT,
        # 0 runs all max_iter iterations.
        "tol": NON_NEGATIVE,
        # Damps the multiplicative W-step: 0 would freeze W, 1 is the undamped step.
        "eta": [Interval(Real, 0, 1, closed="right")],
        "solver": [StrOptions(set(SOLVERS))],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1.0,
                 beta=1.0, rho=1.0, n_components=None, k=5, sigma=None, lam=1.0,
                 preprocess="shift", max_iter=300, tol=1e-6, eta=0.25, solver="auto",
                 memory=None):
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
        self.solver = solver
        self.memory = memory

    def _graph(self, X):
        return cached_call(self.memory, ldssl_graph, X, k=self._neighbours(X.shape[0]),
                           sigma=self.sigma, lam=self.lam)

    def _objective(self, X, W, H, L):
        XW = X @ W
        WtW = W.T @ W
        return (float(np.sum((X - XW @ H) ** 2))
                + self.alpha * float(np.einsum("ij,ij->", XW, L @ XW))
                + self.beta * float(W.sum())
                + 0.5 * self.rho * float(np.sum((WtW - np.eye(W.shape[1])) ** 2)))

    def _objective_from_products(self, x_sq, W, H, state):
        """``_objective`` from the products the iteration keeps (``_DataProducts`` /
        ``_GramProducts``): ||X - XWH||^2 = ||X||^2 - 2 <X^T X W, H^T> + <W^T X^T X W, H H^T>
        needs no n x d residual (its cancellation costs eps ||X||^2 absolute, far below the
        stopping test's tolerance)."""
        WtW = W.T @ W
        fit = (x_sq - 2.0 * float(np.einsum("ij,ji->", state.P, H))
               + float(np.einsum("ij,ij->", state.G, H @ H.T)))
        return (fit + self.alpha * state.graph
                + self.beta * float(W.sum())
                + 0.5 * self.rho * float(np.sum((WtW - np.eye(W.shape[1])) ** 2)))

    def _check_nonnegative(self, X):
        """Multiplicative updates need X^T X >= 0: without the shift, X itself must be >= 0."""
        if self.preprocess == "none" and X.min() < 0:
            raise UFSBenchError("LDSSL: X has negative entries; multiplicative updates need X >= 0, "
                                "use preprocess='shift'")

    def _fit(self, X):
        self._check_nonnegative(X)
        n, d = X.shape
        if self.preprocess == "shift":
            X = X - X.min(axis=0)
            X = X / (X.max() if X.max() > 0 else 1.0)
        q = int(self.n_components or self.n_clusters_)
        L = self._graph(X)
        solver = self.solver if self.solver != "auto" else ("gram" if d <= n else "data")
        products = (_GramProducts if solver == "gram" else _DataProducts)(X, L, self.alpha)
        rng = check_random_state(self.random_state)
        W = rng.uniform(0.0, 1.0, (d, q))
        H = rng.uniform(0.0, 1.0, (q, d))
        state = products.at(W)
        history, converged = [], False
        for it in range(int(self.max_iter)):
            H = multiplicative_step(H, state.P.T, state.G @ H)                      # BL10 H
            numer, denom = products.w_sides(H, state)
            numer += self.rho * W
            denom += self.rho * (W @ (W.T @ W))
            denom += 0.5 * self.beta
            W = W * multiplicative_step(np.ones_like(W), numer, denom) ** self.eta   # BL10 W
            state = products.at(W)
            history.append(self._objective_from_products(products.x_sq, W, H, state))
            if it > 0 and abs(history[-2] - history[-1]) < self.tol * max(abs(history[-2]), 1e-300):
                converged = True
                break
        self.W_, self.H_, self.laplacian_ = W, H, L
        self.objective_history_ = history
        self._stopped(len(history), converged, test="relative objective change < tol")
        self.scores_ = row_norms(W)


class _DataProducts:
    """The products of an iteration from X itself (d > n): four thin products with X a step
    (X W, X^T X W, X H^T and one X^T [., .] for both W-step sides, each formed as a product with
    a few rows, ``_times`` / ``_t_times``) instead of the eight plus the n x d residual of the
    plain formulas. X W, X^T X W and L+- X W at the new W serve both
    the objective and the next H- and W-steps. A sparse X (fewer than ``SPARSE_DENSITY`` non-zeros,
    e.g. bag-of-words data) is held in CSR form: the same sums over its non-zeros only, so the same
    values up to round-off. L_ld is local (non-zero only between samples
    sharing a kNN set), so its parts are applied as sparse matrices."""

    def __init__(self, X, L, alpha):
        self.X = np.ascontiguousarray(X)
        self.x_sq = float(np.einsum("ij,ij->", self.X, self.X))
        if np.count_nonzero(self.X) < SPARSE_DENSITY * self.X.size:
            self.X = sp.csr_matrix(self.X)
        self.L_pos, self.L_neg = (sp.csr_matrix(part) for part in (pos_part(L), neg_part(L)))
        self.alpha = alpha

    def at(self, W):
        """P = X^T X W, G = W^T X^T X W, graph = Tr(W^T X^T L X W) and what w_sides reuses."""
        XW = _times(self.X, W)
        state = SimpleNamespace(P=_t_times(self.X, XW), G=XW.T @ XW, XW=XW, LXW_pos=self.L_pos @ XW,
                       LXW_neg=self.L_neg @ XW)
        state.graph = float(np.einsum("ij,ij->", XW, state.LXW_pos - state.LXW_neg))
        return state

    def w_sides(self, H, state):
        """X^T X H^T + alpha X^T L- X W and X^T X W H H^T + alpha X^T L+ X W (BL10 W)."""
        q = H.shape[0]
        sides = _t_times(self.X, np.hstack([_times(self.X, H.T) + self.alpha * state.LXW_neg,
                                            state.XW @ (H @ H.T) + self.alpha * state.LXW_pos]))
        return sides[:, :q], sides[:, q:]


class _GramProducts:
    """The same products from C = X^T X and M+- = X^T L+- X (d x d, formed once) when d <= n:
    4 d^2 q flops an iteration instead of 5 n d q."""

    def __init__(self, X, L, alpha):
        X = np.ascontiguousarray(X)
        self.x_sq = float(np.einsum("ij,ij->", X, X))
        self.C = X.T @ X
        self.M_pos, self.M_neg = (X.T @ (sp.csr_matrix(part) @ X)
                                  for part in (pos_part(L), neg_part(L)))
        self.alpha = alpha

    def at(self, W):
        P = self.C @ W
        state = SimpleNamespace(P=P, G=W.T @ P, MW_pos=self.M_pos @ W, MW_neg=self.M_neg @ W)
        state.graph = float(np.einsum("ij,ij->", W, state.MW_pos - state.MW_neg))
        return state

    def w_sides(self, H, state):
        return (self.C @ H.T + self.alpha * state.MW_neg,
                state.P @ (H @ H.T) + self.alpha * state.MW_pos)


# Products of the row-major n x d X with a thin matrix, written as the transpose of a product
# with a few rows: BLAS then streams X along its rows, 2-3x faster than the column-thin form at
# d ~ 5000 (OpenBLAS); the same sums, so the same values up to the kernel's round-off.
def _times(X, B):
    """X B for a thin B, as (B^T X^T)^T for a dense X."""
    if sp.issparse(X):
        return X @ B
    return (B.T @ X.T).T


def _t_times(X, B):
    """X^T B for a thin B, as (B^T X)^T for a dense X."""
    if sp.issparse(X):
        return X.T @ B
    return (B.T @ X).T
