"""SPUFS (Lu, Li & Dong, "Structure Preserving Unsupervised Feature Selection", Neurocomputing 301
(2018) 36-45): feature-level self-representation with an l2,1 penalty and graph preservation."""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from scipy import linalg as sla
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.methods.base import MEMORY_CONSTRAINT, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics import knn_graph, l21_reweight, laplacian, sym
from ufsbench.numerics.gram_solve import metric_gram, solve_gram_plus_diag
from ufsbench.numerics.graphs import SPARSE_MIN_SAMPLES, sparse_knn_graph
from ufsbench.numerics.irls import smoothed_l21_norm
from ufsbench.numerics.sparse_gram import sparse_dense_product, sparse_outer_gram

SOLVERS = ("auto", "factored", "primal")
#: Deprecated ``solver`` values (accepted for one release, with a FutureWarning) -> the solver
#: that runs: "dense" was an alias of "primal"; "dual" formed W (d x d) from the n x n system,
#: the same iterates as "factored" up to floating point.
DEPRECATED_SOLVERS = {"dense": "primal", "dual": "factored"}


class _FactoredWStep:
    """The BL9 W-step and everything the fit needs from W, in n x n / n x d form (d > n).

    W = (X^T M X + R)^{-1} X^T X with M = I + beta L (BL9 step 2), R = alpha Q diagonal, is
    W = R^{-1} X^T C X, C = (M K + I)^{-1}, K = X R^{-1} X^T (push-through identity). As
    M K + I = M (K + M^{-1}), C = S^{-1} M^{-1} with S = K + M^{-1}: symmetric positive definite
    (its eigenvalues are >= those of M^{-1} > 0), so its Cholesky factor always exists. With
    G = X X^T = F F^T (F n x n) and M^{-1}, M^{-1} F formed once, every quantity of the fit
    follows without W (x_r the r-th column of X):

        ||w_r||^2 = ||(C F)^T x_r||^2 / R_rr^2,   C F = S^{-1} (M^{-1} F),
        X W = P X with P F = K C F = M^{-1} F - M^{-1} (C F),

    and the data terms of the objective, ||X - X W||^2 + beta Tr(W^T X^T L X W) =
    ||F - P F||^2 + beta Tr((P F)^T L (P F)), are (M = I + beta L cancels the terms linear in
    C F, and M^{-1} = S - K)

        ||F - M^{-1} F||^2 + beta Tr((M^{-1} F)^T L M^{-1} F) + <C F, M^{-1} C F>,
        <C F, M^{-1} C F> = <C F, M^{-1} F> - sum_r ||(C F)^T x_r||^2 / R_rr,

    the first two terms fixed. Set-up O(n^2 d + n^3) once; each IRLS step forms K (a ``syrk``,
    or on mostly-zero X the sparse-column product of :mod:`ufsbench.numerics.sparse_gram`), one
    n x n Cholesky and solve with n right-hand sides, and X^T (C F) (a sparse product on
    mostly-zero X): O(n^2 d + n^3); memory O(n d). W itself (d x d) is formed only when asked
    for.
    """

    def __init__(self, X: np.ndarray, metric: np.ndarray, beta: float, L):
        n = X.shape[0]
        self.X = X
        self.outer = sparse_outer_gram(X)
        # X^T Y by the non-zero entries of X where sparse_outer_gram takes its sparse form.
        self.Xt = None if self.outer is None else sp.csr_matrix(X.T)
        gram = X @ X.T if self.outer is None else self.outer(np.ones(X.shape[1]))
        evals, U = np.linalg.eigh(gram)                          # G = X X^T = F F^T
        F = U * np.sqrt(np.clip(evals, 0.0, None))
        inv = sla.cho_solve(sla.cho_factor(metric, lower=True), np.eye(n))
        self.Minv = sym(inv)                                     # M^{-1}
        self.MiF = self.Minv @ F                                 # M^{-1} F
        self.fixed = float(np.sum((F - self.MiF) ** 2)
                           + beta * np.einsum("ij,ij->", self.MiF, L @ self.MiF))

    def _xt(self, Y: np.ndarray) -> np.ndarray:
        """X^T Y (d x m)."""
        return self.X.T @ Y if self.Xt is None else sparse_dense_product(self.Xt, Y)

    def step(self, reg: np.ndarray) -> dict:
        """One W-step for R = diag(reg): squared row norms of W, the data terms of the
        objective and the S factor."""
        if self.outer is not None:
            S = self.outer(reg)                                  # K = X R^{-1} X^T
        else:
            Z = self.X / np.sqrt(reg)[None, :]
            S = Z @ Z.T                                          # (syrk)
        S += self.Minv                                           # S = K + M^{-1}
        cf = sla.cho_factor(S, lower=True, overwrite_a=True, check_finite=False)
        CF = sla.cho_solve(cf, self.MiF, check_finite=False)     # C F
        TX = self._xt(CF)                                        # X^T C F = ((C F)^T X)^T
        tx_sq = np.einsum("ij,ij->i", TX, TX)                    # ||(C F)^T x_r||^2
        data = self.fixed + float(np.sum(CF * self.MiF)) - float(np.sum(tx_sq / reg))
        return {"row_sq": tx_sq / reg ** 2, "data": data, "cf": cf, "reg": reg}

    def left_factor(self, state: dict) -> np.ndarray:
        """B (d x n) with W = B X: B = R^{-1} X^T C = R^{-1} X^T S^{-1} M^{-1}."""
        return self._xt(sla.cho_solve(state["cf"], self.Minv)) / state["reg"][:, None]


@register("spufs")
class SPUFS(UFSSelector):
    """SPUFS: features whose rows of the self-representation matrix W are largest rank first.

    Qian Lu, Xuelong Li, Yongsheng Dong, "Structure Preserving Unsupervised Feature Selection",
    Neurocomputing 301 (2018) 36-45. The paper text is not available here; the model is the one of
    ``papers/baselines.md`` §9, settled by the only public code (Rdimtools ``do.spufs`` /
    ``method_spufs``) and consistent with SCFS's description of SPUFS (feature-level
    self-expression, explicit graph, regularisation). The paper's own equation numbers could not
    be checked, so the comments cite baselines.md §9 ("BL9"):

        min_W  ||X - X W||_F^2 + alpha ||W||_{2,1} + beta Tr(W^T X^T L X W)          (BL9 model)

    with W (d x d): row r says how much feature r is used to rebuild all features, and L = D - S
    the Laplacian of a sample graph (the structure of the reconstruction XW is preserved).
    IRLS (Nie et al. 2010): with Q = diag(q), q_r = 1 / (2 sqrt(||w_r||^2 + eps)),

        W = (X^T X + beta X^T L X + alpha Q)^{-1} X^T X,                             (BL9 step 2)

    then Q is recomputed; start Q = I. The smoothed objective
    ||X - XW||^2 + alpha sum_r sqrt(||w_r||^2 + eps) + beta Tr(W^T X^T L X W) is what IRLS
    provably does not increase, and is what ``objective_history_`` records. Score of feature r:
    ||w_r||_2 (a ROW norm).

    Decisions where the sources are silent or disagree (all tested):

    * Rdimtools reweights and scores by the COLUMN norms of W; Q multiplies W from the left, so
      the IRLS majoriser needs ROW norms, and a feature's weight is its row. We use rows.
    * Graph: SCFS (the citing paper) prescribes a kNN graph, k = 5, heat kernel with sigma = 1;
      Rdimtools uses a dense heat kernel. We use the kNN heat-kernel graph; ``sigma=None`` (the
      default) takes the mean squared kNN distance, because sigma = 1 underflows every weight to 0
      on unscaled data (pixels, counts) and would silently switch the graph term off. Pass
      ``sigma=1.0`` for SCFS's literal setting.
    * No preprocessing (Rdimtools' default ``preprocess="null"``): the loss is scale-free in W.
    * eps = 1e-8 inside the square root (Rdimtools: sqrt(10 * machine eps) ~ 4.7e-8).
    * Stopping: relative change of the smoothed objective below ``tol`` (1e-6), else
      ``max_iter`` (100) iterations and a ``ConvergenceWarning``; Rdimtools stops on
      ||Q_new - Q_old||_F < 1e-5 with no cap. On unscaled data ||X - XW||^2 and the graph term
      dwarf the l2,1 term, so the objective settles long before the row norms: the test ends
      the default fits on jaffe and umist after 2 iterations, where the largest row norm still
      moves by 17 % and 6 % a step (top-100 sets shared with a 100-iteration fit: 80 and 95).
    * alpha = 0 makes the system singular when d > n; it is then solved in the d x d form
      (least squares), and alpha = beta = 0 with X^T X invertible gives W = I (all scores equal).

    Speed: the W-step is W = (X^T M X + alpha Q)^{-1} X^T X with the metric M = I + beta L.
    ``solver="factored"`` (the default for d > n, "auto") never forms W or any d x d matrix: W =
    B X with B (d x n) by the push-through identity, and the row norms of W, the reweighting and
    the objective come from n x n and n x d products (:class:`_FactoredWStep`), O(n^2 d) per
    iteration and O(n d) memory. ``"primal"`` solves the d x d system (O(d^3)), the default for
    d <= n; X^T M X is formed once per fit (M does not change). From 3000 samples on
    (``graphs.SPARSE_MIN_SAMPLES``) the d x d form takes the kNN graph, L and M as CSR matrices:
    no n x n array (10000 x 1000: 0.6 instead of 3.5 GB, 8 instead of 24 s), X^T M X by a sparse
    product, the same up to round-off. Both give the iterates of the plain IRLS of the BL9
    model up to floating point (tested against ``tests/methods/_reference_spufs.py``); ``W_``
    is formed on demand from ``W_factors_`` after a factored fit (timings:
    docs/performance-history.md).

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        Unused (the model has no cluster count).
    random_state : int, RandomState instance or None, default None
        Unused: the fit is deterministic.
    alpha : float, default 1.0
        Weight of ||W||_{2,1} (SCFS grid {1e-4, 1e-2, 1, 1e2, 1e4}).
    beta : float, default 1.0
        Weight of the graph term (same grid).
    k : int, default 5
        Neighbours of the kNN graph.
    sigma : float or None, default None
        Heat-kernel width; None = mean squared kNN distance (see above).
    eps : float, default 1e-8
        Smoothing of the l2,1 norm.
    max_iter : int, default 100
        Cap on the IRLS steps (a fit it ends warns with a ``ConvergenceWarning``).
    tol : float, default 1e-6
        Stop when the relative change of the smoothed objective is below ``tol``.
    solver : "auto", "factored" or "primal", default "auto"
        See Speed. "dense" (= "primal") and "dual" (runs "factored") are deprecated.
    memory : None, str or joblib.Memory, default None
        Where to cache the kNN graph S (it depends on X, k and sigma only); None computes it on
        every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_r||_2, the row norms of W.
    W_ : ndarray (n_features, n_features)
        The self-representation matrix (formed on demand from ``W_factors_``).
    W_factors_ : tuple of ndarray
        (W,) or (B, X) with W = B X.
    laplacian_ : ndarray or scipy.sparse CSR matrix (n_samples, n_samples)
        L of the kNN graph (CSR where the d x d forms run on 3000 samples or more).
    objective_history_ : list of float
        The smoothed objective after each IRLS step (non-increasing).
    n_iter_ : int
        IRLS steps run.
    converged_ : bool
        Whether the stop test (not ``max_iter``) ended the fit.
    """

    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, np.inf, closed="left")],   # 0: least squares, see above
        "beta": [Interval(Real, 0, np.inf, closed="left")],
        "k": POSITIVE_INT,
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        # The l2,1 smoothing (e.g. 1e-8): q_r = 1 / (2 sqrt(||w_r||^2 + eps)) needs eps > 0.
        "eps": [Interval(Real, 0, np.inf, closed="neither")],
        "max_iter": POSITIVE_INT,
        "tol": [Interval(Real, 0, np.inf, closed="left")],
        "solver": [StrOptions(set(SOLVERS) | set(DEPRECATED_SOLVERS),
                              deprecated=set(DEPRECATED_SOLVERS))],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1.0,
                 beta=1.0, k=5, sigma=None, eps=1e-8, max_iter=100, tol=1e-6, solver="auto",
                 memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.sigma = sigma
        self.eps = eps
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.memory = memory

    def _graph_terms(self, X: np.ndarray, sparse: bool):
        """(L, M): the Laplacian of the kNN heat-kernel graph and the metric M = I + beta L,
        dense, or with ``sparse`` both CSR (no n x n array; the same entries)."""
        n = X.shape[0]
        graph = sparse_knn_graph if sparse else knn_graph
        L = laplacian(cached_call(self.memory, graph, X, k=self._neighbours(n), weight="heat",
                                  sigma=self.sigma))
        if sparse:
            return L, sp.csr_matrix(sp.identity(n, format="csr") + self.beta * L)
        return L, np.eye(n) + self.beta * L

    def _objective(self, X, W, L):
        """Smoothed objective of the BL9 model (the function IRLS does not increase)."""
        XW = X @ W
        fit = float(np.sum((X - XW) ** 2))
        graph = float(np.einsum("ij,ij->", XW, L @ XW))
        return fit + self.alpha * smoothed_l21_norm(W, self.eps) + self.beta * graph

    def _factored_objective(self, state: dict) -> float:
        """The same smoothed BL9 objective from the n x n quantities of :class:`_FactoredWStep`."""
        l21 = smoothed_l21_norm(np.sqrt(state["row_sq"])[:, None], self.eps)
        return state["data"] + self.alpha * l21

    def _resolve_solver(self, n: int, d: int) -> str:
        if self.solver in DEPRECATED_SOLVERS:
            warnings.warn(f"SPUFS solver={self.solver!r} is deprecated and will be removed in the "
                          f"next release; use solver={DEPRECATED_SOLVERS[self.solver]!r}",
                          FutureWarning, stacklevel=4)
        if self.alpha == 0:
            return "lstsq"
        if self.solver == "auto":
            return "factored" if d > n else "primal"
        return DEPRECATED_SOLVERS.get(self.solver, self.solver)

    def _fit(self, X):
        n, d = X.shape
        solver = self._resolve_solver(n, d)
        L, metric = self._graph_terms(X, sparse=solver != "factored" and n >= SPARSE_MIN_SAMPLES)
        L_sparse = sp.csr_matrix(L)                             # k-NN: O(n k) products
        system = _FactoredWStep(X, metric, self.beta, L_sparse) if solver == "factored" else None
        # M is fixed, so X^T M X of the d x d forms is formed once, not in every step.
        gram = None if system is not None else metric_gram(X, metric)
        q = np.ones(d)                                          # Q = I at the start
        history, converged = [], False
        W = state = None
        for it in range(int(self.max_iter)):
            reg = np.maximum(self.alpha * q, 0.0)
            if solver == "factored":                            # BL9 step 2, never forming W
                state = system.step(reg)
                row_sq = state["row_sq"]
                history.append(self._factored_objective(state))
            else:
                if solver == "lstsq":
                    W = np.linalg.lstsq(gram, X.T @ X, rcond=None)[0]
                else:                                                          # BL9 step 2
                    W = solve_gram_plus_diag(X, X, reg, M=metric, method=solver, gram=gram)
                row_sq = np.einsum("ij,ij->i", W, W)
                history.append(self._objective(X, W, L_sparse))
            norms = np.sqrt(row_sq)[:, None]                    # ||w_r||, as a d x 1 matrix
            q = l21_reweight(norms, eps=self.eps, factor=0.5)   # q_r = 1 / (2 sqrt(.. + eps))
            if it > 0 and abs(history[-2] - history[-1]) < self.tol * max(abs(history[-2]), 1e-300):
                converged = True
                break
        self._stopped(len(history), converged, test="relative objective change < tol")
        self.W_factors_ = (W,) if system is None else (system.left_factor(state), X)
        self.laplacian_ = L
        self.objective_history_ = history
        self.scores_ = norms[:, 0]                              # row norms of W

    @property
    def W_(self) -> np.ndarray:
        """The d x d self-representation matrix W. After a factored fit it is formed here, on
        demand, as B @ X from ``W_factors_`` (O(d^2) memory): the fit itself never needs it."""
        factors = self.W_factors_
        return factors[0] if len(factors) == 1 else factors[0] @ factors[1]
