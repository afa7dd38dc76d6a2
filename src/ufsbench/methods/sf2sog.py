"""SF2SOG, reconstructed (Wang, Zhang, Bian, Wang, Nie & Li, "Sparse and Flexible Projections for
Unsupervised Feature Selection", IEEE TKDE 35(6):6362-6375, 2023): flexible embedding, an
orthogonal l2,0-constrained projection selecting exactly h features, and a learned optimal graph."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.methods.base import (
    DENSE_EIGH_SECONDS_PER_CUBE,
    MEMORY_CONSTRAINT,
    POSITIVE_INT,
    FitCost,
    UFSSelector,
    register,
)
from ufsbench.numerics import (
    eigh_largest,
    eigh_smallest,
    l20_project,
    laplacian,
    orthonormal_polar,
    ranking_from_scores,
    row_norms,
    squared_distances,
    sym,
    top_rows,
)
from ufsbench.numerics.adaptive_neighbors import adaptive_neighbor_graph_of_samples
from ufsbench.numerics.gram_solve import cholesky_solve
from ufsbench.numerics.linalg import seeded_eigsh
from ufsbench.numerics.preprocess import center_unit_norm, zscore
from ufsbench.numerics.simplex import project_simplex_rows_sparse
from ufsbench.numerics.sparse_gram import SparsePlusOffset

PREPROCESS = ("zscore", "center_unit", "none")
#: Deprecated ``preprocess`` spellings (accepted for one release, with a FutureWarning).
DEPRECATED_PREPROCESS = {"unit": "center_unit"}
SOLVERS = ("auto", "factored", "dense")
#: Largest entries per row the G-step's projection sorts first (doubled where a row needs more).
G_STEP_WINDOW = 128
#: From this many samples on, lambda_max(B B^T) of the factored W-step comes from Lanczos.
LANCZOS_MIN_SIZE = 500


class _DenseTraceOperator:
    """The W-step matrix M (d x d) held densely: the reference form (``solver="dense"``)."""

    def __init__(self, M: np.ndarray):
        self.M = M
        self.dim = M.shape[0]

    def diagonal(self) -> np.ndarray:
        return np.diag(self.M).copy()

    def dot(self, W: np.ndarray) -> np.ndarray:
        return self.M @ W

    def block(self, rows: np.ndarray) -> np.ndarray:
        return self.M[np.ix_(rows, rows)]

    def largest_eigenvalue(self) -> float:
        return float(eigh_largest(self.M, 1)[0][0])


class _GramTraceOperator:
    """M = B^T B with B (n x d), never formed: O(n d) memory, the fast form for d > n.

    diag(M) = squared column norms of B, M W = B^T (B W) (O(n d m)), M_OmegaOmega = B_Omega^T
    B_Omega (h x h) and lambda_max(M) = lambda_max(B B^T) (n x n), the same numbers as the dense
    form up to floating point. lambda_max: the dense subset eigensolver below
    ``LANCZOS_MIN_SIZE`` rows, Lanczos on B B^T to machine precision from a seeded start above
    (basehock, n = 1993: 21 products, 0.03 s instead of 0.6 s; the value agrees to 3e-16
    relative), the dense solver again if Lanczos does not converge.

    ``factors`` = (s, Phi, Xs) with B = diag(s) Phi^T X and Xs the
    :class:`~ufsbench.numerics.sparse_gram.SparsePlusOffset` form of a mostly-zero X: Lanczos
    then multiplies by B B^T = diag(s) Phi^T X X^T Phi diag(s) through X's non-zeros and two
    n x n products, without forming B B^T (the n^2 d / 2 syrk; basehock: 0.06 s instead of
    0.38 s per W-step, the value equal to 4e-16 relative).
    """

    def __init__(self, B: np.ndarray,
                 factors: tuple[np.ndarray, np.ndarray, SparsePlusOffset] | None = None):
        self.B = B
        self.dim = B.shape[1]
        self.factors = factors

    def diagonal(self) -> np.ndarray:
        return np.einsum("ij,ij->j", self.B, self.B)

    def dot(self, W: np.ndarray) -> np.ndarray:
        return self.B.T @ (self.B @ W)

    def block(self, rows: np.ndarray) -> np.ndarray:
        Br = self.B[:, rows]
        return Br.T @ Br

    def _implicit_outer(self) -> LinearOperator:
        """B B^T as an operator through the factors (see the class docstring)."""
        assert self.factors is not None
        s, Phi, Xs = self.factors
        n = s.shape[0]

        def matvec(v: np.ndarray) -> np.ndarray:
            u = Phi @ (s * np.ravel(v))
            return s * (Phi.T @ Xs.dot(Xs.tdot(u)))

        return LinearOperator((n, n), matvec=matvec, dtype=float)

    def largest_eigenvalue(self) -> float:
        n = self.B.shape[0]
        C = None
        if n >= LANCZOS_MIN_SIZE:
            operator = self._implicit_outer() if self.factors is not None else None
            if operator is None:
                operator = C = self.B @ self.B.T
            v0 = np.random.default_rng(0).standard_normal(n)
            try:
                value = seeded_eigsh(operator, k=1, which="LA", tol=0.0, v0=v0,
                                     return_eigenvectors=False)
                return float(value[0])
            except ArpackNoConvergence:
                pass
        if C is None:
            C = self.B @ self.B.T
        return float(eigh_largest(C, 1)[0][0])


def _as_operator(M):
    return _DenseTraceOperator(M) if isinstance(M, np.ndarray) else M


def initial_graph(Xp: np.ndarray, k: int) -> np.ndarray:
    """The adaptive-neighbour graph of the preprocessed data: depends on (Xp, k) only, so a grid
    sweep reads it from the disk cache (ufsbench.cache). From ``SPARSE_MIN_SAMPLES`` samples on
    its neighbours come from the blockwise search, not an n x n distance matrix
    (:func:`~ufsbench.numerics.adaptive_neighbors.adaptive_neighbor_graph_of_samples`)."""
    return adaptive_neighbor_graph_of_samples(Xp, k)


def _preprocess(X: np.ndarray, how: str) -> np.ndarray:
    """zscore: zero mean, unit variance; center_unit: zero mean, unit l2 norm; none.
    Constant features -> 0."""
    if how == "none":
        return X.copy()
    how = DEPRECATED_PREPROCESS.get(how, how)
    return zscore(X) if how == "zscore" else center_unit_norm(X)


def _embed(d: int, rows: np.ndarray, block: np.ndarray) -> np.ndarray:
    W = np.zeros((d, block.shape[1]))
    W[rows] = block
    return W


def _best_on_support(M, rows: np.ndarray, m: int) -> np.ndarray:
    """argmin_{W^T W = I, rows(W) in Omega} Tr(W^T M W): the m bottom eigenvectors of M_OmegaOmega."""
    _, V = eigh_smallest(M.block(rows), m)
    return _embed(M.dim, rows, V)


def _trace(W: np.ndarray, M) -> float:
    return float(np.einsum("ij,ij->", W, M.dot(W)))


def l20_orthogonal_trace_min(M, h: int, m: int, W0: np.ndarray | None = None,
                             rows0: np.ndarray | None = None,
                             max_inner: int = 30) -> tuple[np.ndarray, np.ndarray, float]:
    """Approximately minimise Tr(W^T M W) s.t. W^T W = I_m, ||W||_{2,0} <= h (M symmetric PSD).

    h == m: exact closed form, the m features with the smallest M_rr (ties to the lower index),
    W = their coordinate axes (any orthonormal basis of those rows has the same value Tr(M_OO)).
    h > m: with P = sigma I - M (sigma = lambda_max(M), so P is PSD and the problem is
    max Tr(W^T P W)), a generalised power iteration: Q = P W, Omega = the rows kept by the shared
    l2,0 row projection of Q, and two candidates, the GPI step polar(P_h(Q)) and the exact optimum
    on Omega (bottom-m eigenvectors of M_OmegaOmega). The start candidates are W0 with its
    support rows0 (a warm start; both or neither) and the optimum on the h smallest M_rr. A
    candidate is accepted only if it lowers Tr(W^T M W), so the value never increases; the loop
    stops when no candidate improves. Returns W, its support Omega (h sorted row indices; W may
    vanish on a row of Omega only by an exact zero in an eigenvector) and Tr(W^T M W).

    ``M`` is a dense symmetric array or an operator with the methods of
    :class:`_GramTraceOperator` (diagonal, dot, block, largest_eigenvalue), e.g. M = B^T B never
    formed: the algorithm only reads diag(M), products M W, h x h blocks and lambda_max(M).
    """
    M = _as_operator(M)
    d = M.dim
    diag_rows = np.sort(ranking_from_scores(-M.diagonal())[:h])   # smallest M_rr, ties: lower index
    if h == m:
        W = _embed(d, diag_rows, np.eye(m))
        return W, diag_rows, _trace(W, M)
    sigma = max(M.largest_eigenvalue(), 0.0)
    W, rows_best = _best_on_support(M, diag_rows, m), diag_rows
    best = _trace(W, M)
    if W0 is not None and rows0 is not None:
        value = _trace(W0, M)
        if value <= best:
            W, rows_best, best = W0, rows0, value
    for _ in range(max_inner):
        Q = sigma * W - M.dot(W)                             # Q = P W
        Qh = l20_project(Q, h)                               # shared l2,0 row projection
        rows = top_rows(Q, h)                                # the rows l20_project keeps
        improved = False
        for cand in (orthonormal_polar(Qh), _best_on_support(M, rows, m)):
            value = _trace(cand, M)
            if value < best - 1e-12 * max(abs(best), 1.0):
                W, rows_best, best, improved = cand, rows, value, True
        if not improved:
            break
    return W, rows_best, best


@register("sf2sog")
class SF2SOG(UFSSelector):
    """SF2SOG (reconstructed, not a faithful reproduction): exactly h features, orthogonal l2,0 W.

    Rong Wang, Canyu Zhang, Jintang Bian, Zheng Wang, Feiping Nie, Xuelong Li, "Sparse and
    Flexible Projections for Unsupervised Feature Selection", IEEE Transactions on Knowledge and
    Data Engineering 35(6):6362-6375, 2023 (online 2022). RECONSTRUCTED: no paper text or public
    code was available; the model is the restatement in KMUFS Eq. (36) (Sun, Ding & Fan), and the
    algorithm is the reconstruction of ``papers/baselines.md`` §11 ("BL11"). Searches for any
    further public description found only the abstract (flexible projections, orthogonal sparse
    projection with an l2,0 constraint that yields indexes directly, adaptively learned optimal
    graph in the subspace, convergent iterative algorithms), which this follows. Report rows of
    this method must say "reconstructed".

    Model (KMUFS Eq. (36), samples as rows):

        min_{Y,W,G} Tr(Y^T L_G Y) + lam ||X W - Y||_F^2 + gamma ||G - S||_F^2
        s.t. W^T W = I_m, ||W||_{2,0} = h, G >= 0, G 1 = 1, diag(G) = 0,

    Alternating algorithm (BL11):

    * Y-step: Y = lam (L_G + lam I)^{-1} X W.
    * W-step: eliminating Y gives min Tr(W^T M W), M = lam X^T L_G (L_G + lam I)^{-1} X (PSD),
      under W^T W = I, ||W||_{2,0} = h: :func:`l20_orthogonal_trace_min` (exact for h = m; a
      monotone generalised power iteration with the shared l2,0 row projection for h > m).
    * G-step: row i of G = Proj_simplex(s_i - e_i / (4 gamma)), e_ij = ||y_i - y_j||^2 (exact, as
      Tr(Y^T L_G Y) = 1/2 sum_ij G_ij e_ij), by the shared simplex projection.

    Each step does not increase the objective, which ``objective_history_`` records after every
    outer iteration (the W-step accepts only improvements).

    Decisions where the sources are silent (tested where possible):

    * L_G = D_G - (G + G^T)/2 (unnormalised). KMUFS calls L_G "the normalized Laplacian of G";
      with it the G-step has no closed form. G is row-stochastic, so the two differ.
    * diag(G) = 0 (no self-loops, as in Nie's adaptive-neighbour graphs): otherwise a small gamma
      puts every row's mass on itself (e_ii = 0), L_G = 0 and the W-step becomes vacuous.
    * S: the adaptive-neighbour graph (Nie et al., KDD 2014) with k = 5 on the preprocessed data.
    * m = n_components, default n_clusters (KMUFS: W is p x k, k clusters); if h < m, m = h.
    * Preprocessing "zscore" (default): each feature standardised, as KMUFS (the citing paper,
      whose grid is used) does; "center_unit" = centre and unit l2 norm (Nie group code); "none".
    * Constant features (zero after centring) would give M_rr = 0 and be "optimal"; they are
      excluded from the candidates unless fewer than h non-constant features exist.
    * Initial G = S; initial W from the h smallest M_rr. Stop when the relative objective change
      is below ``tol`` or the support has not changed for ``patience`` outer iterations, at most
      ``max_iter`` (50) outer (then a ``ConvergenceWarning``) and ``max_inner`` (30) W-step
      iterations. Default fits (h = 100) stop after 3-5 outer iterations on jaffe, srbct,
      umist and coil20.
    * ``scores_`` (row norms of W, zero off the support) is a DERIVED order within the subset; the
      method itself only returns ``support_`` and is refitted per feature count.

    Speed: the W-step reads M = lam X^T L_G (L_G + lam I)^{-1} X only through diag(M), products
    M W (d x m), h x h blocks and lambda_max(M). ``solver="factored"`` (default for d > n)
    keeps M = B^T B as its n x d factor B, O(n^2 d + n^3) per outer iteration and O(n d) memory;
    ``"dense"`` forms M (d x d) and takes lambda_max by a dense eigensolver (O(d^3)), the
    reference form. Same iterates up to floating point (tested); the asv suite times both. In the
    factored form lambda_max(B B^T) comes from Lanczos on large n, through the non-zeros of a
    mostly-zero X without forming B B^T (:class:`_GramTraceOperator`).

    Parameters
    ----------
    n_features_to_select : int or None, default None
        h, the size of the exact subset (||W||_{2,0} = h); None: min(50, n_features).
    n_clusters : int, default 2
        m, the number of projection columns, when ``n_components`` is None (at most h); unused
        otherwise.
    random_state : int, RandomState instance or None, default None
        Unused: the fit is deterministic.
    lam : float, default 1.0
        Weight lambda of the flexible-embedding residual (KMUFS grid {1e-6, 1e-4, ..., 1e6}).
    gamma : float, default 1.0
        Weight of ||G - S||^2 (same grid).
    k : int, default 5
        Neighbours of the prior graph S.
    n_components : int or None, default None
        m, the number of projection columns (None = n_clusters; at most h).
    preprocess : "zscore", "center_unit" or "none", default "zscore"
        See above ("unit" is the deprecated spelling of "center_unit").
    max_iter : int, default 50
        Cap on the outer iterations (a fit it ends warns with a ``ConvergenceWarning``).
    max_inner : int, default 30
        Cap on the W-step's iterations within each outer iteration.
    tol : float, default 1e-6
        Relative objective change at which the fit stops.
    patience : int, default 3
        Outer iterations with an unchanged support after which the fit stops.
    solver : "auto", "factored" or "dense", default "auto"
        "auto" = factored when d > n; see Speed.
    memory : None, str or joblib.Memory, default None
        Where to cache the prior graph S (it depends on the preprocessed X and k only); None
        computes it on every fit.

    Attributes
    ----------
    support_ : ndarray of bool (n_features,)
        The h selected features.
    scores_ : ndarray (n_features,)
        Row norms of W (zero off the support): an order within the subset only.
    W_ : ndarray (n_features, m)
        The final W (d x m).
    Y_ : ndarray (n_samples, m)
        The final Y (n x m).
    G_ : ndarray (n_samples, n_samples)
        The learned graph G.
    S_ : ndarray (n_samples, n_samples)
        The prior graph S.
    objective_history_ : list of float
        The objective after every outer iteration.
    n_iter_ : int
        Outer iterations run.
    converged_ : bool
        Whether the stop test (not ``max_iter``) ended the fit.
    """

    selection_kind = "subset"
    reconstructed = True

    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        # lam > 0 makes L_G + lam I definite (Y-step) and the G-step divides by gamma.
        "lam": [Interval(Real, 0, np.inf, closed="neither")],
        "gamma": [Interval(Real, 0, np.inf, closed="neither")],
        "k": POSITIVE_INT,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "preprocess": [StrOptions(set(PREPROCESS) | set(DEPRECATED_PREPROCESS),
                                  deprecated=set(DEPRECATED_PREPROCESS))],
        "max_iter": POSITIVE_INT,
        # 0 inner iterations would keep only the start candidates of the W-step.
        "max_inner": POSITIVE_INT,
        "tol": [Interval(Real, 0, np.inf, closed="left")],
        # 0 would stop at the second iteration whether or not the support has settled.
        "patience": POSITIVE_INT,
        "solver": [StrOptions(set(SOLVERS))],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, lam=1.0,
                 gamma=1.0, k=5, n_components=None, preprocess="zscore", max_iter=50,
                 max_inner=30, tol=1e-6, patience=3, solver="auto", memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.lam = lam
        self.gamma = gamma
        self.k = k
        self.n_components = n_components
        self.preprocess = preprocess
        self.max_iter = max_iter
        self.max_inner = max_inner
        self.tol = tol
        self.patience = patience
        self.solver = solver
        self.memory = memory

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """About five outer iterations (2-12 on the paper data sets), each with dense n x n
        graph steps (the G-step's distances and simplex projections, L_G; 5.5e-8 n^2 s), the
        Y-step's dense Cholesky solve of L_G + lam I (9e-12 n^3 s) with the d x d eigensolve
        of M (with the factored solver, d > n, a dense eigendecomposition of L_G instead) and
        L_G (L_G + lam I)^{-1} X (4e-11 n^2 d s). Measured (one BLAS thread): USPS
        (9298 x 256) 49 s, modelled 64; synthetic 10000 x 1000 96 s, modelled 92; 3000 x 5000
        (factored) 45 s, modelled 36; coil20 2.7 s, modelled 1.1. Memory: about six n x n and
        six n x d arrays."""
        n, d = float(n_samples), float(n_features)
        factored = params.get("solver", "auto") == "factored" or (
            params.get("solver", "auto") == "auto" and n_features > n_samples)
        # factored: an n x n eigendecomposition; dense: a Cholesky solve and M's d x d eigensolve
        solve = (DENSE_EIGH_SECONDS_PER_CUBE * n ** 3 if factored
                 else 9e-12 * n ** 3 + DENSE_EIGH_SECONDS_PER_CUBE * d ** 3)
        iterations = 5
        seconds = iterations * (solve + 5.5e-8 * n ** 2 + 4e-11 * n ** 2 * d)
        what = (f"dense {n_samples} x {n_samples} graph and "
                f"{'eigendecomposition' if factored else 'Cholesky'} steps in each of its "
                f"~{iterations} outer iterations")
        return FitCost(seconds, 44.0 * n ** 2 + 48.0 * n * d, what)

    def _objective(self, Xc, W, Y, G, S, L=None):
        """The BL11 objective; ``L``: the Laplacian of sym(G) where the caller has it."""
        L = laplacian(sym(G)) if L is None else L
        return (float(np.einsum("ij,ij->", Y, L @ Y))
                + self.lam * float(np.sum((Xc @ W - Y) ** 2))
                + self.gamma * float(np.sum((G - S) ** 2)))

    def _g_step(self, Y, S):
        """Rows of G: simplex projections of s_i - e_i / (4 gamma), diagonal excluded (BL11 step 3).

        The diagonal is excluded as -inf (never among a row's largest entries, projected to 0),
        and each row's projection sorts only its largest entries (``project_simplex_rows_sparse``,
        ``G_STEP_WINDOW`` of them first: rows keep tens of non-zeros, 30-40 on average and up to
        a few hundred on USPS subsets): the same operations on the same values as a sort of the
        n - 1 off-diagonal entries, so the same bits, at O(n) a row instead of O(n log n).
        """
        V = S - squared_distances(Y) / (4.0 * self.gamma)
        np.fill_diagonal(V, -np.inf)
        return project_simplex_rows_sparse(V, first_window=G_STEP_WINDOW)

    def _w_step_matrix(self, Xc, L, factored: bool, Xs: SparsePlusOffset | None = None):
        """The BL11 W-step matrix M = lam X^T L (L + lam I)^{-1} X and the Y-step W -> Y.

        Dense: M formed (d x d, O(n d^2)). Factored (d > n): with L = Phi diag(l) Phi^T,
        M = B^T B, B = diag(sqrt(psi)) Phi^T X, psi = lam l / (l + lam) >= 0, kept as the n x d
        factor (:class:`_GramTraceOperator`; ``Xs``: the sparse-plus-offset form of a mostly-zero
        X, for its lambda_max), and Y = lam Phi diag(1 / (l + lam)) Phi^T X W.
        """
        lam = self.lam
        if not factored:
            A = L.copy()
            A[np.diag_indices_from(A)] += lam
            R = cholesky_solve(A, Xc)                                     # (L + lam I)^{-1} X
            return sym(lam * (Xc.T @ (L @ R))), lambda W: lam * (R @ W)
        ell, Phi = np.linalg.eigh(L)
        ell = np.clip(ell, 0.0, None)
        PX = Phi.T @ Xc
        scale = np.sqrt(lam * ell / (ell + lam))
        B = scale[:, None] * PX
        return (_GramTraceOperator(B, None if Xs is None else (scale, Phi, Xs)),
                lambda W: lam * (Phi @ ((PX @ W) / (ell + lam)[:, None])))

    def _fit(self, X):
        n, d = X.shape
        h = self.n_features_to_select_
        m = min(int(self.n_components or self.n_clusters_), h)
        if self.preprocess in DEPRECATED_PREPROCESS:
            warnings.warn(f"SF2SOG's preprocess={self.preprocess!r} is deprecated and will be "
                          f"removed in the next release; use preprocess="
                          f"{DEPRECATED_PREPROCESS[self.preprocess]!r}", FutureWarning,
                          stacklevel=3)
        Xp = _preprocess(X, self.preprocess)
        varying = np.flatnonzero(np.ptp(X, axis=0) > 0)
        cand = varying if varying.size >= h else np.arange(d)
        Xc = Xp[:, cand]
        factored = self.solver == "factored" or (self.solver == "auto" and Xc.shape[1] > n)
        S = cached_call(self.memory, initial_graph, Xp, k=self._neighbours(n))
        # Mostly-zero X: lambda_max of the W-step through X's non-zeros (_GramTraceOperator).
        Xs = (SparsePlusOffset.from_median(Xc) if factored and n >= LANCZOS_MIN_SIZE
              else None)
        G = S.copy()
        L = laplacian(sym(G))            # L_G, formed once per G: the objective's and the W-step's
        W = rows = None
        history, supports, stable, converged = [], [], 0, False
        for _ in range(int(self.max_iter)):
            M, y_step = self._w_step_matrix(Xc, L, factored, Xs)
            W, rows, _ = l20_orthogonal_trace_min(M, h, m, W0=W, rows0=rows,
                                                  max_inner=int(self.max_inner))
            Y = y_step(W)                                                 # BL11 Y-step
            G = self._g_step(Y, S)                                        # BL11 G-step
            L = laplacian(sym(G))
            history.append(self._objective(Xc, W, Y, G, S, L))
            support = tuple(rows)
            stable = stable + 1 if supports and support == supports[-1] else 0
            supports.append(support)
            if len(history) > 1:
                change = abs(history[-2] - history[-1]) / max(abs(history[-2]), 1e-300)
                if change < self.tol or stable >= int(self.patience):
                    converged = True
                    break
        W_full = np.zeros((d, W.shape[1]))
        W_full[cand] = W
        self.W_, self.Y_, self.G_, self.S_ = W_full, Y, G, S
        self.objective_history_ = history
        self._stopped(len(history), converged, test="relative objective change < tol or the "
                      "support unchanged for patience iterations")
        self.scores_ = row_norms(W_full)
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[cand[rows]] = True
