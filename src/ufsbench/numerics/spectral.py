"""Spectral embeddings and spectral-clustering starts shared by the graph-based baselines.

* :func:`generalized_spectral_embedding`: the bottom non-trivial solutions of L y = lambda D y,
  normalised so that Y^T D Y = I (MCFS's first stage; Deng Cai's ``Eigenmap.m`` computes the same
  vectors as D^{-1/2} times the top eigenvectors of D^{-1/2} S D^{-1/2}).
* :func:`spectral_soft_indicator`: the start of the non-negative spectral methods (NDFS, RSFS):
  spectral clustering on a Laplacian, turned into a strictly positive scaled indicator;
  :func:`unit_columns` and :func:`orthogonality_penalty` for their relaxed F^T F = I.
* :func:`spectral_clustering_labels` and :func:`kmeans_from_sample_starts`: spectral clustering
  whose K-means starts are given as sample indices (a recorded run of an authors' code), with the
  restart rule of Deng Cai's ``litekmeans.m``.

Import by module path; nothing is exported from ``ufsbench.numerics``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ufsbench.numerics.indicators import kmeans_scaled_indicator
from ufsbench.numerics.linalg import (
    DEGENERATE_TOL,
    canonical_eigenbasis,
    eigh_largest,
    eigh_smallest,
    seeded_eigsh,
)
from ufsbench.numerics.litekmeans import litekmeans

#: Relative accuracy of the Lanczos eigenpairs on the sparse (large-n) path.
SPARSE_EIG_TOL = 1e-10


def sparse_eigh(A, k: int, which: str, deflate: np.ndarray | None = None):
    """k extreme eigenpairs of a sparse symmetric A by Lanczos (ARPACK), for large n.

    ``which``: "LA" (largest, returned descending) or "SA" (smallest, ascending). ``deflate``: a
    unit vector u, eigenvector of A, whose eigenvalue is moved to 0 (A - (u^T A u) u u^T; used
    for the trivial eigenvector of a normalised affinity).

    Single-vector Lanczos finds one vector per multiple eigenvalue, and a graph with several
    connected components has multiple eigenvalues by construction (one trivial vector each). So
    the graph of A is split into its components, each (connected, so generically simple
    spectrum) gets its k (+1 when deflating) extreme eigenpairs -- dense eigh for small ones,
    Lanczos from a fixed start vector otherwise -- and a Rayleigh-Ritz step on the union (an
    invariant subspace of A and of the deflated A) picks the k extreme pairs. Deterministic.
    """
    A = sp.csr_matrix(A, dtype=float)
    n = A.shape[0]
    m = k + (deflate is not None)
    count, labels = connected_components(A, directed=False)
    columns, values = [], []
    for comp in range(count):
        idx = np.flatnonzero(labels == comp)
        vals, vecs = _extreme_eigh(A[idx][:, idx], min(m, len(idx)), which)
        columns.append(sp.csr_matrix((vecs.ravel(), (np.repeat(idx, vecs.shape[1]),
                                                     np.tile(np.arange(vecs.shape[1]),
                                                             len(idx)))),
                                     shape=(n, vecs.shape[1])))
        values.append(vals)
    Q = sp.hstack(columns).tocsc()                       # orthonormal: disjoint supports
    vals = np.concatenate(values)
    B = np.diag(vals)                                    # Q^T A Q
    if deflate is not None:
        w = Q.T @ deflate
        B -= float(deflate @ (A @ deflate)) * np.outer(w, w)
    theta, Z = np.linalg.eigh(0.5 * (B + B.T))
    order = np.argsort(-theta if which == "LA" else theta, kind="stable")[:k]
    return theta[order], np.asarray(Q @ Z[:, order])


def _extreme_eigh(A, k: int, which: str):
    """k extreme eigenpairs of a connected sparse block: dense eigh if small, else Lanczos."""
    n = A.shape[0]
    if n <= max(4 * k + 20, 200):
        vals, vecs = np.linalg.eigh(A.toarray())
        pick = np.arange(n - k, n) if which == "LA" else np.arange(k)
        return vals[pick], vecs[:, pick]
    start = np.random.RandomState(0).uniform(0.5, 1.5, n)
    return seeded_eigsh(A, k=k, which=which, v0=start, tol=SPARSE_EIG_TOL,
                        ncv=min(n, max(2 * k + 1, 4 * k + 20)), maxiter=100 * n)


def generalized_spectral_embedding(S: np.ndarray, n_components: int,
                                   drop_trivial: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Y (n, n_components) and lambda: the smallest solutions of (D - S) y = lambda D y.

    Computed as Y = D^{-1/2} U with U the top eigenvectors of the normalised affinity
    D^{-1/2} S D^{-1/2} (eigenvalue mu = 1 - lambda), so that Y^T D Y = I. With
    ``drop_trivial`` the trivial solution (y constant, lambda = 0) is removed by deflation, so
    Y^T D 1 = 0 also on a disconnected graph (Cai's code drops "the first" eigenvector, the same
    thing on a connected graph). Zero-degree samples (isolated by an underflowing kernel) get
    D^{-1/2} = 0 and a zero row in Y.

    A graph with C connected components has lambda = 0 C times; the basis the eigensolver picks
    for it (and for any other multiple eigenvalue) is replaced by a canonical one
    (:func:`canonical_eigenbasis`), so that Y does not depend on the CPU's BLAS kernel or the
    thread count. When the multiple eigenvalue has more dimensions than are asked for, which of
    them are returned is arbitrary; a warning says so.
    """
    n = S.shape[0]
    if not 1 <= n_components <= n - int(drop_trivial):
        raise ValueError(f"cannot take {n_components} eigenvectors (+{int(drop_trivial)} trivial) "
                         f"of a graph on {n} samples")
    _warn_if_null_space_cut(S, n_components + int(drop_trivial))
    degree = np.asarray(S.sum(axis=1), dtype=float).ravel()
    inv_sqrt = np.zeros_like(degree)
    positive = degree > 0
    inv_sqrt[positive] = 1.0 / np.sqrt(degree[positive])
    if sp.issparse(S):
        scale = sp.diags(inv_sqrt)
        u0 = np.sqrt(degree) / np.sqrt(degree.sum()) if drop_trivial else None
        mu, U = sparse_eigh(scale @ S @ scale, n_components, "LA", deflate=u0)
        return _sign_fixed(inv_sqrt[:, None] * canonical_eigenbasis(mu, U)), 1.0 - mu
    N = inv_sqrt[:, None] * S * inv_sqrt[None, :]
    if drop_trivial:
        # Deflate the trivial eigenvector u0 = D^{1/2} 1 (eigenvalue 1 of N) explicitly instead of
        # dropping "the first" one: on a disconnected graph eigenvalue 1 is multiple and the first
        # returned vector is an arbitrary member of that eigenspace. After deflation u0 has
        # eigenvalue 0 and every returned y satisfies y^T D 1 = 0 exactly.
        u0 = np.sqrt(degree) / np.sqrt(degree.sum())
        N = N - np.outer(u0, u0)
    mu, U = eigh_largest(N, n_components)
    return _sign_fixed(inv_sqrt[:, None] * canonical_eigenbasis(mu, U)), 1.0 - mu


def _warn_if_null_space_cut(S, n_vectors: int) -> None:
    """Warn when the graph's components outnumber the eigenvectors computed (trivial included)."""
    count, _ = connected_components(sp.csr_matrix(S), directed=False)
    if count > n_vectors:
        warnings.warn(f"the graph has {count} connected components, so lambda = 0 has "
                      f"{count} dimensions and the {n_vectors} eigenvectors computed are an "
                      "arbitrary part of them; use more neighbours (k) or more eigenvectors",
                      RuntimeWarning, stacklevel=3)


def _sign_fixed(Y: np.ndarray) -> np.ndarray:
    """Every column's sign fixed (largest-magnitude entry positive), for determinism."""
    signs = np.sign(Y[np.argmax(np.abs(Y), axis=0), np.arange(Y.shape[1])])
    signs[signs == 0] = 1.0
    return Y * signs


def spectral_soft_indicator(L: np.ndarray, n_clusters: int, random_state=None,
                            offset: float = 0.2, n_init: int = 10,
                            starts=None) -> tuple[np.ndarray, np.ndarray]:
    """Strictly positive start F0 (n, c) with unit-norm columns, and the labels it came from.

    Spectral clustering: the c eigenvectors of the smallest eigenvalues of L, rows scaled to unit
    norm, then ``kmeans_scaled_indicator`` (K-means with ``n_init`` restarts seeded from
    ``random_state``; the scaled indicator Y (Y^T Y)^{-1/2}, entries 1/sqrt(n_j), plus ``offset``
    times its mean non-zero entry, columns rescaled to unit norm).

    The offset is the remedy for the frozen-zero property of multiplicative updates: a hard 0/1
    start (offset=0) keeps every zero entry at zero, so the memberships never change. Empty
    clusters cannot occur (K-means labels index non-empty clusters only). A ``scipy.sparse`` L
    (large n) gets its eigenvectors by Lanczos (:func:`sparse_eigh`). ``starts`` (r x c sample
    indices): the labels come from :func:`spectral_clustering_labels` with those K-means starts
    instead (``random_state`` and ``n_init`` are then unused).
    """
    if starts is not None:
        labels = spectral_clustering_labels(L, n_clusters, starts)
        return scaled_indicator(labels, n_clusters, offset), labels
    if sp.issparse(L):
        _, V = sparse_eigh(L, n_clusters, "SA")
    else:
        _, V = eigh_smallest(L, n_clusters)
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return kmeans_scaled_indicator(V / norms, n_clusters, random_state, n_init=n_init,
                                   offset=offset)


def unit_columns(F: np.ndarray) -> np.ndarray:
    """F with every non-zero column scaled to unit l2 norm."""
    norms = np.linalg.norm(F, axis=0)
    norms[norms == 0] = 1.0
    return F / norms


def orthogonality_penalty(F: np.ndarray) -> float:
    """||F^T F - I||_F^2."""
    E = F.T @ F - np.eye(F.shape[1])
    return float(np.sum(E * E))


def scaled_indicator(labels: np.ndarray, n_clusters: int, offset: float = 0.0) -> np.ndarray:
    """Y_ij = [l_i = j] / sqrt(n_j) (orthonormal columns), plus ``offset`` times its mean non-zero
    entry and columns rescaled to unit norm when ``offset > 0`` (as ``kmeans_scaled_indicator``)."""
    Y = np.zeros((labels.size, n_clusters))
    Y[np.arange(labels.size), labels] = 1.0
    sizes = Y.sum(axis=0)
    Y[:, sizes > 0] /= np.sqrt(sizes[sizes > 0])
    if offset > 0:
        Y += offset * Y[Y > 0].mean()
        Y /= np.linalg.norm(Y, axis=0)
    return Y


def bottom_eigvecs_canonical(L, c: int) -> np.ndarray:
    """The c eigenvectors of the smallest eigenvalues of a symmetric L (dense or sparse), with the
    basis of every multiple eigenvalue made canonical (:func:`canonical_eigenbasis`).

    Where the c-th eigenvalue is multiple and its eigenspace reaches beyond c (a graph with more
    connected components than c: lambda = 0 repeated), which c vectors an eigensolver returns is
    decided by round-off; here the whole eigenspace is computed and its canonical basis cut, so
    the result is a function of L alone and moves by round-off only between BLAS builds.
    """
    n = L.shape[0]
    m = min(n, c + 1)
    while True:
        if sp.issparse(L):
            vals, V = sparse_eigh(L, m, "SA")
        else:
            vals, V = eigh_smallest(L, m)
        if m == n or vals[-1] - vals[c - 1] > DEGENERATE_TOL:
            break
        m = min(n, 2 * m)
    return canonical_eigenbasis(vals, V)[:, :c]


def spectral_clustering_labels(L, c: int, starts, max_iter: int = 1000) -> np.ndarray:
    """Normalised spectral clustering (Ng, Jordan & Weiss) with given K-means starts: the c
    bottom eigenvectors of L (:func:`bottom_eigvecs_canonical`), rows scaled to unit norm, then
    :func:`kmeans_from_sample_starts`. The result does not depend on the eigenvectors' signs or
    on the basis of a multiple eigenvalue inside the c (K-means distances are invariant under an
    orthogonal change of basis and the starts are sample indices)."""
    V = bottom_eigvecs_canonical(L, c)
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return kmeans_from_sample_starts(V / norms, starts, max_iter=max_iter)


def kmeans_from_sample_starts(Y: np.ndarray, starts, max_iter: int = 1000) -> np.ndarray:
    """K-means labels (0-based) of the rows of Y from given starts: ``starts`` (r x k) holds, per
    restart, the sample indices whose rows are the initial centres.

    The rule of Deng Cai's ``litekmeans.m`` (AutoUFSTool runs MATLAB's ``kmeans`` through it under
    Octave, and records the starts it draws): :func:`ufsbench.numerics.litekmeans.litekmeans`
    with at most ``max_iter`` Lloyd passes per restart.
    """
    starts = np.atleast_2d(np.asarray(starts, dtype=np.intp))
    return litekmeans(Y, starts.shape[1], starts, max_iter=max_iter)[0]
