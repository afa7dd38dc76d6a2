"""Products with X = E + 1 z^T (n x d), E mostly zero: e.g. a z-scored bag-of-words matrix.

Centring and scaling the features of a mostly-zero X (UFSOL's ``zscore``) makes every entry
non-zero, but each column keeps one value on all the rows that were zero: x_ij = z_j there.
So X is a sparse matrix E = X - 1 z^T plus a rank-one term, and the products of a solver that
only needs X V, X^T U and X R^{-1} X^T (the Woodbury set-up of
:mod:`ufsbench.numerics.lowrank_eig`) cost O(nnz(E)) per column of V or U, and the n x n product
the sparse-column form of :mod:`ufsbench.numerics.sparse_gram` plus O(n^2), instead of O(n d)
and O(n^2 d).

z_j is the value at the middle of column j's sorted entries: the value of the zero rows when
they are more than half of the column (any other value leaves a denser E, never a wrong one).
The entries of E are X's entries minus z_j (exact zeros on the rows equal to z_j), so E + 1 z^T
equals X up to one rounding per remaining entry, and every product equals the dense one up to
round-off. :func:`sparse_plus_offset` returns None where E is not sparse enough for
:func:`ufsbench.numerics.sparse_gram.sparse_outer_gram` to take its sparse form (dense data):
the caller then keeps the dense products.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ufsbench.numerics.sparse_gram import SparseOuterGram, sparse_outer_gram


class SparsePlusOffset:
    """X = E + 1 z^T (n x d) from its sparse part E and offset row z (see the module doc).

    ``E`` dense (n x d), stored sparse; ``outer`` the :class:`SparseOuterGram` of E; ``sq_norm``
    ||X||_F^2 of the dense X.
    """

    def __init__(self, E: np.ndarray, offset: np.ndarray, outer: SparseOuterGram,
                 sq_norm: float):
        self.shape = E.shape
        self.offset = offset
        self.E = sp.csr_matrix(E)
        self.Et = sp.csr_matrix(E.T)
        self.outer_gram = outer
        self.sq_norm = float(sq_norm)

    def outer(self, reg: np.ndarray) -> np.ndarray:
        """X diag(reg)^{-1} X^T (n x n, exactly symmetric) for reg > 0:
        E R^{-1} E^T + u 1^T + 1 u^T + (z^T R^{-1} z) 1 1^T with u = E R^{-1} z."""
        A = self.outer_gram(reg)
        w = self.offset / reg
        u = self.E @ w
        rank_two = u[:, None] + u[None, :]                   # symmetric: u_i + u_j = u_j + u_i
        rank_two += float(self.offset @ w)
        A += rank_two
        return A

    def dot(self, V: np.ndarray) -> np.ndarray:
        """X V for V of shape (d,) or (d, m)."""
        return self.E @ V + self.offset @ V

    def tdot(self, U: np.ndarray) -> np.ndarray:
        """X^T U for U of shape (n,) or (n, m)."""
        out = self.Et @ U
        out += np.multiply.outer(self.offset, U.sum(axis=0))
        return out

    def toarray(self) -> np.ndarray:
        """X (dense, n x d), as E + 1 z^T."""
        return self.E.toarray() + self.offset[None, :]


def sparse_plus_offset(X: np.ndarray) -> SparsePlusOffset | None:
    """X as E + 1 z^T (see the module doc), or None when E is too dense to pay off."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    # The middle value of each column (a full sort: introselect is slow on many equal values).
    offset = np.sort(X, axis=0)[n // 2]
    E = X - offset[None, :]
    outer = sparse_outer_gram(E)
    if outer is None:
        return None
    return SparsePlusOffset(E, offset, outer, float(np.sum(X * X)))
