import numpy as np
from scipy import linalg as sla

from ufsbench.numerics.threshold_eig import eigenpairs_above


def _projector_sum(w, V):
    return (V * w) @ V.T


def test_clustered_spectrum_above_threshold_takes_the_full_solver_and_agrees():
    # Most eigenvalues clustered just above thr (mean above it): the divide-and-conquer route.
    rng = np.random.default_rng(0)
    n = 120
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    vals = np.concatenate([10.0 + 0.01 * rng.random(100), 9.0 + 0.01 * rng.random(20)])
    As = (Q * vals) @ Q.T
    As = 0.5 * (As + As.T)
    w, V = eigenpairs_above(As, 9.5)
    w0, V0 = sla.eigh(As, subset_by_value=(9.5, np.inf), driver="evr")
    assert len(w) == len(w0) == 100
    assert np.allclose(w, w0, rtol=0, atol=1e-12)
    assert np.abs(_projector_sum(w, V) - _projector_sum(w0, V0)).max() < 1e-11


def test_few_eigenvalues_or_one_at_the_threshold_use_the_subset_solver_bit_for_bit():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((50, 50))
    As = 0.5 * (A + A.T)
    for thr in (3.0, 5.0):                          # mean eigenvalue ~0 < thr
        w, V = eigenpairs_above(As, thr)
        w0, V0 = sla.eigh(As, subset_by_value=(thr, np.inf), driver="evr")
        assert np.array_equal(w, w0) and np.array_equal(V, V0)
    # An eigenvalue exactly at the threshold: the full route declines (margin), same as before.
    wall = np.linalg.eigvalsh(As)
    shifted = As + (1.0 - wall.mean()) * np.eye(50)     # mean eigenvalue 1 > thr
    thr = float(np.linalg.eigvalsh(shifted)[10])
    assert np.trace(shifted) > thr * 50                 # the full route is tried
    w, V = eigenpairs_above(shifted, thr)
    w0, V0 = sla.eigh(shifted, subset_by_value=(thr, np.inf), driver="evr")
    assert np.array_equal(w, w0) and np.array_equal(V, V0)
