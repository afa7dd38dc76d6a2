import numpy as np
import pytest

from ufsbench.numerics.fuzzy_cmeans import cmeans_start, fuzzy_cmeans


@pytest.fixture(scope="module")
def blobs():
    """Three well separated Gaussian blobs of 30 samples in 4 dimensions, and their labels."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 30)
    centres = np.array([[0.0, 0, 0, 0], [12.0, 0, 0, 0], [0.0, 12, 0, 0]])
    return centres[labels] + rng.standard_normal((90, 4)), labels


def test_memberships_sum_to_one_and_end_at_a_fixed_point_of_the_update(blobs):
    X, labels = blobs
    rng = np.random.RandomState(0)
    u0 = rng.rand(3, X.shape[0])
    U = fuzzy_cmeans(X, u0 / u0.sum(axis=0), m=2.0, error=1e-10, max_iter=1000)
    np.testing.assert_allclose(U.sum(axis=0), 1.0, rtol=1e-12)
    assert U.min() > 0
    # one more step from U (the centres as U^m-weighted means, U_ji ~ d_ji^(-2/(m-1))) stays put
    um = U ** 2
    centres = um @ X / um.sum(axis=1)[:, None]
    dist = np.linalg.norm(X[None, :, :] - centres[:, None, :], axis=2)
    again = dist ** -2.0 / np.sum(dist ** -2.0, axis=0)
    np.testing.assert_allclose(again, U, atol=1e-8)
    # the blobs are the clusters (up to relabelling)
    found = U.argmax(axis=0)
    assert len(set(zip(found, labels))) == 3


def test_start_with_the_scfs_fuzzifier_is_the_hard_partition_scaled(blobs):
    X, labels = blobs
    G0 = cmeans_start(X, 3, np.random.RandomState(1))
    found = G0.argmax(axis=1)
    assert len(set(zip(found, labels))) == 3
    sizes = np.bincount(found, minlength=3)
    # m = 1.0005: memberships 0/1 up to round-off, G0_ij = U_ji / sqrt(sum_i U_ji)
    np.testing.assert_allclose(np.sort(G0, axis=1)[:, :2], 0.0, atol=1e-12)
    np.testing.assert_allclose(G0.max(axis=1), 1 / np.sqrt(sizes[found]), rtol=1e-9)
