"""Sign splitting and guarded multiplicative steps for non-negative factor updates.

Multiplicative updates (Lee & Seung, NIPS 2000) keep a factor non-negative only when every
numerator and denominator is non-negative. With data that have negative entries (centred or
standardised features) products such as X F^T change sign, and a plain update produces negative
or NaN factors. The usual remedy (Ding, Li & Jordan, "Convex and semi-nonnegative matrix
factorizations", IEEE TPAMI 2010) splits every mixed-sign matrix A = A+ - A- with
A+ = (|A| + A) / 2 and A- = (|A| - A) / 2, puts the terms that decrease the objective in the
numerator and the ones that increase it in the denominator.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Smallest denominator a multiplicative step divides by.
DENOMINATOR_FLOOR = 1e-300


def pos_part(A: np.ndarray) -> np.ndarray:
    """A+ = (|A| + A) / 2 = max(A, 0), element-wise (sparse in, sparse out)."""
    if sp.issparse(A):
        return sp.csr_matrix(A).maximum(0.0)
    return np.maximum(A, 0.0)


def neg_part(A: np.ndarray) -> np.ndarray:
    """A- = (|A| - A) / 2 = max(-A, 0), element-wise, so that A = A+ - A- (sparse stays sparse)."""
    if sp.issparse(A):
        return (-sp.csr_matrix(A)).maximum(0.0)
    return np.maximum(-A, 0.0)


def multiplicative_step(V: np.ndarray, numerator: np.ndarray, denominator: np.ndarray,
                        floor: float = DENOMINATOR_FLOOR) -> np.ndarray:
    """V * numerator / denominator with the denominator floored, so the result stays finite.

    All three arguments must be non-negative (split mixed-sign terms with :func:`pos_part` /
    :func:`neg_part` first); the result is then non-negative and finite. An entry of V that is
    exactly 0 stays 0 (the well-known frozen-zero property of multiplicative updates).
    """
    return V * (numerator / np.maximum(denominator, floor))
