"""Smallest eigenpairs of G = diag(a) + B M B^T (d x d, B of rank r << d) by Woodbury shift-invert.

The W-steps of UFSOL (G = beta/2 R + X (alpha L + I - V^T V) X^T), SOGFS (gamma Q + X^T L_S X) and
similar l2,1 + orthogonality models need the k smallest eigenvectors of such a G with d up to
10^4 features and n = r of a few hundred samples. A dense eigh costs O(d^3) (and O(d^2 r) to form
G); plain Lanczos on G (``ufsbench.numerics.smallest_eigvecs_diag_plus_lowrank``) converges slowly
when the reweighting diagonal spans many orders of magnitude, because the wanted eigenvalues are
then tightly clustered relative to the spectrum's width.

Here Lanczos runs on T = (G - s I)^{-1} with a shift s below the spectrum, so the k smallest
eigenvalues of G become the k largest, well separated eigenvalues of T. T is applied in O(d r)
through the Woodbury identity (A = diag(a) - s I > 0):

    T = A^{-1} - A^{-1} B M (I + B^T A^{-1} B M)^{-1} B^T A^{-1},

after an O(d r^2 + r^3) set-up. The shift comes from Weyl's inequality,
lambda_min(G) >= min(a) + min(0, lambda_min(K^{1/2} M K^{1/2})) with K = B^T B, minus a small
margin, so that G - sI is positive definite even when M is indefinite (UFSOL's max-margin graph).
The result is polished by a Rayleigh-Ritz step on G itself.

B may also be given as a :class:`~ufsbench.numerics.sparse_gram.SparsePlusOffset` X with
B = X^T (a mostly-zero X after centring, e.g. a z-scored bag-of-words set): the set-up's
B^T A^{-1} B = X A^{-1} X^T and every product with B then run on the non-zero part of X plus a
rank-one correction, O(nnz) instead of O(d r) per column, the same numbers up to round-off.
The caller may also pass ``apply_m`` (Y -> M Y) when M is cheaper to apply than a dense r x r
matrix (a sparse graph Laplacian minus a cluster indicator's projection): the set-up's K M is
then (M K)^T (K and M symmetric), O(r nnz(M)) instead of O(r^3), and every Lanczos step saves
a dense product with M.
M = None stands for M = I (G = diag(a) + B B^T, e.g. UDFS's gamma D + X^T L X): the set-up's
B^T A^{-1} B is then a symmetric rank-r update C^T C (C = A^{-1/2} B, BLAS syrk, half a general
product's flops), I + C^T C is factored by Cholesky instead of LU, and no product with M is formed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy import linalg as sla
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator

from ufsbench.errors import UFSBenchError
from ufsbench.numerics.linalg import eigh_smallest, seeded_eigsh, sym
from ufsbench.numerics.sparse_gram import SparsePlusOffset

#: Largest d for which a Lanczos failure falls back to forming G (8 d^2 bytes: 128 MB at 4096).
DENSE_FALLBACK_MAX_D = 4096


def lowrank_min_eigenvalue_bound(diag: np.ndarray, B: np.ndarray | None, M: np.ndarray,
                                 K: np.ndarray | None = None, m_min: float | None = None) -> float:
    """Weyl lower bound on lambda_min(diag(a) + B M B^T).

    ``K`` = B^T B and ``m_min`` = lambda_min(M) may be passed if already known (B may then be
    None). When M is PSD the bound is min(a) (and K is not needed).
    """
    Msym = sym(M)
    low = float(np.min(diag))
    if (np.linalg.eigvalsh(Msym)[0] if m_min is None else m_min) >= 0:
        return low
    if K is None:
        if B is None:
            raise ValueError("lowrank_min_eigenvalue_bound needs B or K = B^T B")
        K = B.T @ B
    kval, kvec = np.linalg.eigh(sym(K))
    root = (kvec * np.sqrt(np.clip(kval, 0, None))) @ kvec.T
    return low + min(0.0, float(np.linalg.eigvalsh(sym(root @ Msym @ root))[0]))


def smallest_eigh_shift_invert(diag: np.ndarray, B: np.ndarray | SparsePlusOffset,
                               M: np.ndarray | None, k: int, v0: np.ndarray | None = None,
                               K: np.ndarray | None = None, lower_bound: float | None = None,
                               tol: float = 1e-12,
                               apply_m: Callable[[np.ndarray], np.ndarray] | None = None,
                               ) -> tuple[np.ndarray, np.ndarray]:
    """The k smallest eigenpairs (ascending) of G = diag(diag) + B M B^T, G never formed.

    diag (d,), B (d, r) or a :class:`SparsePlusOffset` X (r, d) standing for B = X^T, M (r, r)
    symmetric (any sign) or None for the identity (see the module docstring), k < d. ``v0``
    (d, k), e.g. the previous iterate's eigenvectors, warm-starts Lanczos (the sum of its columns
    is the start vector). ``K = B^T B`` may be passed
    when it is reused across calls (only used when M is indefinite). ``lower_bound`` <=
    lambda_min(G), when the caller knows one (e.g. min(diag) for a PSD M), saves the O(r^3)
    eigenvalues of M used to derive it. ``apply_m`` returns M Y for Y of shape (r,) or (r, m),
    in place of the dense products with M (the same up to round-off); M is then taken as
    exactly symmetric. Cost O(d r^2 + r^3) + O(d r) per Lanczos
    step (O(nnz) in place of O(d r) for a :class:`SparsePlusOffset`); memory O(d r).
    """
    diag = np.asarray(diag, dtype=float)
    d = diag.shape[0]
    r = B.shape[0] if isinstance(B, SparsePlusOffset) else B.shape[1]
    if M is None:
        if apply_m is not None:
            raise ValueError("apply_m needs M (M = None stands for the identity)")
        return _smallest_identity_m(diag, B, k, v0, lower_bound, tol)
    # With apply_m, M is only read for the scale of the shift's margin (and, without
    # lower_bound, for its smallest eigenvalue, from one triangle): no symmetrised copy.
    Msym = sym(np.asarray(M, dtype=float)) if apply_m is None else np.asarray(M, dtype=float)
    if lower_bound is not None:
        bound = float(lower_bound)
    elif isinstance(B, SparsePlusOffset):
        m_min = float(np.linalg.eigvalsh(Msym)[0])
        if K is None and m_min < 0:
            K = B.outer(np.ones(d))
        bound = lowrank_min_eigenvalue_bound(diag, None, Msym, K=K, m_min=m_min)
    else:
        bound = lowrank_min_eigenvalue_bound(diag, B, Msym, K=K)
    # ||G||_2 <= max|a| + ||M||_inf ||B||_F^2: the scale of the safety margin below the bound.
    b_sq = B.sq_norm if isinstance(B, SparsePlusOffset) else float(np.sum(B * B))
    scale = max(float(np.max(np.abs(diag))), float(np.abs(Msym).sum(axis=1).max()) * b_sq,
                1e-300)
    shift = bound - 1e-10 * scale - 1e-300
    inv_a = 1.0 / (diag - shift)                              # A^{-1}, A > 0
    parts = (_offset_parts(B, diag - shift, inv_a) if isinstance(B, SparsePlusOffset)
             else _dense_parts(B, inv_a))
    KA, b_t_inv_a, inv_a_b, b_t = parts
    if apply_m is None:
        inner = np.eye(r) + KA @ Msym                         # I + B^T A^{-1} B M
    else:
        inner = apply_m(KA).T                                 # K M = (M K)^T, a fresh array
        inner[np.diag_indices(r)] += 1.0
    m_times: _Product = (lambda Y: Msym @ Y) if apply_m is None else apply_m
    lu = sla.lu_factor(inner, overwrite_a=True, check_finite=False)

    def apply_t(v):
        v = np.asarray(v, dtype=float).reshape(d, -1)
        z = sla.lu_solve(lu, b_t_inv_a(v), check_finite=False)
        out = inv_a[:, None] * v - inv_a_b(m_times(z))
        return out if out.shape[1] > 1 else out[:, 0]

    op = LinearOperator((d, d), matvec=apply_t, matmat=apply_t, dtype=float)
    start = None
    if v0 is not None:
        start = np.asarray(v0, dtype=float).reshape(d, -1).sum(axis=1)
        if not np.any(start):
            start = None
    try:
        _, vecs = seeded_eigsh(op, k=k, which="LA", v0=start, tol=tol,
                               ncv=min(d, max(2 * k + 1, 20)))
    except ArpackNoConvergence as failure:
        dense_b = B.toarray().T if isinstance(B, SparsePlusOffset) else B
        return _dense_fallback(diag, dense_b, Msym, k, failure)
    # Rayleigh-Ritz on G: orthonormalise, then diagonalise the k x k projection.
    Q, _ = np.linalg.qr(vecs)
    BQ = b_t(Q)
    quad = BQ.T @ Msym @ BQ if apply_m is None else BQ.T @ apply_m(BQ)
    H = sym(Q.T @ (diag[:, None] * Q) + quad)
    vals, rot = np.linalg.eigh(H)
    return vals, Q @ rot


_Product = Callable[[np.ndarray], np.ndarray]


def _lanczos_start(v0: np.ndarray | None, d: int) -> np.ndarray | None:
    """The Lanczos start vector from a warm start v0 (d, k): the sum of its columns."""
    if v0 is None:
        return None
    start = np.asarray(v0, dtype=float).reshape(d, -1).sum(axis=1)
    return start if np.any(start) else None


def _smallest_identity_m(diag: np.ndarray, B: np.ndarray | SparsePlusOffset, k: int,
                         v0: np.ndarray | None, lower_bound: float | None, tol: float
                         ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`smallest_eigh_shift_invert` for M = I: G = diag(a) + B B^T.

    The same shift as for an explicit M = I (Weyl: min(a), B B^T being PSD; margin scale
    max(max|a|, ||B||_F^2)); B^T A^{-1} B by syrk, I + B^T A^{-1} B by Cholesky.
    """
    d = diag.shape[0]
    bound = float(np.min(diag)) if lower_bound is None else float(lower_bound)
    b_sq = B.sq_norm if isinstance(B, SparsePlusOffset) else float(np.sum(B * B))
    scale = max(float(np.max(np.abs(diag))), b_sq, 1e-300)
    shift = bound - 1e-10 * scale - 1e-300
    inv_a = 1.0 / (diag - shift)                              # A^{-1}, A > 0
    if isinstance(B, SparsePlusOffset):
        inner, b_t_inv_a, inv_a_b, b_t = _offset_parts(B, diag - shift, inv_a)
    else:
        inner, b_t_inv_a, inv_a_b, b_t = _dense_identity_parts(B, inv_a)
    inner[np.diag_indices(inner.shape[0])] += 1.0             # I + B^T A^{-1} B, SPD
    chol = sla.cho_factor(inner, lower=False, overwrite_a=True, check_finite=False)

    upper = chol[0]                                           # U, I + B^T A^{-1} B = U^T U

    def apply_t(v):
        v = np.asarray(v, dtype=float).reshape(d, -1)
        rhs = b_t_inv_a(v)
        if rhs.shape[1] == 1:
            # U^T y = rhs, U z = y by two BLAS trsv: 2-3 times faster than cho_solve on one
            # vector (r = 1991: 0.65 ms instead of 1.8 ms), the same up to round-off.
            y = sla.blas.dtrsv(upper, rhs[:, 0], lower=0, trans=1)
            z = sla.blas.dtrsv(upper, y, lower=0, trans=0, overwrite_x=1)[:, None]
        else:
            z = sla.cho_solve(chol, rhs, overwrite_b=True, check_finite=False)
        out = inv_a[:, None] * v - inv_a_b(z)
        return out if out.shape[1] > 1 else out[:, 0]

    op = LinearOperator((d, d), matvec=apply_t, matmat=apply_t, dtype=float)
    try:
        _, vecs = seeded_eigsh(op, k=k, which="LA", v0=_lanczos_start(v0, d), tol=tol,
                               ncv=min(d, max(2 * k + 1, 20)))
    except ArpackNoConvergence as failure:
        dense_b = B.toarray().T if isinstance(B, SparsePlusOffset) else B
        return _dense_fallback(diag, dense_b, None, k, failure)
    # Rayleigh-Ritz on G: orthonormalise, then diagonalise the k x k projection.
    Q, _ = np.linalg.qr(vecs)
    BQ = b_t(Q)
    H = sym(Q.T @ (diag[:, None] * Q) + BQ.T @ BQ)
    vals, rot = np.linalg.eigh(H)
    return vals, Q @ rot


def _dense_identity_parts(B: np.ndarray, inv_a: np.ndarray
                          ) -> tuple[np.ndarray, _Product, _Product, _Product]:
    """:func:`_dense_parts` with B^T A^{-1} B = C^T C, C = A^{-1/2} B, by syrk (its upper
    triangle only: the lower one is left as zeros) and the products through C."""
    root = np.sqrt(inv_a)
    C = B * root[:, None]                                     # A^{-1/2} B, (d, r), C order
    # C^T is Fortran-ordered (r, d): syrk with trans=0 reads it without a copy.
    KA = sla.blas.dsyrk(1.0, C.T, trans=0, lower=0)
    return (KA, lambda v: C.T @ (root[:, None] * v), lambda y: root[:, None] * (C @ y),
            lambda Q: B.T @ Q)


def _dense_parts(B: np.ndarray, inv_a: np.ndarray
                 ) -> tuple[np.ndarray, _Product, _Product, _Product]:
    """B^T A^{-1} B and the maps v -> B^T A^{-1} v, y -> A^{-1} B y, Q -> B^T Q for a dense B."""
    BA = B * inv_a[:, None]                                   # A^{-1} B, (d, r)
    return B.T @ BA, lambda v: BA.T @ v, lambda y: BA @ y, lambda Q: B.T @ Q


def _offset_parts(X: SparsePlusOffset, a: np.ndarray, inv_a: np.ndarray
                  ) -> tuple[np.ndarray, _Product, _Product, _Product]:
    """:func:`_dense_parts` for B = X^T, X = E + 1 z^T: X A^{-1} X^T and products with X, X^T."""
    return (X.outer(a), lambda v: X.dot(inv_a[:, None] * v),
            lambda y: inv_a[:, None] * X.tdot(y), X.dot)


def _dense_fallback(diag: np.ndarray, B: np.ndarray, Msym: np.ndarray | None, k: int,
                    failure: ArpackNoConvergence) -> tuple[np.ndarray, np.ndarray]:
    """The k smallest eigenpairs of G formed densely, after Lanczos failed to converge.

    Lanczos fails where the wanted eigenvalues are clustered far above the shift: UFSOL on ORL
    (d = 1024) at alpha = 1e6, beta = 1e-6 has its 40 smallest eigenvalues, in exact triples,
    within 3e-6 while round-off in the alpha-scaled B M B^T forces a shift 0.1 below them. LAPACK
    has no such trouble, at O(d^3); above ``DENSE_FALLBACK_MAX_D`` that is too costly and the
    failure is reported instead.
    """
    d = diag.shape[0]
    if d > DENSE_FALLBACK_MAX_D:
        raise UFSBenchError(
            f"the eigensolver of this setting's W-step did not converge ({failure}): its {k} "
            f"smallest eigenvalues are too tightly clustered for Lanczos, and d = {d} features is "
            f"above the {DENSE_FALLBACK_MAX_D} of the dense fallback; such clustering comes from "
            f"an extreme ratio of the method's weights, so try a less extreme setting") from failure
    warnings.warn(f"Lanczos did not converge for the {k} smallest eigenpairs (d = {d}); "
                  f"used a dense eigendecomposition instead", RuntimeWarning, stacklevel=3)
    G = B @ B.T if Msym is None else B @ Msym @ B.T             # Msym None: M = I
    G[np.diag_indices(d)] += diag
    return eigh_smallest(G, k)
