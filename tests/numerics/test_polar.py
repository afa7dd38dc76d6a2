import numpy as np
import pytest

from ufsbench.numerics.linalg import gram_polar, orthonormal_polar
from ufsbench.numerics.polar import polar_factor


def _with_condition(kappa, p=300, h=20, seed=0):
    rng = np.random.default_rng(seed)
    P, _ = np.linalg.qr(rng.standard_normal((p, h)))
    Q, _ = np.linalg.qr(rng.standard_normal((h, h)))
    return (P * np.geomspace(1.0, 1.0 / kappa, h)) @ Q.T


def test_well_conditioned_is_gram_polar_bit_for_bit():
    H = _with_condition(10.0)
    assert np.array_equal(polar_factor(H), gram_polar(H))


@pytest.mark.parametrize("kappa", [1e5, 1e6, 1e7])
def test_ill_conditioned_matches_svd_form(kappa):
    # Beyond the Gram form's range (kappa > 1e4) the two-pass form: orthonormal to round-off and
    # equal to the SVD's polar factor within its own sensitivity, ~eps kappa (x100 for slack).
    H = _with_condition(kappa)
    U = polar_factor(H)
    assert np.abs(U.T @ U - np.eye(H.shape[1])).max() < 1e-13
    assert np.abs(U - orthonormal_polar(H)).max() < 100 * np.finfo(float).eps * kappa


def test_rank_deficient_and_wide_fall_back_to_svd():
    H = _with_condition(1e3)
    H[:, -1] = H[:, 0]                              # exactly rank-deficient
    assert np.array_equal(polar_factor(H), orthonormal_polar(H))
    W = _with_condition(10.0, p=20, h=20)[:10]      # wide
    assert np.array_equal(polar_factor(W), orthonormal_polar(W))
