"""Proximal operators of sparsity norms (ADMM steps such as EUFS's E- and V-updates, RSFS's
Z-step).

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np

from ufsbench.numerics.sparsity import row_norms


def row_shrink(Q: np.ndarray, tau: float, out: np.ndarray | None = None) -> np.ndarray:
    """prox of tau ||.||_{2,1}: w_i = max(0, 1 - tau / ||q_i||) q_i for every row (exact zeros).

    argmin_W tau ||W||_{2,1} + (1/2) ||W - Q||_F^2, row by row (group soft-thresholding).
    ``out`` (e.g. ``out=Q``) receives the result, for ADMM loops that keep their iterates in
    preallocated buffers; the arithmetic is the same either way.
    """
    norms = row_norms(Q)
    scale = np.zeros_like(norms)
    keep = norms > tau
    scale[keep] = 1.0 - tau / norms[keep]
    return np.multiply(Q, scale[:, None], out=out)


def soft_threshold(A: np.ndarray, tau: float) -> np.ndarray:
    """Prox of tau ||.||_1: sign(A) max(|A| - tau, 0), element-wise (exact zeros)."""
    return np.sign(A) * np.maximum(np.abs(A) - tau, 0.0)
