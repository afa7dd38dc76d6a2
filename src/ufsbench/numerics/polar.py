"""The orthonormal polar factor of a tall matrix, from its small Gram matrix where that is accurate.

For H (p x h, p >= h) of full column rank, the polar factor of the thin SVD H = P S R^T is
P R^T = argmax_{U^T U = I} Tr(U^T H). :func:`polar_factor` returns it by the cheapest of three
forms whose error stays within the same budget (relative ~1e-8):

1. ``gram_polar``'s form, H (H^T H)^{-1/2} from the h x h ``eigh`` of the Gram H^T H = Q diag(w)
   Q^T (one p h^2 Gram product and one p h^2 product), when w_min > ``rcond`` w_max. Its error
   grows like eps kappa(H)^2 (the Gram squares the condition number): <= 1e-8 at the default
   rcond = 1e-8. The arithmetic is that of ``numerics.linalg.gram_polar``, bit for bit.
2. Otherwise, while kappa(H) <= ``max_cond`` (1e8): a second orthogonalisation pass on the same
   eigendecomposition (SVQB twice, the eigen-analogue of Cholesky QR2; Stathopoulos & Wu, SIAM J.
   Sci. Comput. 23 (2002)). Q1 = H Q diag(w^{-1/2}) satisfies H = Q1 R1 with R1 = diag(w^{1/2})
   Q^T up to eps ||H|| (each column of H Q is scaled back exactly), however inaccurate the small
   w are; the Gram of Q1 is then well conditioned, its Cholesky factor R2 gives the orthonormal
   Q = Q1 R2^{-1} and H = Q R with R = R2 R1 (h x h), so the polar factor is Q polar(R) =
   Q1 R2^{-1} polar(R), with polar(R) from the SVD of the h x h R. Error ~ eps kappa(H) -- the
   SVD form's own sensitivity to the round-off in H -- at two p h^2 products and one Gram more
   than form 1, instead of the p x h SVD (about 2.5x its cost at p = 7000, h = 100).
3. Otherwise (kappa(H) > max_cond, rank-deficient or wide H) the thin SVD
   (``numerics.linalg.orthonormal_polar``).

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from ufsbench.numerics.linalg import GRAM_RCOND, orthonormal_polar

#: Largest kappa(H) for the two-pass form: its error ~ eps kappa(H) <= ~1e-8, the Gram form's
#: budget at ``GRAM_RCOND``.
MAX_COND = 1e8


def polar_factor(H: np.ndarray, rcond: float = GRAM_RCOND, max_cond: float = MAX_COND) -> np.ndarray:
    """argmax_{U^T U = I} Tr(U^T H) for a p x h matrix H, by the forms of the module docstring."""
    p, h = H.shape
    if p < h:
        return orthonormal_polar(H)
    w, Q = np.linalg.eigh(H.T @ H)
    if not w[-1] > 0:
        return orthonormal_polar(H)
    if w[0] > rcond * w[-1]:
        return H @ ((Q / np.sqrt(w)) @ Q.T)
    if w[0] > 0:
        U = _two_pass_polar(H, w, Q, max_cond)
        if U is not None:
            return U
    return orthonormal_polar(H)


def _two_pass_polar(H: np.ndarray, w: np.ndarray, Q: np.ndarray,
                    max_cond: float) -> np.ndarray | None:
    """Form 2 of the module docstring; None when kappa(H) > max_cond or the second Gram is not
    positive definite (then the SVD decides)."""
    Q1 = H @ (Q / np.sqrt(w))
    try:
        R2 = np.linalg.cholesky(Q1.T @ Q1).T                  # upper: Q1^T Q1 = R2^T R2
    except np.linalg.LinAlgError:
        return None
    Ur, s, Vrt = np.linalg.svd(R2 @ (np.sqrt(w)[:, None] * Q.T))
    if not (np.all(np.isfinite(s)) and s[-1] * max_cond > s[0]):
        return None
    return Q1 @ solve_triangular(R2, Ur @ Vrt, check_finite=False)
