import numpy as np

from ufsbench.numerics.eig_bounds import (
    eigenvalues_certainly_at_most,
    perron_root_at_most,
    spectral_norm_bound,
)


def test_gershgorin_certificate_never_hides_an_eigenvalue_above_the_bound():
    rng = np.random.default_rng(6)
    certified = 0
    for _ in range(200):
        n = int(rng.integers(2, 30))
        B = rng.standard_normal((n, n)) * rng.uniform(0.01, 1.0)
        B = 0.5 * (B + B.T) + rng.uniform(-5, 5) * np.eye(n)
        C = rng.standard_normal((n, 2)) @ rng.standard_normal((2, n)) * 1e-3
        bound = rng.uniform(-6, 8)
        extra = spectral_norm_bound(C.T) if rng.random() < 0.5 else 0.0
        if eigenvalues_certainly_at_most(B, bound, extra):
            certified += 1
            top = np.linalg.eigvalsh(B + (0.5 * (C + C.T) if extra else 0.0))[-1]
            assert top <= bound
    assert certified > 20


def test_collatz_wielandt_certificate_never_hides_an_eigenvalue_above_the_bound():
    rng = np.random.default_rng(8)
    certified = 0
    for _ in range(200):
        n = int(rng.integers(2, 40))
        B = rng.random((n, n)) * (rng.random((n, n)) < 0.2)
        B[0] += 3.0 * rng.random(n)                         # a hub: Gershgorin's disc is wide
        B = B + B.T
        top = np.linalg.eigvalsh(B)[-1]
        bound = top * rng.uniform(0.9, 1.5)
        if perron_root_at_most(B, bound)[0]:
            certified += 1
            assert top <= bound
    assert certified > 50


def test_collatz_wielandt_returns_its_last_vector_and_keeps_the_start_on_a_breakdown():
    B = np.array([[2.0, 1.0], [1.0, 2.0]])                    # eigenvalues 1 and 3
    certain, x = perron_root_at_most(B, 3.5)
    assert certain and x is not None and np.all(x > 0)
    certain, x_next = perron_root_at_most(B, 2.5, x)           # not true: never certified
    assert not certain and x_next is not None
    start = np.array([1.0, 2.0])
    certain, kept = perron_root_at_most(np.eye(2), 0.5, start)  # C = 0: no power step
    assert not certain and kept is start


def test_spectral_norm_bound_is_above_the_norm_and_tight():
    B = np.random.default_rng(2).standard_normal((3, 20))
    norm = np.linalg.norm(B, 2)
    assert norm <= spectral_norm_bound(B) <= norm * (1 + 1e-7)
    assert spectral_norm_bound(np.zeros((0, 5))) == 0.0
    assert spectral_norm_bound(np.full((2, 3), np.inf)) == np.inf
