"""NDFS (Li, Yang, Liu, Zhou & Lu, "Unsupervised Feature Selection Using Nonnegative Spectral
Analysis", AAAI 2012).

Settings: the paper, the authors' code as released (AutoUFSTool ``NDFS.m``, whose core is
``AAAI2012.m``; preset ``released``) and our default.

============  ===========================  ==================================  =========================
setting       paper (as printed)           authors' code (as released)         our default
============  ===========================  ==================================  =========================
graph         kNN, k = 5, heat kernel;     adaptive-neighbour weights, k = 5,  heat kernel, k = 5, width
              normalised Laplacian         (A + A^T) / 2; normalised L         = mean squared kNN
                                                                               distance; normalised L
c             number of clusters           4 (hard-coded)                      ``n_clusters``
alpha, beta   tuned on a grid              0.1, 1                              1, 1 (grid 1e-6 .. 1e6)
gamma         large (orthogonality)        1e3                                 1e8 (UFSOL, DGUFS)
F start       not stated                   spectral clustering (``sc.m``,      spectral clustering
                                           K-means 20 replicates), 0/1         (k-means++, 10 restarts),
                                           indicator: memberships frozen       scaled indicator + 0.2
D start       not stated                   W_0 = 0: D_0 = I / (2 sqrt(eps))    D_0 = I
step order    F-step, W-step (Eqs. 16, 11) W from the previous F, then F, both  F-step, then W, same D
                                           with the previous D
F-step        Eq. (16)                     Eq. (16) (+ eps)                    Eq. (16); sign split where
                                                                               it cannot descend
eps in D      not stated                   2.2e-16                             1e-8
stop          until convergence            100 iterations                      relative objective
                                                                               change <= 1e-6, cap 100
ranking       ||w^i|| decreasing           sum(W.^2, 2) decreasing             ||w^i|| decreasing
============  ===========================  ==================================  =========================

``released`` sets graph="adaptive", start="indicator", d_init="zero_w", order="w_first",
update="printed", alpha=0.1, beta=1, gamma=1e3, eps=2.2e-16, n_init=20 and tol=None (100 fixed
iterations); c is ``n_clusters`` (the wrapper's c = 4 is a defect: pass n_clusters=4 to repeat
it). Under Octave the authors' ``kmeans`` call runs Deng Cai's ``litekmeans``; its recorded
starts, given as ``init``, make the start the same partition (``ufsbench.conformance.ndfs``).
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy import linalg as sla
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import DEFAULT_MIN_CELLS, cached_call, memory_location
from ufsbench.methods.base import (
    MEMORY_CONSTRAINT,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    UFSSelector,
    register,
)
from ufsbench.numerics import graphs, knn_graph, l21_reweight, laplacian, row_norms, sym
from ufsbench.numerics.adaptive_neighbors import adaptive_affinity
from ufsbench.numerics.gram_solve import solve_psd
from ufsbench.numerics.irls import SOLVER_METHODS, smoothed_l21_norm
from ufsbench.numerics.nmf import multiplicative_step
from ufsbench.numerics.sparse_gram import SparseOuterGram, sparse_outer_gram
from ufsbench.numerics.spectral import orthogonality_penalty, spectral_soft_indicator, unit_columns

#: MATLAB's eps, the smoothing of the authors' reweighting 0.5 / sqrt(||w^i||^2 + eps).
MATLAB_EPS = float(np.finfo(float).eps)

#: Entries of the rows of M formed at once where Eq. (16) needs the sign split (32 MB).
ROW_BLOCK_CELLS = 1 << 22


def split_products_sym(A, dense_block, F: np.ndarray,
                       block_cells: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """M^+ F and M^- F for a symmetric M = A - N, A sparse, N dense and given block by block.

    ``dense_block(rows, start, out)`` writes N[rows, start:] into ``out`` (overwritten here). Off
    the sparse pattern of A the sign split of M is the split of -N (M^+ = max(-N, 0),
    M^- = max(N, 0)); on it (the kNN edges and the diagonal, O(k n) entries) the entries of M
    are recomputed, so the result equals ``pos_part(M) @ F, neg_part(M) @ F`` up to round-off.
    Only the upper block triangle of N is formed: the block (I, J > I) serves row block I and,
    transposed, row block J (M is symmetric), which halves the O(n^2 r) products. The two block
    buffers (2 x 32 MB at the default size) are allocated once per call, not per block: fresh
    arrays that large are mapped and zero-filled page by page by the OS on every allocation
    (1.06-1.3x for this function on USPS, measured under load).
    """
    A = sp.csr_matrix(A)
    n = A.shape[0]
    block = max(1, min(n, block_cells // n))
    plus, minus = np.zeros_like(F), np.zeros_like(F)
    buffers = np.empty((2, block * n))
    for start in range(0, n, block):
        stop = min(start + block, n)
        shape = (stop - start, n - start)
        N = dense_block(slice(start, stop), start,
                        buffers[0, :shape[0] * shape[1]].reshape(shape))   # N[rows, start:]
        pattern = A[start:stop, start:].tocoo()
        pattern.sum_duplicates()
        m = pattern.data - N[pattern.row, pattern.col]               # M on A's pattern
        Mn = np.maximum(N, 0.0, out=buffers[1, :N.size].reshape(shape))  # M^- off the pattern
        Mp = np.subtract(Mn, N, out=N)                               # max(-N, 0), exact
        Mp[pattern.row, pattern.col] = np.maximum(m, 0.0)
        Mn[pattern.row, pattern.col] = np.maximum(-m, 0.0)
        plus[start:stop] += Mp @ F[start:]
        minus[start:stop] += Mn @ F[start:]
        if stop < n:                                                 # the transposed blocks
            plus[stop:] += Mp[:, stop - start:].T @ F[start:stop]
            minus[stop:] += Mn[:, stop - start:].T @ F[start:stop]
    return plus, minus


def primal_factor(XtX: np.ndarray, reg: np.ndarray):
    """Cholesky factor R (upper) of X^T X + diag(reg), or None when Cholesky fails.

    With Z = X R^{-1}, X (X^T X + beta D)^{-1} X^T = Z Z^T (Eq. (13)), one n^2 d/2 product.
    """
    G = XtX.copy()
    G[np.diag_indices_from(G)] += reg
    try:
        return sla.cholesky(G, lower=False, check_finite=False)
    except np.linalg.LinAlgError:
        return None


def dual_factor(X: np.ndarray, reg: np.ndarray,
                outer: SparseOuterGram | None = None) -> np.ndarray | None:
    """Lower Cholesky factor of A = X R^{-1} X^T + I (n x n) for R = diag(reg), or None when
    round-off breaks it (A >= I in exact arithmetic). By push-through,
    I - X (X^T X + R)^{-1} X^T = A^{-1}, so Eq. (13) needs no d x n solve. X R^{-1} X^T by
    ``syrk``, or by ``outer`` (:func:`ufsbench.numerics.sparse_gram.sparse_outer_gram` of X)."""
    if outer is not None:
        A = outer(reg)
    else:
        Y = X / np.sqrt(reg)[None, :]
        A = Y @ Y.T                                                  # symmetric (syrk)
    A[np.diag_indices_from(A)] += 1.0
    c, info = sla.lapack.dpotrf(A, lower=1, clean=1)
    return c if info == 0 else None


def dual_inverse(X: np.ndarray, reg: np.ndarray, factor: np.ndarray | None = None,
                 outer: SparseOuterGram | None = None) -> np.ndarray:
    """A^{-1} = (X R^{-1} X^T + I)^{-1} (n x n), from :func:`dual_factor`'s Cholesky factor
    (computed here unless given)."""
    c = dual_factor(X, reg, outer) if factor is None else factor
    if c is not None:
        inv, info = sla.lapack.dpotri(c, lower=1)
        if info == 0:
            return np.tril(inv) + np.tril(inv, -1).T
    Y = X / np.sqrt(reg)[None, :]
    return sym(sla.inv(Y @ Y.T + np.eye(X.shape[0])))


class LastProduct:
    """Y -> B @ Y, remembering the last Y (by identity) and its product. An NDFS iteration asks
    X^T F of one F up to three times: its W-step, the next iteration's M F (the same F under a
    new D) and, with ``order="w_first"``, the M F of its own F-step. The arrays passed are
    never changed in place (every step returns a new F)."""

    def __init__(self, B: np.ndarray):
        self.B = B
        self.last: np.ndarray | None = None
        self.product: np.ndarray | None = None

    def __call__(self, Y: np.ndarray) -> np.ndarray:
        if Y is not self.last or self.product is None:
            self.last, self.product = Y, self.B @ Y
        return self.product


class MOperator(NamedTuple):
    """M of Eq. (13) for the current D, as the products one iteration needs."""
    times: Callable[[np.ndarray], np.ndarray]           # F -> M F
    rows: Callable[[np.ndarray], np.ndarray]            # index -> M[index, :], dense
    split: Callable[[np.ndarray], tuple]                # F -> (M^+ F, M^- F), O(n^2 r)
    w_step: Callable[[np.ndarray], np.ndarray]          # F -> W of Eq. (11)


@register("ndfs")
class NDFS(UFSSelector):
    """NDFS: non-negative spectral clustering and l2,1-regularised regression, learnt jointly.

    Li et al. (2012), Eq. (8) (restated as KMUFS Eq. (33)):

        min_{F, W} Tr(F^T L F) + alpha (||X W - F||_F^2 + beta ||W||_{2,1})
        s.t. F^T F = I_c, F >= 0,

    L the normalised Laplacian I - D^{-1/2} S D^{-1/2} of the kNN heat-kernel graph. The
    orthogonality is relaxed to the penalty (gamma / 2) ||F^T F - I||_F^2 with gamma = 1e8
    (UFSOL §5.2, DGUFS §5.1: "we fix gamma = 10^8 to guarantee the orthogonality").
    With W eliminated (Eq. 11, W = (X^T X + beta D)^{-1} X^T F) the F-problem is
    Tr(F^T M F) + (gamma/2)||F^T F - I||^2 with M = L + alpha (I - X (X^T X + beta D)^{-1} X^T)
    (Eq. 13), solved by the multiplicative rule (Eq. 16) F <- F * (gamma F) / (M F + gamma F F^T F).
    Features are ranked by ||w^i|| (decreasing).

    Per iteration M is never formed for Eq. (16): d <= n, with X^T X formed once per fit and
    R^T R = X^T X + beta D (Cholesky), M F = (L + alpha I) F - alpha X W(F), W(F) =
    R^{-1} R^{-T} X^T F (the W-step's own solve; O(n d c + d^3)); d > n (``solver="woodbury"``,
    chosen by ``"auto"``), by push-through I - X (X^T X + beta D)^{-1} X^T =
    (X (beta D)^{-1} X^T + I)^{-1}, M F = L F + alpha times one n x n Cholesky solve and
    W = (beta D)^{-1} X^T (...)^{-1} F; on mostly-zero X (a bag of words such as basehock) the
    n x n X (beta D)^{-1} X^T is formed from the non-zero entries of the sparse columns
    (``ufsbench.numerics.sparse_gram``: the same matrix up to round-off, 5x faster there;
    dense data keeps the ``syrk``). An iteration that needs the sign split splits M into a
    sparse part A (the kNN pattern of L, plus alpha I when d <= n) and a dense part, of which
    only the upper block triangle is formed (:func:`split_products_sym`; M is symmetric):
    Z = sqrt(alpha) X R^{-1}, M = A - Z Z^T. Same products and W as the explicit forms up to
    round-off (tests/methods/test_ndfs.py compares them with the explicit n x n M).
    ``solver="dense"`` forces the d x d form. The start (F_0, spectral clustering on L) does not
    depend on alpha or beta and is cached at ``memory`` (``ufsbench.cache``) within a sweep.

    Decisions where the paper is silent or ambiguous:

    * Update rule: Eq. (16) as printed, F <- F * (gamma F) / (M F + gamma F F^T F), in every
      iteration whose denominator is positive wherever F > 0 (at the papers' gamma = 1e8 the
      gamma F F^T F term dominates: every fit of the papers' grids). M has negative entries, so
      otherwise (small gamma) that iteration takes the sign-split form (modification)
      F <- F * (gamma F + M^- F) / (M^+ F + gamma F F^T F) (``ufsbench.numerics.nmf``), which
      keeps F finite and non-negative for any data and any gamma. The printed rule has no descent
      guarantee for a mixed-sign M, so a printed step that raises Tr(F^T M F) +
      (gamma/2)||F^T F - I||^2 is replaced by the split form, which does not. ``update="split"``
      takes the split form in every iteration. Both are multiplicative rules with the same
      fixed points; the printed one needs only M F, O(n d c) when d <= n, where the split needs
      every entry of the n x n M (O(n^2 d) per iteration: 33 s of a 9298-sample USPS fit).
      Columns of F are rescaled to unit norm after each step (as the public code does).
    * Start: spectral clustering on L (c bottom eigenvectors, rows normalised, K-means with
      ``n_init`` = 10 restarts seeded from ``random_state``), F0 = the scaled indicator +
      ``init_offset`` (0.2) times its mean non-zero entry, unit columns (FSASL adds 0.2 after its
      own noise; a hard 0/1 start, ``start="indicator"`` as in the authors' code, freezes the
      memberships: a zero entry stays zero under Eq. (16)). D_0 = I (``d_init="identity"``).
      ``init`` (r x c sample indices) replaces the K-means seeding by those r starts
      (:func:`ufsbench.numerics.spectral.kmeans_from_sample_starts`: Lloyd from each, the
      partition with the smallest sum of distances kept, as ``litekmeans.m``), and the
      eigenvectors' basis is made canonical where a multiple eigenvalue straddles c.
    * Order of the steps (``order="f_first"``): D from the current W, M from that D, the F-step,
      then W = (X^T X + beta D)^{-1} X^T F with the same D (one linear solve per iteration).
      ``order="w_first"`` (the authors' code) computes W from the previous F first, then the
      F-step, both with the D of the previous W. With the default order the penalised objective
      J = Tr(F^T L F) + alpha (||XW - F||^2 + beta sum_i sqrt(||w^i||^2 + eps))
      + (gamma/2) ||F^T F - I||^2 (``objective_history_``) is non-increasing whenever the F-step
      decreases its own sub-problem (the paper's Theorem; the column rescale is outside it).
    * Graph: k = 5, heat kernel exp(-||x_i - x_j||^2 / sigma), ``sigma=None`` = the mean squared
      kNN distance (seed papers: sigma = 1, which underflows on unscaled data; FSASL: the median
      distance); ``graph="adaptive"``: the adaptive-neighbour weights of the authors' code
      (``ufsbench.numerics.adaptive_neighbors.adaptive_affinity``; ``sigma`` unused). eps =
      1e-8 in the reweighting.
    * Stop: when the relative change of J, (J_{t-1} - J_t) / |J_{t-1}|, is at most ``tol``
      (1e-6; an increase also stops), else after ``max_iter`` = 100 iterations (FSASL's fixed
      count) with a ``ConvergenceWarning``. ``tol=None`` runs exactly ``max_iter`` iterations, the
      authors' fixed count, which is then the stop rule (``converged_`` True).
    * ``labels_`` = argmax of each row of F.

    Large n (from ``ufsbench.numerics.graphs.SPARSE_MIN_SAMPLES`` samples, with d <= n): the
    graph and L are sparse (neighbour search, no n x n distance matrix), the start's
    eigenvectors come from Lanczos, and the n x n M of Eq. (13) is never stored: the row blocks
    of its upper block triangle are formed one at a time (O(block x n) memory) when an iteration
    needs the sign split, which is element-wise in M (O(n^2 d)); Eq. (16) needs M F only.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of F and W (the clusters of the spectral start and of
        ``labels_``).
    random_state : int, RandomState instance or None, default None
        Seeds the ``n_init`` k-means++ starts of the spectral start when ``init`` is None.
    alpha : float, default 1.0
        Weight of the regression term ||X W - F||^2 (Eq. (8); grid {1e-6, ..., 1e6}).
    beta : float, default 1.0
        Weight of ||W||_{2,1} inside the regression term (Eq. (8); same grid).
    gamma : weight of the orthogonality penalty (1e8).
    k : int, default 5
        Neighbours of the kNN graph.
    sigma : float or None, default None
        Heat-kernel width (None: mean squared kNN distance); unused with ``graph="adaptive"``.
    max_iter : int, default 100
        Iteration cap.
    tol : float or None, default 1e-6
        Stop when the relative change of J is at most ``tol`` (an increase also stops; None:
        exactly ``max_iter`` iterations).
    eps : smoothing inside the reweighting 1 / (2 sqrt(||w^i||^2 + eps)).
    init_offset : added to the hard spectral-clustering start (0.2 times its mean entry) when
        ``start="soft"``.
    solver : W-step form: "dense" (d x d), "woodbury" (n x n) or "auto" (d x d when d <= n).
    update : "auto" (Eq. (16) as printed, the split form where needed), "split" (always) or
        "printed" (Eq. (16) in every iteration, no safeguard: the authors' code; a
        non-positive denominator is floored at 1e-300).
    graph : "heat" (kNN heat kernel) or "adaptive" (adaptive-neighbour weights).
    start : "soft" (scaled indicator + ``init_offset``) or "indicator" (the 0/1 indicator).
    init : None or array-like (r, n_clusters) of int
        K-means starts of the spectral start as sample indices (one row per restart); None
        draws ``n_init`` k-means++ starts from ``random_state``.
    n_init : K-means restarts of the spectral start when ``init`` is None (10).
    d_init : "identity" (D_0 = I) or "zero_w" (D_0 from W_0 = 0: I / (2 sqrt(eps))).
    order : "f_first" (F-step, then W) or "w_first" (W from the previous F, then the F-step).
    memory : None, str or joblib.Memory, default None
        Where to cache the kNN graph (it depends on X, k and sigma only) and, for an integer
        ``random_state``, the spectral start (X, k, sigma, n_clusters, init_offset and the seed
        only); None computes them on every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w^i||, the row norms of W.
    labels_ : ndarray (n_samples,)
        argmax of each row of F.
    init_labels_ : ndarray (n_samples,)
        The partition of the spectral start.
    F_ : ndarray (n_samples, n_clusters)
        The final F.
    W_ : ndarray (n_features, n_clusters)
        The final W.
    objective_history_ : list of float
        J after each iteration.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the ``tol`` test (or, with ``tol=None``, the fixed count) ended the fit.
    """

    #: Version of the selections: raised whenever a fix changes them (CHANGELOG.md, Method history).
    single_threaded_blas = True         # no fit of it was faster on two BLAS threads
    revision = 2
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "alpha": POSITIVE,
        "beta": POSITIVE,
        "gamma": POSITIVE,
        "k": POSITIVE_INT,
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "max_iter": POSITIVE_INT,
        # 0 stops only once the objective no longer decreases; None runs max_iter iterations.
        "tol": [*NON_NEGATIVE, None],
        # Keeps the reweighting 1 / (2 sqrt(||w^i||^2 + eps)) finite at a zero row of W.
        "eps": POSITIVE,
        # A zero entry of F stays zero under multiplicative updates.
        "init_offset": POSITIVE,
        "solver": [StrOptions(set(SOLVER_METHODS))],
        "update": [StrOptions({"auto", "split", "printed"})],
        "graph": [StrOptions({"heat", "adaptive"})],
        "start": [StrOptions({"soft", "indicator"})],
        # Sample indices, one row of n_clusters per restart (checked in _check_parameter_relations).
        "init": [None, "array-like"],
        "n_init": POSITIVE_INT,
        "d_init": [StrOptions({"identity", "zero_w"})],
        "order": [StrOptions({"f_first", "w_first"})],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1.0,
                 beta=1.0, gamma=1e8, k=5, sigma=None, max_iter=100, tol=1e-6, eps=1e-8,
                 init_offset=0.2, solver="auto", update="auto", graph="heat", start="soft",
                 init=None, n_init=10, d_init="identity", order="f_first", memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.k = k
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.init_offset = init_offset
        self.solver = solver
        self.update = update
        self.graph = graph
        self.start = start
        self.init = init
        self.n_init = n_init
        self.d_init = d_init
        self.order = order
        self.memory = memory

    def _check_parameter_relations(self) -> None:
        self._check_sample_starts(self.init)

    def objective(self, X, F, W, L) -> float:
        """J(F, W) of the docstring, the quantity recorded in ``objective_history_``."""
        R = X @ W - F
        return (float(np.sum(F * (L @ F)))
                + self.alpha * (float(np.sum(R * R)) + self.beta * smoothed_l21_norm(W, self.eps))
                + 0.5 * self.gamma * orthogonality_penalty(F))

    def _start(self, X, L, large: bool):
        """F_0 and its labels. They depend on X and fixed parameters only (not alpha, beta), so
        with an integer seed a grid sweep reads them from ``memory``: the n x n eigensolve
        and the K-means restarts run once per data set instead of once per grid point."""
        seed = self.random_state
        how = dict(start=self.start, n_init=int(self.n_init),
                   starts=self._sample_starts(self.init, X.shape[0]))
        if (isinstance(seed, (int, np.integer)) and memory_location(self.memory) is not None
                and X.size >= DEFAULT_MIN_CELLS):
            return cached_call(self.memory, spectral_start, X, k=self._graph_k(X.shape[0]),
                               sigma=self.sigma, graph=self.graph, large=large,
                               n_clusters=self.n_clusters_, random_state=int(seed),
                               init_offset=float(self.init_offset), **how)
        return start_from_laplacian(L, self.n_clusters_, seed, self.init_offset, **how)

    def _graph_k(self, n: int) -> int:
        """k, capped so that the graph exists (the adaptive weights need k + 1 neighbours)."""
        return self._neighbours(n, 2 if self.graph == "adaptive" else 1)

    def _m_operator(self, X, A, XtX, weights, outer=None, xt=None) -> MOperator:
        """M of Eq. (13) for the current D, and the W-step of Eq. (11). A is the sparse part of
        M (see ``_fit``).

        d <= n: R^T R = X^T X + beta D (X^T X formed once per fit), M = (L + alpha I) -
        alpha X (R^T R)^{-1} X^T, so M F = A F - alpha X W(F) with W(F) = (R^T R)^{-1} X^T F
        the W-step's own solve: O(n d c + d^3), no n x n matrix. d > n (``woodbury``):
        M = L + alpha (X (beta D)^{-1} X^T + I)^{-1} (push-through), M F by one n x n Cholesky
        solve. The sign split (``split``) needs every entry of the dense part of M: it is formed
        only when called, as the upper block triangle (:func:`split_products_sym`), instead of
        the three n x n x d products and the n x n solve of the reference form. ``outer``
        (d > n, mostly-zero X): forms X (beta D)^{-1} X^T from the non-zero entries of X's sparse
        columns (:mod:`ufsbench.numerics.sparse_gram`). ``xt`` (d <= n): F -> X^T F, which may
        remember its last product (:class:`LastProduct`); None forms it every time.
        """
        alpha, reg = self.alpha, self.beta * weights
        if XtX is None:                                              # d > n, n x n form
            factor = dual_factor(X, reg, outer)
            inverse = None if factor is not None else dual_inverse(X, reg, factor, outer)

            def solve(F):                                            # (X R^-1 X^T + I)^-1 F
                if inverse is not None:
                    return inverse @ F
                return sla.cho_solve((factor, True), F, check_finite=False)

            if outer is None:
                XR = X / reg[None, :]

                def w_step(F):                                       # R^-1 X^T (...)^-1 F
                    return XR.T @ solve(F)
            else:                       # beside the sparse Gram an n x d X R^-1 would dominate
                def w_step(F):
                    return (X.T @ solve(F)) / reg[:, None]

            def rows(index):                                          # A^-1 is symmetric
                unit = np.zeros((X.shape[0], len(index)))
                unit[index, np.arange(len(index))] = 1.0
                return A[index].toarray() + alpha * solve(unit).T

            def split(F):
                inv = dual_inverse(X, reg, factor, outer) if inverse is None else inverse
                return split_products_sym(
                    A, lambda r, s, out: np.multiply(inv[r, s:], -alpha, out=out), F)
            return MOperator(lambda F: A @ F + alpha * solve(F), rows, split, w_step)
        R = primal_factor(XtX, reg)
        if R is not None:
            xt = xt or LastProduct(X.T)

            def solve(B):                                            # (X^T X + beta D)^-1 B
                return sla.cho_solve((R, False), B, check_finite=False)

            def w_step(F):
                return solve(xt(F))

            def rows(index):
                return A[index].toarray() - alpha * (solve(X[index].T).T @ X.T)

            def split(F):
                Z = np.sqrt(alpha) * sla.solve_triangular(R, X.T, trans="T",
                                                          check_finite=False).T
                return split_products_sym(
                    A, lambda r, s, out: np.matmul(Z[r], Z[s:].T, out=out), F)
            return MOperator(lambda F: A @ F - alpha * (X @ w_step(F)), rows, split, w_step)
        # Cholesky failed (extreme beta / alpha): least-squares inverse, with solve_psd's warning.
        G = XtX.copy()
        G[np.diag_indices_from(G)] += reg
        S_inv = sym(solve_psd(G, np.eye(X.shape[1])))
        XS = alpha * (X @ S_inv)
        return MOperator(lambda F: A @ F - XS @ (X.T @ F),
                         lambda index: A[index].toarray() - XS[index] @ X.T,
                         lambda F: split_products_sym(
                             A, lambda r, s, out: np.matmul(XS[r], X[s:].T, out=out), F),
                         lambda F: S_inv @ (X.T @ F))

    def _f_step(self, F: np.ndarray, M: MOperator) -> np.ndarray:
        """One multiplicative F-step on Tr(F^T M F) + (gamma/2) ||F^T F - I||^2.

        Eq. (16) as printed, F * gamma F / (M F + gamma F F^T F), in every row whose denominator
        is positive on the support of F; the other rows (where F_ij has decayed to ~0 while
        (M F)_ij < 0: a few per cent of the rows) take the sign-split form
        F * (gamma F + M^- F) / (M^+ F + gamma F F^T F), their rows of M formed alone
        (O(rows n r)). The printed rule has no descent guarantee for a mixed-sign M (Isolet at
        alpha = 1e6, beta = 1e-6: +11 % in one step), so a step that raises the sub-problem's
        objective is replaced by the split form in every row, which does not raise it (the
        auxiliary-function argument of Ding et al. 2010). ``update="split"``: always that form.
        """
        orthogonality = self.gamma * F @ (F.T @ F)
        if self.update == "printed":
            return multiplicative_step(F, self.gamma * F, M.times(F) + orthogonality)
        if self.update == "auto":
            MF = M.times(F)
            step = self._printed_step(F, M, MF, orthogonality)
            if self._sub_objective(step, M.times(step)) <= self._sub_objective(F, MF):
                return step
        Mp_F, Mn_F = M.split(F)
        return multiplicative_step(F, self.gamma * F + Mn_F, Mp_F + orthogonality)

    def _printed_step(self, F, M: MOperator, MF, orthogonality) -> np.ndarray:
        """Eq. (16), with the sign-split form in the rows where its denominator is not
        positive on the support of F."""
        denominator = MF + orthogonality
        numerator = self.gamma * F
        unsafe = np.flatnonzero(np.any((denominator <= 0) & (F > 0), axis=1))
        block = max(1, ROW_BLOCK_CELLS // F.shape[0])                # O(block x n) memory
        for start in range(0, unsafe.size, block):
            index = unsafe[start:start + block]
            M_rows = M.rows(index)
            denominator[index] = np.maximum(M_rows, 0.0) @ F + orthogonality[index]
            numerator[index] += np.maximum(-M_rows, 0.0) @ F
        return multiplicative_step(F, numerator, denominator)

    def _sub_objective(self, F, MF) -> float:
        """Tr(F^T M F) + (gamma/2) ||F^T F - I||^2, the objective the F-step decreases."""
        return float(np.sum(F * MF)) + 0.5 * self.gamma * orthogonality_penalty(F)

    def _fit(self, X):
        n, d = X.shape
        method = SOLVER_METHODS[self.solver]
        large = n >= graphs.SPARSE_MIN_SAMPLES and method != "dual" and d <= n
        S = cached_call(self.memory, sample_graph, X, k=self._graph_k(n), sigma=self.sigma,
                        graph=self.graph, large=large)
        L = laplacian(S, normalized=True)
        F, self.init_labels_ = self._start(X, L, large)
        primal = method == "primal" or (method == "auto" and d <= n)
        XtX = X.T @ X if primal else None                            # fixed across iterations
        outer = None if primal else sparse_outer_gram(X)             # mostly-zero X, d > n
        L = sp.csr_matrix(L)                     # kNN pattern: O(k n) products in M F and J
        A = L                                                        # the sparse part of M
        if primal:
            A = A + self.alpha * sp.identity(n, format="csr")
        weights = (np.ones(d) if self.d_init == "identity"               # D_0 = I
                   else l21_reweight(np.zeros((d, 1)), eps=self.eps))   # D_0 from W_0 = 0
        history, converged = [], self.tol is None
        xt = LastProduct(X.T) if primal else None                    # X^T F, shared by the steps
        for _ in range(self.max_iter):
            M = self._m_operator(X, A, XtX, weights, outer, xt)
            if self.order == "w_first":
                W = M.w_step(F)                                      # Eq. (11), previous F
                F = unit_columns(self._f_step(F, M))                 # Eq. (16)
            else:
                F = unit_columns(self._f_step(F, M))                 # Eq. (16)
                W = M.w_step(F)                                      # Eq. (11)
            weights = l21_reweight(W, eps=self.eps)
            history.append(self.objective(X, F, W, L))
            if (self.tol is not None and len(history) > 1
                    and history[-2] - history[-1] <= self.tol * abs(history[-2])):
                converged = True
                break
        self.F_ = F
        self.W_ = W
        self.labels_ = np.argmax(F, axis=1)
        self.objective_history_ = history
        self._stopped(len(history), converged,
                      test="relative objective change <= tol" if self.tol is not None
                      else "fixed count of max_iter iterations (tol=None)")
        self.scores_ = row_norms(W)


def sample_graph(X: np.ndarray, *, k: int, sigma, graph: str, large: bool):
    """NDFS's sample graph S: the kNN heat kernel, or the adaptive-neighbour graph."""
    if graph == "adaptive":
        S = adaptive_affinity(X, k, large=large)
        return S if large else S.toarray()
    build = graphs.sparse_knn_graph if large else knn_graph
    return build(X, k=k, weight="heat", sigma=sigma)


def start_from_laplacian(L, n_clusters: int, random_state, init_offset: float, *, start: str,
                         n_init: int, starts):
    """(F_0, labels): spectral clustering on L (K-means from ``starts`` when given), F_0 the soft
    scaled indicator (``start="soft"``) or the 0/1 indicator (``"indicator"``)."""
    F, labels = spectral_soft_indicator(L, n_clusters, random_state,
                                        init_offset if start == "soft" else 0.0, n_init, starts)
    if start == "indicator":
        F = np.zeros_like(F)
        F[np.arange(labels.size), labels] = 1.0
    return F, labels


def spectral_start(X: np.ndarray, *, k: int, sigma, graph: str, large: bool, n_clusters: int,
                   random_state: int, init_offset: float, start: str, n_init: int, starts):
    """NDFS's start (F_0, labels) from X alone: spectral clustering on the graph's Laplacian."""
    S = sample_graph(X, k=k, sigma=sigma, graph=graph, large=large)
    return start_from_laplacian(laplacian(S, normalized=True), n_clusters, random_state,
                                init_offset, start=start, n_init=n_init, starts=starts)
