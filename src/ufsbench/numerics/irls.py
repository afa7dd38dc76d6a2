"""Pieces of the iteratively reweighted l2,1 solvers: smoothed norms and the regression W-step.

The l2,1-regularised regression step shared by SOCFS, RUFS (and NDFS-like models) is

    W = (X^T M X + diag(r))^{-1} X^T B,

with r > 0 the reweighting diagonal (times the regularisation weight), M an n x n metric on the
samples (None = identity; a positive diagonal for sample-weighted / l2,1 losses; I + alpha L for a
graph-regularised projection) and B the n x c right-hand side. For d <= n the d x d system is
solved directly; for d > n the push-through identity

    (X^T M X + R)^{-1} X^T = R^{-1} X^T (M X R^{-1} X^T + I)^{-1}

turns it into an n x n solve (O(n^2 d) instead of O(d^3)).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg as sla

#: The ``solver`` names of NDFS and RSFS -> the ``method`` of :func:`solve_gram_plus_diag`.
SOLVER_METHODS = {"auto": "auto", "dense": "primal", "woodbury": "dual"}


def smoothed_row_norms(W: np.ndarray, eps: float) -> np.ndarray:
    """sqrt(||w_i||^2 + eps) for every row: the smoothed l2,1 terms that IRLS decreases."""
    return np.sqrt(np.einsum("ij,ij->i", W, W) + eps)


def smoothed_l21_norm(W: np.ndarray, eps: float) -> float:
    """sum_i sqrt(||w_i||^2 + eps); l21_reweight(W, eps) majorises exactly this function."""
    return float(smoothed_row_norms(W, eps).sum())


class IllConditionedSolveWarning(RuntimeWarning):
    """A symmetric PSD system was too ill-conditioned for Cholesky; solved by least squares."""


def solve_psd(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A^{-1} B for symmetric PSD A: Cholesky, or least squares when round-off makes A look
    indefinite or singular (extreme grid ratios such as beta/alpha = 1e-12 give condition
    numbers near 1e16). The least-squares solution is the minimum-norm one, the limit of the
    regularised solution; the fallback is reported as a warning, which sweeps record."""
    try:
        return sla.solve(A, B, assume_a="pos")
    except (np.linalg.LinAlgError, ValueError):
        warnings.warn("Cholesky failed on an ill-conditioned PSD system (extreme regularisation "
                      "ratio?); solved by least squares instead", IllConditionedSolveWarning,
                      stacklevel=3)
        return sla.lstsq(A, B, lapack_driver="gelsd")[0]


def solve_gram_plus_diag(X: np.ndarray, B: np.ndarray, reg: np.ndarray,
                         M: np.ndarray | None = None, method: str = "auto") -> np.ndarray:
    """W = (X^T M X + diag(reg))^{-1} X^T B, by the cheaper of the d x d and n x n forms.

    ``reg`` (d,) must be positive; ``M`` is None (identity), a (n,) positive diagonal or a dense
    or ``scipy.sparse`` (n, n) symmetric PSD matrix (a sparse M keeps the d x d form free of
    n x n arrays). ``method`` is "auto", "primal" (d x d) or "dual" (n x n).
    """
    n, d = X.shape
    reg = np.asarray(reg, dtype=float)
    if method == "auto":
        method = "primal" if d <= n else "dual"
    if method == "primal":
        if M is None:
            G = X.T @ X
        elif np.ndim(M) == 1:
            G = X.T @ (M[:, None] * X)
        else:
            G = X.T @ (M @ X)
        G[np.diag_indices(d)] += reg
        return solve_psd(G, X.T @ B)
    if method != "dual":
        raise ValueError(f"unknown method {method!r}; use 'auto', 'primal' or 'dual'")
    if M is None or np.ndim(M) == 1:
        return solve_push_through(X, B, reg, M)
    Z = X / np.sqrt(reg)[None, :]               # X R^{-1/2}
    A = M @ (Z @ Z.T)                           # M X R^{-1} X^T (the inner product by syrk)
    A[np.diag_indices(n)] += 1.0
    return (X.T @ sla.solve(A, B)) / reg[:, None]


def solve_push_through(X: np.ndarray, B: np.ndarray, reg: np.ndarray,
                       weights: np.ndarray | None = None) -> np.ndarray:
    """W = (X^T M X + diag(reg))^{-1} X^T B with M = diag(weights) (None: I) by the symmetric
    n x n form of the push-through identity,

        (X^T M X + R)^{-1} X^T = R^{-1} X^T M^{1/2} (M^{1/2} X R^{-1} X^T M^{1/2} + I)^{-1} M^{-1/2},

    whose n x n matrix is Z Z^T with Z = M^{1/2} X R^{-1/2}: one BLAS syrk (half the flops of
    the general product X R^{-1} X^T) and a Cholesky solve; R^{-1} X^T Y without an n x d
    temporary. The cost is O(n^2 d), the form for d > n.
    """
    reg = np.asarray(reg, dtype=float)
    s = None if weights is None else np.sqrt(weights)
    Z = X / np.sqrt(reg)[None, :]                       # M^{1/2} X R^{-1/2}
    if s is not None:
        Z *= s[:, None]
        B = B / s[:, None]
    A = Z @ Z.T                                         # (syrk)
    A[np.diag_indices(X.shape[0])] += 1.0
    Y = solve_psd(A, B)
    if s is not None:
        Y *= s[:, None]
    return (X.T @ Y) / reg[:, None]                     # R^{-1} X^T Y
