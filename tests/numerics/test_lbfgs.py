import numpy as np
from scipy.optimize import nnls

from ufsbench.numerics.lbfgs import lbfgs_block, two_loop


def _least_squares(A, b):
    def value(x):
        r = A @ x - b
        return 0.5 * r @ r, r

    def gradient(x, r):
        return A.T @ r

    return value, gradient


def test_minimises_a_convex_quadratic_and_a_non_negative_least_squares():
    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((40, 8)), rng.standard_normal(40)
    value, gradient = _least_squares(A, b)
    x, g = lbfgs_block(np.zeros(8), value, gradient, projected=False, ftol=1e-14, gtol=1e-10)
    np.testing.assert_allclose(x, np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-8)
    assert np.linalg.norm(g) < 1e-6                              # stationary
    x, pg = lbfgs_block(np.ones(8), value, gradient, projected=True, ftol=1e-14, gtol=1e-10)
    np.testing.assert_allclose(x, nnls(A, b)[0], atol=1e-7)
    assert x.min() >= 0 and np.linalg.norm(pg) < 1e-6         # the projected gradient vanishes


def test_projected_separable_quadratic_reaches_its_clipped_minimiser():
    # f(X) = sum_ij q_ij (X_ij - c_ij)^2 / 2 over X >= 0 (a matrix iterate): X* = max(c, 0)
    rng = np.random.default_rng(2)
    q, c = rng.uniform(0.5, 4.0, (6, 3)), rng.standard_normal((6, 3))

    def value(X):
        return 0.5 * float(np.sum(q * (X - c) ** 2)), None

    def gradient(X, _):
        return q * (X - c)

    X, pg = lbfgs_block(np.full((6, 3), 2.0), value, gradient, projected=True, ftol=1e-16,
                        gtol=1e-12)
    np.testing.assert_allclose(X, np.maximum(c, 0.0), atol=1e-10)
    assert X.min() >= 0 and pg.shape == X.shape


def test_ftol_stops_without_taking_the_small_step():
    value, gradient = _least_squares(np.eye(3), np.array([1.0, 2.0, 3.0]))
    start = np.array([1.0, 2.0, 3.0 + 1e-6])             # f(start) = 5e-13
    x, _ = lbfgs_block(start, value, gradient, projected=False, ftol=1e-9)
    np.testing.assert_array_equal(x, start)


def test_two_loop_with_one_pair_is_the_scaled_bfgs_inverse():
    rng = np.random.default_rng(1)
    s, y, g = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal(5)
    y += 3 * s                                                   # s.y > 0
    rho, H0 = 1 / (y @ s), (s @ y) / (y @ y)
    V = np.eye(5) - rho * np.outer(y, s)
    H = V.T @ (H0 * np.eye(5)) @ V + rho * np.outer(s, s)
    np.testing.assert_allclose(two_loop(g, [(s, y, rho)]), H @ g, rtol=1e-12)
    np.testing.assert_array_equal(two_loop(g, []), g)           # no pair: H0 = 1
