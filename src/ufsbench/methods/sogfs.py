"""SOGFS (Nie, Zhu & Li, "Unsupervised Feature Selection with Structured Graph Optimization", AAAI 2016)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.utils._param_validation import Hidden, Interval, RealNotInt, StrOptions

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import (
    DENSE_EIGH_SECONDS_PER_CUBE,
    MEMORY_CONSTRAINT,
    POSITIVE_INT,
    FitCost,
    UFSSelector,
    register,
)
from ufsbench.numerics import (
    knn_indices,
    l21_norm,
    laplacian,
    project_simplex_rows,
    row_norms,
    smallest_eigvecs_diag_plus_lowrank,
    squared_distances,
    sym,
)
from ufsbench.numerics.adaptive_neighbors import adaptive_neighbor_graph
from ufsbench.numerics.diag_lowrank import dense_smallest_eigvecs, smallest_eigvecs_tied_diag_plus_lowrank
from ufsbench.numerics.graphs import (
    SPARSE_MIN_SAMPLES,
    GramDistanceBlocks,
    connected_component_labels,
    gram_squared_distances,
)
from ufsbench.numerics.lanes import BlockLanes, one_blas_thread
from ufsbench.numerics.laplacian_eig import canonical_null_space_vectors, component_smallest_eigvecs
from ufsbench.numerics.preprocess import center_unit_norm
from ufsbench.numerics.simplex import FIRST_WINDOW, project_simplex_rows_sparse
from ufsbench.numerics.sparse_gram import sparse_dense_product

#: The W-step's eigensolvers (``solver``).
W_SOLVERS = ("auto", "tied", "dense", "lanczos")
#: Deprecated ``solver`` values (accepted for one release with a FutureWarning): "fast" named the
#: sparse S / F path, the only one now, whose W-step is "auto".
DEPRECATED_SOLVERS = {"fast": "auto"}
#: Outer iterations during which the "local" neighbour sets stay those of the input space.
FROZEN_NEIGHBOUR_ITERS = 5
#: The eigen-gap test of the Nie group's code (``component_test="eigengap"``): fewer than c
#: components when the c smallest eigenvalues of L_S sum to more than ``EIGENGAP_FEWER``, more
#: than c when the c + 1 smallest sum to less than ``EIGENGAP_MORE``, else c.
EIGENGAP_FEWER, EIGENGAP_MORE = 1e-9, 1e-11
#: Cells (rows x n) of one row block of the blockwise S-step (8 MB of float64 per array).
S_BLOCK_CELLS = 1 << 20


def _projection_dim(m, d: int, name: str = "n_components") -> int:
    """Resolve the projection dimension m (``n_components``, passed as ``name``), as SOGFS's
    constraints admit it: None -> round(d/2); a float in (0, 1] -> that share of d; a positive
    integer -> itself, at most d."""
    if m is None:
        return max(1, int(round(d / 2)))
    if isinstance(m, Integral):
        if int(m) > d:
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


def _tied_solver_laplacian(L):
    """L_S as the tied solver gets it: sparse from ``SPARSE_MIN_SAMPLES`` samples on (no n x n
    array), dense below (the bits the paper data sets' fits have always had)."""
    if sp.issparse(L) and L.shape[0] < SPARSE_MIN_SAMPLES:
        return L.toarray()
    return L


def w_step(X: np.ndarray, L, q: np.ndarray, gamma: float, m: int, n_iter: int = 1,
           eps: float = 1e-8, solver: str = "auto", W0: np.ndarray | None = None,
           return_projection: bool = False, tol: float | None = None):
    """Algorithm 1 of SOGFS: up to ``n_iter`` rounds of (13) then (12), from the diagonal ``q`` of Q.

    Each round sets W to the m eigenvectors of G = X^T L_S X + gamma Q with the smallest
    eigenvalues (problem (13)), then Q_ii = 1 / (2 sqrt(||w_i||^2 + eps)) (Eq. (12)). G is never
    formed unless the dense path is taken: G = diag(gamma q) + U K U^T with U = X^T (d x n) and
    K = L_S, a diagonal plus a rank <= n term (see ``ufsbench.numerics.diag_lowrank`` for when that
    is cheap). L_S may be a scipy.sparse matrix (k-sparse S): X^T L_S X is then (L_S X)^T X at
    O(nnz(L_S) d + n d^2), formed once per call (L_S does not change between rounds). With ``tol``
    the rounds end early once Tr(W^T X^T L_S X W) + gamma ||W||_{2,1} (objective (9) without the
    smoothing eps, the authors' test) changed by less than ``tol`` (absolute) in a round.
    Returns (W, q, objective (9) after each round, solver path of each round), plus X W when
    ``return_projection``.
    """
    history, paths, unsmoothed = [], [], []
    W, XW, XtLX = W0, None, None

    def gram_part():                                  # X^T L_S X, hoisted out of the rounds
        nonlocal XtLX
        if XtLX is None:
            XtLX = X.T @ (sparse_dense_product(L, X) if sp.issparse(L) else L @ X)
        return XtLX

    for _ in range(n_iter):
        diag = gamma * q
        if solver in ("auto", "tied"):
            n_distinct = len(np.unique(diag))
            if solver == "tied" or n_distinct * min(X.shape) <= X.shape[1]:
                _, W, path = smallest_eigvecs_tied_diag_plus_lowrank(
                    diag, X.T, _tied_solver_laplacian(L), m, max_reduced_fraction=1.0)
            else:
                W, path = dense_smallest_eigvecs(np.diag(diag) + gram_part(), m)[1], "dense"
        elif solver == "dense":
            W, path = dense_smallest_eigvecs(np.diag(diag) + gram_part(), m)[1], "dense"
        else:  # "lanczos": ARPACK on the implicit operator, warm-started from the previous W
            W = smallest_eigvecs_diag_plus_lowrank(diag, X.T, L, m, v0=W)[1]
            path = "lanczos"
        # Eq. (12) and objective (9) from one pass over W and one product with L_S: the bits
        # of l21_reweight(W, eps, 0.5) and w_objective(X, L, W, gamma, eps), with and without eps.
        row_sq = np.einsum("ij,ij->i", W, W)
        smoothed_norms = np.sqrt(row_sq + eps)
        q = 0.5 / smoothed_norms
        XW = X @ W
        LXW = sparse_dense_product(L, XW) if sp.issparse(L) else L @ XW
        trace = float(np.einsum("ij,ij->", XW, LXW))
        history.append(trace + gamma * float(smoothed_norms.sum()))
        paths.append(path)
        if tol is not None:
            unsmoothed.append(trace + gamma * float(np.sqrt(row_sq).sum()))
            if len(unsmoothed) > 1 and abs(unsmoothed[-2] - unsmoothed[-1]) < tol:
                break
    if return_projection:
        return W, q, history, paths, XW
    return W, q, history, paths


def alpha_eq27(D: np.ndarray, k: int) -> float:
    """alpha of Eq. (27): the mean over i of (k/2) d_{i,k+1} - (1/2) sum_{j<=k} d_ij (self excluded)."""
    Ds = D.copy()
    np.fill_diagonal(Ds, np.inf)
    return _alpha_from_nearest(_nearest_sorted(Ds, k), k)


def _nearest_sorted(Ds: np.ndarray, k: int) -> np.ndarray:
    """The k + 1 smallest entries of each row of Ds (self-distances already inf), ascending
    (k capped at n - 2: d_{i,k+1} must exist among the n - 1 other samples)."""
    k = min(k, Ds.shape[1] - 2)
    if k + 1 < Ds.shape[1]:     # the k + 1 smallest of each row, then sorted: the sort's values
        Ds = np.partition(Ds, k, axis=1)[:, : k + 1]
    return np.sort(Ds, axis=1)[:, : k + 1]


def _alpha_from_nearest(Ds: np.ndarray, k: int) -> float:
    """Eq. (27) from each row's k + 1 smallest distances, ascending (``_nearest_sorted``)."""
    k = Ds.shape[1] - 1
    alpha = float(np.mean(0.5 * k * Ds[:, k] - 0.5 * Ds[:, :k].sum(axis=1))) if k >= 1 else 0.0
    if not 0.0 < alpha < np.inf:  # k+1 nearest distances tie (duplicates), or n < 3: any alpha > 0
        alpha = max(float(np.mean(Ds)), 1.0) * 1e-3
    return alpha


def _off_diagonal_columns(n: int) -> np.ndarray:
    """(n, n-1) column indices j != i of every row i, ascending."""
    j = np.arange(n - 1)[None, :]
    return j + (j >= np.arange(n)[:, None])


def initial_graph(X: np.ndarray, k: int, neighbours: str, full_sort: bool,
                  per_sample: bool = False):
    """(alpha of Eq. (27), the kNN sets when ``neighbours="local"``, the initial S): data-only, so
    a gamma sweep reads them from the disk cache.

    S solves problem (1): by the closed form (25) with the one alpha of Eq. (27), or, with
    ``per_sample``, with each row's own alpha_i of Eq. (26) (exactly k neighbours per row, the
    adaptive-neighbour graph of Nie, Wang & Huang 2014). The input-space distances are those of
    :func:`~ufsbench.numerics.squared_distances`, from ``SPARSE_MIN_SAMPLES`` samples on those
    of one Gram product (:func:`~ufsbench.numerics.graphs.gram_squared_distances`, as the
    S-steps' projected distances): direct differences over 256 features cost 27 s on USPS's
    9298 samples, the Gram product 1 s.
    """
    large = X.shape[0] >= SPARSE_MIN_SAMPLES
    if large and neighbours == "all" and not per_sample:
        return initial_graph_by_blocks(X, k)
    D0 = gram_squared_distances(X) if large else squared_distances(X)
    alpha = alpha_eq27(D0, k)
    local0 = knn_indices(D0, k) if neighbours == "local" else None
    if per_sample:
        return alpha, local0, adaptive_neighbor_graph(D0, k)
    return alpha, local0, s_step(D0, alpha, local0, full_sort=full_sort)


def s_step(dist: np.ndarray, alpha: float, neighbours: np.ndarray | None = None,
           full_sort: bool = False, window: int = FIRST_WINDOW) -> np.ndarray:
    """Problem (18) for every row: s_i = argmin_{s on the simplex} ||s + d_i / (2 alpha)||^2.

    ``dist`` holds d_ij = m_ij + lambda n_ij. s_ii = 0 always (a sample is not its own neighbour).
    With ``neighbours`` (n x k indices) s_i is supported on those k entries only. Over all j the
    projection sorts only each row's largest entries (``project_simplex_rows_sparse``: rows
    keep about k non-zeros, Eq. (27); ``window`` entries first, doubled for the rows whose
    support reaches it); ``full_sort`` sorts whole rows (the plain computation the tests compare
    with; the same bits).
    """
    n = dist.shape[0]
    if neighbours is None and not full_sort:
        # Whole rows with s_ii excluded by v_ii = -inf (never among a row's largest entries and
        # projected to 0): no gather of the n x (n-1) off-diagonal entries, no scatter back.
        # Same operations as the whole-row sort (full_sort), so S has the same bits (see ``_graph``).
        V = np.divide(dist, -2.0 * alpha)        # -d_ij / (2 alpha), bit for bit, one pass
        np.fill_diagonal(V, -np.inf)
        return project_simplex_rows_sparse(V, first_window=window)
    S = np.zeros((n, n))
    rows = np.arange(n)[:, None]
    cols = _off_diagonal_columns(n) if neighbours is None else neighbours
    S[rows, cols] = project_simplex_rows(-dist[rows, cols] / (2.0 * alpha))
    return S


class _DistanceBlocks:
    """Row blocks of the squared distances between the rows of Z (n x m), without an n x n
    array: block j is (start, stop, the block's own-entry indices, the block's distances to
    every row), computed when asked for.

    The Gram form of :func:`gram_squared_distances` (centred rows, clipped at 0, 0 on the
    diagonal), block by block: the same numbers up to round-off (a row block's product is not
    the whole product's bits). ``block_cells``: rows x n of a block (None: ``S_BLOCK_CELLS``).
    """

    def __init__(self, Z: np.ndarray, block_cells: int | None = None):
        n = Z.shape[0]
        self.gram = GramDistanceBlocks(Z, (S_BLOCK_CELLS if block_cells is None
                                           else block_cells) // n)

    def __len__(self) -> int:
        return len(self.gram)

    def __getitem__(self, j: int):
        rows, M = self.gram[j]
        start, stop = int(rows[0]), int(rows[-1]) + 1
        own = (np.arange(stop - start), rows)
        np.maximum(M, 0.0, out=M)
        M[own] = 0.0
        return start, stop, own, M


def _in_lanes(n_blocks: int, step) -> list:
    """The results of ``step(j)`` for j in range(n_blocks), the blocks spread over as many
    threads as the caller lets BLAS use (``ufsbench.numerics.lanes``), BLAS on one thread
    inside (a block's Gram product), so the threads do not exceed the cores. Each block's result
    has the same bits whichever thread computes it.

    ``step(j)`` returns (result, the block's large arrays). A lane keeps its previous block's
    arrays alive until its next block has allocated its own: freeing them first let the
    allocator hand the memory back to the system and fault it in again for the next block
    (13000 samples: 5.3 million page faults instead of 0.21 million, 55 s instead of 40 s,
    keeping the block's M and S; keeping D alone, or V and M, still gave 3.1-3.3 million).
    """
    held: dict = {}

    def run(j: int, lane: int):
        result, held[lane] = step(j)
        return result

    with BlockLanes(n_blocks) as lanes:
        if lanes.n_lanes == 1:
            return lanes.map(run)
        with one_blas_thread():
            return lanes.map(run)


def _simplex_rows_by_blocks(n_blocks: int, block, alpha: float, window: int, with_terms: bool):
    """Problem (18) for every row of the ``n_blocks`` row blocks ``block(j)``, tuples (start,
    stop, own-entry indices, the block's d_ij, its m_ij), in lanes: (S as CSR,
    sum_ij m_ij s_ij, sum_ij s_ij^2), the two sums only ``with_terms`` (else 0), added in block
    order."""
    def project(j: int):
        start, stop, own, D, M = block(j)
        n = D.shape[1]
        # -d_ij / (2 alpha), into D's memory (D is not needed after it) unless D is M
        V = np.divide(D, -2.0 * alpha, out=None if D is M else D)
        V[own] = -np.inf                          # s_ii = 0
        S = project_simplex_rows_sparse(V, first_window=window)
        rows, cols = np.nonzero(S)
        s = S[rows, cols]
        terms = (float(M[rows, cols] @ s), float(s @ s)) if with_terms else (0.0, 0.0)
        return (np.bincount(rows, minlength=stop - start), cols, s, terms, n), (M, S)

    parts = _in_lanes(n_blocks, project)
    m_term = s_term = 0.0
    for *_, (m_part, s_part), _n in parts:
        m_term += m_part
        s_term += s_part
    n = parts[-1][4]
    indptr = np.concatenate([np.zeros(1, dtype=np.int64),
                             np.cumsum(np.concatenate([p[0] for p in parts]))])
    S_csr = sp.csr_matrix((np.concatenate([p[2] for p in parts]),
                           np.concatenate([p[1] for p in parts]), indptr), shape=(n, n))
    return S_csr, m_term, s_term


def s_step_by_blocks(XW: np.ndarray, F: np.ndarray, lam: float, alpha: float,
                     window: int = FIRST_WINDOW, block_cells: int | None = None):
    """Problem (18) over all j, one block of rows at a time, with no n x n array.

    d_ij = m_ij + lam ||f_i - f_j||^2, m_ij = ||z_i - z_j||^2 with z_i = W^T x_i the rows of
    ``XW`` (by :class:`_DistanceBlocks`), the ``F`` distances by direct differences, then each
    row's simplex projection (``project_simplex_rows_sparse`` from ``window``). The same S as
    the dense S-step up to round-off, at O(block x n) memory per thread (the dense S-step holds
    several n x n arrays; USPS: 0.7 GB each). The blocks run on as many cores as the caller lets
    BLAS use, with the bits of one.

    Returns (S as CSR, sum_ij m_ij s_ij, sum_ij s_ij^2): the two data terms of objective (6).
    """
    distances = _DistanceBlocks(XW, block_cells)

    def block(j: int):
        start, stop, own, M = distances[j]
        D = cdist(F[start:stop], F, "sqeuclidean")
        D *= lam
        D += M
        return start, stop, own, D, M

    return _simplex_rows_by_blocks(len(distances), block, alpha, window, with_terms=True)


def initial_graph_by_blocks(X: np.ndarray, k: int, block_cells: int | None = None):
    """:func:`initial_graph` with one alpha (Eq. (27)) and S over all j, one block of rows at a
    time: (alpha, None, S as CSR). Two passes over the distance blocks (one BLAS product each),
    the first for each row's k + 1 nearest distances (alpha), the second for problem (1)."""
    distances = _DistanceBlocks(X, block_cells)

    def nearest(j: int) -> tuple[np.ndarray, np.ndarray]:
        _, _, own, M = distances[j]
        M[own] = np.inf                            # not a sample's own neighbour
        return _nearest_sorted(M, k), M

    alpha = _alpha_from_nearest(np.concatenate(_in_lanes(len(distances), nearest)), k)

    def block(j: int):
        start, stop, own, M = distances[j]
        return start, stop, own, M, M

    return alpha, None, _simplex_rows_by_blocks(len(distances), block, alpha, FIRST_WINDOW,
                                                with_terms=False)[0]


def component_verdict(n_comp: int, c: int, eigenvalues: np.ndarray | None = None) -> int:
    """-1, 0 or 1: S has fewer than, exactly or more than c connected components.

    Counted on the support of S (``n_comp``), or, given the c + 1 smallest ``eigenvalues`` of
    L_S, by the eigen-gap test of the Nie group's code (``EIGENGAP_FEWER``, ``EIGENGAP_MORE``),
    which reads a component joined by weights too small to move an eigenvalue past them as apart.
    """
    if eigenvalues is None:
        return int(np.sign(n_comp - c))
    if float(np.sum(eigenvalues[:c])) > EIGENGAP_FEWER:
        return -1
    if float(np.sum(eigenvalues[:c + 1])) < EIGENGAP_MORE:
        return 1
    return 0


@register("sogfs")
class SOGFS(UFSSelector):
    """Structured Optimal Graph Feature Selection (SOGFS).

    F. Nie, W. Zhu, X. Li, "Unsupervised Feature Selection with Structured Graph Optimization",
    AAAI 2016. Problem (6):

        min  sum_ij (||W^T x_i - W^T x_j||^2 s_ij + alpha s_ij^2) + gamma ||W||_{2,1}
             + 2 lambda Tr(F^T L_S F)
        s.t. s_i on the simplex, F^T F = I (n x c), W^T W = I (d x m),

    solved by Algorithm 2: S initialised by problem (1); then repeat: W by Algorithm 1 (problems
    (13) / Eq. (12)), L_S = D - (S + S^T)/2, F = the c smallest eigenvectors of L_S (problem
    (14)), each s_i by the simplex projection (18). Features are ranked by ||w_i||_2
    (``scores_``). The settings, as the paper prints them, as the authors' released code
    (AutoUFSTool ``SOGFS.m``, ``InterationW.m``) runs them, and our default; the ``released``
    preset (``configs/method/sogfs.yaml``) sets every parameter of the third column:

    ================ ======================== =========================== ============================
    setting          paper (as printed)       authors' code               our default (parameter)
    ================ ======================== =========================== ============================
    preprocessing    cites Liu et al. 2013    centre, unit l2 norm per    the same (``preprocess``)
                                              feature
    m                around d/3 to 2d/3       an argument (default 4)     round(d/2) (``n_components``)
    initial S        (25), alpha of Eq. (27)  each row its alpha_i (26):  one alpha, Eq. (27)
                                              exactly k neighbours        (``initial_alpha``)
    S-step support   all j, Eq. (18)          kNN: of x in iterations     all j (``neighbours``)
                                              1-5, of W^T x after
    Q of Algorithm 1 "Initialize Q = I"       I at every W-step           carried over (``reset_q``)
    rounds of Alg. 1 one allowed per outer    <= 100, until (9) moves     1 (``inner_iter``,
                     iteration                by < 1e-6                   ``inner_tol``)
    eps of Eq. (12)  value not given          2.2e-16 (MATLAB eps)        1e-8 (``eps``)
    lambda           large enough for c       from alpha; x2 below c,     the same (``lambda_init``,
                     components               /2 above c components       ``lambda_factor``)
    c components?    rank(L_S) = n - c        eigen gap: c smallest       count on the support of S
                                              eigenvalues sum > 1e-9:     (``component_test``)
                                              fewer; c + 1 smallest
                                              < 1e-11: more
    stop             "until converge"         first iteration > 1 with    first iteration with c
                                              c components, else 50       components, else 50
                                                                          (``stop``, ``min_iter``,
                                                                          ``max_iter``)
    W returned       the last W-step (before  a W-step on the final S     the paper's
                     the last S-step)                                     (``final_w_step``)
    ================ ======================== =========================== ============================

    A fit ends with S of exactly c components (``converged_`` True) or says it did not:
    ``converged_`` False and a ``ConvergenceWarning`` when ``max_iter`` came first (e.g. when the
    "local" kNN sets of W^T x hold more than c components, no lambda can join them, and lambda
    only shrinks). ``stop="objective"`` runs on while S keeps c components until objective (6)
    changes by at most ``tol`` (relative) between two such iterations; it ends unconverged the same
    way.

    Decisions where the paper is silent or ambiguous (tested):

    * Q across outer iterations: read literally (Q = I at each W-step, one round), W would be the m
      smallest eigenvectors of X^T L_S X + gamma I and gamma could not change anything,
      contradicting Figure 2 (ACC varies with gamma). By default Q = I only at the start and is
      carried over; ``reset_q=True`` with ``inner_iter`` rounds is the authors' reading.
    * Degenerate first W-step. With Q = I and m <= d - rank(X^T L_S X) (any d >> n with m ~ d/2)
      the m smallest eigenvalues all equal gamma and any m-dimensional subspace of their
      eigenspace solves (13); LAPACK returns an arbitrary one. The "auto"/"tied" solver takes the
      subspace closest to the m lowest-leverage coordinate axes (deterministic, basis-free;
      ``ufsbench.numerics.diag_lowrank``), reading eigenvalues within 1e-10 (relative) of gamma as
      gamma so that the cut does not follow round-off.
    * Degenerate F-step. When S has more than c components any c-dimensional part of the null
      space of L_S solves (14); F is then the first c columns of a canonical basis of it (from the
      component indicators alone), not an eigensolver's round-off choice. It enters the first
      S-step when the initial S has more than c components (JAFFE at k = 5: 15 for c = 10); later
      such F is not used: with more than c components the previous F is kept, as in the authors'
      code.
    * Ranking: scores within 1e-12 of each other (relative to the largest) are tied. At large
      gamma W is close to m coordinate axes, whose row norms are 1 up to the last bit; their order
      is then round-off's, so tied features are taken in the order of a permutation seeded by
      ``random_state`` (0 when None), not by index (which would favour the first pixels).
    * alpha of Eq. (27) is computed once on the input-space distances and kept fixed (problem (6)
      needs a fixed alpha for the alternating steps to be descent steps); s_ii = 0 (the sums of
      (1) and (18) run over j != i).
    * Computation: S and L_S are sparse CSR matrices; the simplex projections (18) sort only
      each row's largest entries (``ufsbench.numerics.simplex``), starting from twice the previous
      S's widest row; the projected distances ||W^T x_i - W^T x_j||^2 by one Gram product (from
      3000 samples on, ``graphs.SPARSE_MIN_SAMPLES``, the initial input-space distances too, and
      with ``neighbours="all"`` the initial graph and the S-steps run row block by row block
      with no n x n array, ``initial_graph_by_blocks``, ``s_step_by_blocks``, the blocks on as
      many cores as the caller lets BLAS use, with the bits of one thread); F's
      null space from S's components, its other columns component by component (dense ``eigh``
      below 600 samples, else shift-invert Lanczos with a sparse LU or, for graphs with many
      non-zeros per row, a dense Cholesky, and from 3000 samples on Lanczos on L_S itself
      unless the graph holds more than a fifth of the n^2 entries; warm start, seeded restarts;
      ``ufsbench.numerics.laplacian_eig``); the W-step's G = X^T L_S X + gamma Q by the
      tied-diagonal reduction while Q has few distinct values (always at Q = I), else by a dense
      ``eigh`` of the d x d matrix (O(d^3) per round; divide and conquer is the fastest LAPACK
      route for m = d/2). The iterates equal those of the plain dense Algorithm 2
      (``tests/methods/_reference_sogfs.py``) up to round-off.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of connected components the rank term drives S to (F is n x c).
    random_state : int, RandomState instance or None, default None
        Seeds only the order of tied scores (0 when None; see "Ranking" above); the fit is
        deterministic.
    gamma : float, default 1.0
        Weight of ||W||_{2,1}.
    n_components : int, float in (0, 1] or None, default None
        Projection columns: a count (at most d), a share of d, or None (round(d/2)).
    k : int, default 5
        Neighbours for alpha of Eq. (27), the per-sample initial S and the "local" neighbour sets.
    max_iter : int, default 50
        Outer iterations (Algorithm 2).
    inner_iter : int, default 1
        Rounds of Algorithm 1 per outer iteration (at most, with ``inner_tol``).
    inner_tol : float or None, default None
        End the rounds of Algorithm 1 once objective (9) moved by less than this (absolute) in a
        round; None runs exactly ``inner_iter`` rounds.
    reset_q : bool, default False
        Start every W-step from Q = I (True) or from the previous W-step's Q (False).
    tol : float, default 1e-5
        ``stop="objective"`` only: relative change of objective (6) at which it stops.
    stop : "components" or "objective", default "components"
        The convergence test (see above).
    min_iter : int, default 1
        The convergence test is applied from this outer iteration on (the authors' code: 2).
    component_test : "support" or "eigengap", default "support"
        How S's component count is compared with c for the lambda rule and the stop.
    eps : float, default 1e-8
        Smoothing of Eq. (12).
    lambda_init : float or None, default None
        Starting lambda (None = alpha).
    lambda_factor : float, default 2.0
        Factor lambda is multiplied or divided by when S has too few or too many components.
    initial_alpha : "global" or "per_sample", default "global"
        The initial S of problem (1): one alpha (Eq. (27)), or each row's alpha_i (Eq. (26)).
    neighbours : "all" or "local", default "all"
        The support allowed to s_i in the S-step: every other sample (Eq. (18)), or the k nearest,
        in the input space for the first 5 outer iterations and in the projected space after.
    final_w_step : bool, default False
        Run Algorithm 1 once more on the final S, so that the returned W is that graph's.
    preprocess : "center_unit" or "none", default "center_unit"
        Centre each feature and scale it to unit l2 norm, or use X as given.
    solver : "auto", "tied", "dense" or "lanczos", default "auto"
        The W-step's eigensolver: "auto" uses the exact tied-diagonal reduction when gamma Q has few
        distinct values, dense LAPACK otherwise; "dense" always forms the d x d matrix; "lanczos"
        uses ARPACK (only sensible for m << d). ``solver="fast"`` is the deprecated spelling of
        "auto".
    m : deprecated
        The old name of ``n_components`` (a FutureWarning; removed in the next release).
    w_solver : deprecated
        The old name of ``solver`` (a FutureWarning; removed in the next release).
    memory : None, str or joblib.Memory, default None
        Where to cache the initial S and alpha (they depend on the preprocessed X, k,
        ``neighbours`` and ``initial_alpha`` only); None computes them on every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_i||_2, higher is better.
    projection_ : ndarray (n_features, m)
        W.
    similarity_ : ndarray or CSR matrix (n_samples, n_samples)
        The final S (CSR from ``SPARSE_MIN_SAMPLES`` samples on with ``neighbours="all"``).
    n_components_ : int
        Connected components of the final S (not the projection dimension, which is
        ``projection_.shape[1]``); ``component_labels_`` labels them.
    objective_history_ : list of float
        Objective (6) per outer iteration, with that iteration's lambda (not monotone since
        lambda moves).
    w_objective_history_ : list of float
        Objective (9) after each round of Algorithm 1; ``w_solver_paths_`` names each round's
        solver path.
    lambda_history_ : list of float
        The lambda of each outer iteration.
    n_components_history_ : list of int
        The connected components of S after each outer iteration.
    alpha_ : float
        alpha of Eq. (27).
    lambda_ : float
        The final lambda.
    n_iter_ : int
        Outer iterations run.
    converged_ : bool
        Whether the convergence test (``stop``) ended the fit, rather than ``max_iter``.
    """

    #: Version of this method's selections: stored records of another revision are stale.
    revision = 6
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
        "inner_tol": [Interval(Real, 0, np.inf, closed="left"), None],
        "reset_q": ["boolean"],
        "tol": [Interval(Real, 0, np.inf, closed="left")],
        "stop": [StrOptions({"components", "objective"})],
        "min_iter": POSITIVE_INT,
        "component_test": [StrOptions({"support", "eigengap"})],
        # eps > 0 keeps Q_ii = 1 / (2 sqrt(||w_i||^2 + eps)) of Eq. (12) finite for zero rows.
        "eps": [Interval(Real, 0, np.inf, closed="neither")],
        # lambda weighs the rank term Tr(F^T L_S F) of (6) and is only ever multiplied or divided
        # by lambda_factor: from 0 it would never act, a negative one would push S away from c
        # components, and a factor of 1 would never move it.
        "lambda_init": [Interval(Real, 0, np.inf, closed="neither"), None],
        "lambda_factor": [Interval(Real, 1, np.inf, closed="neither")],
        "initial_alpha": [StrOptions({"global", "per_sample"})],
        "neighbours": [StrOptions({"all", "local"})],
        "final_w_step": ["boolean"],
        "preprocess": [StrOptions({"center_unit", "none"})],
        "solver": [StrOptions(set(W_SOLVERS) | set(DEPRECATED_SOLVERS),
                              deprecated=set(DEPRECATED_SOLVERS))],
        "w_solver": [StrOptions(set(W_SOLVERS)), Hidden(StrOptions({"deprecated"}))],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, gamma=1.0,
                 n_components=None, k=5, max_iter=50, inner_iter=1, inner_tol=None,
                 reset_q=False, tol=1e-5, stop="components", min_iter=1,
                 component_test="support", eps=1e-8, lambda_init=None, lambda_factor=2.0,
                 initial_alpha="global", neighbours="all", final_w_step=False,
                 preprocess="center_unit", solver="auto", m="deprecated", w_solver="deprecated",
                 memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.gamma = gamma
        self.n_components = n_components
        self.m = m
        self.k = k
        self.max_iter = max_iter
        self.inner_iter = inner_iter
        self.inner_tol = inner_tol
        self.reset_q = reset_q
        self.tol = tol
        self.stop = stop
        self.min_iter = min_iter
        self.component_test = component_test
        self.eps = eps
        self.lambda_init = lambda_init
        self.lambda_factor = lambda_factor
        self.initial_alpha = initial_alpha
        self.neighbours = neighbours
        self.final_w_step = final_w_step
        self.preprocess = preprocess
        self.solver = solver
        self.w_solver = w_solver
        self.memory = memory

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """About five outer iterations (4-8 on the paper data sets), each a dense d x d
        eigendecomposition in the W-step (``solver`` "auto" or "dense") and n x n graph and
        F-steps: 5e-11 n^3 s on dense n x n arrays, from ``SPARSE_MIN_SAMPLES`` samples on
        (``neighbours="all"``, the row-block S-steps) 1.5e-7 n^2 s. Lymphoma (96 x 4026): 59 s
        modelled, 44.5 s measured; jaffe (213 x 676): 0.28 and 0.26 s; isolet (1560 x 617), the
        farthest on the paper data sets: 1.2 and 3.6 s. USPS subsets (one BLAS thread, Intel
        Xeon): 4000 samples 12 and 17.8 s, 6000 27 and 42.9 s, 9298 65 and 79.5 s."""
        if params.get("solver", "auto") not in ("auto", "dense"):
            return None
        iterations = 5
        w_step = DENSE_EIGH_SECONDS_PER_CUBE * float(n_features) ** 3
        by_blocks = (n_samples >= SPARSE_MIN_SAMPLES
                     and params.get("neighbours", "all") == "all")
        graph = 1.5e-7 * float(n_samples) ** 2 if by_blocks else 5e-11 * float(n_samples) ** 3
        memory = 8.0 * max(4 * n_features ** 2, 3 * n_samples ** 2)
        if w_step >= graph:
            what = (f"a dense {n_features} x {n_features} eigendecomposition in each of its "
                    f"~{iterations} outer iterations")
        else:
            what = (f"{n_samples} x {n_samples} graph steps in each of its ~{iterations} "
                    f"outer iterations")
        return FitCost(iterations * (w_step + graph), memory, what)

    def _check_parameter_relations(self) -> None:
        if self.min_iter > self.max_iter:
            raise self._invalid(f"min_iter={self.min_iter} exceeds max_iter={self.max_iter}: the "
                                f"convergence test would never be applied")

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

    def _projection_columns(self, d: int) -> int:
        """m from ``n_components`` (or the deprecated ``m``, with a FutureWarning)."""
        if self.m != "deprecated":
            warnings.warn("SOGFS's m is deprecated and will be removed in the next release; use "
                          "n_components", FutureWarning, stacklevel=4)
            return _projection_dim(self.m, d, name="m")
        return _projection_dim(self.n_components, d)

    def _graph(self, S: np.ndarray):
        """(S, L_S = D - (S + S^T)/2) (steps 2-3 of Algorithm 2) as sparse CSR matrices.

        The sparse L_S holds the very bits of the dense one (built densely, O(n^2), then
        compressed): the first W-step at Q = I can be a degenerate cut whose choice moves with
        round-off in L_S (see ``w_step``), and the fit must take the dense computation's choice.
        """
        L = laplacian(sym(S))
        return sp.csr_matrix(S), sp.csr_matrix(L)

    def _f_step(self, S_graph, L, c: int, F_prev: np.ndarray | None):
        """Problem (14) and the component test: (F = the c smallest eigenvectors of L_S, S's
        component count, its labels, verdict -1 / 0 / 1 for fewer / exactly / more than c).

        The null space of L_S is known exactly (the normalised component indicators); the other
        eigenpairs come per component (``component_smallest_eigvecs``: one Krylov start vector
        on the whole L_S can miss null vectors of a multiple 0 eigenvalue). With more than c
        components every c-dimensional part of the null space solves (14); F is then a function
        of the components alone (``canonical_null_space_vectors``), not an eigensolver's
        round-off choice (it would follow the CPU's BLAS kernel).
        """
        n_comp, labels = connected_component_labels(S_graph)
        eigengap = self.component_test == "eigengap"
        if n_comp > c:        # c + 1 zero eigenvalues: "more than c" for either test
            return canonical_null_space_vectors(labels, c), n_comp, labels, 1
        vals, F = component_smallest_eigvecs(L, labels, min(c + eigengap, L.shape[0]),
                                             warm=F_prev)
        verdict = component_verdict(n_comp, c, vals if eigengap else None)
        return F[:, :c], n_comp, labels, verdict

    def _w_update(self, X, L, q, m, W, solver):
        """One W-step (Algorithm 1) with its records: (W, q, X W)."""
        if self.reset_q:
            q = np.ones(X.shape[1])
        W, q, history, paths, XW = w_step(X, L, q, float(self.gamma), m, self.inner_iter,
                                          float(self.eps), solver, W0=W, return_projection=True,
                                          tol=self.inner_tol)
        self.w_objective_history_.extend(history)
        self.w_solver_paths_.extend(paths)
        return W, q, XW

    def _s_update(self, XW, F, lam, alpha, it, local0, k, window):
        """Step 4: every s_i by problem (18), d_ij = ||W^T x_i - W^T x_j||^2 + lam ||f_i - f_j||^2
        (from the n x m projections X W, never an n x n x d array; ``window``: twice the previous
        S's largest row support, where the partial sorts start). Returns (S, sum_ij m_ij s_ij,
        sum_ij s_ij^2), m_ij the projected distances. Over all j from ``SPARSE_MIN_SAMPLES``
        samples on, row block by row block (:func:`s_step_by_blocks`; S is then CSR)."""
        if self.neighbours == "all" and XW.shape[0] >= SPARSE_MIN_SAMPLES:
            return s_step_by_blocks(XW, F, lam, alpha, window)
        Mdist = gram_squared_distances(XW)
        dist = squared_distances(F)
        dist *= lam
        dist += Mdist                            # Mdist + lam ||f_i - f_j||^2, in place
        nbrs = None
        if self.neighbours == "local":
            nbrs = local0 if it < FROZEN_NEIGHBOUR_ITERS else knn_indices(Mdist, k)
        S = s_step(dist, alpha, nbrs, window=window)
        return S, float(np.sum(Mdist * S)), float(np.sum(S * S))

    def _settled(self, it: int, verdicts: list) -> bool:
        """The convergence test (``stop``) at an iteration whose S has c components."""
        if it + 1 < self.min_iter:
            return False
        if self.stop == "components":
            return True
        h = self.objective_history_
        return (len(h) > 1 and verdicts[-1] == 0
                and abs(h[-1] - h[-2]) <= self.tol * max(abs(h[-2]), 1e-12))

    def _fit(self, X):
        n, d = X.shape
        k, c = self._neighbours(n), self.n_clusters_
        m = self._projection_columns(d)
        if self.preprocess == "center_unit":
            X = center_unit_norm(X)
        solver = self._w_solver()
        alpha, local0, S = cached_call(self.memory, initial_graph, X, k=k,
                                       neighbours=self.neighbours, full_sort=False,
                                       per_sample=self.initial_alpha == "per_sample")
        lam = alpha if self.lambda_init is None else float(self.lambda_init)
        S_graph, L = self._graph(S)
        F = self._f_step(S_graph, L, c, None)[0]
        q, W = np.ones(d), None                      # Algorithm 1: Q = I at the start
        self.objective_history_, self.w_objective_history_ = [], []
        self.lambda_history_, self.n_components_history_, self.w_solver_paths_ = [], [], []
        verdicts, converged, it = [], False, -1
        for it in range(self.max_iter):
            W, q, XW = self._w_update(X, L, q, m, W, solver)            # step 1
            window = 2 * int(np.diff(S_graph.indptr).max()) + 1
            S, m_term, s_term = self._s_update(XW, F, lam, alpha, it, local0, k, window)  # 4
            S_graph, L = self._graph(S)                                          # steps 2-3
            F_new, n_comp, labels, verdict = self._f_step(S_graph, L, c, F)
            self.objective_history_.append(  # objective (6) with this iteration's lambda
                m_term + alpha * s_term
                + float(self.gamma) * l21_norm(W)
                + 2.0 * lam * float(np.einsum("ij,ij->", F_new, L @ F_new)))
            self.lambda_history_.append(lam)
            self.n_components_history_.append(n_comp)
            if verdict < 0:         # too few components: strengthen the rank constraint
                lam *= self.lambda_factor
                F = F_new
            elif verdict > 0:       # too many: relax it and keep the previous F
                lam /= self.lambda_factor
            else:
                F = F_new
                converged = self._settled(it, verdicts)
            verdicts.append(verdict)
            if converged:
                break
        if self.final_w_step:
            W, q, _ = self._w_update(X, L, q, m, W, solver)
        test = ("S has exactly c connected components" if self.stop == "components" else
                "S keeps c components and objective (6) changes by <= tol")
        self._stopped(it + 1, converged, test=test)
        self.alpha_ = alpha
        self.lambda_ = lam
        self.projection_ = W
        self.similarity_ = S
        self.n_components_ = n_comp
        self.component_labels_ = labels                  # of the final S (its F-step's count)
        self.scores_ = row_norms(W)
