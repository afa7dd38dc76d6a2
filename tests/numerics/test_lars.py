"""LARS-lasso on the implicit Gram X^T X + ridge I against scikit-learn's lars_path_gram."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram

from ufsbench.numerics.lars import _cholesky_delete, _min_pos, cardinality, lasso_lars_ridge_path


def _sklearn_path(X, y, ridge, max_iter):
    n, d = X.shape
    gram = X.T @ X
    gram[np.diag_indices(d)] += ridge
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return lars_path_gram(X.T @ y, gram, n_samples=n, method="lasso", max_iter=max_iter)


@pytest.mark.parametrize("n, d", [(30, 12), (25, 120), (40, 40)])
@pytest.mark.parametrize("ridge", [1e-3, 0.0, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_path_as_lars_path_gram(n, d, ridge, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    max_iter = 3 * min(n, d) + 10
    alphas, _, coefs = _sklearn_path(X, y, ridge, max_iter)
    path = lasso_lars_ridge_path(X, X.T @ y, ridge, n_samples=n, max_iter=max_iter)
    ours = path.dense()
    assert ours.shape == coefs.shape                     # same number of steps
    assert np.allclose(path.alphas, alphas, rtol=1e-9, atol=1e-12)
    assert np.max(np.abs(ours - coefs)) < 1e-8
    # Same supports at every step. The only admissible difference is the round-off remnant
    # (|a| ~ 1e-19) that both leave on a variable at the step where it leaves the active set:
    # a - (a / w) * w is exactly 0 or not depending on the last bit of a and w.
    differ = (ours != 0) != (coefs != 0)
    assert np.all(np.abs(ours[differ]) < 1e-15) and np.all(np.abs(coefs[differ]) < 1e-15)


def test_lasso_drops_happen_and_match():
    # d > n with ridge: the path passes n non-zeros and drops variables on the way.
    rng = np.random.default_rng(5)
    X = rng.standard_normal((20, 80))
    y = rng.standard_normal(20)
    _, _, coefs = _sklearn_path(X, y, 1e-3, 150)
    path = lasso_lars_ridge_path(X, X.T @ y, 1e-3, max_iter=150)
    sizes = np.array([len(a) for a in path.active])
    assert np.any(np.diff(sizes) < 0)                    # drops exercised
    assert path.nnz().max() > 20                         # the ridge lets |A| exceed n
    assert np.max(np.abs(path.dense() - coefs)) < 1e-8


def test_sparse_path_helpers():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((15, 30))
    y = rng.standard_normal(15)
    path = lasso_lars_ridge_path(X, X.T @ y, 1e-3, max_iter=10)
    assert len(path) == 11 and path.nnz()[0] == 0 and path.nnz()[1] == 1
    dense = path.dense()
    for s in range(len(path)):
        assert np.array_equal(path.coef(s), dense[:, s])
    with pytest.raises(ValueError, match="Xy has shape"):
        lasso_lars_ridge_path(X, np.ones(3))


def test_cholesky_delete_gives_factor_of_reduced_matrix():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((7, 7))
    G = B @ B.T + 7 * np.eye(7)
    for k in (0, 3, 6):
        L = np.linalg.cholesky(G)
        _cholesky_delete(L, k)
        keep = np.delete(np.arange(7), k)
        L6 = np.tril(L[:6, :6])
        assert np.all(np.diag(L6) >= 0)
        assert np.allclose(L6 @ L6.T, G[np.ix_(keep, keep)], atol=1e-12)


@pytest.mark.parametrize("n, d, ridge", [(20, 80, 1e-3), (30, 25, 1e-3), (15, 200, 0.0)])
def test_smaller_max_iter_gives_a_bitwise_prefix(n, d, ridge):
    # MCFS serves every feature count from the longest path: the path run with a smaller
    # max_iter must be the first steps of the longer one, bit for bit (the buffers grow with the
    # active set, never sized from max_iter).
    rng = np.random.default_rng(d)
    X = rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    long = lasso_lars_ridge_path(X, X.T @ y, ridge, max_iter=300)
    for max_iter in (3, 17, 64, 65, 130):
        short = lasso_lars_ridge_path(X, X.T @ y, ridge, max_iter=max_iter)
        assert len(short) == min(len(long), max_iter + 1)
        for s in range(len(short)):
            assert np.array_equal(short.active[s], long.active[s])
            assert np.array_equal(short.coefs[s], long.coefs[s])
        assert np.array_equal(short.alphas, long.alphas[: len(short)])


def test_min_pos_is_the_smallest_positive_entry():
    # The bit-pattern minimum must agree with the definition on signed zeros, NaNs, infinities,
    # subnormals, all-non-positive and empty input (scikit-learn's min_pos returns the largest
    # float when nothing is positive).
    rng = np.random.default_rng(0)
    cases = [rng.standard_normal(50), -np.abs(rng.standard_normal(9)), np.zeros(4),
             np.array([-0.0, 0.0, 3.0, np.nan, -np.inf]), np.array([np.nan, -1.0]),
             np.array([-np.nan, 2.0, 1.5]), np.array([np.inf, -2.0]),
             np.array([5e-324, 1.0]), np.array([1e300, np.inf, 7.0]), np.zeros(0)]
    for x in cases:
        positive = x[x > 0]
        expected = positive.min() if positive.size else np.finfo(float).max
        assert _min_pos(x) == expected
        assert _min_pos(x, np.empty(x.size, dtype=np.uint64)) == expected


def test_cardinality_counts_a_drop_remainder_as_zero():
    assert cardinality(np.array([1.0, -2.0, 1e-17, 0.0])) == 2     # a drop's remainder
    assert cardinality(np.array([1.0, -2.0, -1e-16, 0.0])) == 2
    assert cardinality(np.array([1.0, 3e-8, -1e-9])) == 3           # small but on the path
    assert cardinality(np.zeros(3)) == 0 and cardinality(np.zeros(0)) == 0
