"""DGUFS (Guo & Zhu, "Dependence Guided Unsupervised Feature Selection", AAAI 2018).

=============  ========================  ===============================  =======================
setting        paper (as printed)        authors' code (as released)      our default
=============  ========================  ===============================  =======================
S              0/1 kNN graph (Eq. 3),    given by the caller: getS.m      ``graph="knn"``: Eq.
               k = 5                     (0/1 kNN, the sample itself      (3), k = 5, no
                                         among its k), or -D/max(D)       self-loops
mu0            1e-6                      1e-6                             1.0 (1e-6 overflows
                                                                          without the scaling)
rho, mu_max    1.1, 1e10                 1.1, 1e10                        1.1, 1e10
iterations     "less than 50", a cap     5                                50
stop           --                        ||Z-Y||_inf, ||L-M||_inf < 5e-7  the same
update order   Y, Z, M, L (Algorithm 2)  Z, Y, L, M                       Y, Z, M, L
H Y^T Z H, A   as in Eqs. (10)-(12)      min-max of the off-diagonal to   as printed
                                         [0, 1], zero diagonal            (``affinity_scaling=
                                         (``speedUp``)                    "none"``)
M-step         Eq. (11); l0-relaxed      relaxed, gamma = 5e-3            relaxed, gamma = 5e-3
               (§4.3)
labels         c leading eigenpairs of   eigs(max(L, L'), c, 'la')        the same, Lanczos
               L, argmax |V|                                              seeded by random_state
=============  ========================  ===============================  =======================

``released`` sets mu0=1e-6, max_iter=5, update_order="zylm", affinity_scaling="minmax",
graph="knn_self" (k = 5): the authors' ``DGUFS.m`` with the S of its ``getS.m``. Its scaling
bounds the L-step's eigenvalues by n - 1, below the threshold sqrt(2 alpha / mu), which is at
least 826 for alpha >= 0.5 in its 5 iterations: on n <= 827 samples L stays 0 and the selection is
the m features of smallest norm.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError, UnsupportedDataError
from ufsbench.methods.base import (
    MEMORY_CONSTRAINT,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    FitCost,
    UFSSelector,
    register,
)
from ufsbench.numerics import knn_graph, row_norms, squared_distances, sym
from ufsbench.numerics.eig_bounds import (
    eigenvalues_certainly_at_most,
    perron_root_at_most,
    spectral_norm_bound,
)
from ufsbench.numerics.linalg import double_centre, seeded_eigsh
from ufsbench.numerics.sparsity import largest_positions, smallest_positions
from ufsbench.numerics.threshold_eig import eigenpairs_above

M_UPDATES = ("relaxed", "binary")
#: Marks a deprecated parameter that was not passed (scikit-learn's convention).
DEPRECATED = "deprecated"


def _refuse_zero_features(X: np.ndarray) -> None:
    """All-zero features are refused before any computation: the Z-step (9) drops the m
    lowest-norm rows of V from Z, so Y takes X's zero rows, which stay zero, and the subset
    would hold fewer than m non-zero rows (the l2,0 constraint counts them all the same)."""
    zero = np.flatnonzero(~X.any(axis=0))
    if zero.size:
        shown = ", ".join(map(str, zero[:5])) + (", ..." if zero.size > 5 else "")
        raise UnsupportedDataError(f"DGUFS: X has {zero.size} all-zero feature(s) (columns {shown}), "
                                   f"which its subset takes as zero rows; drop them first, "
                                   f"e.g. X[:, X.any(axis=0)] (in a pipeline: "
                                   f"sklearn's VarianceThreshold() before DGUFS)")


class _ActiveRows:
    """Y, Z and Lambda1 (d x n, the paper's layout) stored only on the rows ``idx`` (sorted).

    Outside ``idx`` all three are exactly zero, so there U = 0 (Y-step) and V = X (Z-step): their
    row norms are 0 and ||x_i||, known without touching those rows. Each iteration first adds the
    rows that could win a selection from outside -- the m lowest-index rows (ties among U's zero
    rows) and the m lowest-norm rows of X (the Z-step's drop candidates) -- and afterwards drops
    rows that are zero in all three again. An iteration then costs O(|idx| n^2 + n^3) plus an
    O(d) integer scan instead of O(d n^2), with the iterates of the dense form (the plain
    Algorithm 2 on full matrices: tests/methods/_reference_dgufs.py).
    """

    def __init__(self, Xt: np.ndarray):
        d, n = Xt.shape
        self.Xt = Xt
        self.active = np.zeros(d, dtype=bool)
        self.idx = np.flatnonzero(self.active)
        self.Y, self.Z, self.Lam = (np.zeros((len(self.idx), n)) for _ in range(3))
        # Inactive rows in the order each selection prefers them: by index for the Y-step's zero
        # rows; for the Z-step by ||x_i|| ascending, larger index first (the rows it drops).
        self.index_order = np.arange(d)
        self.drop_order = np.lexsort((-self.index_order, row_norms(Xt)))

    def add_candidates(self, m: int) -> None:
        """Activate the inactive rows that could enter the next Y- or Z-step selection."""
        new = np.union1d(self._first_inactive(self.index_order, m),
                         self._first_inactive(self.drop_order, m))
        if new.size:
            idx = np.concatenate([self.idx, new])
            order = np.argsort(idx, kind="stable")
            pad = np.zeros((new.size, self.Xt.shape[1]))
            self.Y, self.Z, self.Lam = (np.vstack([B, pad])[order]
                                        for B in (self.Y, self.Z, self.Lam))
            self.idx = idx[order]
            self.active[new] = True

    def drop_zero_rows(self) -> None:
        """Deactivate rows that are zero in Y, Z and Lambda1 (exact: they are zero again)."""
        keep = np.any(self.Y != 0, axis=1) | np.any(self.Z != 0, axis=1) \
            | np.any(self.Lam != 0, axis=1)
        if not keep.all():
            self.active[self.idx[~keep]] = False
            self.idx = self.idx[keep]
            self.Y, self.Z, self.Lam = self.Y[keep], self.Z[keep], self.Lam[keep]

    def _first_inactive(self, order: np.ndarray, count: int) -> np.ndarray:
        return order[~self.active[order]][:count]

    def full(self, B: np.ndarray) -> np.ndarray:
        """The d x n matrix whose active rows are B."""
        out = np.zeros(self.Xt.shape)
        out[self.idx] = B
        return out


def _on_rows(W: np.ndarray, B: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """W @ B when W is zero off ``rows``: the product of those rows only."""
    out = np.zeros((W.shape[0], B.shape[1]))
    out[rows] = W[rows] @ B
    return out


def m_step(Q: np.ndarray, mu: float, variant: str, gamma: float) -> np.ndarray:
    """The M-step: Eq. (11) (binary) or its l0-penalised [0, 1] relaxation (§4.3), then unit diagonal.

    ``Q = L + Lambda2 / mu``. See the class docstring for the derivation of the relaxed rule.
    """
    if variant == "binary":
        M = (Q >= 0.5).astype(float)                                    # Eq. (11)
    else:
        # The rule of the class docstring in one comparison: for tau < 1 every q > 1 also
        # exceeds (1 + tau)/2 < 1, so p != 0 iff q > sqrt(tau); for tau >= 1 no q <= 1 exceeds
        # sqrt(tau) >= 1, so p != 0 iff q > (1 + tau)/2, and then p = min(q, 1) = 1.
        tau = 2.0 * gamma / mu
        if tau < 1.0:
            M = np.where(np.sqrt(tau) < Q, np.minimum(Q, 1.0), 0.0)
        else:
            M = (0.5 * (1.0 + tau) < Q).astype(float)
    np.fill_diagonal(M, 1.0)                                            # M = M' - diag(M') + I
    return M


def rank_threshold_psd(A: np.ndarray, eta: float, subset: bool = True):
    """Theorem 2: argmin_{L >= 0} ||L - A||_F^2 + eta rank(L) = Q T_eta(Omega) Q^T of sym(A).

    Keeps the eigenpairs of (A + A^T)/2 with eigenvalue > sqrt(eta). ``subset=True`` first tries
    Gershgorin's bound (:func:`eigenvalues_certainly_at_most`): when it shows that no eigenvalue
    exceeds the threshold, L = 0 without an eigensolver (what LAPACK would also return, bit for
    bit); otherwise :func:`~ufsbench.numerics.threshold_eig.eigenpairs_above` computes the
    eigenpairs above it: LAPACK's subset solver (evr), or the full divide-and-conquer (evd) when
    the mean eigenvalue exceeds the threshold and many clustered eigenvalues would make the
    subset solver slow. ``False`` is the full eigendecomposition. Returns (L, kept eigenvalues).
    """
    As = sym(A)
    thr = np.sqrt(eta)
    if subset and eigenvalues_certainly_at_most(As, thr):
        return np.zeros_like(As), np.zeros(0)
    if subset:
        w, V = eigenpairs_above(As, thr)
    else:
        w, V = np.linalg.eigh(As)
    keep = w > thr
    w, V = w[keep], V[:, keep]
    return sym((V * w) @ V.T), w


GRAPHS = ("knn", "knn_self", "negdist")
UPDATE_ORDERS = ("yzml", "zylm")
AFFINITY_SCALINGS = ("none", "minmax")


def similarity_graph(X: np.ndarray, graph: str = "knn", k: int = 5) -> np.ndarray:
    """S of problem (5): ``"knn"`` Eq. (3), the 0/1 kNN graph (either direction, zero
    diagonal); ``"knn_self"`` the authors' ``getS(X, k, 1)``: the k nearest samples counting the
    sample itself (so k - 1 others), either direction, unit diagonal; ``"negdist"`` the authors'
    demo similarity -D / max(D) with D the Euclidean (not squared) distances."""
    if graph == "knn":
        return knn_graph(X, k=k, weight="binary")
    if graph == "knn_self":
        S = knn_graph(X, k=k - 1, weight="binary") if k > 1 else np.zeros((len(X), len(X)))
        np.fill_diagonal(S, 1.0)
        return S
    D = np.sqrt(squared_distances(X))
    return -D / max(float(D.max()), np.finfo(float).tiny)


def minmax_offdiagonal(C: np.ndarray) -> np.ndarray:
    """The authors' ``speedUp``: off-diagonal entries scaled affinely onto [0, 1], diagonal 0.

    Constant off-diagonal entries (where ``speedUp`` divides 0 by 0) become 0.
    """
    out = np.array(C, dtype=float)
    np.fill_diagonal(out, np.nan)
    low, high = np.nanmin(out), np.nanmax(out)
    out -= low
    if high > low:
        out /= high - low
    else:
        out[:] = 0.0
    np.fill_diagonal(out, 0.0)
    return out


class _State:
    """The n x n iterates L, M, Lambda2, H L H, the penalty mu and the constant beta S."""

    def __init__(self, n: int, mu: float, beta_S: np.ndarray):
        self.beta_S = beta_S
        self.L, self.M, self.Lam2 = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
        self.HLH = double_centre(self.L)
        self.mu = mu
        #: L is the zero matrix: the products with H L H are skipped (they are exactly 0).
        self.L_zero = True
        #: The last positive vector of :func:`perron_root_at_most` (its warm start).
        self.perron: np.ndarray | None = None

    def set_L(self, L: np.ndarray, rank: int) -> None:
        self.L, self.L_zero = L, rank == 0
        self.HLH = np.zeros_like(L) if self.L_zero else double_centre(L)


class _History:
    """Per-iteration records: objective (5), residuals, mu, rank of L, support of Y."""

    def __init__(self):
        self.objective, self.residuals, self.mus, self.ranks, self.supports = [], [], [], [], []

    def add(self, objective, residuals, mu, rank, support) -> None:
        self.objective.append(objective)
        self.residuals.append(residuals)
        self.mus.append(mu)
        self.ranks.append(rank)
        self.supports.append(support)


def _nonzero_rows(B: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.any(B != 0, axis=1))


@register("dgufs")
class DGUFS(UFSSelector):
    """Dependence Guided Unsupervised Feature Selection: an exact m-subset and cluster labels.

    Guo, J. and Zhu, W. "Dependence Guided Unsupervised Feature Selection", AAAI 2018,
    pp. 2232-2239. With X (d x n, samples as columns; ``_fit`` transposes), S the symmetric 0/1
    kNN graph of Eq. (3) and H = (I - 11^T/n)/(n-1) (footnote 4), DGUFS solves problem (5)

        min_{Y,L} -beta Tr(S L) - (1-beta) Tr(Y^T Y H L H) + alpha rank(L)
        s.t. ||X - Y||_{2,0} = d - m, ||Y||_{2,0} = m, L >= 0, L in {0,1}^{n x n}, diag(L) = I

    by the ADMM of Algorithm 2 on the split (6)-(7): Y-step (8) and Z-step (9) by the l2,0 row
    projection of Theorem 1 / Algorithm 1 (``ufsbench.numerics.l20_project``), M-step (11)
    followed by M = M' - diag(M') + I, L-step by Theorem 2 (eigenvalues <= sqrt(2 alpha / mu)
    set to 0), multipliers and penalty by (13)-(15). The selected features are the m non-zero
    rows of Y (``support_``); ``labels_`` come from L as in §4.3.

    Relaxed M-step (§4.3, not written out in the paper). With the penalty gamma ||M'||_0 and
    M' in [0, 1]^{n x n}, the M-subproblem (10) becomes, entrywise with q = (L + Lambda2/mu)_ij
    and tau = 2 gamma / mu (divide (10) + gamma||M'||_0 by mu/2),

        min_{p in [0,1]} (p - q)^2 + tau [p != 0].

    p = 0 costs q^2; any p != 0 costs at least (q - clip(q, 0, 1))^2 + tau, attained at
    p = clip(q, 0, 1) (needs q > 0). Hence, for 0 < q <= 1: p = q if q^2 > tau, i.e. q > sqrt(tau),
    else 0; for q > 1: p = 1 if q^2 > (q - 1)^2 + tau, i.e. q > (1 + tau)/2, else 0; q <= 0: p = 0.
    Ties go to p = 0 (the sparser choice). While tau >= 1 (mu <= 2 gamma) every kept entry has
    q > (1+tau)/2 >= 1, so M' is still binary with threshold (1 + tau)/2 instead of Eq. (11)'s 1/2;
    real values in (0, 1) appear only once mu > 2 gamma. The diagonal of M' does not enter (10),
    so the penalty sets it to 0 and M = M' - diag(M') + I gives it back its unit diagonal. This
    is the SCAMS rule (Li, Cheong & Zhou 2014) that the paper cites, and what the authors' code
    applies with gamma = 0.005.

    Decisions where the paper is silent or does not work as printed:

    * mu0. With the printed mu0 = 1e-6 the first L-step gives L ~ beta S / mu ~ 1e6 and the
      Y/Z-steps multiply Y by (1-beta) HLH / mu every iteration: on raw data the iterates
      overflow within 3-4 iterations (tested). The authors' code hides this by min-max scaling
      H Y^T Z H and A to [0, 1] ("speedUp", ``affinity_scaling="minmax"``), but then no
      eigenvalue of A exceeds sqrt(2 alpha / mu) >= 4472 for the paper's alpha grid and
      n < 10^3, so L stays 0 and the labels are those of a zero matrix. We keep the equations as
      printed and start at ``mu0=1.0`` (rho = 1.1, mu_max = 1e10 as printed); ``mu0=1e-6``
      without the scaling is accepted and raises a UFSBenchError when the iterates overflow.
    * Iteration cap. The paper: "converges within less than 50 iterations" and "we set a maximum
      iteration number"; the authors' code: 5 iterations, tol 5e-7 on the inf-norms of Z - Y and
      L - M. We use ``max_iter=50`` (the paper's bound: the L-step sees mu grow by 1.1^50 ~ 117),
      ``tol=5e-7`` on the same inf-norms, checked before the multiplier update as the code does.
      Five iterations leave ||L - M|| far from 0 (the tests run longer to show the decrease).
    * Update order: Algorithm 2's Y, Z, M, L (the code does Z, Y, L, M: ``update_order=
      "zylm"``; from Y = 0 the code's first Y-step already holds the support that Algorithm 2's
      second one reaches, and the iterates differ afterwards).
    * Feature selection behaviour, a property of Eqs. (8)-(9), not an implementation choice:
      starting from Y = Z = Lambda1 = 0, the first Z-step keeps X on the m rows of *smallest*
      l2 norm (X - Z keeps the d - m largest rows of U = X). Afterwards a row outside the support
      enters Z only if its ||x_i|| is among the m smallest values of ||U||, so the support can
      only move towards low-norm features; on raw data DGUFS therefore selects low-norm features
      whatever the clustering (tested; planted high-variance features are not found). No
      preprocessing is stated in the paper and the authors' code uses raw X; so do we. An
      all-zero feature is the lowest-norm row of all, so the support takes it as a zero row
      of Y and ends with fewer than m non-zero rows: such X is refused before any computation
      (``UnsupportedDataError``: drop the all-zero columns first).
    * S: the 0/1 kNN graph of Eq. (3) with k = 5 (``graph="knn"``). The authors' code takes S
      from its caller: ``getS.m`` (``graph="knn_self"``: the sample counts as one of its own k
      nearest, unit diagonal) or -D / max(D) (``graph="negdist"``, Euclidean D).
    * Labels (§4.3, Algorithm 2 step 10): V-hat = (R diag(sqrt(xi)))^T from the ``n_clusters``
      largest eigenpairs of L (the model has rank(L) = c; the code's eigs(L, c, 'la')), label of
      sample j = row of the largest |V-hat_ij|. These eigenpairs come from ARPACK (Lanczos) with a
      random start vector drawn from ``random_state``: this is the "iteration based
      eigen-decomposition [with] a random start" of §5.1, and it matters when eigenvalues of L
      are (nearly) equal, e.g. equal-size clusters, where the basis and hence the labels vary.
      The L-step itself uses a deterministic LAPACK eigensolver for the eigenvalues above the
      threshold. A zero L gives every sample label 0. Since the ADMM itself is deterministic,
      ``labels_for_seed(s)`` re-draws from the fitted L exactly the labels a fit with
      ``random_state=s`` gives (``random_state_only_in_labels``): the runner's 20 own-label
      runs then cost one fit, not 20 (tested against fresh fits).
    * Row-sparse storage: Y, Z and Lambda1 are stored only on the rows where one of
      them can be non-zero (``_ActiveRows``: the m rows of Y, the m rows the Z-step sets to X,
      and the rows where Lambda1 still holds rounding residue). Off those rows U = 0 and
      V = X, whose row norms are known, so both l2,0 selections need only a few candidate rows
      from outside (the m lowest indices, the m lowest ||x_i||), with the full-matrix tie
      rules. An iteration costs O(|rows| n^2 + n^3) plus an O(d) integer scan instead of
      O(d n^2) plus several d x n temporaries; the iterates are those of the dense form
      (bitwise on ALLAML, Prostate-GE, PIX10P; tested with tied norms).
      The plain dense form is tests/methods/_reference_dgufs.py (timed against it in
      docs/performance-history.md).
    * L-steps without an eigensolver: Theorem 2 keeps only the eigenvalues of sym(A) above
      sqrt(2 alpha / mu). Gershgorin's discs of B = M + (beta S - Lambda2) / mu (symmetric)
      widened by a bound of the rank-m term, ||(1 - beta) H Y^T Z H / mu||_2 <= (1 - beta)
      ||Y H||_2 ||Z H||_2 / mu (two m x m Grams), often show that none is: then L = 0 -- what
      LAPACK returns too, so the iterates are those of the full solve bit for bit -- without
      forming A (an n x m x n product) or the O(n^3) eigendecomposition, and while L = 0 the
      products with H L H are skipped. Where a hub of the kNN graph widens its disc and B is
      nonnegative (as long as L has been 0), the Collatz-Wielandt bound max_i (B x)_i / x_i
      after a few warm-started power steps (O(n^2) each) is tried. Otherwise A is formed and
      LAPACK (evr) computes the eigenpairs above the threshold, or, when the mean eigenvalue
      trace(A)/n exceeds it, the full divide-and-conquer solver (evd) does: there many clustered
      eigenvalues lie above it, where evr's inverse iteration is several times slower (ISOLET,
      COIL20, BINALPHA: all n or 2n/3 of them in a band of width 0.3-0.4; BASEHOCK: 1706 of
      1993), unless one lies within round-off margin of the threshold (:mod:`ufsbench.numerics.
      threshold_eig`; L then agrees with evr's to round-off, ~1e-12). At the default, 43 of 50
      L-steps on COIL20 (A close to a multiple of I) and 28 of 50 on BASEHOCK are settled this
      way; the others give L of rank 1 to n.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        m, the size of the exact subset (the non-zero rows of Y); None: min(50, n_features).
    n_clusters : int, default 2
        c, the number of eigenpairs of L whose vectors give ``labels_`` (§4.3); the ADMM does
        not use it.
    random_state : int, RandomState instance or None, default None
        Seeds only the random start vector of the eigensolver that gives ``labels_``; the ADMM
        is deterministic (see "Labels" above).
    alpha : weight of rank(L) (paper grid 1e1..1e5).
    beta : trade-off in (0, 1) between the graph term and the HSIC term (grid 0.1..0.9).
    k : neighbours of the 0/1 kNN graph S of Eq. (3) (the paper: 5).
    graph : {"knn", "knn_self", "negdist"}, default "knn"
        S: Eq. (3); the authors' ``getS.m`` (k nearest counting the sample itself); -D/max(D).
    m_update : "relaxed" (§4.3, M in [0, 1] with gamma ||M||_0; the paper's recommendation) or
        "binary" (Eq. (11)).
    gamma : l0 weight of the relaxed M-step (the paper: 0.005).
    mu0 : float, default 1.0
        Initial ADMM penalty mu (the paper prints 1e-6; see "mu0" above).
    rho : float >= 1, default 1.1
        Growth factor of mu per iteration (Eq. (15)).
    mu_max : float, default 1e10
        Cap of mu (Eq. (15)); at least ``mu0``, inf for no cap.
    max_iter : int, default 50
        Iteration cap (the paper's bound of 50; the authors' code: 5).
    tol : float, default 5e-7
        Tolerance on the inf-norms of Z - Y and L - M (0 runs all ``max_iter`` iterations).
    update_order : {"yzml", "zylm"}, default "yzml"
        Algorithm 2's Y, Z, M, L or the authors' code's Z, Y, L, M.
    affinity_scaling : {"none", "minmax"}, default "none"
        "minmax": the authors' ``speedUp``, the off-diagonal of H Y^T Z H and of the L-step's
        matrix A scaled onto [0, 1] with a zero diagonal (:func:`minmax_offdiagonal`).
    memory : None, str or joblib.Memory, default None
        Where to cache the kNN graph S (it depends on X and k only); None computes it on
        every fit.
    mu : deprecated
        The old name of ``mu0`` (a FutureWarning; removed in the next release).

    Attributes
    ----------
    support_ : ndarray of bool (n_features,)
        The m selected features (the non-zero rows of Y).
    labels_ : ndarray (n_samples,)
        Cluster labels from L (§4.3; see "Labels" above).
    L_ : ndarray (n_samples, n_samples)
        The final L.
    M_ : ndarray (n_samples, n_samples)
        The final M.
    Y_ : ndarray (n_features, n_samples)
        The final Y, d x n (the paper's layout).
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the inf-norm test, not ``max_iter``, ended the fit.
    objective_history_ : list of float
        Objective (5) at each iterate.
    residual_history_ : list of tuple of float
        The pair (||Z - Y||_inf, ||L - M||_inf) at each iterate.
    mu_history_ : list of float
        The mu used in each iteration's updates.
    rank_history_ : list of int
        The rank of L after each L-step.
    support_history_ : list of ndarray of int
        The m rows Theorem 1 keeps in each Y-step; Y is 0 off them, and in Algorithm 2's order
        the zero matrix in iteration 1 because Z = 0.
    """

    selection_kind = "subset"
    #: The ADMM is deterministic; random_state only seeds the labelling eigensolver's start.
    random_state_only_in_labels = True
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "alpha": POSITIVE,
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "k": POSITIVE_INT,
        "graph": [StrOptions(set(GRAPHS))],
        "m_update": [StrOptions(set(M_UPDATES))],
        "gamma": NON_NEGATIVE,
        "mu0": POSITIVE,
        # The penalty may only grow (Eq. (15)).
        "rho": [Interval(Real, 1, None, closed="left")],
        # inf is allowed: no cap.
        "mu_max": [Interval(Real, 0, None, closed="right")],
        "max_iter": POSITIVE_INT,
        # 0 runs all max_iter iterations.
        "tol": NON_NEGATIVE,
        "update_order": [StrOptions(set(UPDATE_ORDERS))],
        "affinity_scaling": [StrOptions(set(AFFINITY_SCALINGS))],
        "memory": MEMORY_CONSTRAINT,
        "mu": [Interval(Real, 0, None, closed="neither"), Hidden(StrOptions({DEPRECATED}))],
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1e3,
                 beta=0.5, k=5, graph="knn", m_update="relaxed", gamma=0.005, mu0=1.0, rho=1.1,
                 mu_max=1e10, max_iter=50, tol=5e-7, update_order="yzml", affinity_scaling="none",
                 memory=None, mu=DEPRECATED):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.graph = graph
        self.m_update = m_update
        self.gamma = gamma
        self.mu0 = mu0
        self.rho = rho
        self.mu_max = mu_max
        self.max_iter = max_iter
        self.tol = tol
        self.update_order = update_order
        self.affinity_scaling = affinity_scaling
        self.memory = memory
        self.mu = mu

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """Its n x n ADMM: eigendecompositions of n x n matrices in the L-steps that the bounds
        do not settle, ~4.5e-9 n^3 s over 50 iterations (USPS subsets: 1000 samples 6.4 s,
        2000 24.4 s, 4000 291 s). On the paper data sets it gives 0.5x (umist: 0.86 s modelled,
        1.8 measured) to 3.3x (coil20: 13.4 and 4.1 s, where the bounds settle more L-steps) of
        the default fit. Memory: eight n x n arrays."""
        iterations = int(params.get("max_iter", 50))
        seconds = 4.5e-9 * float(n_samples) ** 3 * iterations / 50
        return FitCost(seconds, 64.0 * n_samples ** 2,
                       f"n x n eigendecompositions ({n_samples} x {n_samples}) in its "
                       f"{iterations} ADMM iterations")

    def _check_parameter_relations(self) -> None:
        # Eq. (15) lets the penalty only grow, up to mu_max: a cap below the start would
        # shrink it at the first update instead.
        mu0 = self.mu0 if self.mu == DEPRECATED else self.mu
        if self.mu_max < mu0:
            raise self._invalid(f"mu_max={self.mu_max!r} must be at least mu0={mu0!r}; "
                                f"raise mu_max, e.g. 1e10")

    def _fit(self, X):
        n, d = X.shape
        _refuse_zero_features(X)
        m, beta = self.n_features_to_select_, float(self.beta)
        k = self._neighbours(n)
        if self.graph == "knn":
            S = cached_call(self.memory, knn_graph, X, k=k, weight="binary")       # Eq. (3)
        else:
            S = cached_call(self.memory, similarity_graph, X, graph=self.graph, k=k)
        rows = _ActiveRows(X.T)                     # paper layout, d x n: Y, Z, Lambda1 rows
        mu0 = self._initial_mu()
        state = _State(n, float(mu0), beta * S)
        history = _History()
        zylm = self.update_order == "zylm"
        with np.errstate(over="ignore", invalid="ignore"):  # overflow -> error in _l_step
            for it in range(self.max_iter):
                rows.add_candidates(m)
                mu = state.mu
                if zylm:        # the authors' code: Z, Y (8)-(9), then L, then M
                    Z = self._z_step(rows, rows.Y, _nonzero_rows(rows.Y), state, beta)
                    Y, y_loc = self._y_step(rows, Z, state, beta)
                    L, kept = self._l_step(state.M, Y, y_loc, Z, S, state, beta, it, mu0)
                    M = m_step(L + state.Lam2 / mu, mu, self.m_update, float(self.gamma))
                else:           # Algorithm 2: Y, Z, M, L
                    Y, y_loc = self._y_step(rows, rows.Z, state, beta)
                    Z = self._z_step(rows, Y, y_loc, state, beta)
                    M = m_step(state.L + state.Lam2 / mu, mu, self.m_update, float(self.gamma))
                    L, kept = self._l_step(M, Y, y_loc, Z, S, state, beta, it, mu0)
                state.set_L(L, len(kept))                # also the next iteration's H L H
                state.M = M
                ZmY, LmM = Z - Y, L - M
                r1, r2 = float(np.max(np.abs(ZmY))), float(np.max(np.abs(LmM)))
                if state.L_zero:
                    graph_term = hsic = 0.0
                else:
                    graph_term = float(np.sum(S * L))
                    hsic = float(np.sum((Y[y_loc] @ state.HLH) * Y[y_loc]))
                history.add(-beta * graph_term - (1 - beta) * hsic
                            + self.alpha * len(kept), (r1, r2), mu, len(kept), rows.idx[y_loc])
                rows.Y, rows.Z = Y, Z
                converged = r1 < self.tol and r2 < self.tol
                if converged:
                    break
                rows.Lam += mu * ZmY                                        # Eq. (13)
                LmM *= mu
                state.Lam2 += LmM                                           # Eq. (14)
                state.mu = min(self.rho * mu, self.mu_max)                  # Eq. (15)
                rows.drop_zero_rows()
        self._finish(rows, state, history, m, d)
        self._stopped(len(history.objective), converged,
                      test="||Z - Y||_inf < tol and ||L - M||_inf < tol")

    def _initial_mu(self) -> float:
        if self.mu != DEPRECATED:
            warnings.warn("DGUFS's mu is deprecated and will be removed in the next release; "
                          "use mu0", FutureWarning, stacklevel=4)
            return self.mu
        return self.mu0

    def _y_step(self, rows: _ActiveRows, Z: np.ndarray, state: _State, beta: float):
        """Eq. (8) by Theorem 1: keep the m largest rows of U (U = 0 off rows.idx)."""
        if state.L_zero:
            U = Z + rows.Lam / state.mu
        else:
            U = Z + ((1 - beta) * (Z @ state.HLH) + rows.Lam) / state.mu
        y_loc = largest_positions(row_norms(U), rows.idx, self.n_features_to_select_)
        Y = np.zeros_like(U)
        Y[y_loc] = U[y_loc]
        return Y, y_loc

    def _z_step(self, rows: _ActiveRows, Y: np.ndarray, y_loc: np.ndarray, state: _State,
                beta: float) -> np.ndarray:
        """Eq. (9): X - Z keeps the d - m largest rows of V (V = X off rows.idx)."""
        Xb = rows.Xt[rows.idx]
        if state.L_zero:
            V = Xb - Y - (-rows.Lam) / state.mu
        else:
            YHLH = _on_rows(Y, state.HLH, y_loc)            # Y = 0 off y_loc
            V = Xb - Y - ((1 - beta) * YHLH - rows.Lam) / state.mu
        Z = Xb - V
        dropped = smallest_positions(row_norms(V), rows.idx, self.n_features_to_select_)
        Z[dropped] = Xb[dropped]
        return Z

    def _l_step(self, M, Y, y_loc, Z, S, state: _State, beta: float, it: int, mu0: float):
        """Theorem 2 with A = M + ((1-beta) H Y^T Z H + beta S - Lambda2) / mu (the authors'
        code min-max scales H Y^T Z H and A first: ``affinity_scaling="minmax"``)."""
        if self.affinity_scaling == "none" and self._L_certainly_zero(M, Y[y_loc], Z[y_loc],
                                                                      state, beta):
            return np.zeros_like(M), np.zeros(0)
        HYZH = double_centre(Y[y_loc].T @ Z[y_loc])
        if self.affinity_scaling == "minmax":
            A = minmax_offdiagonal(
                M + ((1 - beta) * minmax_offdiagonal(HYZH) + beta * S - state.Lam2) / state.mu)
        else:   # the same arithmetic in place, in the same order (no n x n temporaries)
            A = HYZH
            A *= 1 - beta
            A += state.beta_S
            A -= state.Lam2
            A /= state.mu
            A += M
        if not np.all(np.isfinite(A)):
            raise UFSBenchError(
                f"DGUFS diverged at iteration {it + 1} (iterates overflowed) with "
                f"mu0={mu0}; the L-step scales like 1/mu: start with a larger mu0 "
                f"(default 1.0)")
        return rank_threshold_psd(A, 2.0 * self.alpha / state.mu)

    def _L_certainly_zero(self, M, Ys, Zs, state: _State, beta: float) -> bool:
        """Whether no eigenvalue of sym(A) exceeds sqrt(2 alpha / mu), shown without forming A:
        A = B + C with B = M + (beta S - Lambda2) / mu symmetric (M, S, Lambda2 are) and
        C = (1-beta) H Y^T Z H / mu of rank <= m, so lambda_max(sym A) <= Gershgorin(B) +
        ||C||_2, and ||H Y^T Z H||_2 <= ||Y H||_2 ||Z H||_2 (m x n factors). Then L = 0, what
        LAPACK returns too; otherwise A is formed and solved as usual. Where Gershgorin's discs
        are too wide (a kNN graph with hubs: a hub's disc has the radius of its degree) and B is
        nonnegative (while L has stayed 0, B = M + (beta S + sum mu M) / mu is), the
        Collatz-Wielandt bound of :func:`perron_root_at_most` is tried."""
        B = state.beta_S - state.Lam2
        B /= state.mu
        B += M
        n = B.shape[0]
        centred = [F - F.mean(axis=1, keepdims=True) for F in (Ys, Zs)]
        low_rank = ((1 - beta) / state.mu / (n - 1) ** 2
                    * spectral_norm_bound(centred[0]) * spectral_norm_bound(centred[1]))
        bound = np.sqrt(2.0 * self.alpha / state.mu)
        if eigenvalues_certainly_at_most(B, bound, low_rank):
            return True
        if not B.min() >= 0.0:
            return False
        certain, state.perron = perron_root_at_most(B, bound - low_rank, state.perron)
        return certain

    def _finish(self, rows: _ActiveRows, state: _State, history: _History, m: int,
                d: int) -> None:
        Y = rows.full(rows.Y)
        nonzero = int(np.count_nonzero(row_norms(Y) > 0))
        if nonzero != m:  # some kept rows of Y are zero, e.g. all-zero features of X
            raise UFSBenchError(f"DGUFS ended with {nonzero} non-zero rows of Y instead of m={m}; "
                                f"drop all-zero features of X or raise max_iter")
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[history.supports[-1]] = True
        self.L_, self.M_, self.Y_ = state.L, state.M, Y
        self.objective_history_ = history.objective
        self.residual_history_ = history.residuals
        self.mu_history_ = history.mus
        self.rank_history_ = history.ranks
        self.support_history_ = history.supports
        self.labels_ = self._labels_for_seed(self.random_state)

    def _labels_for_seed(self, random_state) -> np.ndarray:
        """Labels from the fitted L with the eigensolver started from ``random_state``."""
        return self._labels_from_L(self.L_, check_random_state(random_state))

    def _labels_from_L(self, L: np.ndarray, rng) -> np.ndarray:
        """§4.3: V-hat = (R diag(sqrt(xi)))^T of the c leading eigenpairs; argmax |.| per sample."""
        n, c = L.shape[0], self.n_clusters_
        v0 = rng.uniform(-1.0, 1.0, size=n)
        if not np.any(L) or c >= n:
            if not np.any(L):
                return np.zeros(n, dtype=int)
            xi, R = np.linalg.eigh(sym(L))
        else:
            xi, R = seeded_eigsh(sym(L), k=c, which="LA", v0=v0, tol=0.0)
        Vhat = (R * np.sqrt(np.maximum(xi, 0.0))).T                     # Eq. (16)
        return np.argmax(np.abs(Vhat), axis=0)
