"""Projections and eigen-helpers shared by the selectors."""

from __future__ import annotations

import inspect

import numpy as np
from scipy import linalg as sla
from scipy.sparse.linalg import LinearOperator, eigsh


def project_simplex_rows(V: np.ndarray) -> np.ndarray:
    """Euclidean projection of every row of V onto the probability simplex {s >= 0, sum s = 1}.

    Sort-based algorithm (Held et al. 1974; Duchi et al. 2008), O(d log d) per row; this is the
    closed form of the S-step of SOGFS (Eq. (18)) and of the adaptive-graph methods.
    """
    V = np.atleast_2d(np.asarray(V, dtype=float))
    n, d = V.shape
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    ind = np.arange(1, d + 1)
    cond = U - css / ind > 0
    rho = d - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1)
    return np.maximum(V - theta[:, None], 0.0)


#: Square matrices from this many rows on are symmetrised tile by tile (:func:`sym`).
SYM_TILED_MIN = 1024
#: Rows and columns of one tile (a 256 x 256 float64 tile is 512 KB: it and its mirror stay in
#: the L2 cache).
SYM_TILE = 256


def sym(A: np.ndarray) -> np.ndarray:
    """Symmetric part (A + A^T) / 2, to remove round-off asymmetry before eigh.

    A dense square float64 A of ``SYM_TILED_MIN`` rows or more is done tile by tile, each
    off-diagonal tile once and its mirror copied: entry (i, j) is 0.5 * (A_ij + A_ji) either way
    (addition commutes exactly), so the bits are those of the one-line form, whose transposed
    read of an array larger than the cache is about twice as slow (9298 x 9298: 0.67 s against
    0.30 s, one core).
    """
    if not (isinstance(A, np.ndarray) and A.ndim == 2 and A.shape[0] == A.shape[1]
            and A.shape[0] >= SYM_TILED_MIN and A.dtype == np.float64):
        return 0.5 * (A + A.T)
    n = A.shape[0]
    out = np.empty_like(A)
    for i in range(0, n, SYM_TILE):
        rows = slice(i, i + SYM_TILE)
        for j in range(i, n, SYM_TILE):
            cols = slice(j, j + SYM_TILE)
            tile = np.add(A[rows, cols], A[cols, rows].T, out=out[rows, cols])
            tile *= 0.5
            if j != i:
                out[cols, rows] = tile.T
    return out


def double_centre(A: np.ndarray) -> np.ndarray:
    """H A H with the scaled centring matrix H = (I - 11^T/n) / (n - 1) (of the HSIC estimate;
    DGUFS footnote 4), in O(n^2) without forming H."""
    n = A.shape[0]
    C = A - A.mean(axis=0, keepdims=True)
    C -= C.mean(axis=1, keepdims=True)
    return C / float(n - 1) ** 2


#: Eigenvalues closer than this (absolute; the matrices passed have norm ~1) count as one
#: multiple eigenvalue in :func:`canonical_eigenbasis`. An exact multiple eigenvalue comes out of
#: LAPACK split by ~1e-15; below ~1e-8 a gap leaves the eigenvectors ill-determined anyway (their
#: round-off sensitivity is ~1e-16 n / gap).
DEGENERATE_TOL = 1e-8


def degenerate_clusters(values: np.ndarray, tol: float = DEGENERATE_TOL) -> list[np.ndarray]:
    """Index runs (length >= 2) of sorted eigenvalues, each within ``tol`` of its neighbour."""
    values = np.asarray(values, dtype=float)
    breaks = np.flatnonzero(np.abs(np.diff(values)) > tol) + 1
    return [run for run in np.split(np.arange(values.size), breaks) if run.size >= 2]


def canonical_eigenbasis(values: np.ndarray, vectors: np.ndarray,
                         tol: float = DEGENERATE_TOL) -> np.ndarray:
    """``vectors`` with the basis of every multiple eigenvalue made a function of its eigenspace.

    For a multiple eigenvalue an eigensolver returns an arbitrary orthonormal basis of the
    eigenspace, decided by round-off -- the BLAS kernel of the CPU, the thread count -- and a
    method reading the vectors one by one (MCFS regresses each on X with an l1 penalty) then
    selects other features on another machine. Here each such basis U_c (n x r) is replaced by
    the QR factor (positive R diagonal) of P G, where P = U_c U_c^T is the eigenspace's
    projector and G a fixed n x r Gaussian probe (seed 0): a continuous function of the
    eigenspace alone, so solver round-off moves it by round-off only. Columns of simple
    eigenvalues are returned bit for bit; ``values`` must be sorted (either way).
    """
    clusters = degenerate_clusters(values, tol)
    if not clusters:
        return vectors
    vectors = np.array(vectors, dtype=float)
    for run in clusters:
        basis = vectors[:, run]
        probe = np.random.default_rng(0).standard_normal((basis.shape[0], run.size))
        Q, R = np.linalg.qr(basis @ (basis.T @ probe))
        vectors[:, run] = Q * np.where(np.diag(R) < 0.0, -1.0, 1.0)
    return vectors


#: Since SciPy 1.15 ``eigsh`` draws the new start vectors ARPACK asks for on a restart (a Krylov
#: space exhausted early, e.g. a warm start lying in an invariant subspace) from an unseeded
#: Generator unless given ``rng``: SOGFS's warm-started F-step on binalpha then gave other
#: eigenvector bases, and through them other fits, from one run to the next.
_EIGSH_TAKES_RNG = "rng" in inspect.signature(eigsh).parameters


def seeded_eigsh(A, **kwargs):
    """``scipy.sparse.linalg.eigsh`` with its restarts drawn from a fixed seed (see above)."""
    if _EIGSH_TAKES_RNG:
        kwargs.setdefault("rng", np.random.default_rng(0))
    return eigsh(A, **kwargs)


def eigh_smallest(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k smallest eigenpairs of a dense symmetric matrix (ascending), by LAPACK subset eigh."""
    vals, vecs = sla.eigh(sym(A), subset_by_index=[0, k - 1], driver="evr")
    return vals, vecs


def eigh_largest(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k largest eigenpairs of a dense symmetric matrix (descending)."""
    n = A.shape[0]
    vals, vecs = sla.eigh(sym(A), subset_by_index=[n - k, n - 1], driver="evr")
    return vals[::-1], vecs[:, ::-1]


def smallest_eigvecs_diag_plus_lowrank(diag: np.ndarray, B: np.ndarray, M: np.ndarray, k: int,
                                       v0: np.ndarray | None = None, tol: float = 1e-10,
                                       dense_below: int = 1500) -> tuple[np.ndarray, np.ndarray]:
    """k smallest eigenpairs of G = diag(diag) + B M B^T without forming G when it is large.

    G is d x d with B of shape (d, r), r << d (e.g. UFSOL's (beta/2) R + X (alpha L + I - V^T V) X^T
    and SOGFS's gamma Q + X^T L_S X). For d <= ``dense_below`` a dense subset eigh is faster; above
    it a Lanczos solver (ARPACK) applies G as diag * v + B (M (B^T v)) at O(d r) a product, warm
    started from ``v0`` (the previous iterate's eigenvectors) when given.
    """
    d = diag.shape[0]
    if d <= dense_below or k >= d // 2:
        G = np.diag(diag) + B @ M @ B.T
        return eigh_smallest(G, k)
    Msym = sym(M)
    op = LinearOperator((d, d), matvec=lambda v: diag * v + B @ (Msym @ (B.T @ v)), dtype=float)
    start = None if v0 is None else np.asarray(v0, dtype=float).sum(axis=1)
    if start is not None and not np.any(start):
        start = None
    vals, vecs = seeded_eigsh(op, k=k, which="SA", v0=start, tol=tol)
    order = np.argsort(vals)
    return vals[order], vecs[:, order]


def orthonormal_polar(H: np.ndarray) -> np.ndarray:
    """argmax_{U^T U = I} Tr(U^T H): the polar factor P Q^T of the thin SVD H = P S Q^T."""
    P, _, Qt = np.linalg.svd(H, full_matrices=False)
    return P @ Qt


# -- the polar factor from the small Gram matrix ------------------------------------------------
# The orthonormal polar factor of a tall matrix from its small Gram matrix.
#
# For H (p x h, p >= h) of full column rank with H^T H = Q diag(w) Q^T, the polar factor of the
# thin SVD H = P S R^T is P R^T = H (H^T H)^{-1/2} = H Q diag(w^{-1/2}) Q^T. Forming it costs one
# p h^2 Gram product, an h x h ``eigh`` and one p h^2 product, instead of the SVD of the p x h
# matrix (bidiagonalisation plus forming the p x h left factor), which is several times slower.
#
# The Gram squares the condition number, so the orthogonality error of this form grows like
# eps * kappa(H)^2 where the SVD's is eps * kappa(H)-independent; below a relative smallest
# eigenvalue of ``rcond`` (kappa(H) > rcond^{-1/2}) the function falls back to the SVD form
# (``orthonormal_polar``), which also covers rank-deficient H, where the polar factor is not
# unique.

#: Relative smallest Gram eigenvalue below which the SVD form is used (kappa(H) > 1e4).
GRAM_RCOND = 1e-8


def gram_polar(H: np.ndarray, rcond: float = GRAM_RCOND) -> np.ndarray:
    """argmax_{U^T U = I} Tr(U^T H) = H (H^T H)^{-1/2} for a tall, well-conditioned H.

    Same result as ``orthonormal_polar(H)`` up to round-off of order eps * kappa(H)^2; falls
    back to it when H is wide, zero, or its Gram's eigenvalues span more than 1/``rcond``.
    """
    p, h = H.shape
    if p < h:
        return orthonormal_polar(H)
    w, Q = np.linalg.eigh(H.T @ H)
    if not w[-1] > 0 or w[0] <= rcond * w[-1]:
        return orthonormal_polar(H)
    return H @ ((Q / np.sqrt(w)) @ Q.T)
