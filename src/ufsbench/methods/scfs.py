"""SCFS: Subspace Clustering unsupervised Feature Selection (Parsa, Zare & Ghatee).

Settings: the paper, the authors' code as released (github:mohsengh/SCFS ``SCFS.py`` with the
steps of ``test_SCFS.py``; preset ``released``) and our default.

==============  ============================  ================================  =====================
setting         paper (as printed)            authors' code (as released)       our default
==============  ============================  ================================  =====================
alpha, beta     grid {1e-4, ..., 1e4}         the grid (no single default)      1, 100
gamma           1e6                           1e6                               1e6
preprocessing   not stated                    X + |min X| (one constant)        none
G0              "initialize"                  fuzzy c-means (m = 1.0005) from   K-means indicator
                                              np.random.rand memberships,       + 0.2, scaled to
                                              U_ji / sqrt(sum_i U_ji)           G G^T 1 ~ 1
G-step          Eq. (11)                      Eq. (11)                          sign-split rule,
                                                                                exponent 1/4
W-step          Eq. (6)                       inv(alpha X^T X + beta D          Eq. (6), n x n form
                                              + 1e-6 I)                         when p > n
D               1 / (2 ||w_i|| + eps)         1 / (2 max(||w_i||, 1e-16))       1 / (2 sqrt(||w_i||^2
                                                                                + 1e-8))
stop            (obj_t-1 - obj_t) / obj_t     |change| / obj_t < 1e-5,          |change| / |obj_t|
                < 1e-5                        1000 iterations                   <= 1e-5, 1000 its
ranking         ||w_i|| decreasing            argsort(sum(W^2, 1))[::-1]        ||w_i|| decreasing
==============  ============================  ================================  =====================

``released`` sets update="printed", init="cmeans", preprocess="offset", ridge=1e-6,
eps=1e-32 (sqrt(||w||^2 + 1e-32) is max(||w||, 1e-16) to round-off wherever ||w|| is not
itself round-off), gamma=1e6, max_iter=1000, tol=1e-5; alpha and beta are the run's. Its start
is drawn as the authors' code draws it (``np.random.seed(s); np.random.rand(c, n)`` is
``RandomState(s).rand(c, n)``); ``init`` given as an array injects a recorded G0
(``ufsbench.conformance.scfs``).
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from scipy import linalg as sla
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import POSITIVE_INT, UFSSelector, register
from ufsbench.numerics import l21_norm, l21_reweight, row_norms
from ufsbench.numerics.cg import block_pcg
from ufsbench.numerics.fuzzy_cmeans import cmeans_start
from ufsbench.numerics.gram_solve import data_gram, solve_gram_plus_diag, solve_psd
from ufsbench.numerics.indicators import kmeans_scaled_indicator
from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part

UPDATES = ("split", "printed")
W_SOLVERS = ("auto", "primal", "dual", "cg")
INITS = ("kmeans", "random", "cmeans")
#: Preprocessing: "none" (X as given), "shift" (each feature's minimum subtracted) or "offset"
#: (the one constant |min X| added to every entry, the authors' test script); None is the
#: deprecated spelling of "none".
PREPROCESS = ("none", "shift", "offset")
#: Marks a deprecated parameter that was not passed (scikit-learn's convention).
DEPRECATED = "deprecated"
#: Constant added to the K-means indicator matrix so that no entry of G0 is 0 (a 0 never moves).
INIT_OFFSET = 0.2


def scfs_w_step(X: np.ndarray, G: np.ndarray, d: np.ndarray, alpha: float, beta: float,
                solver: str = "auto", ridge: float = 0.0) -> np.ndarray:
    """Eq. (6): W = (alpha X^T X + beta D + ridge I)^{-1} alpha X^T G with D = diag(d), d > 0
    (``ridge`` = 0 is Eq. (6) as printed; the authors' code adds 1e-6 I).

    ``solver="primal"`` solves the p x p system of Eq. (6) as printed (Cholesky, O(p^3 + n p^2)).
    ``solver="dual"`` uses the push-through (Woodbury) identity
    (alpha X^T X + beta D)^{-1} X^T = D^{-1} X^T (alpha X D^{-1} X^T + beta I_n)^{-1},
    so W = alpha D^{-1} X^T (alpha X D^{-1} X^T + beta I_n)^{-1} G: one n x n solve,
    O(n^2 p + n^3), the fast form when p >> n. ``"auto"`` takes the dual form when p > n.
    Both need beta > 0 and d > 0 (then both matrices are symmetric positive definite). The solve
    itself is the shared ``ufsbench.numerics.gram_solve.solve_gram_plus_diag`` with reg = beta d / alpha,
    which refuses an unknown ``solver`` (SCFS validates its ``solver`` once, before the fit).
    """
    # Dividing Eq. (6) by alpha: W = (X^T X + (beta D + ridge I) / alpha)^{-1} X^T G.
    reg = (beta / alpha) * np.asarray(d, dtype=float) + ridge / alpha
    return solve_gram_plus_diag(X, G, reg, method=solver)


#: X with at most this share of non-zero entries is multiplied as a CSR matrix
#: (:func:`sparse_form`); BASEHOCK's word counts have 1.4 %.
SPARSE_DENSITY = 0.1
#: The dual CG of the W-step (:class:`WStep`): relative residual per column, and the step caps
#: with the diagonal preconditioner and with an earlier step's Cholesky factor (a step costing
#: 2 n^2 c: 30 of them cost about one new factorisation on BASEHOCK). A direct solve takes over
#: when the cap is reached.
CG_RTOL = 1e-12
CG_MAX_ITER = 300
CG_FACTOR_MAX_ITER = 30


def sparse_form(X: np.ndarray):
    """X as CSR when at most ``SPARSE_DENSITY`` of it is non-zero, else X itself: the products
    X V and X^T V then cost O(nnz) instead of O(n d), with the same values up to round-off."""
    return sparse.csr_matrix(X) if np.count_nonzero(X) <= SPARSE_DENSITY * X.size else X


class WStep:
    """The W-step of one fit, Eq. (6) by the form ``solver`` names (see :func:`scfs_w_step`),
    with the data-only parts formed once per fit.

    * "primal": the p x p system, X^T X formed once; the same arithmetic as
      :func:`scfs_w_step`, bit for bit.
    * "dual": the n x n push-through form by Cholesky, as :func:`scfs_w_step`.
    * "cg": the same n x n system (I + X R^{-1} X^T) Y = G, W = R^{-1} X^T Y with R = diag(reg),
      by preconditioned conjugate gradients started from the previous step's Y (D changes
      little between iterations) and run to a relative residual of ``CG_RTOL`` per column;
      O(nnz c) per product for a sparse X. The preconditioner is the diagonal of the system
      (7-8 CG steps per W-step on BASEHOCK at the default) until that fails from a warm start
      (beta / alpha <= 1e-2 on BASEHOCK makes the system too ill-conditioned for it); from then
      on it is the Cholesky factor of the system of the last step that was solved directly.
      A step whose CG does not reach the residual within its cap (``CG_MAX_ITER``,
      ``CG_FACTOR_MAX_ITER``) is solved by Cholesky, and its factor preconditions the steps
      after it.
    * "auto": "primal" when p <= n, else "cg" for a sparse X (:func:`sparse_form`), else "dual".
    """

    def __init__(self, X, Xop, solver: str, alpha: float, beta: float, ridge: float):
        n, p = X.shape
        if solver == "auto":
            solver = "primal" if p <= n else ("cg" if sparse.issparse(Xop) else "dual")
        self.X, self.Xop, self.solver = X, Xop, solver
        self.ratio, self.ridge = beta / alpha, ridge / alpha
        self.gram = data_gram(X) if solver == "primal" else None
        self.xtg: np.ndarray | None = None           # the primal form's last X^T G
        if solver == "cg":
            self.XT = Xop.T.tocsr() if sparse.issparse(Xop) else Xop.T
            self.X2 = Xop.multiply(Xop).tocsr() if sparse.issparse(Xop) else Xop * Xop
            self.Y = np.zeros((n, 0))
            self.factor = None                   # Cholesky factor of an earlier step's system
            self.diagonal_works = True           # the diagonal preconditioner still converges

    def __call__(self, G: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(W, X W) for the current G and reweighting d. The primal form keeps its X^T G in
        ``xtg`` (else None): the G-step's X (X^T G) on a dense X is the same product."""
        reg = self.ratio * np.asarray(d, dtype=float) + self.ridge
        self.xtg = None
        if self.solver == "primal":
            self.xtg = self.X.T @ G
            W = solve_gram_plus_diag(self.X, G, reg, method="primal", gram=self.gram,
                                     xtb=self.xtg)
            return W, self.X @ W
        if self.solver == "dual":
            return self._dual(G, reg)
        inv = 1.0 / reg
        warm = self.Y.shape == G.shape
        Y0 = self.Y if warm else np.zeros_like(G)
        Y = None
        if self.diagonal_works:
            diagonal = 1.0 + np.asarray(self.X2 @ inv).ravel()
            Y = self._cg(G, inv, Y0, lambda R: R / diagonal[:, None], CG_MAX_ITER)
            self.diagonal_works = Y is not None or not warm
        if Y is None and not self.diagonal_works and self.factor is not None:
            Y = self._cg(G, inv, Y0, lambda R: sla.cho_solve(self.factor, R),
                         CG_FACTOR_MAX_ITER)
        if Y is None:
            Y = self._direct(G, inv)
        self.Y = Y
        W = inv[:, None] * (self.XT @ Y)
        return W, self.Xop @ W

    def _direct(self, G: np.ndarray, inv: np.ndarray) -> np.ndarray:
        """Y by Cholesky of the formed n x n system; its factor is kept as the preconditioner
        (least squares and no factor where round-off makes the system look indefinite)."""
        Z = self.Xop @ sparse.diags(np.sqrt(inv)) if sparse.issparse(self.Xop) \
            else self.Xop * np.sqrt(inv)
        A = Z @ Z.T
        A = A.toarray() if sparse.issparse(A) else A
        A[np.diag_indices(A.shape[0])] += 1.0
        try:
            self.factor = sla.cho_factor(A)
        except np.linalg.LinAlgError:
            self.factor = None
            return solve_psd(A, G)
        return sla.cho_solve(self.factor, G)

    def _dual(self, G: np.ndarray, reg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The n x n form by Cholesky, with the arithmetic of ``solve_gram_plus_diag`` (the same
        W bit for bit); X W = X R^{-1} X^T Y is then A Y - Y for the formed A = I + X R^{-1} X^T,
        O(n^2 c) instead of O(n d c)."""
        Z = self.X / np.sqrt(reg)[None, :]
        A = Z @ Z.T
        A[np.diag_indices(A.shape[0])] += 1.0
        Y = solve_psd(A, G)
        return (self.X.T @ Y) / reg[:, None], A @ Y - Y

    def _cg(self, G: np.ndarray, inv: np.ndarray, Y: np.ndarray, precondition,
            max_iter: int) -> np.ndarray | None:
        """Y with (I + X diag(inv) X^T) Y = G by preconditioned CG from Y (``precondition``
        applies the inverse of the preconditioner); None when ``max_iter`` steps leave a
        column's relative residual above ``CG_RTOL``."""
        return block_pcg(lambda V: V + self.Xop @ (inv[:, None] * (self.XT @ V)), G, Y,
                         precondition, CG_RTOL, max_iter)


def scfs_objective(X: np.ndarray, G: np.ndarray, W: np.ndarray, alpha: float, beta: float,
                   gamma: float, XW: np.ndarray | None = None,
                   reconstruction: float | None = None) -> float:
    """Objective (13): ||X - G G^T X||^2 + alpha ||X W - G||^2 + beta ||W||_{2,1}
    + gamma ||G G^T 1 - 1||^2, with 1 the n x n matrix of ones (so the last term is
    gamma * n * ||G G^T e - e||^2 for the vector of ones e). ``XW`` and ``reconstruction``
    (the first term) may be given when the caller has them."""
    n = X.shape[0]
    fit = (X @ W if XW is None else XW) - G
    if reconstruction is None:
        reconstruction = _reconstruction_error(X, G)
    rowsum = G @ G.sum(axis=0) - 1.0                    # G G^T e - e
    return float(reconstruction + alpha * np.einsum("ij,ij->", fit, fit)
                 + beta * l21_norm(W) + gamma * n * rowsum @ rowsum)


def outer_gram(X: np.ndarray, Xop) -> np.ndarray | None:
    """K = X X^T (n x n, once per fit) for a dense X with p > n, else None. Then every K G costs
    O(n^2 c) instead of the O(n p c) of X (X^T G), and ||X - G G^T X||^2 follows from K G
    (:func:`_gram_reconstruction_error`); a sparse X keeps its O(nnz c) products."""
    n, p = X.shape
    return X @ X.T if p > n and not sparse.issparse(Xop) else None


def _gram_reconstruction_error(K: np.ndarray, G: np.ndarray, KG: np.ndarray) -> float:
    """||X - G G^T X||^2 = tr K - 2 <G, K G> + <G^T G, G^T K G> for K = X X^T."""
    return float(np.trace(K) - 2.0 * np.sum(G * KG) + np.sum((G.T @ G) * (G.T @ KG)))


def _reconstruction_error(X: np.ndarray | sparse.csr_matrix, G: np.ndarray,
                          block_cells: int = 1 << 16) -> float:
    """||X - G G^T X||_F^2 by row blocks of ~64 K entries: the n x d residual is never formed
    (on BASEHOCK, 1993 x 4862, three 77 MB passes per objective made it a fifth of the fit).
    Only the order of the sum differs from the whole-matrix form (round-off). A sparse X
    (:func:`sparse_form`) takes ||X||^2 - 2 ||X^T G||^2 + <G^T G, (X^T G)^T X^T G>, O(nnz c)."""
    if isinstance(X, np.ndarray):
        GtX = G.T @ X
        rows = max(1, block_cells // max(X.shape[1], 1))
        total = 0.0
        for start in range(0, X.shape[0], rows):
            block = X[start:start + rows] - G[start:start + rows] @ GtX
            total += float(np.einsum("ij,ij->", block, block))
        return total
    A = X.T @ G
    return float(X.multiply(X).sum() - 2.0 * np.sum(A * A) + np.sum((G.T @ G) * (A.T @ A)))


def scfs_start(X: np.ndarray, n_clusters: int, init: str = "kmeans",
               random_state=None) -> np.ndarray:
    """G0 (n x c) for a named ``init`` (class docstring): "kmeans" (the K-means indicator plus
    ``INIT_OFFSET``), "random" (uniform(0.1, 1) entries), both scaled by the s minimising
    ||s^2 G G^T e - e||, or "cmeans" (:func:`cmeans_start`, unscaled, as the authors' code)."""
    rng = check_random_state(random_state)
    n, c = X.shape[0], n_clusters
    if init == "cmeans":
        return cmeans_start(X, c, rng)
    if init == "kmeans":
        _, labels = kmeans_scaled_indicator(X, c, rng, n_init=10)   # draws one seed from rng
        G = np.full((n, c), INIT_OFFSET)
        G[np.arange(n), labels] += 1.0
    else:
        G = rng.uniform(0.1, 1.0, size=(n, c))
    v = G @ G.sum(axis=0)                                 # G G^T e
    return G * np.sqrt(v.sum() / (v @ v))                  # s^2 = <v, e> / <v, v>


def negative_part_of_B(X: np.ndarray, shift: float, block: int = 512) -> sparse.csr_matrix:
    """B- = max(-(X X^T + shift), 0) as a sparse matrix, built in row blocks (never n x n dense).

    With the paper's gamma = 1e6 the shift n*gamma dominates every entry of X X^T on typical
    data and B- is empty; it is non-empty only when some inner products are below -n*gamma.
    It is known to be empty without forming X X^T (O(n^2 d)) when shift >= 0 and X >= 0 or
    every ||x_i||^2 <= shift (then x_i.x_j >= -||x_i|| ||x_j|| >= -shift).
    """
    n = X.shape[0]
    if shift >= 0 and (X.min() >= 0 or np.einsum("ij,ij->i", X, X).max() <= shift):
        return sparse.csr_matrix((n, n))
    rows = []
    for start in range(0, n, block):
        blk = X[start:start + block] @ X.T + shift
        rows.append(sparse.csr_matrix(neg_part(blk)))
    return sparse.vstack(rows, format="csr") if rows else sparse.csr_matrix((n, n))


def split_gradient(X: np.ndarray, G: np.ndarray, XW: np.ndarray, Bneg, ngamma: float,
                   alpha: float, KG: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(grad- / 2, grad+ / 2) of the G-part of (13): the non-negative split of Eq. (10).

    With B = X X^T + ngamma 1 = B+ - B- (``Bneg`` = B-, see :func:`negative_part_of_B`),
    M+ = B+ G, M- = B- G and X W = P - N:
    grad-/2 = 2 M+ + M- G^T G + G G^T M- + alpha P,
    grad+/2 = M+ G^T G + G G^T M+ + 2 M- + alpha G + alpha N,
    so that grad f = 2 (grad+/2 - grad-/2) is Eq. (10) without Phi, and both parts are >= 0 for
    G >= 0. M = B G is applied as X (X^T G) + ngamma e (e^T G) (``KG`` = X X^T G when the
    caller has it): no n x n product per iteration.
    """
    GtG = G.T @ G
    Mneg = Bneg @ G                                      # M- = B- G
    KG = X @ (X.T @ G) if KG is None else KG
    Mpos = KG + ngamma * G.sum(axis=0) + Mneg            # M+ = (B + B-) G
    num = 2 * Mpos + Mneg @ GtG + G @ (G.T @ Mneg) + alpha * pos_part(XW)
    den = Mpos @ GtG + G @ (G.T @ Mpos) + 2 * Mneg + alpha * (G + neg_part(XW))
    return num, den


@register("scfs")
class SCFS(UFSSelector):
    """SCFS: sample-level self-expression G G^T X plus an l2,1-regularised regression X W ~ G.

    Parsa, Zare & Ghatee, "Unsupervised Feature Selection based on Adaptive Similarity Learning
    and Subspace Clustering" (preprint; journal version: Engineering Applications of Artificial
    Intelligence 95, 103855, 2020). X is n x p (samples as rows, as in the paper), G is n x c,
    W is p x c. Model (3)/(13), with the constraint G G^T 1 = 1 relaxed by the penalty of Eq. (9):

        min_{W, G >= 0}  ||X - G G^T X||_F^2 + alpha ||X W - G||_F^2 + beta ||W||_{2,1}
                         + gamma ||G G^T 1 - 1||_F^2,

    solved by Algorithm 1: W by Eq. (6) with D from Eq. (7), then G by a multiplicative rule,
    then D. Features are ranked by ||w_i||_2 (``scores_``); ``labels_`` = argmax of each row of G.

    **The G-step.** With B = X X^T + n gamma 1 (symmetric, PSD; the n comes from the n equal
    columns of the n x n matrix of ones) and M = B G, the G-dependent part of (13) is
        f(G) = tr(G^T B G G^T G) - 2 tr(G^T B G) + alpha tr(G^T G) - 2 alpha tr(G^T X W) + const
    and its gradient is Eq. (10) without Phi: 2 M G^T G + 2 G G^T M + 2 alpha G - 4 M - 2 alpha X W.
    ``update="printed"`` is Eq. (11) exactly: G <- G * [2M + alpha XW] / [M G^T G + G G^T M + alpha G].
    Its numerator and denominator are sign-indefinite as soon as X W or X X^T + n gamma has
    negative entries (data with negative values, any real W), and then G can turn negative or
    NaN. With the paper's gamma = 1e6 the positive n gamma e e^T G term dominates both on typical
    data, so the printed rule stays positive there; it breaks for small gamma (tested with
    gamma = 1e-2 on z-scored data).

    ``update="split"`` (default) is the semi-NMF remedy (Ding, Li & Jordan, TPAMI 2010). Split
    B = B+ - B- and X W = P - N element-wise (A+ = max(A, 0), A- = max(-A, 0)) and put
    M+ = B+ G >= 0, M- = B- G >= 0. Every term of the gradient then has a fixed sign for G >= 0:
        grad f = grad+ - grad-,   grad+/2 = M+ G^T G + G G^T M+ + 2 M- + alpha G + alpha N,
                                  grad-/2 = M- G^T G + G G^T M- + 2 M+ + alpha P,
    and the rule is G <- G * (grad- / grad+)^eta. It reduces to Eq. (11) when eta = 1 and there
    is nothing negative (B- = 0, N = 0), i.e. on non-negative data with X W >= 0.

    **What is proven (the split rule).** Write f as a sum of monomials in the entries of G with
    fixed-sign coefficients (the split makes this possible: the quartic B+ term, the quadratic B-
    and alpha terms and the linear N term are positive; the quartic B- term, the quadratic B+ term
    and the linear P term are negative). With r = G / G~ element-wise around the current G~:
    a positive monomial of degree k <= 4 is <= its value at G~ times sum_l (a_l / k) r_l^k
    (weighted AM-GM), and r^k <= (k/4) r^4 + 1 - k/4; a negative monomial -m(G) is
    <= -m(G~) (1 + sum_l a_l log r_l) (since e^x >= 1 + x). Summing, with Euler's identity,
        f(G) <= Z(G, G~) = const + sum_ij G~_ij [grad+_ij r_ij^4 / 4 - grad-_ij log r_ij],
    tight at G = G~, separable and convex in each r_ij, minimised at r = (grad-/grad+)^(1/4)
    (Yang & Oja, "Unified development of multiplicative algorithms for linear and quadratic
    NMF", IEEE TNN 2011, obtain the same 1/4 exponent for quartic objectives). For any
    eta in (0, 1/4] the new r lies between 1 and that minimiser, so Z, hence f, does not
    increase. So ``exponent <= 0.25`` gives a monotone G-step with G >= 0 and finite
    (grad+ >= alpha G > 0 for alpha > 0, G > 0). ``exponent=1`` (the paper's form of the step)
    is faster but not covered by this proof; the paper's Theorem 1 refers to Lee & Seung for
    (18) without a derivation, and no proof for the printed rule exists (it is not even
    sign-preserving). The W-step decreases alpha ||X W - G||^2 + beta sum_i sqrt(||w_i||^2 + eps)
    (the usual Nie et al. 2010 argument, Eqs. (14)-(17)) once D comes from the previous W, i.e.
    from the second iteration on (the first uses D0 = I). So ``objective_history_`` (recorded
    after each full iteration) is non-increasing for the smoothed (13), and (13) with the exact
    ||W||_{2,1} may rise by at most beta * p * sqrt(eps) (tested with that slack).

    **Decisions where the paper is silent or ambiguous (each documented and tested).**
    - G0 (Algorithm 1 step 2 says only "initialize"): ``init="kmeans"``: the indicator matrix
      of K-means (k-means++, n_init=10, seeded by ``random_state``) on the (preprocessed) X plus
      the constant 0.2 (a zero entry of a multiplicative update never moves), then scaled by the
      scalar s minimising ||s^2 G G^T e - e|| so that G0 nearly meets G G^T 1 = 1. The authors'
      code starts from fuzzy c-means memberships (``init="cmeans"``, :func:`cmeans_start`; with
      its fuzzifier m = 1.0005 they are 0/1 to round-off, so those zeros stay zero and G keeps the
      c-means partition); K-means indicators plus a constant is the soft analogue.
      ``init="random"``: uniform(0.1, 1) entries, same scaling. An array is G0 itself.
    - D0 = I as in Algorithm 1; then D from Eq. (7) in the smoothed form of the shared helper,
      D_ii = 1 / (2 sqrt(||w_i||^2 + eps)) (``eps``, default 1e-8; the paper's
      1 / (2||w_i|| + eps) does not majorise the l2,1 norm exactly, the smoothed form does).
    - Stopping: the printed criterion (obj(t) - obj(t-1)) / obj(t) < 1e-5 is met by any
      decrease (negative left side); it is read as |obj(t-1) - obj(t)| / |obj(t)| <= ``tol``
      (1e-5), with a cap of ``max_iter`` iterations (not stated; the authors' code uses 1000),
      which ends the fit with a ConvergenceWarning (``converged_`` False). One iteration is
      W-step, G-step, D-step; ``objective_history_[t]`` is (13) after it. On 11 of the 14
      papers' data sets with n <= 2000 the default fit stops by the test after 21-72
      iterations; on jaffe, pix10p and pie10p the objective keeps falling by ~1e-4 per
      iteration for thousands of iterations (on jaffe G drifts from G0 towards a far better
      subspace clustering: (13) halves by iteration 6000, and the top 100 at iteration 1000
      shares 77 % with that at 6000), so the cap ends them and their selection is the state
      at iteration 1000.
    - W-step: ``solver="auto"`` uses the n x n dual (Woodbury) form when p > n (identical
      result; see ``scfs_w_step``), solved by warm-started
      conjugate gradients for a sparse X (:class:`WStep`); X^T X of the p x p form is formed
      once per fit. ``ridge`` adds ridge I to the system (the authors' code: 1e-6; default 0:
      beta > 0 and D > 0 already make it definite).
    - Default alpha = 1, beta = 100 (the paper gives none; both are in its grid). For fixed G
      only beta/alpha matters for W, and Eq. (2) has no intercept while G has a positive mean, so
      with a weak l2,1 term (beta/alpha <= 1, p not >> n) noise features absorb the constant part
      of G and can outrank informative ones (tested on synthetic data); beta/alpha = 100 avoids it.
    - gamma = 1e6 as in §5.3 (a fixed parameter, not tuned). With that value n gamma dominates
      X X^T, so the penalty keeps G G^T e close to e and G moves slowly away from G0.
    - Preprocessing: not stated; ``preprocess="none"`` uses X as given, ``"shift"`` subtracts each
      feature's minimum, ``"offset"`` adds |min X| to every entry (the authors' test script).
    - ``update="printed"``: when G becomes non-finite the fit stops with a ConvergenceWarning and
      keeps the last W; ``g_min_history_`` records min(G) per iteration so that the breakdown
      (negative or NaN entries) can be shown.
    - Cost (the same fit up to round-off): a sparse X (at most 10 % non-zero, e.g. BASEHOCK's
      word counts) is multiplied as CSR, and (13)'s ||X - G G^T X||^2 is then taken from
      X^T G; a dense X with p > n gets K = X X^T once, so that the G-step's X X^T G and (13)'s
      first term cost O(n^2 c) (:func:`outer_gram`) and X W comes from the W-step's n x n
      matrix; X^T X of the p x p form is formed once; B- is formed only when it can be
      non-empty (:func:`negative_part_of_B`).

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of G and W (the clusters of G0 and of ``labels_``).
    random_state : int, RandomState instance or None, default None
        Seeds the named starts G0 ("kmeans", "random", "cmeans"); unused when ``init`` is an
        array.
    alpha : float, default 1.0
        Weight of the regression term ||X W - G||_F^2 (grid {1e-4, 1e-2, 1, 1e2, 1e4}).
    beta : float, default 100.0
        Weight of the l2,1 term ||W||_{2,1} (same grid; see above for beta/alpha = 100).
    gamma : float, default 1e6
        Penalty weight of G G^T 1 = 1 (paper: 1e6).
    update : "split" or "printed", default "split"
        The sign-split rule, or Eq. (11) as printed.
    exponent : float in (0, 1], default 0.25
        eta of the split rule G <- G * (grad-/grad+)^eta; 0.25 is proven monotone, 1 is the
        paper's step form. Ignored by ``update="printed"``.
    init : "kmeans", "random", "cmeans" or array-like (n_samples, n_clusters), default "kmeans"
        G0 (see above); an array must be finite and non-negative and is used as it is.
    solver : "auto", "primal", "dual" or "cg", default "auto"
        The W-step's linear solve (see above and :class:`WStep`).
    ridge : float >= 0, default 0.0
        Added to the diagonal of the W-step's system (the authors' code: 1e-6).
    preprocess : "none", "shift" or "offset", default "none"
        X as given, each feature's minimum subtracted, or |min X| added to every entry.
        ``preprocess=None`` is the deprecated spelling of "none" (a FutureWarning).
    max_iter : int, default 1000
        Iteration cap (the authors' code: 1000); see "Stopping" above.
    tol : float, default 1e-5
        Stop when |obj(t-1) - obj(t)| / |obj(t)| <= ``tol`` (see "Stopping" above).
    eps : float, default 1e-8
        Smoothing of the l2,1 reweighting D.
    w_solver : deprecated
        The old name of ``solver`` (a FutureWarning; removed in the next release).
    epsilon : deprecated
        The old name of ``eps`` (a FutureWarning; removed in the next release).

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_i||_2, higher is better.
    W_ : ndarray (n_features, n_clusters)
        The final W (p x c).
    G_ : ndarray (n_samples, n_clusters)
        The final G (n x c).
    labels_ : ndarray (n_samples,)
        argmax of each row of G.
    objective_history_ : list of float
        Objective (13) after each iteration.
    g_min_history_ : list of float
        min(G) after each iteration (NaN where G became non-finite).
    converged_ : bool
        Whether the ``tol`` rule stopped the fit.
    n_iter_ : int
        Iterations run.
    """

    single_threaded_blas = True         # no fit of it was faster on two BLAS threads
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        # alpha > 0 keeps grad+ >= alpha G > 0 in the split rule and beta > 0 makes the W-step
        # system definite (Eq. (6) divides by alpha); the paper's grid is 1e-4 .. 1e4.
        "alpha": [Interval(Real, 0, np.inf, closed="neither")],
        "beta": [Interval(Real, 0, np.inf, closed="neither")],
        "gamma": [Interval(Real, 0, np.inf, closed="left")],    # the paper uses 1e6
        "update": [StrOptions(set(UPDATES))],
        # eta in (0, 1]: 0 would freeze G, and the proven monotone step is eta <= 1/4.
        "exponent": [Interval(Real, 0, 1, closed="right")],
        # A named start, or G0 itself (n x c, non-negative; shape checked against X at fit).
        "init": ["array-like", StrOptions(set(INITS))],
        "solver": [StrOptions(set(W_SOLVERS))],
        # Added to the W-step's diagonal (the authors' code: 1e-6); 0 is Eq. (6) as printed.
        "ridge": [Interval(Real, 0, np.inf, closed="left")],
        "preprocess": [StrOptions(set(PREPROCESS)), None],          # None: deprecated "none"
        "max_iter": POSITIVE_INT,
        "tol": [Interval(Real, 0, np.inf, closed="left")],
        # eps > 0 keeps the reweighting D_ii = 1 / (2 sqrt(||w_i||^2 + eps)) finite for zero rows.
        "eps": [Interval(Real, 0, np.inf, closed="neither")],
        "w_solver": [StrOptions(set(W_SOLVERS)), Hidden(StrOptions({DEPRECATED}))],
        "epsilon": [Interval(Real, 0, np.inf, closed="neither"), Hidden(StrOptions({DEPRECATED}))],
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1.0,
                 beta=100.0, gamma=1e6, update="split", exponent=0.25, init="kmeans",
                 solver="auto", ridge=0.0, preprocess="none", max_iter=1000, tol=1e-5,
                 eps=1e-8, w_solver=DEPRECATED, epsilon=DEPRECATED):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.update = update
        self.exponent = exponent
        self.init = init
        self.solver = solver
        self.ridge = ridge
        self.preprocess = preprocess
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.w_solver = w_solver
        self.epsilon = epsilon

    # -- initialisation -------------------------------------------------------------------------
    def _initial_G(self, X: np.ndarray) -> np.ndarray:
        """G0: ``init`` itself when an array is given, else :func:`scfs_start`."""
        n, c = X.shape[0], self.n_clusters_
        if not isinstance(self.init, str):
            return self._given_G0(n, c)
        return scfs_start(X, c, self.init, self.random_state)

    def _given_G0(self, n: int, c: int) -> np.ndarray:
        """``init`` given as G0 itself: used as it is (no rescaling), once its shape and values
        are checked."""
        G = np.array(self.init, dtype=float)
        if G.shape != (n, c):
            raise UFSBenchError(f"SCFS: init has shape {G.shape}; G0 must be (n_samples, "
                                f"n_clusters) = ({n}, {c})")
        if not np.all(np.isfinite(G)) or G.min() < 0:
            raise UFSBenchError("SCFS: init (G0) must be finite and non-negative")
        return G

    # -- the G-step --------------------------------------------------------------------------
    def _g_step(self, X, G, XW, Bneg, ngamma, KG=None):
        if self.update == "printed":                     # Eq. (11) as printed, no safeguard
            KG = X @ (X.T @ G) if KG is None else KG
            M = KG + ngamma * G.sum(axis=0)              # Algorithm 1 step 6
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return G * (2 * M + self.alpha * XW) / (M @ (G.T @ G) + G @ (G.T @ M)
                                                         + self.alpha * G)
        num, den = split_gradient(X, G, XW, Bneg, ngamma, self.alpha, KG)
        eta = float(self.exponent)
        return multiplicative_step(G, num ** eta, den ** eta)

    def _renamed(self) -> tuple[str, float]:
        """(solver, eps), from the deprecated names where they were passed (FutureWarning)."""
        solver, eps = self.solver, self.eps
        if self.w_solver != DEPRECATED:
            warnings.warn("SCFS's w_solver is deprecated and will be removed in the next release; "
                          "use solver", FutureWarning, stacklevel=4)
            solver = self.w_solver
        if self.epsilon != DEPRECATED:
            warnings.warn("SCFS's epsilon is deprecated and will be removed in the next release; "
                          "use eps", FutureWarning, stacklevel=4)
            eps = self.epsilon
        if self.preprocess is None:
            warnings.warn("SCFS's preprocess=None is deprecated and will be removed in the next "
                          "release; use preprocess='none'", FutureWarning, stacklevel=4)
        return solver, eps

    def _fit(self, X):
        solver, eps = self._renamed()
        if self.preprocess == "shift":
            X = X - X.min(axis=0)
        elif self.preprocess == "offset":
            X = X + abs(X.min())
        n, p = X.shape
        alpha, beta, gamma = float(self.alpha), float(self.beta), float(self.gamma)
        ngamma = n * gamma
        Bneg = negative_part_of_B(X, ngamma) if self.update == "split" else None
        G = self._initial_G(X)
        Xop = sparse_form(X)                         # X as the products take it
        w_step = WStep(X, Xop, solver, alpha, beta, float(self.ridge))
        K = outer_gram(X, Xop)                       # X X^T when it makes K G the cheap product
        KG = None if K is None else K @ G
        d = np.ones(p)                               # D0 = I (Algorithm 1 step 3)
        history, g_min, converged = [], [], False
        for _ in range(int(self.max_iter)):
            W, XW = w_step(G, d)                                      # Eq. (6)
            if K is None and Xop is X and w_step.xtg is not None:     # X (X^T G), X^T G shared
                KG = X @ w_step.xtg
            G_new = self._g_step(Xop, G, XW, Bneg, ngamma, KG)       # Eq. (11) / split rule
            if not np.all(np.isfinite(G_new)):
                g_min.append(float("nan"))
                warnings.warn("SCFS: G became non-finite (update='printed' divides by a "
                              "sign-indefinite denominator); stopped with the last finite "
                              "iterate. Use update='split'.", ConvergenceWarning, stacklevel=3)
                break
            G = G_new
            g_min.append(float(G.min()))
            d = l21_reweight(W, eps=eps, factor=0.5)           # Eq. (7), smoothed
            recon = None
            if K is not None:                                  # also the next G-step's K G
                KG = K @ G
                recon = _gram_reconstruction_error(K, G, KG)
            history.append(scfs_objective(Xop, G, W, alpha, beta, gamma, XW, recon))  # (13)
            if len(history) > 1 and abs(history[-2] - history[-1]) \
                    <= self.tol * max(abs(history[-1]), np.finfo(float).tiny):
                converged = True
                break
        if len(g_min) == len(history):              # not the breakdown (warned above)
            self._stopped(len(g_min), converged, test="relative objective change <= tol")
        else:
            self.n_iter_, self.converged_ = len(g_min), False
        self.W_ = W
        self.G_ = G
        self.labels_ = np.argmax(G, axis=1)
        self.objective_history_ = history
        self.g_min_history_ = g_min
        self.scores_ = row_norms(W)
