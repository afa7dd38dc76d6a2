"""Woodbury shift-invert eigensolver for diag + low rank (ufsbench.numerics.lowrank_eig)."""

import numpy as np
import pytest
from scipy.sparse.linalg import ArpackNoConvergence

import ufsbench.numerics.lowrank_eig as lowrank_eig
from ufsbench.errors import UFSBenchError
from ufsbench.numerics.lowrank_eig import (
    lowrank_min_eigenvalue_bound,
    smallest_eigh_shift_invert,
)


def _problem(d, r, indefinite, spread, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((d, r)) / np.sqrt(d)
    V = rng.standard_normal((r, r))
    M = V @ V.T / r - (2.0 * np.eye(r) if indefinite else 0.0)
    diag = np.exp(rng.uniform(0, np.log(spread), d))
    return diag, B, M, np.diag(diag) + B @ M @ B.T


@pytest.mark.parametrize("indefinite,spread", [(False, 1e6), (True, 1e4), (True, 1.0)])
def test_matches_dense_eigh(indefinite, spread):
    diag, B, M, G = _problem(300, 20, indefinite, spread)
    k = 4
    vals, vecs = smallest_eigh_shift_invert(diag, B, M, k)
    ref = np.linalg.eigvalsh(G)[:k]
    np.testing.assert_allclose(vals, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
    np.testing.assert_allclose(vecs.T @ vecs, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(G @ vecs, vecs * vals, atol=1e-7 * np.abs(G).max())


def test_warm_start_and_given_bound_give_same_answer():
    diag, B, M, _G = _problem(200, 15, False, 1e3, seed=1)
    _, W = smallest_eigh_shift_invert(diag, B, M, 3)
    vals, _ = smallest_eigh_shift_invert(diag * 1.01, B, M, 3, v0=W, lower_bound=diag.min())
    ref = np.linalg.eigvalsh(np.diag(diag * 1.01) + B @ M @ B.T)[:3]
    np.testing.assert_allclose(vals, ref, rtol=1e-9)


def test_weyl_bound_is_a_lower_bound():
    diag, B, M, G = _problem(100, 10, True, 10.0, seed=2)
    assert lowrank_min_eigenvalue_bound(diag, B, M) <= np.linalg.eigvalsh(G)[0] + 1e-12


def _lanczos_fails(monkeypatch):
    def failing(*args, **kwargs):
        raise ArpackNoConvergence("ARPACK error -1: No convergence", np.empty(0), np.empty((0, 0)))
    monkeypatch.setattr(lowrank_eig, "seeded_eigsh", failing)


@pytest.mark.parametrize("indefinite", [False, True])
def test_lanczos_failure_falls_back_to_the_dense_eigenpairs(monkeypatch, indefinite):
    """Lanczos gave up at UFSOL's (alpha, beta) = (1e6, 1e-6) corner on ORL after 10241
    iterations, which failed the whole fit; below DENSE_FALLBACK_MAX_D the exact dense answer
    now stands in, with a warning the runner records."""
    diag, B, M, G = _problem(300, 20, indefinite, 1e4, seed=3)
    _lanczos_fails(monkeypatch)
    with pytest.warns(RuntimeWarning, match="dense eigendecomposition"):
        vals, vecs = smallest_eigh_shift_invert(diag, B, M, 5)
    ref_vals, ref_vecs = np.linalg.eigh(G)
    np.testing.assert_allclose(vals, ref_vals[:5], rtol=1e-9)
    np.testing.assert_allclose(np.abs(vecs.T @ ref_vecs[:, :5]), np.eye(5), atol=1e-8)


def test_lanczos_failure_above_the_dense_limit_is_one_clear_error(monkeypatch):
    diag, B, M, _G = _problem(300, 20, False, 1e4, seed=3)
    _lanczos_fails(monkeypatch)
    monkeypatch.setattr(lowrank_eig, "DENSE_FALLBACK_MAX_D", 200)
    with pytest.raises(UFSBenchError, match="less extreme setting"):
        smallest_eigh_shift_invert(diag, B, M, 5)


def test_sparse_plus_offset_factor_and_structured_m_give_the_dense_answer():
    """B = X^T for a z-scored mostly-zero X given as E + 1 z^T, and M = N - P (N sparse, P a
    cluster projection) applied by ``apply_m``: the same eigenpairs as with dense B and M."""
    import scipy.sparse as sp

    from ufsbench.numerics.sparse_gram import SparsePlusOffset

    rng = np.random.default_rng(4)
    n, d = 60, 400
    X = (rng.poisson(2.0, size=(n, d)) * (rng.random((n, d)) < 0.03)).astype(float)
    X = X[:, X.std(axis=0) > 0]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    d = X.shape[1]
    factor = SparsePlusOffset.from_median(X)
    assert factor is not None
    N = sp.random(n, n, density=0.05, random_state=5)
    N = sp.csr_matrix(N + N.T + sp.identity(n) * 3.0)
    labels = rng.integers(0, 3, size=n)
    P = (labels[:, None] == labels[None, :]) / np.bincount(labels)[labels][:, None]
    M = N.toarray() - P

    def apply_m(Y):
        return N @ Y - P @ Y

    diag = np.exp(rng.uniform(0, np.log(1e3), d))
    low = float(np.linalg.eigvalsh(M)[0])
    bound = diag.min() + min(0.0, low) * np.linalg.norm(X, 2) ** 2
    vals, vecs = smallest_eigh_shift_invert(diag, factor, M, 4, lower_bound=bound,
                                            apply_m=apply_m)
    ref_vals, ref_vecs = smallest_eigh_shift_invert(diag, X.T, M, 4, lower_bound=bound)
    G = np.diag(diag) + X.T @ M @ X
    np.testing.assert_allclose(vals, np.linalg.eigvalsh(G)[:4], rtol=1e-9)
    np.testing.assert_allclose(vals, ref_vals, rtol=1e-11)
    np.testing.assert_allclose(np.abs(vecs.T @ ref_vecs), np.eye(4), atol=1e-8)
    # Without a bound (Weyl from M's eigenvalues; K from the factor when M is indefinite).
    vals2, _ = smallest_eigh_shift_invert(diag, factor, M, 4)
    np.testing.assert_allclose(vals2, ref_vals, rtol=1e-9)


@pytest.mark.parametrize("spread", [10.0, 1e6])
def test_identity_m_as_none_matches_the_explicit_identity_and_dense_eigh(spread):
    """M = None (the identity; syrk set-up, Cholesky) gives the eigenpairs of diag + B B^T:
    those of the general path with M = I and of a dense eigh, with or without a given bound."""
    diag, B, _M, _G = _problem(300, 20, False, spread, seed=6)
    G = np.diag(diag) + B @ B.T
    k = 4
    ref = np.linalg.eigvalsh(G)[:k]
    vals, vecs = smallest_eigh_shift_invert(diag, B, None, k)
    bound_vals, _ = smallest_eigh_shift_invert(diag, B, None, k, lower_bound=diag.min())
    eye_vals, eye_vecs = smallest_eigh_shift_invert(diag, B, np.eye(20), k)
    np.testing.assert_allclose(vals, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
    np.testing.assert_allclose(bound_vals, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
    np.testing.assert_allclose(vals, eye_vals, rtol=1e-11)
    np.testing.assert_allclose(np.abs(vecs.T @ eye_vecs), np.eye(k), atol=1e-8)
    np.testing.assert_allclose(G @ vecs, vecs * vals, atol=1e-7 * np.abs(G).max())
    # Warm start from the previous eigenvectors.
    warm, _ = smallest_eigh_shift_invert(diag * 1.01, B, None, k, v0=vecs)
    np.testing.assert_allclose(warm, np.linalg.eigvalsh(G + np.diag(diag * 0.01))[:k],
                               rtol=1e-9)


def test_identity_m_with_a_sparse_plus_offset_factor():
    from ufsbench.numerics.sparse_gram import SparsePlusOffset

    rng = np.random.default_rng(7)
    n, d = 50, 300
    X = (rng.poisson(2.0, size=(n, d)) * (rng.random((n, d)) < 0.04)).astype(float)
    X = X[:, X.std(axis=0) > 0]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    factor = SparsePlusOffset.from_median(X)
    assert factor is not None
    diag = np.exp(rng.uniform(0, np.log(1e3), X.shape[1]))
    vals, vecs = smallest_eigh_shift_invert(diag, factor, None, 3)
    ref_vals, ref_vecs = np.linalg.eigh(np.diag(diag) + X.T @ X)
    np.testing.assert_allclose(vals, ref_vals[:3], rtol=1e-9)
    np.testing.assert_allclose(np.abs(vecs.T @ ref_vecs[:, :3]), np.eye(3), atol=1e-8)


def test_identity_m_lanczos_failure_falls_back_to_the_dense_eigenpairs(monkeypatch):
    diag, B, _M, _G = _problem(300, 20, False, 1e4, seed=3)
    _lanczos_fails(monkeypatch)
    with pytest.warns(RuntimeWarning, match="dense eigendecomposition"):
        vals, _ = smallest_eigh_shift_invert(diag, B, None, 5)
    np.testing.assert_allclose(vals, np.linalg.eigvalsh(np.diag(diag) + B @ B.T)[:5], rtol=1e-9)


def test_identity_m_refuses_apply_m():
    diag, B, _M, _G = _problem(50, 5, False, 10.0)
    with pytest.raises(ValueError, match="apply_m needs M"):
        smallest_eigh_shift_invert(diag, B, None, 2, apply_m=lambda Y: Y)
