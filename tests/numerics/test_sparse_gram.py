"""Tests of the sparse-column form of Z Z^T, Z = diag(s) X R^{-1/2} (ufsbench.numerics.sparse_gram)."""

import numpy as np
import pytest

from ufsbench.numerics.gram_solve import solve_gram_plus_diag
from ufsbench.numerics.sparse_gram import SparseOuterGram, sparse_outer_gram


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
