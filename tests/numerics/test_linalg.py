import numpy as np

from ufsbench.numerics.linalg import double_centre


def test_double_centre_is_h_a_h_with_the_scaled_centring_matrix():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((7, 7))
    H = (np.eye(7) - np.ones((7, 7)) / 7) / 6
    np.testing.assert_allclose(double_centre(A), H @ A @ H, atol=1e-15)
