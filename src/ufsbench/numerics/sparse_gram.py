"""Z Z^T with Z = diag(s) X R^{-1/2} for a fixed, mostly-zero X and a changing diagonal R.

The n x n matrix of the push-through form of the W-step (``ufsbench.numerics.gram_solve``) is
rebuilt in every iteration of the l2,1 solvers, because R (the reweighting) changes: a BLAS
``syrk`` of n^2 d / 2 multiply-adds, whatever the zeros of X. On a bag-of-words set such as
basehock (1993 x 4862, 1.4 % non-zero, stored dense) most columns hold a few per cent of
non-zeros, and column j contributes only nnz_j^2 products to Z Z^T = sum_j z_j z_j^T.

:class:`SparseOuterGram` splits the columns once per fit: those with more than
``SPARSE_COLUMN_FRACTION`` of non-zero entries go through the dense ``syrk``, the others through
scipy's sparse product (CSR times CSR), whose dense result is added. The entries of Z are the
same floats as in the dense form (X / sqrt(r), then times s); only the order of the sums
differs, so the matrix equals the dense one up to round-off (relative ~1e-16) and is exactly
symmetric (entry (i, j) and (j, i) sum the same products in the same column order). On basehock
it takes 0.1 s instead of 0.5-0.7 s (one BLAS thread). :func:`sparse_outer_gram` returns None
where the dense product is not clearly slower (every other paper data set: their columns are
dense), so those fits keep the dense arithmetic bit for bit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Columns with at most this fraction of non-zero entries go to the sparse product.
SPARSE_COLUMN_FRACTION = 0.05
#: Time of one multiply-add of scipy's sparse product, in multiply-adds of BLAS ``syrk`` (about
#: 30 measured on basehock; conservative, as the split is only taken when it clearly pays).
SPARSE_PRODUCT_COST = 30.0
#: Time of adding the sparse part's dense n x n result, in syrk columns (n^2 / 2 multiply-adds).
DENSIFY_COST = 32.0


class SparseOuterGram:
    """Z Z^T, Z = diag(s) X diag(r)^{-1/2}, for one X and any r > 0 and s (see the module doc).

    ``dense``: indices of the columns formed by ``syrk``; the non-zero entries of the others are
    kept in CSR order with the permutation that orders them as the transpose's CSR, so each call
    only rescales the stored values.
    """

    def __init__(self, X: np.ndarray, dense: np.ndarray):
        X = np.asarray(X, dtype=float)
        n, d = self.shape = X.shape
        self.dense = np.asarray(dense, dtype=np.intp)
        self.X_dense = X[:, self.dense]
        rows, cols = np.nonzero(X)                       # row-major: the CSR order
        keep = np.ones(d, dtype=bool)
        keep[self.dense] = False
        keep = keep[cols]
        self.rows, self.columns = rows[keep], cols[keep]
        self.values = X[self.rows, self.columns]
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(self.rows, minlength=n))])
        # The transpose as CSR: the entries in column-major order (rows ascending within a
        # column), given as positions in the row-major list.
        self.t_order = np.argsort(self.columns, kind="stable")
        self.t_indices = self.rows[self.t_order]
        self.t_indptr = np.concatenate([[0], np.cumsum(np.bincount(self.columns, minlength=d))])

    def __call__(self, reg: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
        """diag(scale) X diag(reg)^{-1} X^T diag(scale) (n x n, dense, symmetric) as Z Z^T."""
        root = np.sqrt(np.broadcast_to(np.asarray(reg, dtype=float), (self.shape[1],)))
        Z = self.X_dense / root[self.dense][None, :]
        if scale is not None:
            Z *= scale[:, None]
        A = Z @ Z.T                                                  # (syrk)
        values = self.values / root[self.columns]
        if scale is not None:
            values *= scale[self.rows]
        S = sp.csr_matrix((values, self.columns, self.indptr), shape=self.shape)
        St = sp.csr_matrix((values[self.t_order], self.t_indices, self.t_indptr),
                           shape=self.shape[::-1])
        A += (S @ St).toarray()
        return A


def sparse_outer_gram(X: np.ndarray) -> SparseOuterGram | None:
    """A :class:`SparseOuterGram` of X when the split product costs at most half the dense
    ``syrk`` by the cost model above, else None (use the dense product)."""
    n, d = X.shape
    nnz = np.count_nonzero(X, axis=0)
    sparse = nnz <= SPARSE_COLUMN_FRACTION * n
    if not np.any(sparse):
        return None
    # Cost in syrk columns (n^2 / 2 multiply-adds each): a sparse column costs nnz_j^2 products.
    split_cost = (d - np.count_nonzero(sparse) + DENSIFY_COST
                  + SPARSE_PRODUCT_COST * 2.0 * float(np.sum(nnz[sparse].astype(float) ** 2))
                  / float(n) ** 2)
    if split_cost > 0.5 * d:
        return None
    return SparseOuterGram(X, np.flatnonzero(~sparse))
