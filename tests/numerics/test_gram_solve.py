import warnings

import numpy as np
import pytest
from scipy import linalg as sla

from ufsbench.numerics.gram_solve import (
    CONDITION_CHECK_BOUND,
    IllConditionedSolveWarning,
    solve_gram_plus_diag,
    solve_psd,
)


def test_solve_psd_is_cholesky_on_well_conditioned_systems():
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(8, 8))
    A, B = Q @ Q.T + np.eye(8), rng.normal(size=(8, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback, no warning
        assert np.allclose(A @ solve_psd(A, B), B)


@pytest.mark.parametrize("n, k", [(40, 1), (300, 7), (700, 20)])
def test_solve_psd_has_the_bits_and_layout_of_scipys_checked_solve(n, k):
    # later products' bits depend on the layout of the solution, so both must match
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n + 50, n))
    A, B = X.T @ X + np.eye(n), rng.normal(size=(n, k))
    expected = sla.solve(A, B, assume_a="pos")
    got = solve_psd(A, B)
    assert np.array_equal(got, expected)
    assert got.flags["C_CONTIGUOUS"] == expected.flags["C_CONTIGUOUS"]
    assert np.array_equal(solve_psd(A, B[:, 0]), sla.solve(A, B[:, 0], assume_a="pos"))


def _diagonal_with_condition(n: int, condition: float) -> np.ndarray:
    # Cholesky of a positive diagonal cannot fail, on any CPU, and its condition is exact
    return np.diag(np.logspace(0, -np.log10(condition), n))


def test_solve_psd_warns_where_the_condition_estimate_is_below_machine_epsilon():
    A = _diagonal_with_condition(200, 1e18)
    B = np.random.default_rng(5).normal(size=(200, 3))
    with pytest.warns(sla.LinAlgWarning, match="ill-conditioned"):
        got = solve_psd(A, B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        assert np.array_equal(got, sla.solve(A, B, assume_a="pos"))


def test_solve_psd_is_silent_where_scipy_is():
    # a condition number of 1e12: over the bound that triggers the estimate, under 1 / eps
    A = _diagonal_with_condition(200, 1e12)
    assert CONDITION_CHECK_BOUND < 1e12
    B = np.ones((200, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sla.solve(A, B, assume_a="pos")
        solve_psd(A, B)


def test_solve_psd_falls_back_to_least_squares_when_cholesky_fails():
    rng = np.random.default_rng(1)
    U = rng.normal(size=(6, 3))
    A = U @ U.T                                   # rank 3: Cholesky of a singular PSD matrix fails
    A[0, 0] -= 1e-9                               # and round-off-level indefiniteness
    B = A @ rng.normal(size=(6, 2))               # consistent right-hand side
    with pytest.warns(IllConditionedSolveWarning, match="least squares"):
        X = solve_psd(A, B)
    assert np.allclose(A @ X, B, atol=1e-6)


def test_extreme_regularisation_ratio_still_solves():
    # RUFS at beta/alpha = 1e-12 on d > n data (umist): the n x n dual system has condition ~1e16.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 80))
    X[:, 40:] = X[:, :40]                         # duplicated features: X X^T rank-deficient-ish
    B = rng.normal(size=(30, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllConditionedSolveWarning)
        W = solve_gram_plus_diag(X, B, np.full(80, 1e-12))
    assert np.all(np.isfinite(W))
    # The limit of the regularised solution: X W ~ B (interpolation, n < d).
    assert np.linalg.norm(X @ W - B) / np.linalg.norm(B) < 1e-3


@pytest.mark.parametrize("metric", ["none", "diagonal", "dense"])
def test_dual_form_equals_the_primal_system(metric):
    # the n x n push-through forms (symmetric syrk form for M = I or diagonal; M K + I for a
    # dense metric) must solve the d x d system (X^T M X + R) W = X^T B
    rng = np.random.default_rng(3)
    n, d = 25, 70
    X, B = rng.normal(size=(n, d)), rng.normal(size=(n, 3))
    reg = rng.uniform(0.5, 2.0, size=d)
    M = {"none": None, "diagonal": rng.uniform(0.2, 3.0, size=n),
         "dense": np.eye(n) + 0.1 * (lambda Q: Q @ Q.T)(rng.normal(size=(n, n)))}[metric]
    W = solve_gram_plus_diag(X, B, reg, M, method="dual")
    Mx = X if M is None else (M[:, None] * X if np.ndim(M) == 1 else M @ X)
    np.testing.assert_allclose((X.T @ Mx + np.diag(reg)) @ W, X.T @ B, atol=1e-10)
    np.testing.assert_allclose(W, solve_gram_plus_diag(X, B, reg, M, method="primal"),
                               rtol=1e-9, atol=1e-12)
