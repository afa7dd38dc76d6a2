import numpy as np
import pytest

from ufsbench.numerics.linalg import SYM_TILE, SYM_TILED_MIN, double_centre, sym


def test_double_centre_is_h_a_h_with_the_scaled_centring_matrix():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((7, 7))
    H = (np.eye(7) - np.ones((7, 7)) / 7) / 6
    np.testing.assert_allclose(double_centre(A), H @ A @ H, atol=1e-15)


@pytest.mark.parametrize("n", [SYM_TILED_MIN, SYM_TILED_MIN + SYM_TILE // 2 + 3])
@pytest.mark.parametrize("order", ["C", "F"])
def test_tiled_sym_has_the_bits_of_the_one_line_form(n, order):
    """sym of a large square matrix, tile by tile: (A + A^T) / 2 bit for bit (a last partial
    tile, either memory order, infinities), exactly symmetric."""
    rng = np.random.default_rng(n)
    A = np.asarray(rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-8, 8, size=(n, n)),
                   order=order)
    A[rng.random(A.shape) < 1e-4] = np.inf
    S = sym(A)
    assert np.array_equal(S, 0.5 * (A + A.T)) and np.array_equal(S, S.T)
