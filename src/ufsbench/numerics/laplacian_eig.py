"""The c smallest eigenpairs of a sparse graph Laplacian, by shift-invert Lanczos.

Used by SOGFS's F-step (Nie, Zhu & Li, AAAI 2016, problem (14): F = the c smallest eigenvectors of
L_S) and usable by every adaptive-graph method whose S has about k non-zeros per row. A dense
subset ``eigh`` of the n x n Laplacian costs O(n^3) (tridiagonalisation) whatever the sparsity;
here L - sigma I (sigma < 0, so positive definite) is factorised once by sparse LU and ARPACK
iterates with its inverse, whose largest eigenvalues 1 / (lambda - sigma) are the wanted ones and
are well separated from the rest. The tolerance is machine precision (``tol=0``), so the result
is the dense one up to round-off. When the zero eigenvalue is cut (S has more than c components,
so more than c zero eigenvalues) every solver returns some c-dimensional part of the null space
chosen by round-off; :func:`canonical_null_space_vectors` gives one chosen by the components alone.

Determinism: ARPACK's default start vector is random; here it is a fixed function of the input
(the previous eigenvectors, a warm start, plus a seeded generic vector so that the Krylov space is
not trapped in an invariant subspace such as the constant vector of a Laplacian), and the
random vectors ARPACK asks for on a restart come from a fixed seed (``seeded_eigsh``).
Import by module path.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ufsbench.numerics.linalg import canonical_eigenbasis, eigh_smallest, seeded_eigsh

#: Below this many samples a dense subset eigh is faster than factorising and iterating
#: (measured, one core: n = 600, c = 20: 0.058 s dense vs 0.049 s; n = 400, c = 40: 0.026 vs 0.075).
DENSE_BELOW = 600


def _start_vector(n: int, warm: np.ndarray | None) -> np.ndarray:
    generic = np.random.default_rng(0).standard_normal(n)
    if warm is None:
        return generic
    warm = np.asarray(warm, dtype=float).reshape(n, -1).sum(axis=1)
    scale = np.linalg.norm(warm)
    return generic / np.sqrt(n) + (warm / scale if scale > 0 else 0.0)


def laplacian_smallest_eigvecs(L, c: int, warm: np.ndarray | None = None,
                               dense_below: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """c smallest eigenpairs (ascending) of a symmetric PSD Laplacian L (sparse or dense).

    ``warm``: the previous iteration's eigenvectors (n x c), used as ARPACK's start vector.
    ``dense_below``: None = ``DENSE_BELOW`` (read at call time).
    """
    n = L.shape[0]
    dense_below = DENSE_BELOW if dense_below is None else dense_below
    if n <= dense_below or c >= n - 1:
        dense = L.toarray() if sp.issparse(L) else np.asarray(L)
        return eigh_smallest(dense, c)
    L = sp.csc_matrix(L)
    scale = max(float(np.abs(L.diagonal()).max()), 1e-300)
    sigma = -1e-3 * scale
    vals, vecs = seeded_eigsh(L, k=c, sigma=sigma, which="LM", v0=_start_vector(n, warm),
                              tol=0.0)
    order = np.argsort(vals, kind="stable")
    return vals[order], vecs[:, order]


def canonical_null_space_vectors(labels: np.ndarray, c: int) -> np.ndarray:
    """c orthonormal vectors (n x c) of the null space of a graph Laplacian whose graph has
    ``labels`` as its connected components (more than c of them), a function of those components
    alone: the null space is spanned by the normalised component indicators exactly, and the part
    kept is the first c columns of :func:`ufsbench.numerics.linalg.canonical_eigenbasis` of it
    (QR of its projector times a fixed probe). Renumbering the components changes nothing; an
    eigensolver's c vectors there would be a part picked by round-off (the CPU's BLAS kernel).
    """
    labels = np.asarray(labels)
    n_comp = int(labels.max()) + 1
    if not 1 <= c <= n_comp:
        raise ValueError(f"c={c} must be between 1 and the {n_comp} components")
    indicators = np.zeros((labels.size, n_comp))
    indicators[np.arange(labels.size), labels] = 1.0
    indicators /= np.sqrt(indicators.sum(axis=0))
    return canonical_eigenbasis(np.zeros(n_comp), indicators)[:, :c]
