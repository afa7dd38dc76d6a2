"""canonical_eigenbasis: a multiple eigenvalue's basis that depends on the eigenspace alone."""

import numpy as np
import pytest
from scipy.stats import ortho_group

from ufsbench.numerics.linalg import canonical_eigenbasis, degenerate_clusters, eigh_largest


def _matrix_with_triple_eigenvalue(n=12, seed=0):
    values = np.array([5.0, 3.0, 3.0, 3.0, 2.0, 1.5, 1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125])[:n]
    Q = ortho_group.rvs(n, random_state=seed)
    return Q @ np.diag(values) @ Q.T


def test_clusters_are_runs_within_tolerance():
    values = np.array([1.0, 0.5, 0.5 + 1e-12, 0.5 + 2e-12, 0.2, 0.0, 1e-15])
    assert [run.tolist() for run in degenerate_clusters(values)] == [[1, 2, 3], [5, 6]]
    assert degenerate_clusters(np.array([3.0, 2.0, 1.0])) == []


def test_basis_depends_only_on_the_eigenspace():
    A = _matrix_with_triple_eigenvalue()
    values, vectors = eigh_largest(A, 6)
    rotated = vectors.copy()
    rotated[:, 1:4] = vectors[:, 1:4] @ ortho_group.rvs(3, random_state=1)
    assert not np.allclose(rotated, vectors, atol=1e-3)           # the solver's choice matters
    canon = canonical_eigenbasis(values, vectors)
    np.testing.assert_allclose(canonical_eigenbasis(values, rotated), canon, atol=1e-12)
    # still orthonormal eigenvectors; simple eigenvalues' columns untouched, bit for bit
    np.testing.assert_allclose(canon.T @ canon, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(A @ canon, canon * values, atol=1e-12)
    assert np.array_equal(canon[:, [0, 4, 5]], vectors[:, [0, 4, 5]])


def test_simple_spectrum_is_returned_as_is():
    values, vectors = eigh_largest(np.diag([4.0, 3.0, 2.0, 1.0]), 3)
    assert canonical_eigenbasis(values, vectors) is vectors


def test_sign_of_the_solver_basis_does_not_matter():
    # Simple eigenvalues keep the solver's sign (callers fix it); a cluster's comes from the probe.
    values, vectors = eigh_largest(_matrix_with_triple_eigenvalue(), 4)
    np.testing.assert_allclose(canonical_eigenbasis(values, -vectors)[:, 1:4],
                               canonical_eigenbasis(values, vectors)[:, 1:4], atol=1e-12)


# -- a cut through a Laplacian's null space (SOGFS's F-step on an S with > c components) --------
def _components_laplacian(sizes, seed=0):
    """Laplacian of a graph made of complete components with random positive weights."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    W = np.zeros((n, n))
    start = 0
    for size in sizes:
        block = rng.uniform(0.5, 1.5, (size, size))
        W[start:start + size, start:start + size] = (block + block.T) / 2
        start += size
    np.fill_diagonal(W, 0.0)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    return np.diag(W.sum(axis=1)) - W, labels


def test_null_space_part_is_orthonormal_in_the_null_space_and_basis_free():
    from ufsbench.numerics.laplacian_eig import canonical_null_space_vectors
    L, labels = _components_laplacian([5, 7, 4, 6, 8, 5])
    F = canonical_null_space_vectors(labels, 3)
    assert F.shape == (labels.size, 3)
    np.testing.assert_allclose(F.T @ F, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(L @ F, 0.0, atol=1e-12)
    # Renumbering the components is the same null space: the same vectors.
    renumbered = np.array([4, 2, 5, 0, 1, 3])[labels]
    np.testing.assert_allclose(canonical_null_space_vectors(renumbered, 3), F, atol=1e-12)
    # What an eigensolver returns (any rotation of the null space) leads to the same part.
    vals, U = np.linalg.eigh(L)
    null = U[:, :6] @ ortho_group.rvs(6, random_state=1)
    np.testing.assert_allclose(canonical_eigenbasis(np.zeros(6), null)[:, :3], F, atol=1e-10)
    with pytest.raises(ValueError, match="between 1 and the 6 components"):
        canonical_null_space_vectors(labels, 7)
