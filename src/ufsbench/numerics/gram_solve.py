"""The regularised regression step W = (X^T M X + diag(r))^{-1} X^T B, in one place.

Shared by the l2,1 solvers (SOCFS, RUFS, RSFS, SCFS, SPUFS, NDFS): r > 0 is the reweighting
diagonal (times the regularisation weight), M an n x n metric on the samples (None = identity;
a positive diagonal for sample-weighted / l2,1 losses; I + alpha L for a graph-regularised
projection) and B the n x c right-hand side. For d <= n the d x d ("primal") system is solved
directly; for d > n the push-through identity

    (X^T M X + R)^{-1} X^T = R^{-1} X^T (M X R^{-1} X^T + I)^{-1}

turns it into an n x n ("dual") solve, O(n^2 d) instead of O(d^3). Symmetric products are
formed as Z^T Z / Z Z^T, which numpy hands to BLAS ``syrk`` (half the flops of a general
product). Where M is fixed only r changes between iterations, so a loop may form the Gram once
(:func:`metric_gram`; for M = I :func:`data_gram` / :func:`data_outer_gram`, which a selector
may read from its ``memory``) and pass it as ``gram``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg as sla

from ufsbench.numerics.sparse_gram import SparseOuterGram


class IllConditionedSolveWarning(RuntimeWarning):
    """A symmetric PSD system was too ill-conditioned for Cholesky; solved by least squares."""


#: A Cholesky factor R whose diagonal spans more than this ratio, squared (a lower bound on the
#: 2-norm condition number of A = R^T R), gets LAPACK's condition estimate (``pocon``). On the
#: paper grids' systems, 1 / rcond stayed within 1.4e5 times that bound, so every system with
#: rcond < eps had a bound above 3e10; the estimate (a third of the solve's time at n = 1024)
#: is skipped only where it cannot warn.
CONDITION_CHECK_BOUND = 1e8


def solve_psd(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A^{-1} B for symmetric PSD A: Cholesky of the upper triangle (LAPACK ``posv``), or least
    squares when round-off makes A look indefinite or singular (extreme grid ratios such as
    beta/alpha = 1e-12 give condition numbers near 1e16). The least-squares solution is the
    minimum-norm one, the limit of the regularised solution; the fallback is reported as a
    warning, which sweeps record. A system whose estimated reciprocal condition number is below
    machine epsilon is solved by Cholesky and reported by a ``LinAlgWarning``.

    The result is bitwise ``scipy.linalg.solve(A, B, assume_a="pos")`` in its row-major layout
    (later products' bits depend on the layout), without that call's input checks and its
    condition estimate on systems that cannot be ill-conditioned (:data:`CONDITION_CHECK_BOUND`).
    """
    factor, Y, info = sla.lapack.dposv(A, B, lower=0)
    if info != 0:
        return _solve_psd_fallback(A, B)
    _warn_if_ill_conditioned(A, factor)
    return np.ascontiguousarray(Y)


def _warn_if_ill_conditioned(A: np.ndarray, factor: np.ndarray) -> None:
    """A ``LinAlgWarning`` where LAPACK's estimate of 1 / cond_1(A) from its Cholesky factor is
    below machine epsilon (the test of ``scipy.linalg.solve``), estimated only past the bound."""
    diagonal = np.abs(np.diag(factor))
    if (diagonal.max() / diagonal.min()) ** 2 <= CONDITION_CHECK_BOUND:
        return
    rcond, _ = sla.lapack.dpocon(factor, sla.lapack.dlange("1", A))
    if rcond < np.finfo(float).eps:
        warnings.warn(f"ill-conditioned PSD system (reciprocal condition number {rcond:.3g}): "
                      f"the solution may be inaccurate", sla.LinAlgWarning, stacklevel=3)


def _solve_psd_fallback(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """scipy's checked Cholesky solve, or least squares where it fails."""
    try:
        return sla.solve(A, B, assume_a="pos")
    except (np.linalg.LinAlgError, ValueError):
        warnings.warn("Cholesky failed on an ill-conditioned PSD system (extreme regularisation "
                      "ratio?); solved by least squares instead", IllConditionedSolveWarning,
                      stacklevel=4)
        return sla.lstsq(A, B, lapack_driver="gelsd")[0]


def cholesky_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A^{-1} B for symmetric positive definite A by LAPACK ``posv`` (Cholesky of the upper
    triangle, as :func:`solve_psd`) in LAPACK's column-major layout, without a condition
    estimate; :func:`solve_psd`'s fallback where round-off breaks Cholesky."""
    _, Y, info = sla.lapack.dposv(A, B, lower=0)
    return Y if info == 0 else _solve_psd_fallback(A, B)


def data_gram(X: np.ndarray) -> np.ndarray:
    """X^T X (d x d): a data-only product, which a selector may cache."""
    return X.T @ X


def data_outer_gram(X: np.ndarray) -> np.ndarray:
    """X X^T (n x n): a data-only product, which a selector may cache."""
    return X @ X.T


def gram_form(X: np.ndarray, method: str = "auto") -> str:
    """The form :func:`solve_gram_plus_diag` takes: "auto" is "primal" when d <= n, else "dual"."""
    if method == "auto":
        return "primal" if X.shape[1] <= X.shape[0] else "dual"
    if method not in ("primal", "dual"):
        raise ValueError(f"unknown method {method!r}; use 'auto', 'primal' or 'dual'")
    return method


def solve_gram_plus_diag(X: np.ndarray, B: np.ndarray, reg, M=None, method: str = "auto",
                         gram: np.ndarray | None = None,
                         outer: SparseOuterGram | None = None,
                         xtb: np.ndarray | None = None) -> np.ndarray:
    """W = (X^T M X + diag(reg))^{-1} X^T B, by the d x d or the n x n form.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    B : ndarray of shape (n, c)
    reg : float or ndarray of shape (d,)
        Positive; a float is a uniform ridge.
    M : None, ndarray of shape (n,) or (n, n), or scipy.sparse matrix
        None is the identity; a 1-D array a positive diagonal; else a symmetric PSD matrix (a
        sparse M keeps the d x d form free of n x n arrays).
    method : {"auto", "primal", "dual"}
        "primal" solves the d x d system, "dual" the n x n push-through form; "auto" takes
        primal when d <= n.
    gram : ndarray, optional
        X^T M X (primal) or, for M = None and a uniform ``reg``, X X^T (dual), formed once by
        the caller for a loop in which only ``reg`` changes; the system solved is the same,
        with the same LAPACK call.
    outer : SparseOuterGram, optional
        Forms the n x n matrix of the dual form for M = None or a diagonal M
        (:func:`ufsbench.numerics.sparse_gram.sparse_outer_gram` of X, built once per fit: the
        same matrix up to round-off, faster on mostly-zero X); None forms it by ``syrk``.
    xtb : ndarray of shape (d, c), optional
        ``X.T @ B`` of the primal form where the caller needs it too (the same product).
    """
    n, d = X.shape
    method = gram_form(X, method)
    reg = np.broadcast_to(np.asarray(reg, dtype=float), (d,))
    if method == "primal":
        if gram is None:
            gram = metric_gram(X, M)
        A = gram.copy()
        A[np.diag_indices(d)] += reg
        return solve_psd(A, X.T @ B if xtb is None else xtb)
    if gram is not None:                            # X X^T with a uniform ridge: R = r I
        A = gram.copy()
        A[np.diag_indices(n)] += reg[0]
        return X.T @ solve_psd(A, B)
    if M is None or np.ndim(M) == 1:
        return _solve_push_through(X, B, reg, M, outer)
    Z = X / np.sqrt(reg)[None, :]               # X R^{-1/2}
    A = M @ (Z @ Z.T)                           # M X R^{-1} X^T (the inner product by syrk)
    A[np.diag_indices(n)] += 1.0
    return (X.T @ sla.solve(A, B)) / reg[:, None]


def metric_gram(X: np.ndarray, M) -> np.ndarray:
    """X^T M X (d x d): syrk on M^{1/2} X for M = None or a positive diagonal, else X^T (M X)
    (M dense or scipy.sparse)."""
    if M is None:
        return X.T @ X
    if np.ndim(M) == 1:
        Z = np.sqrt(M)[:, None] * X
        return Z.T @ Z
    return X.T @ (M @ X)


def _solve_push_through(X: np.ndarray, B: np.ndarray, reg: np.ndarray,
                        weights: np.ndarray | None = None,
                        outer: SparseOuterGram | None = None) -> np.ndarray:
    """W = (X^T M X + diag(reg))^{-1} X^T B with M = diag(weights) (None: I) by the symmetric
    n x n form of the push-through identity,

        (X^T M X + R)^{-1} X^T = R^{-1} X^T M^{1/2} (M^{1/2} X R^{-1} X^T M^{1/2} + I)^{-1} M^{-1/2},

    whose n x n matrix is Z Z^T with Z = M^{1/2} X R^{-1/2}: one BLAS syrk and a Cholesky solve;
    R^{-1} X^T Y without an n x d temporary. The cost is O(n^2 d), the form for d > n. ``outer``
    (a :class:`SparseOuterGram` of X) forms Z Z^T from the non-zero entries of X's sparse columns;
    the O(n^3) Cholesky then dominates, and is called directly (:func:`cholesky_solve`).
    """
    s = None if weights is None else np.sqrt(weights)
    if s is not None:
        B = B / s[:, None]
    if outer is not None:
        A = outer(reg, s)
    else:
        Z = X / np.sqrt(reg)[None, :]                   # M^{1/2} X R^{-1/2}
        if s is not None:
            Z *= s[:, None]
        A = Z @ Z.T                                     # (syrk)
    A[np.diag_indices(X.shape[0])] += 1.0
    Y = solve_psd(A, B) if outer is None else cholesky_solve(A, B)
    if s is not None:
        Y *= s[:, None]
    return (X.T @ Y) / reg[:, None]                     # R^{-1} X^T Y
