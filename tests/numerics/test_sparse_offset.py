"""X = E + 1 z^T for mostly-zero data after centring (ufsbench.numerics.sparse_offset)."""

import numpy as np
import pytest

from ufsbench.numerics.sparse_offset import SparsePlusOffset, sparse_plus_offset


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


def test_products_equal_the_dense_ones():
    X = _zscored_counts()
    n, d = X.shape
    op = sparse_plus_offset(X)
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


def test_dense_data_keep_the_dense_products():
    X = np.random.default_rng(2).standard_normal((50, 200))
    assert sparse_plus_offset(X) is None
