"""LARS-lasso paths traced in lockstep (one X^T U product per round) against one path at a time."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram

from ufsbench.numerics import lars
from ufsbench.numerics.lars import _min_pos, lasso_lars_ridge_path, lasso_lars_ridge_paths


def _problem(n, d, c, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X.T @ rng.standard_normal((n, c))


def _assert_same_paths(batch, single, rtol=1e-9):
    """Same number of steps, same active indices (in order) at every step, and coefficients
    equal to ``rtol`` relative to the step's largest |coefficient|."""
    assert len(batch) == len(single)
    for a, b in zip(batch, single):
        assert len(a) == len(b)
        for s in range(len(a)):
            assert np.array_equal(a.active[s], b.active[s])
            scale = np.max(np.abs(b.coefs[s]), initial=1e-300)
            assert np.max(np.abs(a.coefs[s] - b.coefs[s]), initial=0.0) <= rtol * scale
        assert np.allclose(a.alphas, b.alphas, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("c", [1, 2, 6])     # c = 6: one GEMM per round; c < 4: gemv per path
@pytest.mark.parametrize("stop_nnz", [None, 25])
def test_lockstep_equals_one_path_at_a_time(c, stop_nnz):
    # d > n with ridge: the paths pass n non-zeros and drop variables on the way.
    X, XY = _problem(20, 90, c, seed=c)
    kw = dict(n_samples=20, max_iter=150, stop_nnz=stop_nnz)
    batch = lasso_lars_ridge_paths(X, XY, 1e-3, **kw)
    single = [lasso_lars_ridge_path(X, XY[:, k], 1e-3, **kw) for k in range(c)]
    _assert_same_paths(batch, single)
    sizes = np.concatenate([np.diff([len(a) for a in p.active]) for p in batch])
    assert np.any(sizes < 0)                              # drops exercised
    if stop_nnz is not None:                              # each path's own cardinality stop
        for p in batch:
            assert p.nnz()[-1] >= stop_nnz and np.all(p.nnz()[:-1] < stop_nnz)


def test_paths_end_at_different_rounds_and_match_sklearn():
    # Columns with very different paths: one ends on alpha <= float32 eps after few steps (y in
    # the span of 3 columns, ridge 0), the others run on; every path is scikit-learn's.
    rng = np.random.default_rng(7)
    n, d = 15, 40
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, 5))
    Y[:, 2] = X[:, [3, 8, 21]] @ [1.0, -2.0, 0.5]
    batch = lasso_lars_ridge_paths(X, X.T @ Y, 0.0, max_iter=60)
    lengths = [len(p) for p in batch]
    assert len(set(lengths)) > 1 and lengths[2] == min(lengths)
    gram = X.T @ X
    for k, p in enumerate(batch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            alphas, _, coefs = lars_path_gram(X.T @ Y[:, k], gram, n_samples=n, method="lasso",
                                              max_iter=60)
        assert p.dense().shape == coefs.shape
        assert np.allclose(p.alphas, alphas, rtol=1e-9, atol=1e-12)
        assert np.max(np.abs(p.dense() - coefs)) < 1e-8


def test_gather_uses_each_paths_own_order(monkeypatch):
    # Many paths (GEMM rounds), permuted orders that drift apart. The product rows are by
    # feature id; a gather in the wrong order (e.g. the first path's indices for every path, or
    # no permutation) gives other supports at once.
    X, XY = _problem(25, 120, 5, seed=3)
    batch = lasso_lars_ridge_paths(X, XY, 1e-3, max_iter=60)
    single = [lasso_lars_ridge_path(X, XY[:, k], 1e-3, max_iter=60) for k in range(5)]
    _assert_same_paths(batch, single)
    assert len({tuple(p.active[10]) for p in batch}) == 5    # the paths really differ

    def unpermuted(self, xu, *args):
        self.indices = np.sort(self.indices)        # wrong: gathers by feature id order
        return original(self, xu, *args)
    original = lars._LarsPath.step
    monkeypatch.setattr(lars._LarsPath, "step", unpermuted)
    wrong = lasso_lars_ridge_paths(X, XY, 1e-3, max_iter=60)
    assert any(not np.array_equal(a.active[s], b.active[s])
               for a, b in zip(wrong, single) for s in range(min(len(a), len(b))))


def test_a_path_does_not_depend_on_when_the_others_stop():
    # MCFS serves every count from the longest paths: path k run in a batch whose other paths
    # stop early (stop_nnz small) or late must do the same arithmetic, bit for bit.
    X, XY = _problem(20, 90, 6, seed=11)
    long = lasso_lars_ridge_paths(X, XY, 1e-3, max_iter=200, stop_nnz=40)
    for stop in (3, 17, 33):
        short = lasso_lars_ridge_paths(X, XY, 1e-3, max_iter=200, stop_nnz=stop)
        for a, b in zip(short, long):
            for s in range(len(a)):
                assert np.array_equal(a.active[s], b.active[s])
                assert np.array_equal(a.coefs[s], b.coefs[s])


def test_single_path_is_the_one_column_case_and_shapes_are_checked():
    X, XY = _problem(15, 30, 1, seed=0)
    one = lasso_lars_ridge_path(X, XY[:, 0], 1e-3, max_iter=20)
    (batch,) = lasso_lars_ridge_paths(X, XY, 1e-3, max_iter=20)
    assert all(np.array_equal(a, b) for a, b in zip(one.coefs, batch.coefs))
    with pytest.raises(ValueError, match="XY has shape"):
        lasso_lars_ridge_paths(X, XY[:10])
    assert lasso_lars_ridge_paths(X, np.zeros((30, 0))) == []


def test_min_pos_matches_its_definition():
    rng = np.random.default_rng(0)
    cases = [rng.standard_normal(50), -np.abs(rng.standard_normal(9)), np.zeros(4),
             np.array([-0.0, 0.0, 3.0, np.nan, -np.inf]), np.array([np.nan, -1.0]),
             np.array([np.inf, -2.0]), np.array([5e-324, 1.0]), np.zeros(0)]
    for x in cases:
        pos = x[x > 0]
        expected = pos.min() if pos.size else np.finfo(float).max
        assert _min_pos(x) == expected
