"""K(r) = X_c diag(1/r) X_c^T for one data matrix and many positive weights r, fast on sparse data.

X_c = X - 1 mu^T: the data centred by a fixed row mu (or X itself). K(r) is the n x n matrix of
the push-through form of the regularised regression step for d > n
(``ufsbench.numerics.gram_solve``); an l2,1 reweighting changes r every iteration, so it cannot
be formed once. Bag-of-words sets are stored dense but are mostly zeros (basehock, 1993 x 4862:
1.4 % non-zeros), and centring makes X_c dense; :class:`CentredColumns` keeps the zeros of X.
Import by module path; nothing is exported from ``ufsbench.numerics``.

Computation. Dense form: K = Z Z^T with Z = X_c diag(r)^{-1/2} (one BLAS syrk, O(n^2 d)).
Split form: the columns with more than n / 20 non-zeros ("heavy") go through the syrk on their
centred values; the other ("light") columns l enter uncentred through a sparse product, with
the centring added as a rank-two correction,

    X_l,c S X_l,c^T = X_l S X_l^T - a 1^T - 1 a^T + (mu_l^T S mu_l) 1 1^T,
    S = diag(1 / r_l),  a = X_l S mu_l,

which costs O(sum_j nnz_j^2) for the light columns instead of O(n^2 d_l) (basehock: 0.08 s
instead of 0.42 s on one core). The thin products X_c W and X_c^T Y of a loop (W: d x m, Y: n x m)
take the same split, X_l,c W = X_l W - 1 (mu_l^T W) and X_l,c^T Y = X_l^T Y - mu_l (1^T Y)
(basehock, m = 2: 0.5 ms instead of 15 ms). No cancellation beyond round-off: the correction
terms are products of the same entries (|mu_j| <= max_i |x_ij|). Both forms give the same
numbers up to round-off (the dense form is the plain BLAS products, bit for bit); the split
form is chosen when at least half of the columns are light.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: A column with more than n / HEAVY_DIVISOR non-zeros is "heavy" (syrk on its centred values).
HEAVY_DIVISOR = 20


class CentredColumns:
    """X_c = X - 1 mean^T (n x d): K(r) = X_c diag(1/r) X_c^T for any positive r (d,), X_c W
    and X_c^T Y.

    Parameters
    ----------
    X : ndarray (n, d)
        The data before centring (its zeros make the split form fast).
    mean : ndarray (d,) or None
        The row subtracted (None: none).
    centred : ndarray (n, d) or None
        X_c when the caller holds it already (the dense form and the heavy columns use it as
        given); computed otherwise.
    split : bool or None
        True / False forces the split / dense form; None chooses (at least half of the columns
        light).
    """

    def __init__(self, X: np.ndarray, mean: np.ndarray | None = None,
                 centred: np.ndarray | None = None, split: bool | None = None):
        X = np.asarray(X, dtype=float)
        n, d = X.shape
        if centred is None:
            centred = X if mean is None else X - mean
        self.centred = centred
        light = np.count_nonzero(X, axis=0) <= n / HEAVY_DIVISOR
        self.split = bool(2 * light.sum() >= d) if split is None else bool(split)
        if not self.split:
            return
        self.heavy = np.flatnonzero(~light)
        self.light = np.flatnonzero(light)
        self.centred_heavy = centred[:, self.heavy]
        self.light_csr = sp.csr_matrix(X[:, self.light])
        self.light_t = self.light_csr.T.tocsr()
        self.light_mean = (np.zeros(self.light.size) if mean is None
                           else np.asarray(mean, dtype=float)[self.light])

    def outer(self, reg: np.ndarray) -> np.ndarray:
        """K(reg) = X_c diag(1/reg) X_c^T, a new (n, n) array."""
        reg = np.asarray(reg, dtype=float)
        if not self.split:
            Z = self.centred / np.sqrt(reg)[None, :]
            return Z @ Z.T                                          # (syrk)
        Z = self.centred_heavy / np.sqrt(reg[self.heavy])[None, :]
        K = Z @ Z.T                                                 # heavy columns (syrk)
        s = 1.0 / reg[self.light]
        scaled = self.light_csr.copy()
        scaled.data *= s[scaled.indices]                            # X_l S
        K += (scaled @ self.light_t).toarray()                      # X_l S X_l^T
        if np.any(self.light_mean):
            a = scaled @ self.light_mean                            # X_l S mu_l
            K -= a[:, None]
            K -= a[None, :]
            K += float(self.light_mean @ (s * self.light_mean))
        return K

    def dot(self, W: np.ndarray) -> np.ndarray:
        """X_c W for W (d, m): a new (n, m) array."""
        if not self.split:
            return self.centred @ W
        Wl = W[self.light]
        out = self.centred_heavy @ W[self.heavy]
        out += self.light_csr @ Wl
        if np.any(self.light_mean):
            out -= self.light_mean @ Wl
        return out

    def t_dot(self, Y: np.ndarray) -> np.ndarray:
        """X_c^T Y for Y (n, m): a new (d, m) array."""
        if not self.split:
            return self.centred.T @ Y
        out = np.empty((self.centred.shape[1],) + Y.shape[1:])
        out[self.heavy] = self.centred_heavy.T @ Y
        light = self.light_t @ Y
        if np.any(self.light_mean):
            light -= np.multiply.outer(self.light_mean, Y.sum(axis=0))
        out[self.light] = light
        return out
