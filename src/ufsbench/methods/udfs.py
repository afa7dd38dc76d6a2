"""UDFS (Yang, Shen, Ma, Huang & Zhou, "l2,1-Norm Regularized Discriminative Feature Selection for
Unsupervised Learning", IJCAI 2011).

Settings: the paper, the authors' code as released (AutoUFSTool ``udfs.m``, which calls
``LocalDisAna.m`` and ``fs_unsup_udfs.m``; preset ``released``) and our default.

============  ==========================  ================================  =========================
setting       paper (as printed)          authors' code (as released)       our default
============  ==========================  ================================  =========================
local set     x_i and its k nearest       x_i and its 1 nearest neighbour   x_i and its 5 nearest
              neighbours                  (knn parameter 1: k + 1 = 2)      (UFSOL, DGUFS: k = 5)
lambda        ridge of the local scatter  1e-5                              ``lam`` = 1 (grid
                                                                            1e-6 .. 1e6)
gamma         weight of ||W||_{2,1}       1e-5                              1 (grid 1e-6 .. 1e6)
c             number of clusters          ``nClass`` (2 when not given)     ``n_clusters``
D_0           I (Algorithm 1)             I                                 I, the first step's W
                                                                            rotation-averaged where
                                                                            not unique
W-step        bottom-c eigenvectors of    ``eig`` of max(M, M^T), M = A +   the same (dense, or
              M + gamma D                 gamma D                           Lanczos when d > n)
eps in D      not stated                  2.2e-16                           1e-8
stop          until convergence           20 iterations                     relative objective
                                                                            change <= 1e-6, cap 50
ranking       ||w^i|| decreasing          sum(W.^2, 2) decreasing           ||w^i|| decreasing
============  ==========================  ================================  =========================

``released`` sets k=1, lam=1e-5, gamma=1e-5, eps=2.2e-16, max_iter=20 and tol=None (20 fixed
iterations); c is ``n_clusters``. At these values the ranking is not a property of the model:
with d > n, M = X^T L_loc X has a null space of dimension >= d - n (529 of 676 on jaffe), and
gamma D is too small to single out part of it, so the first step's W is any orthonormal basis of
part of that null space (``eig`` returns one decided by round-off), and the l2,1 reweighting
then descends to a local minimum that depends on it. Eight random null-space bases on jaffe
(each an equally valid first step) end at top-50 sets sharing 4-11 % (Jaccard) with each other
and at objectives 2.44e-4 .. 2.65e-4; the authors' run ends at 2.63e-4, ours (the
rotation-averaged first step) at 2.32e-4. What is determined is the objective, so the
conformance check compares objectives (``ufsbench.conformance.udfs``), not sets.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from scipy import linalg as sla
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call, memory_location, uses_disk
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import MEMORY_CONSTRAINT, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics import l21_reweight, row_norms
from ufsbench.numerics.graphs import nearest_neighbors
from ufsbench.numerics.irls import smoothed_l21_norm
from ufsbench.numerics.local_discriminant import linear_local_discriminant_laplacian
from ufsbench.numerics.lowrank_eig import smallest_eigh_shift_invert


def local_discriminant_matrix(X: np.ndarray, k: int, lam: float):
    """L_loc of Eqs. (4)-(9) from the kNN sets of X: depends on (X, k, lam) only, so a grid sweep
    reads it from the disk cache (ufsbench.cache) instead of rebuilding it for every gamma."""
    neighbours, _ = nearest_neighbors(X, k)
    return linear_local_discriminant_laplacian(X, neighbours, lam)


#: Relative threshold below which an eigenvalue of X^T L X counts as zero.
NULL_TOL = 1e-9

#: Largest fraction of non-zero entries of X for which the lowrank factor X^T R is formed from
#: X's non-zero entries (scipy.sparse) rather than by a dense product: about 30 times fewer
#: multiplications pay for the sparse loop's lower speed below ~3 % (basehock, 1.4 %: 0.39 s
#: instead of 0.88 s, one BLAS thread).
SPARSE_PRODUCT_DENSITY = 0.02


def expected_row_sqnorms(vals: np.ndarray, V: np.ndarray, d: int, c: int) -> np.ndarray:
    """Squared row norms of the bottom-c eigenvectors of a PSD M from its non-zero eigenpairs.

    ``vals`` (ascending) and V (d, r) are the eigenpairs of M with non-zero eigenvalue; the other
    q = d - r eigenvalues are 0. If q >= c the bottom-c eigenspace is an arbitrary c-dimensional
    subspace of null(M); we return the average over all of them, (c / q) times the leverage
    1 - ||v^i||^2 of the null space (exact when q = c). If q < c: the whole null space plus the
    c - q smallest non-zero eigenvectors (row norms do not depend on the basis chosen).
    """
    null_lev = np.clip(1.0 - np.einsum("ij,ij->i", V, V), 0.0, None)
    q = d - V.shape[1]
    if q >= c:
        return (c / q) * null_lev
    low = V[:, np.argsort(vals)[: c - q]]
    return null_lev + np.einsum("ij,ij->i", low, low)


def first_step(X: np.ndarray, *, k: int, lam: float, solver: str, n_clusters: int,
               location: str | None = None):
    """(M or B, E||w_1^i||^2, low_sum): the d x d M = X^T L_loc X ("dense") or its factor
    B (M = B B^T, "lowrank"), the rotation-averaged squared row norms of the first step's W
    (D_0 = I, :func:`expected_row_sqnorms`) and the sum of the c smallest eigenvalues of M.

    Depends on (X, k, lam, c) only, so a sweep over gamma reads it from the disk cache
    (``ufsbench.cache``) instead of repeating the full eigendecomposition for every gamma.
    ``location`` is the cache directory (a plain path, part of the key) L_loc is read from.
    """
    L = cached_call(location, local_discriminant_matrix, X, k=k, lam=lam)
    return first_step_from(X, L, solver=solver, n_clusters=n_clusters)


def first_step_from(X: np.ndarray, L, *, solver: str, n_clusters: int):
    """:func:`first_step` from a given L_loc (a fit without a disk cache has just built it)."""
    d, c = X.shape[1], n_clusters
    if solver == "dense":
        factor = X.T @ (L @ X)                                       # M = X^T L X (d x d)
        factor = 0.5 * (factor + factor.T)
        vals, V = np.linalg.eigh(factor)
    else:
        lv, lU = np.linalg.eigh(L.toarray())                         # d > n: n is small
        keep = lv > 1e-12 * max(lv.max(), 1e-300)
        root = lU[:, keep] * np.sqrt(lv[keep])                       # L = R R^T
        mostly_zero = np.count_nonzero(X) <= SPARSE_PRODUCT_DENSITY * X.size
        factor = (sp.csr_matrix(X).T if mostly_zero else X.T) @ root  # M = X^T L X = B B^T
        factor = np.asarray(factor)
        V, s, _ = np.linalg.svd(factor, full_matrices=False)
        vals = s ** 2
    nonzero = vals > NULL_TOL * max(vals.max(initial=0.0), 1e-300)
    sq = expected_row_sqnorms(vals[nonzero], V[:, nonzero], d, c)
    low_sum = float(np.sort(vals[nonzero])[: max(c - (d - nonzero.sum()), 0)].sum())
    return factor, sq, low_sum


@register("udfs")
class UDFS(UFSSelector):
    """UDFS: local discriminative analysis with an orthogonal, l2,1-regularised transform.

    Yang et al. (2011), §3: with L_loc the local discriminative Laplacian (the reduction of the
    local discriminative scores DS_i, Eqs. (4)-(9)) and M = X^T L_loc X (d x d), UDFS solves
    (Eq. 10)

        min_W Tr(W^T M W) + gamma ||W||_{2,1}   s.t.  W^T W = I_c,

    by Algorithm 1: D_0 = I; repeat W = the c eigenvectors of M + gamma D with the smallest
    eigenvalues, D_ii = 1 / (2 sqrt(||w^i||^2 + eps)); rank features by ||w^i|| (decreasing).
    Every step minimises the majoriser of the smoothed objective
    Tr(W^T M W) + gamma sum_i sqrt(||w^i||^2 + eps) over the Stiefel manifold exactly, so that
    objective (``objective_history_``) is non-increasing.

    Fast path (``solver="lowrank"``; chosen by ``"auto"`` when d > n): M = B B^T with
    B = X^T R and L_loc = R R^T (R from one n x n eigendecomposition; B from X's non-zero entries
    by scipy.sparse when at most ``SPARSE_PRODUCT_DENSITY`` = 2 % of them are non-zero, e.g. a
    bag-of-words set), so the d x d matrix is never formed; the bottom-c eigenvectors of
    gamma D + B B^T come from Lanczos on its inverse applied by the Woodbury identity, O(d n) per
    product (``ufsbench.numerics.lowrank_eig`` with M = I: its set-up B^T (gamma D - sI)^{-1} B
    by syrk and a Cholesky factorisation, O(d n^2 / 2) per iteration), warm-started from the
    previous W. ``solver="dense"`` forms M and P (d x d) as the public code does.
    M (or B) and the first step (a full eigendecomposition) depend on (X, k, lam, c) only and are
    read from the disk cache (:func:`first_step`, ``ufsbench.cache``) across a gamma sweep.

    Decisions where the paper is silent:

    * Local sets are x_i plus its k = 5 nearest neighbours (k + 1 points, as in ``LocalDisAna.m``);
      ``lam`` is the ridge of the local scatter (the paper's lambda; Python reserves ``lambda``).
    * First step, D_0 = I: when d > rank(X^T L_loc X) (always when d >= n) the c smallest
      eigenvalues of M + I are tied and W_1 is an arbitrary basis of part of the null space of M,
      so a dense and an iterative eigensolver (or two LAPACK builds) return different rankings.
      We replace ||w_1^i||^2 by its average over all such choices (the null-space leverage scaled
      by c / dim null, :func:`expected_row_sqnorms`) to form D_1; this is exact whenever W_1 is
      unique and rotation-invariant otherwise. The objective is monitored from W_2 on.
    * eps = 1e-8 inside the square root (same eps in D and in the monitored objective).
    * Stop: when the relative change of the objective, (J_{t-1} - J_t) / |J_{t-1}|, is at most
      ``tol`` = 1e-6 (an increase, i.e. round-off at a fixed point, also stops), else after
      ``max_iter`` = 50 iterations with a ``ConvergenceWarning`` (public codes: 20 or 36 fixed
      iterations, or |delta obj| < 1e-3). ``tol=None`` runs exactly ``max_iter`` iterations
      (the authors' fixed count, then the stop rule: ``converged_`` True).
    * gamma = 0 stops after the first step (scores = the row norms of the bottom-c eigenvectors
      of M, averaged as above when they are not unique), which is then exact.
    * No preprocessing of X (the code's callers pass raw data).

    Large n (USPS, 9298 x 256): the kNN sets come from a blockwise neighbour search (no n x n
    distance matrix), L_loc is built from the (k+1) x (k+1) local Gram blocks as a sparse
    matrix (``local_laplacian_`` is a ``scipy.sparse`` CSR matrix) and, for ``solver="dense"``,
    M = X^T (L_loc X) directly: no n x n array and no n x n eigendecomposition. Only the
    ``lowrank`` path (d > n, so n is small) factors L_loc = R R^T densely.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of W (W^T W = I_c; at most n_features).
    random_state : int, RandomState instance or None, default None
        Seeds only the order of tied scores (``score_tie_rtol``; 0 when None); the fit is
        deterministic.
    gamma : float, default 1.0
        Weight of ||W||_{2,1} (0: the first step only).
    lam : float, default 1.0
        Ridge of the local scatter (the paper's lambda).
    k : int, default 5
        Neighbours of each local set.
    max_iter : int, default 50
        Iteration cap (a fit it ends warns with a ``ConvergenceWarning`` unless ``tol`` is
        None).
    tol : float or None, default 1e-6
        Stop when the relative objective change is at most ``tol`` (None: exactly ``max_iter``
        iterations).
    eps : float, default 1e-8
        Smoothing of the l2,1 norm (in D and in the monitored objective).
    solver : "auto", "dense" or "lowrank", default "auto"
        See the fast path above ("auto": "lowrank" when d > n).
    memory : None, str or joblib.Memory, default None
        Where to cache L_loc and the first step (they depend on X, k, lam, n_clusters and the
        solver only); None computes them on every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w^i||, higher is better (the averaged first-step norms when gamma = 0).
    W_ : ndarray (n_features, n_clusters) or None
        The last W (None when gamma = 0).
    local_laplacian_ : scipy.sparse CSR matrix (n_samples, n_samples)
        L_loc.
    objective_history_ : list of float
        The smoothed objective per iteration (non-increasing).
    n_iter_ : int
        Entries of ``objective_history_``.
    converged_ : bool
        Whether the stop test (not ``max_iter``) ended the fit.
    """

    #: Version of this method's selections: stored records of another revision are stale.
    revision = 2
    #: At large gamma (1e4-1e6 of the grid) W^T W = I_c puts W on c coordinate axes: c row
    #: norms of 1 give or take an ulp, whose order without a tolerance follows the BLAS kernel
    #: (ORL, gamma = lam = 1e6: Jaccard 0.25 of the top 10 between OpenBLAS's Haswell and
    #: Skylake-X kernels), and the rows below them have norms of 1e-10 and less, in steps that
    #: are ties where below 1e-12. Ties are ordered by a permutation seeded by random_state, in
    #: groups spanning at most the tolerance (``UFSSelector.score_tie_rtol``).
    score_tie_rtol = 1e-12

    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "gamma": [Interval(Real, 0, np.inf, closed="left")],   # the l2,1 weight; 0: one step
        # The ridge of the local scatter (e.g. 1.0): X~_i X~_i^T + lam I must be invertible.
        "lam": [Interval(Real, 0, np.inf, closed="neither")],
        "k": POSITIVE_INT,
        "max_iter": POSITIVE_INT,
        "tol": [Interval(Real, 0, np.inf, closed="left"), None],   # None: max_iter fixed
        # eps > 0 keeps D_ii = 1 / (2 sqrt(||w^i||^2 + eps)) finite for zero rows of W.
        "eps": [Interval(Real, 0, np.inf, closed="neither")],
        "solver": [StrOptions({"auto", "dense", "lowrank"})],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, gamma=1.0,
                 lam=1.0, k=5, max_iter=50, tol=1e-6, eps=1e-8, solver="auto",
                 memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.gamma = gamma
        self.lam = lam
        self.k = k
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.solver = solver
        self.memory = memory

    def _check_clusters_fit_features(self, d: int) -> None:
        if self.n_clusters_ > d:
            raise UFSBenchError(f"n_clusters={self.n_clusters_} exceeds the {d} features: "
                                f"W^T W = I_c needs c <= n_features")

    def _fit(self, X):
        n, d = X.shape
        c = self.n_clusters_
        self._check_clusters_fit_features(d)
        # L_loc = sum_i S_i H (X~_i X~_i^T + lam I)^{-1} H S_i^T (Eqs. (4)-(9)): local sets are
        # x_i and its k nearest neighbours; only (k+1) x (k+1) blocks of X X^T are inverted,
        # and L_loc is sparse (at most n (k+1)^2 entries; no n x n matrix on large n).
        k = self._neighbours(n)
        L = cached_call(self.memory, local_discriminant_matrix, X, k=k,
                        lam=float(self.lam))
        self.local_laplacian_ = L
        solver = self.solver if self.solver != "auto" else ("lowrank" if d > n else "dense")
        # M (or its factor B) and the first step depend on (X, k, lam, c) only, not on gamma.
        location = memory_location(self.memory)
        if location is None or not uses_disk(first_step, X):
            # Computed here either way: from the L_loc above (not built a second time).
            factor, sq, low_sum = first_step_from(X, L, solver=solver, n_clusters=c)
        else:
            factor, sq, low_sum = cached_call(self.memory, first_step, X, k=k,
                                              lam=float(self.lam), solver=solver, n_clusters=c,
                                              location=location)
        history = [low_sum + self.gamma * float(np.sqrt(sq + self.eps).sum())]
        W, converged = None, self.gamma == 0 or self.tol is None
        if self.gamma > 0:
            weights = l21_reweight(np.sqrt(sq)[:, None], eps=self.eps)
            history = []
            for _ in range(self.max_iter):
                diag = self.gamma * weights
                if solver == "dense":
                    P = factor.copy()                                # exactly symmetric
                    P[np.diag_indices(d)] += diag
                    _, W = sla.eigh(P, subset_by_index=[0, c - 1], driver="evr",
                                    overwrite_a=True, check_finite=False)
                else:
                    # gamma D + B B^T: positive diagonal plus a PSD low-rank term, so min(diag)
                    # bounds its spectrum from below (the shift of the inverse iteration).
                    _, W = smallest_eigh_shift_invert(diag, factor, None, c, v0=W,
                                                      lower_bound=float(diag.min()))
                if solver == "dense":
                    quad = float(np.sum(W * (factor @ W)))            # Tr(W^T M W)
                else:
                    BW = factor.T @ W
                    quad = float(np.sum(BW * BW))
                history.append(quad + self.gamma * smoothed_l21_norm(W, self.eps))
                weights = l21_reweight(W, eps=self.eps)
                if (self.tol is not None and len(history) > 1
                        and history[-2] - history[-1] <= self.tol * abs(history[-2])):
                    converged = True
                    break
        self.W_ = W
        self.objective_history_ = history
        self._stopped(len(history), converged, test=(
            "relative objective change <= tol" if self.tol is not None
            else "fixed count of max_iter iterations (tol=None)"))
        self.scores_ = np.sqrt(sq) if W is None else row_norms(W)
