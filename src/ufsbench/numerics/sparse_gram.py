"""Products with a fixed, mostly-zero data matrix: Z Z^T for Z = diag(s) X R^{-1/2}, and X = E + 1 z^T.

The n x n matrix of the push-through form of the W-step (``ufsbench.numerics.gram_solve``) is
rebuilt in every iteration of the l2,1 solvers, because R (the reweighting) changes: a BLAS
``syrk`` of n^2 d / 2 multiply-adds, whatever the zeros of X. On a bag-of-words set such as
basehock (1993 x 4862, 1.4 % non-zero, stored dense) most columns hold a few per cent of
non-zeros, and column j contributes only nnz_j^2 products to Z Z^T = sum_j z_j z_j^T.
Import by module path; nothing is exported from ``ufsbench.numerics``.

Column split (:class:`SparseOuterGram`). The columns are split once per fit: those with more than
``SPARSE_COLUMN_FRACTION`` of non-zero entries go through the dense ``syrk``, the others through
scipy's sparse product (CSR times CSR), whose dense result is added. The entries of Z are the
same floats as in the dense form (X / sqrt(r), then times s); only the order of the sums
differs, so the matrix equals the dense one up to round-off (relative ~1e-16) and is exactly
symmetric (entry (i, j) and (j, i) sum the same products in the same column order). On basehock
it takes 0.1 s instead of 0.5-0.7 s (one BLAS thread). :func:`sparse_outer_gram` returns None
where the dense product is not clearly slower (every other paper data set: their columns are
dense), so those fits keep the dense arithmetic bit for bit.

Sparse part plus an offset row (:class:`SparsePlusOffset`). Centring the features of a
mostly-zero X (SOCFS) or z-scoring them (UFSOL) makes every entry non-zero, but each column keeps
one value on all the rows that were zero. So X = E + 1 z^T with E mostly zero, and

    X R^{-1} X^T = E R^{-1} E^T + u 1^T + 1 u^T + (z^T R^{-1} z) 1 1^T,   u = E R^{-1} z,
    X V = E V + 1 (z^T V),   X^T U = E^T U + z (1^T U),

cost the column split of E plus O(nnz(E) + n^2) instead of O(n^2 d), and O(nnz(E)) per column
of V or U instead of O(n d) (the Woodbury set-up of :mod:`ufsbench.numerics.lowrank_eig`, the
thin products of a regression loop). z is either known (minus the column means of the
uncentred data: :meth:`SparsePlusOffset.from_mean`) or found as the value at the middle of each
column's sorted entries, the value of its zero rows when they are more than half of the column
(:meth:`SparsePlusOffset.from_median`; any other value leaves a denser E, never a wrong one).
The split is decided on E by the cost model of :func:`sparse_outer_gram`. On the columns that
it keeps dense, the syrk reads X's own entries (the same floats as the dense form, no
correction that could cancel); on the sparse ones the correction terms are products of the
same entries (|z_j| <= max_i |x_ij| for a mean or a median). X V and X^T U run on all of E. Both
constructors return None where the split does not pay (dense data): the caller then keeps the
dense products, bit for bit. Otherwise every product equals the dense one up to round-off
(basehock, SOCFS's centred data: the n x n matrix in 0.07 s instead of 0.40 s, X V and X^T U
for m = 2 in under a millisecond instead of 15 ms, on one core).

Sparse times a large dense matrix (:func:`sparse_dense_product`): column blocks of the dense
operand that stay in the cache, on a large product spread over the lanes (threads) of
:mod:`ufsbench.numerics.lanes`; and for many products with one sparse matrix and thin operands
(an eigensolver's), its row ranges in lanes (:class:`RowLanes`). The same bits as scipy's
product either way.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ufsbench.numerics.lanes import BlockLanes, blas_thread_limit

#: Bytes of the dense operand from which :func:`sparse_dense_product` works column block by
#: column block (below it the whole operand stays in the cache anyway).
PRODUCT_BLOCKING_MIN_BYTES = 8 << 20
#: Bytes of one column block of the dense operand in :func:`sparse_dense_product` (about half of
#: a core's L2 cache: the blocks of 1 MB were the fastest on basehock, 16 to 256 columns tried).
PRODUCT_BLOCK_BYTES = 1 << 20
#: Multiply-adds (non-zeros of the sparse matrix times columns of the dense one) from which a
#: product runs in lanes: below it (a few milliseconds) the threads' hand-offs cost about what
#: they save.
LANES_MIN_MULTIPLY_ADDS = 1 << 22
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


def sparse_dense_product(A: sp.spmatrix | sp.sparray, B: np.ndarray) -> np.ndarray:
    """A @ B for a scipy.sparse A and a dense B (k x m, or a vector): the same numbers bit for
    bit, faster for a B larger than the cache and on more than one core.

    scipy's CSR times dense adds, for every non-zero a_ij, a_ij times row j of B to row i of the
    result: each non-zero reads a whole row of B, from memory once B is larger than the cache
    (basehock's X^T, 4862 x 1993 with 1.4 % non-zeros, times a 1993 x 1993 B: 0.17 s, bound
    by memory). Column blocks of B that fit in the L2 cache are read from there instead (0.10
    s). Every entry of the result is the same sum in the same order either way (in A's own
    format's order): the columns of B never mix.

    From ``LANES_MIN_MULTIPLY_ADDS`` on, the column blocks run in as many threads as the caller
    lets BLAS use (:mod:`ufsbench.numerics.lanes`; scipy releases the GIL inside its sparse
    kernels). For many products with one A and thin Bs see :class:`RowLanes`.
    """
    B = np.asarray(B)
    m = B.shape[1] if B.ndim == 2 else 1
    n_lanes = blas_thread_limit() if A.nnz * m >= LANES_MIN_MULTIPLY_ADDS else 1
    return _column_blocks_product(A, B, n_lanes)


def _column_blocks_product(A, B: np.ndarray, n_lanes: int) -> np.ndarray:
    """A @ B by column blocks of B that stay in the L2 cache, in ``n_lanes`` threads."""
    if B.ndim != 2 or B.nbytes < PRODUCT_BLOCKING_MIN_BYTES:
        return A @ B
    rows, m = B.shape
    width = max(16, PRODUCT_BLOCK_BYTES // (B.itemsize * rows))
    if width >= m:
        return A @ B
    out = np.empty((A.shape[0], m), dtype=np.result_type(A.dtype, B.dtype))
    starts = range(0, m, width)

    def block_product(j: int, lane: int) -> None:
        block = slice(starts[j], min(starts[j] + width, m))
        out[:, block] = A @ np.ascontiguousarray(B[:, block])

    with BlockLanes(len(starts), n_lanes) as lanes:
        lanes.map(block_product)
    return out


class RowLanes:
    """Products A @ B with the rows of a CSR A cut into one range per lane (as many threads as
    the caller lets BLAS use, from ``LANES_MIN_MULTIPLY_ADDS`` non-zeros on), each range
    holding about an equal share of A's non-zeros: the bits of scipy's product, for a caller
    that multiplies by the same A many times (an eigensolver's matrix-vector products). The
    ranges are cut once (one pass over A's indices: scipy checks them when a CSR matrix is
    built) and the threads set up once. A that is not CSR, or one lane, takes scipy's product
    as it is. Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, A, n_lanes: int | None = None):
        self.A = A
        if n_lanes is None:
            n_lanes = blas_thread_limit() if A.nnz >= LANES_MIN_MULTIPLY_ADDS else 1
        lanes = int(n_lanes) if A.format == "csr" else 1
        self.lanes = BlockLanes(lanes, lanes)
        cuts = np.searchsorted(A.indptr, np.linspace(0, A.nnz, self.lanes.n_lanes + 1)[1:-1])
        self.bounds = np.concatenate([[0], cuts, [A.shape[0]]]).astype(np.intp)
        self.parts = [] if self.lanes.n_lanes == 1 else [
            _row_range(A, int(start), int(stop)) for start, stop in zip(self.bounds[:-1],
                                                                         self.bounds[1:])]

    def product(self, B: np.ndarray) -> np.ndarray:
        """A @ B (B dense, a vector or k x m)."""
        if not self.parts:
            return self.A @ B
        out = np.empty((self.A.shape[0],) + B.shape[1:],
                       dtype=np.result_type(self.A.dtype, B.dtype))

        def range_product(j: int, lane: int) -> None:
            out[self.bounds[j]:self.bounds[j + 1]] = self.parts[j] @ B

        self.lanes.map(range_product)
        return out

    def close(self) -> None:
        self.lanes.close()

    def __enter__(self) -> RowLanes:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _row_range(A, start: int, stop: int):
    """Rows start:stop of a CSR A, sharing A's arrays where scipy keeps them."""
    first, last = int(A.indptr[start]), int(A.indptr[stop])
    return sp.csr_matrix((A.data[first:last], A.indices[first:last],
                          A.indptr[start:stop + 1] - first), shape=(stop - start, A.shape[1]))


def sparse_columns(X: np.ndarray) -> np.ndarray | None:
    """The columns of X that go to the sparse product (a boolean mask) when the split product
    costs at most half the dense ``syrk`` by the cost model above, else None (dense product)."""
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
    return sparse


def sparse_outer_gram(X: np.ndarray) -> SparseOuterGram | None:
    """A :class:`SparseOuterGram` of X where :func:`sparse_columns` takes the split, else None
    (use the dense product)."""
    sparse = sparse_columns(X)
    return None if sparse is None else SparseOuterGram(X, np.flatnonzero(~sparse))


class SparsePlusOffset:
    """X = E + 1 z^T (n x d) from its mostly-zero part E and offset row z (see the module doc).

    ``X`` the data (dense, n x d); ``E`` with X = E + 1 offset^T (up to one rounding per entry);
    ``dense`` the indices of the columns formed by ``syrk`` in :meth:`outer`, from X's own
    entries (no offset there). Attributes: ``E``, ``Et`` (CSR), ``offset``, ``outer_gram`` (the
    :class:`SparseOuterGram` of X's dense and E's other columns), ``sq_norm`` = ||X||_F^2.
    The constructors :meth:`from_mean` and :meth:`from_median` also decide whether the split
    pays at all.
    """

    def __init__(self, X: np.ndarray, E: np.ndarray, offset: np.ndarray, dense: np.ndarray):
        X = np.asarray(X, dtype=float)
        self.shape = X.shape
        dense = np.asarray(dense, dtype=np.intp)
        self.offset = np.asarray(offset, dtype=float)
        self.E = sp.csr_matrix(E)
        self.Et = sp.csr_matrix(E.T)
        split = np.array(E, dtype=float)
        split[:, dense] = X[:, dense]
        self.outer_gram = SparseOuterGram(split, dense)
        self.sparse_offset = self.offset.copy()          # z on the sparse columns, else 0
        self.sparse_offset[dense] = 0.0
        self.sq_norm = float(np.sum(X * X))

    @classmethod
    def from_mean(cls, raw: np.ndarray, mean: np.ndarray | None = None,
                  centred: np.ndarray | None = None) -> SparsePlusOffset | None:
        """X = raw - 1 mean^T (mean None: X = raw) with E = raw, z = -mean, or None when raw is
        too dense for the split to pay. ``centred``: X when the caller holds it already (the
        dense columns use it as given)."""
        raw = np.asarray(raw, dtype=float)
        sparse = sparse_columns(raw)
        if sparse is None:
            return None
        if centred is None:
            centred = raw if mean is None else raw - mean
        offset = np.zeros(raw.shape[1]) if mean is None else -np.asarray(mean, dtype=float)
        return cls(centred, raw, offset, np.flatnonzero(~sparse))

    @classmethod
    def from_median(cls, X: np.ndarray) -> SparsePlusOffset | None:
        """X = E + 1 z^T with z the middle value of each column, or None when E is too dense
        for the split to pay."""
        X = np.asarray(X, dtype=float)
        # The middle value of each column (a full sort: introselect is slow on many equal values).
        offset = np.sort(X, axis=0)[X.shape[0] // 2]
        E = X - offset[None, :]
        sparse = sparse_columns(E)
        if sparse is None:
            return None
        return cls(X, E, offset, np.flatnonzero(~sparse))

    def outer(self, reg: np.ndarray) -> np.ndarray:
        """X diag(reg)^{-1} X^T (n x n, exactly symmetric) for reg > 0: on the dense columns
        X R^{-1} X^T, on the others E R^{-1} E^T + u 1^T + 1 u^T + (z^T R^{-1} z) 1 1^T with
        u = E R^{-1} z."""
        reg = np.broadcast_to(np.asarray(reg, dtype=float), (self.shape[1],))
        A = self.outer_gram(reg)
        if np.any(self.sparse_offset):
            w = self.sparse_offset / reg
            u = self.E @ w
            rank_two = u[:, None] + u[None, :]               # symmetric: u_i + u_j = u_j + u_i
            rank_two += float(self.sparse_offset @ w)
            A += rank_two
        return A

    def dot(self, V: np.ndarray) -> np.ndarray:
        """X V for V of shape (d,) or (d, m)."""
        return sparse_dense_product(self.E, V) + self.offset @ V

    def tdot(self, U: np.ndarray) -> np.ndarray:
        """X^T U for U of shape (n,) or (n, m)."""
        out = sparse_dense_product(self.Et, U)
        out += np.multiply.outer(self.offset, U.sum(axis=0))
        return out

    def toarray(self) -> np.ndarray:
        """X (dense, n x d), as E + 1 z^T."""
        return self.E.toarray() + self.offset[None, :]
