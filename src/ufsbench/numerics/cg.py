"""Block preconditioned conjugate gradients for symmetric positive definite systems.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def block_pcg(apply: Callable[[np.ndarray], np.ndarray], B: np.ndarray, Y0: np.ndarray,
              precondition: Callable[[np.ndarray], np.ndarray], rtol: float,
              max_iter: int) -> np.ndarray | None:
    """Y with A Y = B by preconditioned CG, every column at once (each with its own step).

    Parameters
    ----------
    apply : callable
        V -> A V for the symmetric positive definite A (n x n), on n x c blocks.
    B : ndarray (n, c)
        Right-hand sides.
    Y0 : ndarray (n, c)
        The start (e.g. the previous solution of a slowly changing system); not modified.
    precondition : callable
        R -> M^{-1} R for a symmetric positive definite preconditioner M.
    rtol : float
        Stop once every column's residual norm is at most ``rtol`` times its column of B.
    max_iter : int
        Steps at most.

    Returns
    -------
    ndarray (n, c) or None
        Y, or None when ``max_iter`` steps leave a column's relative residual above ``rtol``.
    """
    target = rtol * np.linalg.norm(B, axis=0)
    Y = Y0.copy()
    R = B - apply(Y)
    Z = precondition(R)
    P, rz = Z.copy(), np.einsum("ij,ij->j", R, Z)
    for _ in range(max_iter):
        if np.all(np.linalg.norm(R, axis=0) <= target):
            return Y
        AP = apply(P)
        step = rz / np.einsum("ij,ij->j", P, AP)
        Y += step * P
        R -= step * AP
        Z = precondition(R)
        rz_new = np.einsum("ij,ij->j", R, Z)
        P = Z + (rz_new / rz) * P
        rz = rz_new
    return Y if np.all(np.linalg.norm(R, axis=0) <= target) else None
