"""Round-off and ties in ``smallest_eigvecs_tied_diag_plus_lowrank`` (ufsbench.numerics.diag_lowrank).

The case of SOGFS's first W-step with d > n: G = gamma I + X^T L X, X of rank < n, a graph with
several components whose indicators lie in range(X). gamma is then an eigenvalue of G of
multiplicity d - rank(X) (exact, E) + (number of components) (found by the reduced eigenproblem,
a few ulps off gamma), and the cut k = d/2 falls inside it.
"""

import numpy as np
import pytest

from ufsbench.numerics import laplacian, sym
from ufsbench.numerics.diag_lowrank import smallest_eigvecs_tied_diag_plus_lowrank as tied_eigvecs


def _degenerate_problem(seed, n=40, d=120, c=4, r=20):
    """(X of rank c + r < n whose range holds the c component indicators, within-component S)."""
    rng = np.random.default_rng(seed)
    comp = np.repeat(np.arange(c), n // c)
    H = np.eye(c)[comp]
    X = H @ rng.normal(size=(c, d)) + rng.normal(size=(n, r)) @ rng.normal(size=(r, d))
    S = rng.uniform(size=(n, n)) * (comp[:, None] == comp[None, :])
    np.fill_diagonal(S, 0.0)
    return X, S / S.sum(axis=1, keepdims=True), rng


def _perturbed(A, rng, rel=1e-15):
    return A * (1.0 + rel * rng.standard_normal(A.shape))


def _top(V, m):
    return set(np.argsort(-np.linalg.norm(V, axis=1), kind="stable")[:m])


def _jaccard(a, b):
    return len(a & b) / len(a | b)


def _reference_cut(G, k, tol):
    """Independent dense reference of the rule: D = span of G's eigenvectors whose eigenvalues lie
    within ``tol`` of the k-th; below D all eigenvectors; inside D the projections P_D e_i of the
    coordinates with the largest ||P_D e_i|| (ties by index). Returns the projector onto the span."""
    vals, vecs = np.linalg.eigh(G)
    in_D = np.abs(vals - vals[k - 1]) <= tol
    below = vecs[:, (vals < vals[k - 1]) & ~in_D]
    P_D = vecs[:, in_D] @ vecs[:, in_D].T
    t = k - below.shape[1]
    chosen = np.lexsort((np.arange(G.shape[0]), -np.round(np.diag(P_D), 12)))[:t]
    basis = np.linalg.qr(np.hstack([below, P_D[:, chosen]]))[0]
    return basis @ basis.T


@pytest.mark.parametrize("seed", range(4))
def test_degenerate_cut_unchanged_by_round_off_in_the_graph(seed):
    """Perturbing L by 1e-15 (relative, within the components) leaves the selection (Jaccard 1)
    and the subspace unchanged; before the tie tolerance the top-m set moved in most seeds."""
    X, S, rng = _degenerate_problem(seed)
    d = X.shape[1]
    m = d // 2
    V0 = tied_eigvecs(np.ones(d), X.T, laplacian(sym(S)), m)[1]
    for _ in range(4):
        V1 = tied_eigvecs(np.ones(d), X.T, laplacian(sym(_perturbed(S, rng))), m)[1]
        assert _jaccard(_top(V0, m), _top(V1, m)) == 1.0
        np.testing.assert_allclose(V1 @ V1.T, V0 @ V0.T, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_degenerate_cut_unchanged_by_round_off_in_the_data(seed):
    X, S, rng = _degenerate_problem(seed)
    d = X.shape[1]
    L = laplacian(sym(S))
    m = d // 2
    V0 = tied_eigvecs(np.ones(d), X.T, L, m)[1]
    for _ in range(4):
        V1 = tied_eigvecs(np.ones(d), _perturbed(X, rng).T, L, m)[1]
        assert _jaccard(_top(V0, m), _top(V1, m)) == 1.0
        np.testing.assert_allclose(V1 @ V1.T, V0 @ V0.T, atol=1e-10)


def test_exact_comparisons_are_round_off_sensitive():
    """tie_rtol=0 (exact ties only, the former rule) flips the cut under a 1e-15 perturbation:
    the tolerance, not the test data, is what makes the tests above pass."""
    X, S, rng = _degenerate_problem(0)
    d = X.shape[1]
    m = d // 2
    V0 = tied_eigvecs(np.ones(d), X.T, laplacian(sym(S)), m, tie_rtol=0.0)[1]
    moved = [_jaccard(_top(V0, m), _top(tied_eigvecs(
        np.ones(d), X.T, laplacian(sym(_perturbed(S, rng))), m, tie_rtol=0.0)[1], m)) < 1.0
        for _ in range(8)]
    assert any(moved)


@pytest.mark.parametrize("seed", range(3))
def test_tied_cut_is_an_eigenbasis_and_matches_the_dense_reference_rule(seed):
    """The subspace returned is made of eigenvectors of G (residual at round-off level), its values
    are the k smallest, and it equals the dense reference of the rule (whole eigenspace of
    gamma, tolerance-tied, cut along the lowest-leverage coordinates)."""
    X, S, _ = _degenerate_problem(seed)
    d = X.shape[1]
    L = laplacian(sym(S))
    G = 0.7 * np.eye(d) + X.T @ L @ X
    scale = np.linalg.norm(G, 2)
    for m in (d // 2, 100, 101, 110):          # inside E + N (dim 100), at its end, beyond it
        vals, V, path = tied_eigvecs(np.full(d, 0.7), X.T, L, m)
        assert path == "tied"
        np.testing.assert_allclose(V.T @ V, np.eye(m), atol=1e-10)
        np.testing.assert_allclose(G @ V, V * vals, atol=1e-10 * scale)
        np.testing.assert_allclose(vals, np.linalg.eigvalsh(G)[:m], atol=1e-10 * scale)
        np.testing.assert_allclose(V @ V.T, _reference_cut(G, m, 1e-10 * scale), atol=1e-8)


def test_two_tied_values_cut_inside_the_lower_one():
    """Two distinct diagonal values: the tie tolerance merges the reduced null directions on the
    lower group's coordinates with its exact eigenspace, and the cut follows the reference rule."""
    X, S, rng = _degenerate_problem(1, d=150)
    d = X.shape[1]
    diag = np.where(np.arange(d) < 110, 0.5, 2.0)
    L = laplacian(sym(S))
    G = np.diag(diag) + X.T @ L @ X
    scale = np.linalg.norm(G, 2)
    # lower group: |T| = 110, rank 24 -> E of dim 86, plus the 4 component directions on T
    vals, V, path = tied_eigvecs(diag, X.T, L, 60, max_reduced_fraction=1.0)
    assert path == "tied"
    np.testing.assert_allclose(vals, 0.5)
    np.testing.assert_allclose(G @ V, 0.5 * V, atol=1e-10 * scale)
    assert np.all(V[110:] == 0.0)
    np.testing.assert_allclose(V @ V.T, _reference_cut(G, 60, 1e-10 * scale), atol=1e-8)
    V1 = tied_eigvecs(diag, X.T, laplacian(sym(_perturbed(S, rng))), 60,
                      max_reduced_fraction=1.0)[1]
    np.testing.assert_allclose(V1 @ V1.T, V @ V.T, atol=1e-10)


def test_reduced_values_outside_the_tolerance_are_not_merged():
    """A reduced eigenvalue 1.7e-8 (relative to ||G||) above the tied value 1 is a distinct
    eigenvalue for the default tie_rtol: a cut inside E = null(U^T) stays in E. Merged (tie_rtol
    above that gap) the cut would take part of its eigenvector."""
    rng = np.random.default_rng(5)
    d, n, k = 60, 6, 30
    U = np.linalg.qr(rng.normal(size=(d, n)))[0]
    K = np.diag([1e-7, 1.0, 2.0, 3.0, 4.0, 5.0])          # ||G|| = 6, gap 1e-7
    vals, V, _ = tied_eigvecs(np.ones(d), U, K, k)
    np.testing.assert_array_equal(vals, 1.0)
    assert np.abs(U.T @ V).max() < 1e-12
    merged = tied_eigvecs(np.ones(d), U, K, k, tie_rtol=1e-7)[1]
    assert np.abs(U.T @ merged).max() > 0.1
