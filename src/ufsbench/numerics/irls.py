"""Smoothed l2,1 norms: the terms that the iteratively reweighted (IRLS) l2,1 solvers decrease.

The regression W-step those solvers share, (X^T M X + diag(r))^{-1} X^T B, is
:func:`ufsbench.numerics.gram_solve.solve_gram_plus_diag`.
"""

from __future__ import annotations

import numpy as np

#: The ``solver`` names of NDFS and RSFS -> the ``method`` of ``gram_solve.solve_gram_plus_diag``.
SOLVER_METHODS = {"auto": "auto", "dense": "primal", "woodbury": "dual"}


def smoothed_row_norms(W: np.ndarray, eps: float) -> np.ndarray:
    """sqrt(||w_i||^2 + eps) for every row: the smoothed l2,1 terms that IRLS decreases."""
    return np.sqrt(np.einsum("ij,ij->i", W, W) + eps)


def smoothed_l21_norm(W: np.ndarray, eps: float) -> float:
    """sum_i sqrt(||w_i||^2 + eps); l21_reweight(W, eps) majorises exactly this function."""
    return float(smoothed_row_norms(W, eps).sum())
