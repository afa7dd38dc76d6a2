import numpy as np

from ufsbench.numerics.cg import block_pcg


def _system(n=30, c=3, seed=0):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, n))
    A = Q @ Q.T + 0.5 * np.eye(n)
    return A, rng.standard_normal((n, c))


def test_solves_every_column_to_the_relative_residual():
    A, B = _system()
    diagonal = np.diag(A).copy()
    Y = block_pcg(lambda V: A @ V, B, np.zeros_like(B), lambda R: R / diagonal[:, None],
                  1e-12, 500)
    assert Y is not None
    assert np.all(np.linalg.norm(A @ Y - B, axis=0) <= 1e-10 * np.linalg.norm(B, axis=0))
    np.testing.assert_allclose(Y, np.linalg.solve(A, B), rtol=1e-8, atol=1e-10)


def test_exact_preconditioner_converges_in_one_step_and_the_start_is_kept():
    A, B = _system(seed=1)
    inverse = np.linalg.inv(A)
    Y0 = np.ones_like(B)
    Y = block_pcg(lambda V: A @ V, B, Y0, lambda R: inverse @ R, 1e-9, 1)
    assert Y is not None
    np.testing.assert_array_equal(Y0, 1.0)
    assert block_pcg(lambda V: A @ V, B, Y0, lambda R: R, 1e-12, 1) is None
