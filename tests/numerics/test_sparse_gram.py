"""Products with mostly-zero data (ufsbench.numerics.sparse_gram): the column-split form of
Z Z^T, Z = diag(s) X R^{-1/2}, X = E + 1 z^T (sparse part plus offset row), and the blocked
sparse times dense product."""

import numpy as np
import pytest
import scipy.sparse as sp

from ufsbench.numerics import sparse_gram
from ufsbench.numerics.gram_solve import solve_gram_plus_diag
from ufsbench.numerics.sparse_gram import SparseOuterGram, SparsePlusOffset, sparse_outer_gram
from ufsbench.testing import forced_lanes


def mostly_zero(n=60, d=400, seed=0):
    """A bag-of-words-like X: 2 % non-zero counts, plus 3 columns non-zero in every row."""
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 6, size=(n, d)) * (rng.random((n, d)) < 0.02)
    X[:, [5, 100, 333]] = rng.integers(1, 4, size=(n, 3))
    return X.astype(float)


def dense_gram(X, reg, scale=None):
    Z = X / np.sqrt(reg)[None, :]
    if scale is not None:
        Z *= scale[:, None]
    return Z @ Z.T


def test_dense_data_keeps_the_dense_product():
    rng = np.random.default_rng(1)
    assert sparse_outer_gram(rng.normal(size=(30, 200))) is None
    X = rng.normal(size=(30, 200))
    X[:, :20] = 0.0                       # a few all-zero columns do not pay for the split
    assert sparse_outer_gram(X) is None


@pytest.mark.parametrize("scaled", [False, True])
def test_equals_the_dense_product_up_to_round_off_and_is_symmetric(scaled):
    # The same products z_ik z_jk summed in another order: within a few ulps of the largest
    # entry. Exactly symmetric (Cholesky reads one triangle; solves must not depend on which).
    X = mostly_zero()
    outer = sparse_outer_gram(X)
    assert outer is not None
    assert {5, 100, 333} <= set(outer.dense) and outer.dense.size < X.shape[1] // 10
    rng = np.random.default_rng(2)
    for _ in range(3):
        reg = rng.uniform(1e-3, 1e3, size=X.shape[1])
        scale = rng.uniform(0.1, 10.0, size=X.shape[0]) if scaled else None
        got, want = outer(reg, scale), dense_gram(X, reg, scale)
        assert np.array_equal(got, got.T)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(want).max())


def test_a_uniform_ridge_and_an_all_dense_split_agree():
    # A scalar reg is a uniform ridge; with every column in the dense part the result is the
    # plain syrk (no sparse entries) and with none, the sparse product alone.
    X = mostly_zero(seed=3)
    want = dense_gram(X, np.full(X.shape[1], 0.5))
    for dense in (np.arange(X.shape[1]), np.array([], dtype=int)):
        got = SparseOuterGram(X, dense)(0.5)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(want).max())


@pytest.mark.parametrize("weighted", [False, True])
def test_solve_gram_plus_diag_with_the_sparse_form(weighted):
    # The W-step's n x n form with ``outer`` solves the same system as without it.
    X = mostly_zero(seed=4)
    rng = np.random.default_rng(5)
    B = rng.normal(size=(X.shape[0], 3))
    reg = rng.uniform(0.5, 2.0, size=X.shape[1])
    M = rng.uniform(0.5, 2.0, size=X.shape[0]) if weighted else None
    want = solve_gram_plus_diag(X, B, reg, M, method="dual")
    got = solve_gram_plus_diag(X, B, reg, M, method="dual", outer=sparse_outer_gram(X))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


def test_the_directcholesky_solve_falls_back_where_cholesky_fails():
    from ufsbench.numerics.gram_solve import IllConditionedSolveWarning, cholesky_solve

    rng = np.random.default_rng(6)
    Q = rng.normal(size=(8, 8))
    A, B = Q @ Q.T + np.eye(8), rng.normal(size=(8, 2))
    np.testing.assert_allclose(A @ cholesky_solve(A, B), B, atol=1e-10)
    U = rng.normal(size=(6, 3))
    A = U @ U.T
    A[0, 0] -= 1e-9                               # indefinite by round-off: least squares
    B = A @ rng.normal(size=(6, 2))
    with pytest.warns(IllConditionedSolveWarning):
        np.testing.assert_allclose(A @ cholesky_solve(A, B), B, atol=1e-6)


# -- X = E + 1 z^T --------------------------------------------------------------------------
def _sparse_data(rng, n=40, d=300, dense_columns=8):
    X = rng.poisson(0.04, size=(n, d)).astype(float) * rng.uniform(1, 9, size=(n, d))
    X[:, :dense_columns] = rng.uniform(0, 4, size=(n, dense_columns))
    return X


def _zscored_counts(n=80, d=300, density=0.03, seed=0):
    """z-scored counts with ~3 % non-zeros, a few dense columns, and one column whose zeros are
    a minority (its offset is then not the zeros' value; E is denser there, still exact)."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(2.0, size=(n, d)) * (rng.random((n, d)) < density)
    X[:, :3] += rng.poisson(3.0, size=(n, 3))
    X[: int(0.7 * n), 3] = rng.integers(1, 5, size=int(0.7 * n))
    X = X.astype(float)
    X = X[:, X.std(axis=0) > 0]
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _assert_products_equal_dense(op, X, rng, reg_range=(0.05, 20.0)):
    """outer, dot and tdot of ``op`` against the dense products of X, three times (the stored
    data is not altered by a call)."""
    n, d = X.shape
    for _ in range(3):
        reg = rng.uniform(*reg_range, d)
        K = op.outer(reg)
        # Sums of at most d products of bounded entries: round-off far below 1e-10 relative.
        np.testing.assert_allclose(K, (X / reg) @ X.T, rtol=1e-12,
                                   atol=1e-10 * np.abs(K).max())
        np.testing.assert_array_equal(K, K.T)              # exactly symmetric, for LAPACK
        V, U = rng.standard_normal((d, 3)), rng.standard_normal((n, 3))
        XV, XtU = op.dot(V), op.tdot(U)
        np.testing.assert_allclose(XV, X @ V, rtol=1e-12, atol=1e-12 * np.abs(XV).max())
        np.testing.assert_allclose(XtU, X.T @ U, rtol=1e-12, atol=1e-12 * np.abs(XtU).max())


@pytest.mark.parametrize("centre", [True, False])
@pytest.mark.parametrize("dense", ["chosen", "all", "none"])
def test_centred_data_products_equal_the_direct_ones(centre, dense):
    # X = raw - 1 mean^T as E = raw plus the offset row -mean, with the columns formed by syrk
    # chosen by the cost model, all of them (no sparse part), or none (the dense columns then
    # go through the sparse product with their offset).
    rng = np.random.default_rng(0)
    raw = _sparse_data(rng)
    mean = raw.mean(axis=0) if centre else None
    X = raw - mean if centre else raw
    if dense == "chosen":
        op = SparsePlusOffset.from_mean(raw, mean)
        assert op is not None
        assert set(range(8)) <= set(op.outer_gram.dense) and op.outer_gram.dense.size < 150
    else:
        columns = np.arange(raw.shape[1]) if dense == "all" else np.array([], dtype=int)
        offset = -mean if centre else np.zeros(raw.shape[1])
        op = SparsePlusOffset(X, raw, offset, columns)
    _assert_products_equal_dense(op, X, rng)


def test_columns_formed_by_syrk_take_the_given_data_as_given():
    # With every column dense (no sparse part, no offset) the n x n matrix is the plain syrk
    # of the given X bit for bit, as the dense form of the push-through solver forms it.
    rng = np.random.default_rng(2)
    raw = rng.standard_normal((25, 60))
    X = raw - raw.mean(axis=0)
    reg = rng.uniform(0.1, 3.0, 60)
    Z = X / np.sqrt(reg)[None, :]
    op = SparsePlusOffset(X, raw, -raw.mean(axis=0), np.arange(60))
    np.testing.assert_array_equal(op.outer(reg), Z @ Z.T)
    assert not np.any(op.sparse_offset)
    np.testing.assert_allclose(op.toarray(), X, rtol=0, atol=1e-14 * np.abs(X).max())


def test_the_split_is_taken_for_mostly_sparse_columns_only():
    rng = np.random.default_rng(1)
    raw = _sparse_data(rng)
    assert SparsePlusOffset.from_mean(raw, raw.mean(axis=0)) is not None
    assert SparsePlusOffset.from_mean(raw) is not None
    dense = rng.standard_normal((40, 300))
    assert SparsePlusOffset.from_mean(dense, dense.mean(axis=0)) is None
    assert SparsePlusOffset.from_median(dense) is None
    assert SparsePlusOffset.from_median(np.random.default_rng(2).standard_normal((50, 200))) is None


def test_median_offset_products_equal_the_dense_ones():
    X = _zscored_counts()
    n, d = X.shape
    op = SparsePlusOffset.from_median(X)
    assert isinstance(op, SparsePlusOffset)
    assert op.E.nnz < 0.1 * n * d                  # the offset row took the centring
    rng = np.random.default_rng(1)
    reg = np.exp(rng.uniform(-5, 5, d))
    ref = (X / reg) @ X.T
    A = op.outer(reg)
    np.testing.assert_allclose(A, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_array_equal(A, A.T)          # exactly symmetric, for LAPACK
    V, U = rng.standard_normal((d, 3)), rng.standard_normal((n, 3))
    np.testing.assert_allclose(op.dot(V), X @ V, atol=1e-12 * np.abs(X @ V).max())
    np.testing.assert_allclose(op.dot(V[:, 0]), X @ V[:, 0], atol=1e-12 * np.abs(X @ V).max())
    np.testing.assert_allclose(op.tdot(U), X.T @ U, atol=1e-12 * np.abs(X.T @ U).max())
    np.testing.assert_allclose(op.tdot(U[:, 0]), X.T @ U[:, 0],
                               atol=1e-12 * np.abs(X.T @ U).max())
    np.testing.assert_allclose(op.toarray(), X, rtol=0, atol=1e-14 * np.abs(X).max())
    assert op.sq_norm == pytest.approx(np.sum(X * X), rel=1e-14)
    _assert_products_equal_dense(op, X, rng, reg_range=(0.01, 100.0))


def test_mean_and_median_offsets_describe_the_same_matrix():
    # Centred mostly-zero counts: the known mean and the column median give the same X (the
    # median of a column that is mostly zero is minus its mean), and the same products.
    rng = np.random.default_rng(3)
    raw = _sparse_data(rng)
    X = raw - raw.mean(axis=0)
    by_mean = SparsePlusOffset.from_mean(raw, raw.mean(axis=0), centred=X)
    by_median = SparsePlusOffset.from_median(X)
    assert by_mean is not None and by_median is not None
    np.testing.assert_array_equal(by_mean.outer_gram.dense, by_median.outer_gram.dense)
    reg = rng.uniform(0.1, 10.0, X.shape[1])
    np.testing.assert_allclose(by_mean.outer(reg), by_median.outer(reg), rtol=1e-12,
                               atol=1e-12 * np.abs(by_mean.outer(reg)).max())
    np.testing.assert_allclose(by_mean.toarray(), X, rtol=0, atol=1e-14 * np.abs(X).max())


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("shape", [(3000, 700), (700, 3000), (50, 40)])
def test_the_blocked_sparse_product_is_scipys_bit_for_bit(fmt, shape, monkeypatch):
    rng = np.random.default_rng(3)
    A = sp.random(400, shape[0], density=0.02, format=fmt, random_state=4)
    B = rng.standard_normal(shape)
    monkeypatch.setattr(sparse_gram, "PRODUCT_BLOCKING_MIN_BYTES", 1024)
    monkeypatch.setattr(sparse_gram, "PRODUCT_BLOCK_BYTES", 8 * 1024)
    for operand in (B, np.asfortranarray(B), B[:, ::2]):
        out = sparse_gram.sparse_dense_product(A, operand)
        assert np.array_equal(out, A @ operand)
    assert np.array_equal(sparse_gram.sparse_dense_product(A, B[:, 0]), A @ B[:, 0])


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_the_blocked_sparse_product_in_lanes_is_scipys_bit_for_bit(fmt, monkeypatch):
    """Column blocks spread over three lanes (threads): scipy's product bit for bit, and the
    lanes are really taken."""
    rng = np.random.default_rng(5)
    A = sp.random(300, 900, density=0.05, format=fmt, random_state=6)
    B = rng.standard_normal((900, 200))
    monkeypatch.setattr(sparse_gram, "PRODUCT_BLOCKING_MIN_BYTES", 1024)
    monkeypatch.setattr(sparse_gram, "PRODUCT_BLOCK_BYTES", 8 * 1024)
    lanes_run = forced_lanes(monkeypatch, 3)
    for operand in (B, np.asfortranarray(B), B[:, ::2]):
        assert np.array_equal(sparse_gram.sparse_dense_product(A, operand), A @ operand)
    assert lanes_run == {0, 1, 2}


@pytest.mark.parametrize("n_lanes", [1, 2, 3, 7])
def test_row_lanes_products_are_scipys_bit_for_bit(n_lanes):
    """A CSR matrix's row ranges in lanes, with empty rows, a dense block of rows (unequal
    ranges) and fewer non-zeros than lanes would split evenly: every product scipy's, bit for
    bit, for a vector and for a matrix; a CSC matrix keeps one lane."""
    rng = np.random.default_rng(7)
    A = sp.random(500, 400, density=0.02, format="lil", random_state=8)
    A[10:40] = rng.standard_normal((30, 400))
    A[100:200] = 0.0
    A = A.tocsr()
    x, B = rng.standard_normal(400), rng.standard_normal((400, 6))
    with sparse_gram.RowLanes(A, n_lanes) as rows:
        assert rows.lanes.n_lanes == n_lanes
        assert rows.bounds[0] == 0 and rows.bounds[-1] == 500
        assert np.all(np.diff(rows.bounds) >= 0)
        for _ in range(2):
            assert np.array_equal(rows.product(x), A @ x)
            assert np.array_equal(rows.product(B), A @ B)
    with sparse_gram.RowLanes(A.tocsc(), n_lanes) as columns:
        assert columns.lanes.n_lanes == 1
        assert np.array_equal(columns.product(x), A @ x)
