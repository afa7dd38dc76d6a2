"""The orthonormal polar factor of a tall matrix from its small Gram matrix.

For H (p x h, p >= h) of full column rank with H^T H = Q diag(w) Q^T, the polar factor of the
thin SVD H = P S R^T is P R^T = H (H^T H)^{-1/2} = H Q diag(w^{-1/2}) Q^T. Forming it costs one
p h^2 Gram product, an h x h ``eigh`` and one p h^2 product, instead of the SVD of the p x h
matrix (bidiagonalisation plus forming the p x h left factor), which is several times slower.

The Gram squares the condition number, so the orthogonality error of this form grows like
eps * kappa(H)^2 where the SVD's is eps * kappa(H)-independent; below a relative smallest
eigenvalue of ``rcond`` (kappa(H) > rcond^{-1/2}) the function falls back to the SVD form
(``linalg.orthonormal_polar``), which also covers rank-deficient H, where the polar factor is
not unique.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np

from ufsbench.numerics.linalg import orthonormal_polar

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
