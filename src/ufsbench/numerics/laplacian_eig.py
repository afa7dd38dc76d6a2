"""The c smallest eigenpairs of a sparse graph Laplacian, by shift-invert Lanczos.

Used by SOGFS's F-step (Nie, Zhu & Li, AAAI 2016, problem (14): F = the c smallest eigenvectors of
L_S) and usable by every adaptive-graph method whose S has about k non-zeros per row. A dense
subset ``eigh`` of the n x n Laplacian costs O(n^3) (tridiagonalisation) whatever the sparsity;
here L - sigma I (sigma < 0, so positive definite) is factorised once (sparse LU, or a dense
Cholesky for graphs with many non-zeros per row, whose LU fills in anyway) and ARPACK iterates
with its inverse, whose largest eigenvalues 1 / (lambda - sigma) are the wanted ones and are well
separated from the rest. From 3000 rows on, on graphs holding up to a fifth of the n^2 entries
(and above ``DENSE_FACTOR_MAX`` rows on every graph), the factor costs more than it saves or
fills in (``DIRECT_LANCZOS_MIN``), and ARPACK iterates with L itself for its smallest algebraic
eigenvalues; its products with L run on as many cores as the caller lets BLAS use, with the
bits of one (:class:`~ufsbench.numerics.sparse_gram.RowLanes`). The tolerance is machine
precision (``tol=0``) either way, so the result is the dense one up to round-off.

A 0 eigenvalue of multiplicity above one (a graph of several components) defeats a Krylov solver:
its one start vector sees that eigenspace as one direction, and the solver can return fewer null
vectors than there are components. :func:`component_smallest_eigvecs` therefore takes the null
space from the components themselves and the other eigenpairs component by component. When the
zero eigenvalue is cut (more components than eigenpairs wanted) every solver returns some part of
the null space chosen by round-off; :func:`canonical_null_space_vectors` gives one chosen by the
components alone.

Determinism: ARPACK's default start vector is random; here it is a fixed function of the input
(the previous eigenvectors, a warm start, plus a seeded generic vector so that the Krylov space is
not trapped in an invariant subspace such as the constant vector of a Laplacian), and the
random vectors ARPACK asks for on a restart come from a fixed seed (``seeded_eigsh``).
Import by module path.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from ufsbench.numerics.linalg import canonical_eigenbasis, eigh_smallest, seeded_eigsh
from ufsbench.numerics.sparse_gram import RowLanes

#: Below this many samples a dense subset eigh is faster than factorising and iterating
#: (measured, one core: n = 600, c = 20: 0.058 s dense vs 0.049 s; n = 400, c = 40: 0.026 vs 0.075).
DENSE_BELOW = 600
#: From this many non-zeros per row on (and up to ``DENSE_FACTOR_MAX`` rows) L - sigma I is
#: factorised by a dense Cholesky rather than a sparse LU: the LU of such graphs fills in 60-90%
#: of the n^2 entries anyway (measured, one core, SOGFS graphs: n = 1828 with 335 non-zeros per
#: row, LU 0.37 s vs Cholesky 0.06 s; n = 1422 with 139, 0.12 vs 0.03 s; with 9 per row the LU
#: still fills 30% but its solves are 3x cheaper, and the ~50 solves of a call favour it).
DENSE_FACTOR_MIN_ROW_NNZ = 32
#: Up to this many rows (a dense factor of at most 1.15 GB): SOGFS on USPS (9298 samples, 1667
#: non-zeros per row) took 59 s per F-step by sparse LU, 17 s by the dense Cholesky (one core).
DENSE_FACTOR_MAX = 12000
#: From this many rows on, graphs holding at most ``DIRECT_LANCZOS_MAX_FILL`` of the n^2 entries
#: (and above ``DENSE_FACTOR_MAX`` rows every graph) are solved by Lanczos on L itself (its
#: smallest algebraic eigenvalues, by products with the sparse L only, O(nnz) each), without a
#: factor. Measured on SOGFS's F-steps as the fit calls them (component by component; one
#: core; shift-invert with its factor against Lanczos on L, seconds):
#:
#: * kNN-like graphs of high-dimensional data, where a sparse LU fills in: seeded synthetic
#:   data 10000 x 1000, first F-step 51.5 / 0.7; 5000 x 1000, five F-steps with 12-60
#:   non-zeros a row 7.8 / 0.28, 2.9 / 0.91, 1.7 / 0.29, 1.5 / 0.23, 1.5 / 0.15; 3000 x 1000
#:   1.6 / 0.10, 0.71 / 0.55, 0.49 / 0.25, 0.39 / 0.37.
#: * USPS subsets (dense Cholesky factors): 3000 rows with 1672, 997, 642, 505 non-zeros a row
#:   1.03 / 0.86, 1.30 / 1.29, 0.73 / 0.61, 0.41 / 0.25; 4000 rows with 710, 567, 504, 457
#:   1.37 / 0.63, 0.94 / 0.40, 0.68 / 0.38, 0.72 / 0.34; 9298 rows with 1633, 891, 610, 410
#:   13.4 / 8.7, 10.3 / 3.5, 9.0 / 1.4, 5.8 / 0.8.
#: * Where the factor wins, the graphs holding more than a fifth of the n^2 entries (hence
#:   ``DIRECT_LANCZOS_MAX_FILL``): 4000 rows with 1991 and 1116 a row 1.95 / 2.39, 1.90 / 1.94;
#:   9298 rows with 2944, 19.9 / 23.9.
#:
#: Below 3000 rows (every paper data set SOGFS runs on) the factor routes stay. Both agree to
#: round-off: subspaces within 1e-12, measured as ||V1 - V2 V2^T V1||_2 (on USPS's graph with
#: 2944 a row 1.9e-14, the gap to the 11th eigenvalue being 0.0056).
DIRECT_LANCZOS_MIN = 3000
#: See ``DIRECT_LANCZOS_MIN``. Above ``DENSE_FACTOR_MAX`` rows no dense factor is formed, and a
#: sparse LU can fill in (a kNN graph of 13000 samples in 50 dimensions ran for minutes in
#: SuperLU; Lanczos on L: 0.7 s).
DIRECT_LANCZOS_MAX_FILL = 0.2


def _start_vector(n: int, warm: np.ndarray | None) -> np.ndarray:
    generic = np.random.default_rng(0).standard_normal(n)
    if warm is None:
        return generic
    warm = np.asarray(warm, dtype=float).reshape(n, -1).sum(axis=1)
    scale = np.linalg.norm(warm)
    return generic / np.sqrt(n) + (warm / scale if scale > 0 else 0.0)


def _dense_shift_inverse(L: sp.csc_matrix, sigma: float):
    """(L - sigma I)^{-1} as a LinearOperator by a dense Cholesky factor, for graphs dense enough
    that a sparse LU would fill in (``DENSE_FACTOR_MIN_ROW_NNZ``); None otherwise (ARPACK then
    factorises by sparse LU)."""
    n = L.shape[0]
    if L.nnz < DENSE_FACTOR_MIN_ROW_NNZ * n or n > DENSE_FACTOR_MAX:
        return None
    A = L.toarray()
    A[np.diag_indices(n)] -= sigma                  # sigma < 0: positive definite
    factor = sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    return LinearOperator((n, n), dtype=float,
                          matvec=lambda x: sla.cho_solve(factor, x, check_finite=False))


def laplacian_smallest_eigvecs(L, c: int, warm: np.ndarray | None = None,
                               dense_below: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """c smallest eigenpairs (ascending) of a symmetric PSD Laplacian L (sparse or dense).

    ``warm``: the previous iteration's eigenvectors (n x c), used as ARPACK's start vector.
    ``dense_below``: None = ``DENSE_BELOW`` (read at call time).
    """
    n = L.shape[0]
    dense_below = DENSE_BELOW if dense_below is None else dense_below
    if n <= dense_below or c >= n - 1:
        dense = L.toarray() if sp.issparse(L) else np.asarray(L)
        return eigh_smallest(dense, c)
    L = sp.csr_matrix(L)
    if n >= DIRECT_LANCZOS_MIN and (n > DENSE_FACTOR_MAX
                                    or L.nnz <= DIRECT_LANCZOS_MAX_FILL * n * n):
        with RowLanes(L) as rows:          # the products of L on every core BLAS may use
            op = L if rows.lanes.n_lanes == 1 else LinearOperator(
                L.shape, dtype=float, matvec=rows.product, matmat=rows.product)
            vals, vecs = seeded_eigsh(op, k=c, which="SA", v0=_start_vector(n, warm), tol=0.0)
        order = np.argsort(vals, kind="stable")
        return vals[order], vecs[:, order]
    L = sp.csc_matrix(L)
    scale = max(float(np.abs(L.diagonal()).max()), 1e-300)
    sigma = -1e-3 * scale
    vals, vecs = seeded_eigsh(L, k=c, sigma=sigma, which="LM", v0=_start_vector(n, warm),
                              tol=0.0, OPinv=_dense_shift_inverse(L, sigma))
    order = np.argsort(vals, kind="stable")
    return vals[order], vecs[:, order]


def canonical_null_space_vectors(labels: np.ndarray, c: int) -> np.ndarray:
    """c orthonormal vectors (n x c) of the null space of a graph Laplacian whose graph has
    ``labels`` as its connected components (more than c of them), a function of those components
    alone: the null space is spanned by the normalised component indicators exactly, and the part
    kept is the first c columns of :func:`ufsbench.numerics.linalg.canonical_eigenbasis` of it
    (QR of its projector times a fixed probe). Renumbering the components changes nothing; an
    eigensolver's c vectors there would be a part picked by round-off (the CPU's BLAS kernel).
    """
    labels = np.asarray(labels)
    n_comp = int(labels.max()) + 1
    if not 1 <= c <= n_comp:
        raise ValueError(f"c={c} must be between 1 and the {n_comp} components")
    indicators = np.zeros((labels.size, n_comp))
    indicators[np.arange(labels.size), labels] = 1.0
    indicators /= np.sqrt(indicators.sum(axis=0))
    return canonical_eigenbasis(np.zeros(n_comp), indicators)[:, :c]


def _component_positive_eigpairs(block, t: int, warm: np.ndarray | None,
                                 dense_below: int) -> tuple[np.ndarray, np.ndarray]:
    """The t smallest positive eigenpairs of the Laplacian ``block`` of one connected graph
    (its 0 eigenvalue is simple: the smallest t + 1 pairs without the first)."""
    s = block.shape[0]
    if s <= dense_below or t + 1 >= s - 1:
        dense = block.toarray() if sp.issparse(block) else np.asarray(block)
        vals, vecs = eigh_smallest(dense, t + 1)
    else:
        vals, vecs = laplacian_smallest_eigvecs(block, t + 1, warm=warm, dense_below=0)
    return vals[1:], vecs[:, 1:]


def component_smallest_eigvecs(L, labels: np.ndarray, k: int, warm: np.ndarray | None = None,
                               dense_below: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """k smallest eigenpairs (ascending) of a graph Laplacian L (sparse or dense) whose graph has
    the connected components ``labels`` (at most k of them).

    The null space is exact: one normalised indicator per component, eigenvalue 0, in the order
    of the component labels. The k - (number of components) smallest positive eigenpairs come
    from each component's own Laplacian block, whose 0 eigenvalue is simple: a Krylov solver
    applied to the whole L would see a multiple 0 eigenvalue through one start vector only and
    can return fewer null vectors than there are components (a positive eigenpair in the place
    of a missing one). Positive eigenvalues that tie across components are taken in component
    order. ``warm``: the previous eigenvectors (n x k'), restricted to each component as its
    start vector; ``dense_below``: components up to this size use a dense subset ``eigh``
    (None = ``DENSE_BELOW``).
    """
    labels = np.asarray(labels)
    n_comp = int(labels.max()) + 1
    if not n_comp <= k <= L.shape[0]:
        raise ValueError(f"k={k} must be between the {n_comp} components and n={L.shape[0]}")
    dense_below = DENSE_BELOW if dense_below is None else dense_below
    vectors = np.zeros((labels.size, k))
    vectors[np.arange(labels.size), labels] = 1.0
    vectors[:, :n_comp] /= np.sqrt(vectors[:, :n_comp].sum(axis=0))
    wanted = k - n_comp
    if wanted == 0:
        return np.zeros(k), vectors
    L = sp.csr_matrix(L)
    candidates = []                                   # (value, component, column, vector)
    for g in range(n_comp):
        members = np.flatnonzero(labels == g)
        t = min(wanted, members.size - 1)
        if t < 1:
            continue
        block = L[members][:, members]
        start = None if warm is None else np.asarray(warm)[members]
        vals, vecs = _component_positive_eigpairs(block, t, start, dense_below)
        candidates += [(vals[j], g, j, members, vecs[:, j]) for j in range(t)]
    candidates.sort(key=lambda item: item[:3])
    values = np.zeros(k)
    for col, (value, _, _, members, vec) in enumerate(candidates[:wanted], start=n_comp):
        values[col] = value
        vectors[members, col] = vec
    return values, vectors
