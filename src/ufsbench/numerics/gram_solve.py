"""Regression W-steps (X^T M X + diag(r))^{-1} X^T B that reuse or halve their Gram products.

``ufsbench.numerics.irls.solve_gram_plus_diag`` forms the Gram matrix afresh on every call. Two
cheaper exact forms for the IRLS loops of RUFS and RSFS:

* :func:`data_gram` / :func:`solve_with_gram`: when M = I only the diagonal r changes between
  iterations, so X^T X is formed once per data set (a selector may read it from its ``memory``
  with ``cached_call(memory, data_gram, X)`` and pass it in) and each
  iteration pays only its d x d Cholesky (the same Gram and the same LAPACK call as the primal
  branch of ``solve_gram_plus_diag``: bitwise the same W for the same Gram).
* :func:`solve_weighted_gram_plus_diag`: M = diag(m) > 0 changes every iteration (an l2,1 loss
  over samples); X^T M X is formed as Z^T Z with Z = M^{1/2} X, which numpy hands to BLAS
  ``syrk`` (a symmetric rank-k update: half the flops of the general product X^T (M X)), and
  likewise the n x n form of the push-through identity (module doc of ``irls``). Same system,
  same Cholesky; only the round-off of the Gram differs.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np

from ufsbench.numerics.irls import solve_psd, solve_push_through


def data_gram(X: np.ndarray) -> np.ndarray:
    """X^T X (d x d): a data-only product, which a selector may cache."""
    return X.T @ X


def data_outer_gram(X: np.ndarray) -> np.ndarray:
    """X X^T (n x n): a data-only product, which a selector may cache."""
    return X @ X.T


def ridge_method(X: np.ndarray, method: str = "auto") -> str:
    """The form :func:`ridge_solve` takes: "auto" is "primal" when d <= n, else "dual"."""
    if method == "auto":
        return "primal" if X.shape[1] <= X.shape[0] else "dual"
    if method not in ("primal", "dual"):
        raise ValueError(f"unknown method {method!r}; use 'auto', 'primal' or 'dual'")
    return method


def ridge_solve(X: np.ndarray, B: np.ndarray, ratio: float, method: str = "auto",
                gram: np.ndarray | None = None) -> np.ndarray:
    """W = (X^T X + ratio I)^{-1} X^T B (a uniform ridge: the first W-step of RUFS and RSFS)
    from a Gram: X^T X ("primal", d x d; bitwise the primal branch of ``solve_gram_plus_diag``)
    or X X^T ("dual", n x n: W = X^T (X X^T + ratio I)^{-1} B, the push-through identity with
    R = ratio I). "auto": primal when d <= n. ``gram``: that form's Gram if the caller has it
    (:func:`data_gram` / :func:`data_outer_gram` of X), else it is formed here."""
    n, d = X.shape
    if ridge_method(X, method) == "primal":
        gram = data_gram(X) if gram is None else gram
        return solve_with_gram(gram, X.T @ B, np.full(d, float(ratio)))
    gram = data_outer_gram(X) if gram is None else gram
    return X.T @ solve_with_gram(gram, B, np.full(n, float(ratio)))


def solve_with_gram(gram: np.ndarray, XtB: np.ndarray, reg: np.ndarray) -> np.ndarray:
    """(X^T X + diag(reg))^{-1} X^T B from a precomputed Gram X^T X and right-hand side X^T B."""
    A = gram.copy()
    A[np.diag_indices(A.shape[0])] += reg
    return solve_psd(A, XtB)


def solve_weighted_gram_plus_diag(X: np.ndarray, B: np.ndarray, reg: np.ndarray,
                                  weights: np.ndarray | None = None,
                                  method: str = "auto") -> np.ndarray:
    """W = (X^T diag(weights) X + diag(reg))^{-1} X^T B, both diagonals positive (``weights``
    None: the identity, X^T X + diag(reg)).

    ``method``: "primal" (d x d system), "dual" (n x n, push-through) or "auto" (primal when
    d <= n, the choice of ``solve_gram_plus_diag``). The symmetric products are formed as
    Z^T Z / Z Z^T (BLAS syrk) instead of general products.
    """
    n, d = X.shape
    reg = np.asarray(reg, dtype=float)
    s = None if weights is None else np.sqrt(weights)
    if method == "auto":
        method = "primal" if d <= n else "dual"
    if method == "primal":
        Z = X if s is None else s[:, None] * X          # M^{1/2} X
        A = Z.T @ Z                                     # X^T M X (syrk)
        A[np.diag_indices(d)] += reg
        return solve_psd(A, X.T @ B)
    if method != "dual":
        raise ValueError(f"unknown method {method!r}; use 'auto', 'primal' or 'dual'")
    return solve_push_through(X, B, reg, weights)     # the symmetric n x n form (syrk)
