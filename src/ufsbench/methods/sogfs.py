"""SOGFS (Nie, Zhu & Li, "Unsupervised Feature Selection with Structured Graph Optimization", AAAI 2016)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Hidden, Interval, RealNotInt, StrOptions

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import MEMORY_CONSTRAINT, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics import (knn_indices, l21_norm,
                               l21_reweight, laplacian, project_simplex_rows, row_norms,
                               smallest_eigvecs_diag_plus_lowrank, squared_distances, sym)
from ufsbench.numerics.diag_lowrank import (dense_smallest_eigvecs,
                                            smallest_eigvecs_tied_diag_plus_lowrank)
from ufsbench.numerics.graphs import connected_component_labels
from ufsbench.numerics.laplacian_eig import (canonical_null_space_vectors,
                                             laplacian_smallest_eigvecs)
from ufsbench.numerics.preprocess import center_unit_norm
from ufsbench.numerics.simplex import project_simplex_rows_sparse

#: The W-step's eigensolvers (``solver``).
W_SOLVERS = ("auto", "tied", "dense", "lanczos")
#: Deprecated ``solver`` values (accepted for one release with a FutureWarning): "fast" named the
#: sparse S / F path, the only one now, whose W-step is "auto".
DEPRECATED_SOLVERS = {"fast": "auto"}
#: Outer iterations during which the "local" neighbour sets stay those of the input space.
FROZEN_NEIGHBOUR_ITERS = 5


def _projection_dim(m, d: int, name: str = "n_components") -> int:
    """Resolve the projection dimension m (``n_components``, passed as ``name``), as SOGFS's
    constraints admit it: None -> round(d/2); a float in (0, 1] -> that share of d; a positive
    integer -> itself, at most d."""
    if m is None:
        return max(1, int(round(d / 2)))
    if isinstance(m, Integral):
        if m > d:
            raise UFSBenchError(f"SOGFS: {name}={m!r} exceeds the {d} features of X; use an integer in "
                                f"[1, n_features={d}], a fraction in (0, 1], or None (d/2); the "
                                f"paper uses m between d/3 and 2d/3")
        return int(m)
    return max(1, int(round(m * d)))


def w_objective(X: np.ndarray, L, W: np.ndarray, gamma: float, eps: float,
                XW: np.ndarray | None = None) -> float:
    """Objective (9): Tr(W^T X^T L_S X W) + gamma * sum_i sqrt(||w_i||^2 + eps).

    L_S dense or sparse; ``XW`` = X @ W when the caller already has it.
    """
    XW = X @ W if XW is None else XW
    trace = float(np.einsum("ij,ij->", XW, L @ XW))
    return trace + gamma * float(np.sqrt(np.einsum("ij,ij->i", W, W) + eps).sum())


def w_step(X: np.ndarray, L, q: np.ndarray, gamma: float, m: int, n_iter: int = 1,
           eps: float = 1e-8, solver: str = "auto", W0: np.ndarray | None = None,
           return_projection: bool = False):
    """Algorithm 1 of SOGFS: ``n_iter`` rounds of (13) then (12), from the diagonal ``q`` of Q.

    Each round sets W to the m eigenvectors of G = X^T L_S X + gamma Q with the smallest
    eigenvalues (problem (13)), then Q_ii = 1 / (2 sqrt(||w_i||^2 + eps)) (Eq. (12)). G is never
    formed unless the dense path is taken: G = diag(gamma q) + U K U^T with U = X^T (d x n) and
    K = L_S, a diagonal plus a rank <= n term (see ``ufsbench.numerics.diag_lowrank`` for when that
    is cheap). L_S may be a scipy.sparse matrix (k-sparse S): X^T L_S X is then (L_S X)^T X at
    O(nnz(L_S) d + n d^2), formed once per call (L_S does not change between rounds).
    Returns (W, q, objective (9) after each round, solver path of each round), plus X W when
    ``return_projection``.
    """
    history, paths = [], []
    W, XW, XtLX = W0, None, None

    def gram_part():                                  # X^T L_S X, hoisted out of the rounds
        nonlocal XtLX
        if XtLX is None:
            XtLX = X.T @ (L @ X)
        return XtLX

    for _ in range(n_iter):
        diag = gamma * q
        if solver in ("auto", "tied"):
            n_distinct = len(np.unique(diag))
            if solver == "tied" or n_distinct * min(X.shape) <= X.shape[1]:
                _, W, path = smallest_eigvecs_tied_diag_plus_lowrank(
                    diag, X.T, L.toarray() if sp.issparse(L) else L, m, max_reduced_fraction=1.0)
            else:
                W, path = dense_smallest_eigvecs(np.diag(diag) + gram_part(), m)[1], "dense"
        elif solver == "dense":
            W, path = dense_smallest_eigvecs(np.diag(diag) + gram_part(), m)[1], "dense"
        else:  # "lanczos": ARPACK on the implicit operator, warm-started from the previous W
            W = smallest_eigvecs_diag_plus_lowrank(diag, X.T, L, m, v0=W)[1]
            path = "lanczos"
        q = l21_reweight(W, eps=eps, factor=0.5)                      # Eq. (12)
        XW = X @ W
        history.append(w_objective(X, L, W, gamma, eps, XW=XW))      # objective (9)
        paths.append(path)
    if return_projection:
        return W, q, history, paths, XW
    return W, q, history, paths


def alpha_eq27(D: np.ndarray, k: int) -> float:
    """alpha of Eq. (27): the mean over i of (k/2) d_{i,k+1} - (1/2) sum_{j<=k} d_ij (self excluded)."""
    k = min(k, D.shape[0] - 2)  # d_{i,k+1} must exist among the n - 1 other samples
    Ds = D.copy()
    np.fill_diagonal(Ds, np.inf)
    Ds = np.sort(Ds, axis=1)[:, : k + 1]
    alpha = float(np.mean(0.5 * k * Ds[:, k] - 0.5 * Ds[:, :k].sum(axis=1))) if k >= 1 else 0.0
    if not 0.0 < alpha < np.inf:  # k+1 nearest distances tie (duplicates), or n < 3: any alpha > 0
        alpha = max(float(np.mean(Ds)), 1.0) * 1e-3
    return alpha


def _off_diagonal_columns(n: int) -> np.ndarray:
    """(n, n-1) column indices j != i of every row i, ascending."""
    j = np.arange(n - 1)[None, :]
    return j + (j >= np.arange(n)[:, None])


def initial_graph(X: np.ndarray, k: int, neighbours: str, full_sort: bool):
    """Initial S of problem (1) by the closed form (25) with alpha of Eq. (27), and the kNN sets
    (``neighbours="local"``): data-only, so a gamma sweep reads them from the disk cache."""
    D0 = squared_distances(X)
    alpha = alpha_eq27(D0, k)
    local0 = knn_indices(D0, k) if neighbours == "local" else None
    return alpha, local0, s_step(D0, alpha, local0, full_sort=full_sort)


def s_step(dist: np.ndarray, alpha: float, neighbours: np.ndarray | None = None,
           full_sort: bool = False) -> np.ndarray:
    """Problem (18) for every row: s_i = argmin_{s on the simplex} ||s + d_i / (2 alpha)||^2.

    ``dist`` holds d_ij = m_ij + lambda n_ij. s_ii = 0 always (a sample is not its own neighbour).
    With ``neighbours`` (n x k indices) s_i is supported on those k entries only. Over all j the
    projection sorts only each row's largest entries (``project_simplex_rows_sparse``: rows
    keep about k non-zeros, Eq. (27)); ``full_sort`` sorts whole rows (the plain computation the
    tests compare with; the same bits).
    """
    n = dist.shape[0]
    if neighbours is None and not full_sort:
        # Whole rows with s_ii excluded by v_ii = -inf (never among a row's largest entries and
        # projected to 0): no gather of the n x (n-1) off-diagonal entries, no scatter back.
        # Same operations as the whole-row sort (full_sort), so S has the same bits (see ``_graph``).
        V = -dist / (2.0 * alpha)
        np.fill_diagonal(V, -np.inf)
        return project_simplex_rows_sparse(V)
    S = np.zeros((n, n))
    rows = np.arange(n)[:, None]
    cols = _off_diagonal_columns(n) if neighbours is None else neighbours
    S[rows, cols] = project_simplex_rows(-dist[rows, cols] / (2.0 * alpha))
    return S


@register("sogfs")
class SOGFS(UFSSelector):
    """Structured Optimal Graph Feature Selection (SOGFS).

    F. Nie, W. Zhu, X. Li, "Unsupervised Feature Selection with Structured Graph Optimization",
    AAAI 2016. Problem (6):

        min  sum_ij (||W^T x_i - W^T x_j||^2 s_ij + alpha s_ij^2) + gamma ||W||_{2,1}
             + 2 lambda Tr(F^T L_S F)
        s.t. s_i on the simplex, F^T F = I (n x c), W^T W = I (d x m),

    solved by Algorithm 2: S initialised by problem (1) in closed form (25) with alpha of Eq. (27);
    then repeat: W by Algorithm 1 (problems (13) / Eq. (12)), L_S = D - (S + S^T)/2, F = the c
    smallest eigenvectors of L_S (problem (14)), each s_i by the simplex projection (18).
    Features are ranked by ||w_i||_2 (``scores_``).

    Decisions where the paper is silent or ambiguous (the first three are tested):

    * Q across outer iterations: Algorithm 1 says "Initialize Q = I" and the paper allows one inner
      iteration per outer one. Read literally (Q reset to I, one round), W would be the m smallest
      eigenvectors of X^T L_S X + gamma I, so gamma could not change anything -- contradicting the
      paper's Figure 2 (ACC varies with gamma). Here Q = I only at the very start and is carried
      over between outer iterations; ``inner_iter`` rounds of Algorithm 1 per outer iteration
      (default 1, the paper's speed-up).
    * Degenerate first W-step. With Q = I and m <= d - rank(X^T L_S X) (any d >> n with m ~ d/2)
      the m smallest eigenvalues all equal gamma, and any m-dimensional subspace of
      null(X^T L_S X) solves (13); LAPACK would return an arbitrary one. The "auto"/"tied" solver
      takes the subspace closest to the m lowest-leverage coordinate axes (deterministic,
      basis-free; ``ufsbench.numerics.diag_lowrank``). In that regime problem (6) itself is
      degenerate: W in null(X) zeroes the projected distances. The eigenspace of gamma is
      null(X) plus the directions of range(X^T) that X maps into null(L_S) (one fewer than the
      components of the initial S); the latter come out of the reduced eigenproblem a few ulps
      off gamma. Eigenvalues within ``tie_rtol`` = 1e-10 (relative to ||G||) of gamma are read as
      gamma, so the cut does not depend on which side of gamma round-off puts them (compared
      exactly, a 4e-16 change of L_S moves the scores on orl by up to 0.96 and 15% of the
      top-100; with the tolerance a 1e-14 perturbation of the data leaves the top-100 unchanged
      -- tested).
    * Degenerate F-step. When S has more than c connected components, 0 is an eigenvalue of L_S
      of that multiplicity and any c-dimensional part of the null space solves (14). F is then
      the first c columns of a canonical basis of the null space: QR of the null-space projector
      (from the normalised component indicators) times a fixed probe, so it does not depend on
      the eigensolver or the BLAS kernel (tested). It matters for the first S-step (JAFFE's
      initial graph at k = 5 has 15 components for c = 10); later, F is kept unchanged while
      S has too many components.
    * Ranking: scores within 1e-12 of each other (relative to the largest) are tied. At large
      gamma (>= 100 on most data sets) W is close to m coordinate axes, whose row norms are 1 up
      to the last bit, so for a count below m the model has no preference among them; compared
      exactly, their order is round-off's (it follows the BLAS kernel). Tied features are taken
      in the order of a permutation seeded by ``random_state`` (0 when None): the same on every
      machine (tested), and not biased towards the first features as index order would be (the
      first pixels of an image, usually background: UMIST at gamma = 1000, 150 features, ACC
      51.1 with the seeded order against 45.9 with index order). Tie groups span at most the
      tolerance (steps below it are not chained into one group).
    * lambda: starts at alpha (the mean of the alpha_i of Eq. (26), as the Nie group's code does),
      doubled when S has fewer than c connected components, halved when more (then F keeps its
      previous value, as in that code); components are counted exactly on the support of S. Stop
      when S has exactly c components and objective (6) changed by less than ``tol`` (relative)
      since the previous iteration, or after ``max_iter`` (50, the code's cap).
    * alpha is Eq. (27) on the input-space distances, computed once and kept fixed (problem (6)
      needs a fixed alpha for the alternating steps to be descent steps). One global alpha is also
      used for the initial S (the issue's reading of "(25) with alpha from (27)").
    * s_ii = 0: the sums in (1) and (18) run over j != i (a sample at distance 0 from itself would
      otherwise take all the probability).
    * ``neighbours``: "all" (default) is the paper's Eq. (18) over all j; "local" restricts s_i to
      its k nearest neighbours, those of the input space for the first 5 iterations and of the
      projected space afterwards (what the Nie group's code does).
    * ``preprocess``: "center_unit" (default; the Nie group's code centres each feature and scales
      it to unit l2 norm -- the paper only cites Liu et al. 2013) or "none".
    * m (``n_components``): None = round(d/2), the middle of the paper's "around d/3 to 2d/3";
      eps of Eq. (9) = 1e-8.
    * W-step solver ``solver``: "auto" uses the exact tied-diagonal reduction when gamma Q has few
      distinct values (always at Q = I; O(d n^2) instead of O(d^3)), dense LAPACK otherwise;
      "dense" always forms the d x d matrix; "lanczos" uses ARPACK (only sensible for m << d).
      After the first reweighting Q has d distinct entries and no exact shortcut exists: the
      W-step is an O(d^3) dense eigenproblem (see benchmarks/bench_sogfs.py for timings). Measured
      on one core, the full divide-and-conquer ``eigh`` (driver "evd") is the fastest LAPACK route
      for m = d/2: subset MRRR/bisection ("evr"/"evx" with ``subset_by_index``) takes 2-2.7x longer
      (d = 1024, 2308), because LAPACK's dsyevr falls back to bisection + inverse iteration for a
      subset; sytrd + dstemr + dormqr by hand is no faster (the reduction to tridiagonal dominates).
    * S and F: S and L_S sparse (S has about k non-zeros per row) -- L_S X, the trace terms and the
      component count on the sparse matrices; simplex projections (18) sort only each row's largest
      entries (``ufsbench.numerics.simplex``); F of problem (14) by shift-invert Lanczos on the
      sparse L_S from n = 600 on (``ufsbench.numerics.laplacian_eig``, warm start from the previous
      F; ARPACK's restart vectors come from a fixed seed, so a fit repeats exactly); X^T L_S X
      formed once per W-step and X W once per round. The sparse L_S carries exactly the dense
      one's numbers: the first W-step's cut moves with round-off unless the tie tolerance above
      absorbs it (seen on orl), and later steps make discrete decisions (support of S,
      component counts) that can flip on ulps. The iterates equal those of the plain dense
      Algorithm 2 (dense n x n S and L_S, whole sorted rows, dense ``eigh`` for F;
      ``tests/methods/_reference_sogfs.py``) up to round-off (tested).

    Parameters
    ----------
    gamma : float, default 1.0
        Weight of ||W||_{2,1}.
    n_components : int, float in (0, 1] or None, default None
        Projection columns: a count (at most d), a share of d, or None (round(d/2)).
    k : int, default 5
        Neighbours for alpha of Eq. (27) (and the "local" neighbour sets).
    max_iter, inner_iter : int, default 50, 1
        Outer iterations (Algorithm 2) and rounds of Algorithm 1 per outer iteration.
    tol : float, default 1e-5
        Relative change of objective (6) at which a fit with c components stops.
    eps : float, default 1e-8
        Smoothing of Eq. (12).
    lambda_init : float or None, default None
        Starting lambda (None = alpha).
    lambda_factor : float, default 2.0
        Factor lambda is multiplied or divided by when S has too few or too many components.
    neighbours : "all" or "local", default "all"
        See above.
    preprocess : "center_unit" or "none", default "center_unit"
        See above.
    solver : "auto", "tied", "dense" or "lanczos", default "auto"
        The W-step's eigensolver (see above).
    m, w_solver : deprecated
        The old names of ``n_components`` and ``solver`` (a FutureWarning; removed in the next
        release). ``solver="fast"`` (the sparse S / F path, the only one) is the deprecated
        spelling of "auto".
    memory : None, str or joblib.Memory, default None
        Where to cache the initial graph S and alpha (they depend on the preprocessed X, k,
        neighbours only); None computes them on every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_i||_2, higher is better.
    projection_ : ndarray (n_features, m)
        W.
    similarity_ : ndarray (n_samples, n_samples)
        The final S.
    n_components_ : int
        Connected components of the final S (not the projection dimension, which is
        ``projection_.shape[1]``); ``component_labels_`` labels them.
    objective_history_ : list of float
        Objective (6) per outer iteration, with that iteration's lambda (not monotone since
        lambda moves).
    w_objective_history_ : list of float
        Objective (9) after each round of Algorithm 1; ``w_solver_paths_`` names each round's
        solver path.
    lambda_history_, n_components_history_ : list
        lambda and the component count per outer iteration.
    alpha_, lambda_ : float
        alpha of Eq. (27) and the final lambda.
    n_iter_ : int
        Outer iterations run.
    """

    #: Version of this method's selections: stored records of another revision are stale.
    revision = 5
    #: At large gamma most rows of W are coordinate axes: norms of 1 give or take an ulp, whose
    #: order without a tolerance follows the BLAS kernel (JAFFE, gamma = 1000: Jaccard 0.60 of
    #: the top 67).
    score_tie_rtol = 1e-12

    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "gamma": [Interval(Real, 0, np.inf, closed="left")],
        # An integer count of projection columns, a float share of d, or None (d/2); an integer
        # above d is refused by the fit, which knows d.
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(RealNotInt, 0, 1, closed="right"), None],
        "m": [Interval(Integral, 1, None, closed="left"),
              Interval(RealNotInt, 0, 1, closed="right"), None, Hidden(StrOptions({"deprecated"}))],
        "k": [Interval(Integral, 1, None, closed="left")],              # the papers: 5
        "max_iter": POSITIVE_INT,
        "inner_iter": POSITIVE_INT,
        "tol": [Interval(Real, 0, np.inf, closed="left")],
        # eps > 0 keeps Q_ii = 1 / (2 sqrt(||w_i||^2 + eps)) of Eq. (12) finite for zero rows.
        "eps": [Interval(Real, 0, np.inf, closed="neither")],
        # lambda weighs the rank term Tr(F^T L_S F) of (6) and is only ever multiplied or divided
        # by lambda_factor: from 0 it would never act, a negative one would push S away from c
        # components, and a factor of 1 would never move it.
        "lambda_init": [Interval(Real, 0, np.inf, closed="neither"), None],
        "lambda_factor": [Interval(Real, 1, np.inf, closed="neither")],
        "neighbours": [StrOptions({"all", "local"})],
        "preprocess": [StrOptions({"center_unit", "none"})],
        "solver": [StrOptions(set(W_SOLVERS) | set(DEPRECATED_SOLVERS),
                              deprecated=set(DEPRECATED_SOLVERS))],
        "w_solver": [StrOptions(set(W_SOLVERS)), Hidden(StrOptions({"deprecated"}))],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, gamma=1.0,
                 n_components=None, k=5, max_iter=50, inner_iter=1, tol=1e-5, eps=1e-8, lambda_init=None,
                 lambda_factor=2.0, neighbours="all", preprocess="center_unit", solver="auto",
                 m="deprecated", w_solver="deprecated", memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.gamma = gamma
        self.n_components = n_components
        self.m = m
        self.k = k
        self.max_iter = max_iter
        self.inner_iter = inner_iter
        self.tol = tol
        self.eps = eps
        self.lambda_init = lambda_init
        self.lambda_factor = lambda_factor
        self.neighbours = neighbours
        self.preprocess = preprocess
        self.solver = solver
        self.w_solver = w_solver
        self.memory = memory

    def _w_solver(self) -> str:
        """The W-step's solver, from the deprecated names where they were passed (FutureWarning)."""
        solver = self.solver
        if self.w_solver != "deprecated":
            warnings.warn("SOGFS's w_solver is deprecated and will be removed in the next "
                          "release; use solver", FutureWarning, stacklevel=4)
            solver = self.w_solver
        elif solver in DEPRECATED_SOLVERS:
            warnings.warn(f"SOGFS's solver={solver!r} is deprecated and will be removed in the "
                          f"next release; use solver={DEPRECATED_SOLVERS[solver]!r}",
                          FutureWarning, stacklevel=4)
            solver = DEPRECATED_SOLVERS[solver]
        return solver

    def _graph(self, S: np.ndarray):
        """(S, L_S = D - (S + S^T)/2) (steps 2-3 of Algorithm 2) as sparse CSR matrices.

        The sparse L_S holds the very bits of the dense one (built densely, O(n^2), then
        compressed): the first W-step at Q = I can be a degenerate cut whose choice moves with
        round-off in L_S (see ``w_step``), and the fit must take the dense computation's choice.
        """
        L = laplacian(sym(S))
        return sp.csr_matrix(S), sp.csr_matrix(L)

    def _f_step(self, S_graph, L, c: int, F_prev: np.ndarray | None):
        """Problem (14): (F = the c smallest eigenvectors of L_S, S's component count and labels).

        With more than c components the c smallest eigenvalues are all 0 and every c-dimensional
        part of the null space solves (14); an eigensolver's part is round-off's choice, and the
        next S-step reads F through ||f_i - f_j||^2, so with an eigensolver's F the whole fit
        would move with the CPU's BLAS kernel (JAFFE: the initial S has 15 components for
        c = 10). Such F is a function of the components alone (``canonical_null_space_vectors``).
        """
        n_comp, labels = connected_component_labels(S_graph)
        if n_comp > c:
            return canonical_null_space_vectors(labels, c), n_comp, labels
        return laplacian_smallest_eigvecs(L, c, warm=F_prev)[1], n_comp, labels

    def _fit(self, X):
        n, d = X.shape
        k = min(int(self.k), n - 1)
        c = self.n_clusters_
        if self.m != "deprecated":
            warnings.warn("SOGFS's m is deprecated and will be removed in the next release; use "
                          "n_components", FutureWarning, stacklevel=3)
            m = _projection_dim(self.m, d, name="m")
        else:
            m = _projection_dim(self.n_components, d)
        if self.preprocess == "center_unit":
            X = center_unit_norm(X)
        gamma, eps = float(self.gamma), float(self.eps)
        solver = self._w_solver()

        # Initial S: problem (1) by the closed form (25) with alpha of Eq. (27).
        alpha, local0, S = cached_call(self.memory, initial_graph, X, k=k,
                                       neighbours=self.neighbours, full_sort=False)
        lam = alpha if self.lambda_init is None else float(self.lambda_init)
        S_graph, L = self._graph(S)
        F = self._f_step(S_graph, L, c, None)[0]
        q = np.ones(d)                                    # Algorithm 1: Q = I at the start
        W = None
        self.objective_history_, self.w_objective_history_ = [], []
        self.lambda_history_, self.n_components_history_, self.w_solver_paths_ = [], [], []
        self.n_iter_ = 0
        for it in range(self.max_iter):
            # Step 1: W by Algorithm 1 (problem (13) / Eq. (12)) with L_S of the current S.
            W, q, w_hist, paths, XW = w_step(X, L, q, gamma, m, self.inner_iter, eps,
                                             solver, W0=W, return_projection=True)
            self.w_objective_history_.extend(w_hist)
            self.w_solver_paths_.extend(paths)
            # Step 4: S row by row, problem (18), d_ij = ||W^T x_i - W^T x_j||^2 + lam ||f_i - f_j||^2
            # (from the n x m projections X W, never an n x n x d array).
            Mdist = squared_distances(XW)
            dist = Mdist + lam * squared_distances(F)
            if self.neighbours == "local":
                nbrs = local0 if it < FROZEN_NEIGHBOUR_ITERS else knn_indices(Mdist, k)
            else:
                nbrs = None
            S = s_step(dist, alpha, nbrs)
            # Steps 2-3: L_S and F (problem (14)) from the new S.
            S_graph, L = self._graph(S)
            F_new, n_comp, labels = self._f_step(S_graph, L, c, F)
            # Objective (6) with this iteration's lambda.
            objective = (float(np.sum(Mdist * S)) + alpha * float(np.sum(S * S))
                         + gamma * l21_norm(W) + 2.0 * lam * float(np.einsum("ij,ij->", F_new,
                                                                              L @ F_new)))
            self.lambda_history_.append(lam)
            self.n_components_history_.append(n_comp)
            self.objective_history_.append(objective)
            self.n_iter_ = it + 1
            if n_comp < c:          # too few components: strengthen the rank constraint
                lam *= self.lambda_factor
                F = F_new
            elif n_comp > c:        # too many: relax it and keep the previous F
                lam /= self.lambda_factor
            else:
                F = F_new
                prev = self.objective_history_[-2] if len(self.objective_history_) > 1 else None
                if (prev is not None and self.n_components_history_[-2] == c
                        and abs(objective - prev) <= self.tol * max(abs(prev), 1e-12)):
                    break
        self.alpha_ = alpha
        self.lambda_ = lam
        self.projection_ = W
        self.similarity_ = S
        self.n_components_ = n_comp
        self.component_labels_ = labels                  # of the final S (its F-step's count)
        self.scores_ = row_norms(W)
