"""Smallest eigenvectors of G = diag(g) + U K U^T with d >> rank(U), exploiting ties in g.

Used by SOGFS's W-step (Nie, Zhu & Li, AAAI 2016, Algorithm 1: the m smallest eigenvectors of
X^T L_S X + gamma Q, Q diagonal) and usable by any method whose d x d matrix is a diagonal plus a
rank-r (r <= n) term, m large.

Derivation (why ties, and only ties, make this cheap). Let the distinct values of g be delta_1 <
delta_2 < ..., with coordinate sets T_1, T_2, ..., and let Y_T (|T| x r_T) be an orthonormal basis of
the range of U_T = U[T, :], the rows of U on T. For a vector v supported on T with U_T^T v = 0,

    G v = delta_T v + U K (U^T v) = delta_T v,

so E_T = {v : supp v in T, U_T^T v = 0} is an *exact* eigenspace of G, of dimension |T| - r_T. Its
orthogonal complement, spanned by the block-diagonal basis Y = blockdiag(Y_T) (d x R,
R = sum_T r_T), is invariant too, and there

    Y^T G Y = blockdiag(delta_T I_{r_T}) + (Y^T U) K (Y^T U)^T        (R x R).

So the whole spectrum costs one R x R eigenproblem plus thin SVDs of the blocks U_T, O(d r^2 + R^3)
instead of O(d^3). R <= min(d, (number of distinct values) * r): the saving is large when g has
few distinct values -- e.g. Q = I, the start of SOGFS's Algorithm 1, where R = rank(U) <= n.
It is NOT a general shortcut: for a diagonal with distinct entries, the complement of range(U) is
not invariant (G v = diag(g) v is not parallel to v unless v is a coordinate vector with
U_i = 0), every T is a singleton, R = d and the problem is a dense d x d eigenproblem again. Then
this module falls back to dense LAPACK (:func:`dense_smallest_eigvecs`).

Degenerate cut. When the k-th and (k+1)-th eigenvalues fall in the same exact eigenspace E_T (in
SOGFS with d >> n and m around d/2 this happens at Q = I, because E has dimension >= d - n > m), any
t-dimensional subspace of E_T is an equally valid answer and LAPACK returns an arbitrary one. We
choose a deterministic, basis-free one: the orthonormalised projections onto E_T of the t
coordinate vectors e_i (i in T) with the smallest leverage ||Y_T[i]||^2 (ties broken by index),

    V = (E_S - Y_T C^T) (I - C C^T)^{-1/2},   C = Y_T[S, :],

which are as close to coordinate axes as E_T allows (rows outside S have norm <= leverage). The
Gram matrix I - C C^T is inverted through the thin SVD of C, O(|T| t r).

Round-off and ties (``tie_rtol``). E_T is not always the whole eigenspace of delta_T: the reduced
problem can have eigenvalues equal to delta_T too -- in SOGFS, the directions v in range(X^T)
with X v in null(L_S), one fewer than the components of the initial S (9 on orl: multiplicity
625 + 9 = 634, m = 512). Computed, those reduced eigenvalues land a few ulps above or below
delta_T, and comparing them exactly with delta_T made the cut depend on round-off: each one
below was taken whole (and ahead of the low-leverage coordinates), each one above was left out,
so a 4e-16 change in L_S moved SOGFS's scores by up to 0.96 (orl). Round-off cannot tell an
eigenvalue within a few ulps of delta_T from delta_T itself, and an eigenvector whose eigenvalue
gap is at round-off level is not determined by the data at all (its error is round-off / gap);
so the only round-off-independent reading of "tie" is a tolerance. A reduced eigenvalue mu_j
with |mu_j - delta_T| <= tie_rtol * scale (scale = max(|diag|, |mu|), about ||G||_2; default
1e-10, far above round-off ~1e-16 * ||G|| and far below any gap the objective can see) whose
eigenvector lives on T (mass outside T <= ``OUTSIDE_MASS``; always true with a single tied value,
and for the smallest tied value when K is PSD) is a direction of the tied eigenspace
D_T = E_T + span(N_T), N_T = those eigenvectors, and is reported with the value delta_T. The cut
inside D_T is the same rule as above with D_T for E_T: the orthonormalised projections onto D_T
of the lowest-leverage coordinate vectors, leverage now taken on the "far" basis F_T (range(Y_T)
minus span(N_T), the complement of D_T on T). The result is then a continuous function of the
data near such ties: perturbations of 1e-15 leave the subspace unchanged to ~1e-15 (tested, and
on orl: top-100 unchanged with data perturbed by 1e-14). The returned vectors are eigenvectors
of G up to tie_rtol * ||G||, i.e. an equally good minimiser of the trace to that accuracy.
``tie_rtol=0`` restores exact comparisons. Not covered: exact ties among reduced eigenvalues
away from every delta_T (not structural in SOGFS), and near-ties in the leverage order itself.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy import linalg as sla

from ufsbench.numerics.linalg import eigh_smallest, sym
from ufsbench.numerics.sparse_gram import sparse_dense_product

#: Dense subset eigh (MRRR) is used for at most this fraction of the spectrum; above it the full
#: divide-and-conquer eigh is faster (measured: d = 3312, k = d/2: 34 s versus 24 s on one core).
SUBSET_FRACTION = 0.125

#: A reduced eigenvector counts as living on the coordinates T of a tied value when its squared
#: norm outside T is at most this (exactly 0 with one tied value, e.g. SOGFS at Q = I).
OUTSIDE_MASS = 1e-12


def dense_smallest_eigvecs(G: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """k smallest eigenpairs (ascending) of a dense symmetric G; the reference O(d^3) path."""
    d = G.shape[0]
    if k <= SUBSET_FRACTION * d:
        return eigh_smallest(G, k)
    vals, vecs = sla.eigh(sym(G), driver="evd")
    return vals[:k], vecs[:, :k]


def _range_basis(A: np.ndarray, rtol: float) -> np.ndarray:
    """Orthonormal basis of the column space of A (thin SVD, numerical rank by ``rtol``)."""
    if A.size == 0:
        return np.zeros((A.shape[0], 0))
    P, s, _ = np.linalg.svd(A, full_matrices=False)
    if s.size == 0 or s[0] == 0.0:
        return np.zeros((A.shape[0], 0))
    return P[:, s > rtol * s[0] * max(A.shape)]


def _complement_basis(Y: np.ndarray, size: int) -> np.ndarray:
    """Orthonormal basis (size x (size - r)) of the orthogonal complement of range(Y)."""
    if Y.shape[1] == 0:
        return np.eye(size)
    Qfull, _ = sla.qr(Y, mode="full")
    return Qfull[:, Y.shape[1]:]


def _low_leverage_subspace(Y: np.ndarray, t: int) -> np.ndarray:
    """t orthonormal vectors of range(Y)^perp closest to the t lowest-leverage coordinate axes."""
    size, r = Y.shape
    leverage = np.einsum("ij,ij->i", Y, Y)
    chosen = np.lexsort((np.arange(size), leverage))[:t]
    C = Y[chosen]                                       # t x r
    V = -Y @ C.T                                        # size x t: E_S - Y C^T
    V[chosen, np.arange(t)] += 1.0
    if r == 0:
        return V
    A, s, _ = np.linalg.svd(C, full_matrices=False)     # C = A diag(s) B^T
    gram = 1.0 - s ** 2
    if np.any(gram <= 1e-10):                           # a direction of E_S lies in range(Y)
        return np.linalg.qr(V)[0]
    # (I - C C^T)^{-1/2} = I + A diag((1 - s^2)^{-1/2} - 1) A^T
    return V + (V @ A) * (gram ** -0.5 - 1.0) @ A.T


def _tied_clusters(mu: np.ndarray, lifted_Z: np.ndarray, values: np.ndarray,
                   groups: list[np.ndarray], tol: float) -> np.ndarray:
    """Cluster id (group index, or -1) of each reduced eigenvalue mu_j: the group T whose tied
    value delta_T is nearest, when |mu_j - delta_T| <= tol and the eigenvector lives on T.

    "Lives on T": its mass outside T is at most ``OUTSIDE_MASS`` (always 0 with one group). A
    reduced eigenvector that mixes groups is not a direction of E_T even if its value is close,
    so it keeps its own place in the spectrum.
    """
    owner = np.full(len(mu), -1)
    if len(mu) == 0 or len(values) == 0:
        return owner
    nearest = np.argmin(np.abs(mu[:, None] - values[None, :]), axis=1)
    close = np.abs(mu - values[nearest]) <= tol
    for j in np.flatnonzero(close):
        T = groups[nearest[j]]
        inside = float(np.dot(lifted_Z[T, j], lifted_Z[T, j]))
        if 1.0 - inside <= OUTSIDE_MASS:
            owner[j] = nearest[j]
    return owner


def _far_basis(Y: np.ndarray, N: np.ndarray) -> np.ndarray:
    """Orthonormal basis of range(Y) minus span(N), for N (orthonormal) inside range(Y).

    The tied eigenspace of delta_T is D = E_T + span(N) (E_T = range(Y_T)^perp on T); within the
    coordinates T its orthogonal complement is range(Y_T) without N: the "far" directions.
    """
    if N.shape[1] == 0:
        return Y
    coeffs, _ = np.linalg.qr(Y.T @ N)                 # r_T x p, orthonormal: N = Y coeffs
    return Y @ _complement_basis(coeffs, Y.shape[1])


def _congruence(A: np.ndarray, K) -> np.ndarray:
    """A K A^T; a scipy.sparse K (a sparse graph Laplacian) is applied to A^T, never formed
    densely (O(nnz(K) r) instead of an n x n array and O(n^2 r))."""
    if sp.issparse(K):
        return A @ sparse_dense_product(K, A.T)
    return A @ K @ A.T


def smallest_eigvecs_tied_diag_plus_lowrank(
        diag: np.ndarray, U: np.ndarray, K: np.ndarray, k: int, rtol: float = 1e-12,
        max_reduced_fraction: float = 0.5,
        tie_rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray, str]:
    """k smallest eigenpairs of G = diag(diag) + U K U^T (K symmetric PSD, dense or
    scipy.sparse), exactly.

    Returns (values ascending, vectors d x k, path) with path "tied" when the reduction of the
    module docstring was used, "dense" when the reduced size R exceeds ``max_reduced_fraction * d``
    (few ties: no saving) and G was formed and eigendecomposed densely. Ties in ``diag`` are exact
    equalities (the case that arises, e.g. a diagonal initialised to a constant). A reduced
    eigenvalue within ``tie_rtol * scale`` (scale = max(|diag|, |reduced eigenvalues|) ~ ||G||_2)
    of a tied value delta_T, with its eigenvector on T, belongs to the tied eigenspace of delta_T
    and is reported as delta_T (see "Round-off and ties" in the module docstring); ``tie_rtol=0``
    restores exact comparisons.
    """
    diag = np.asarray(diag, dtype=float)
    d = diag.shape[0]
    if not 1 <= k <= d:
        raise ValueError(f"k={k} eigenvectors needs 1 <= k <= d={d}")
    K = sym(K) if sp.issparse(K) else sym(np.asarray(K, dtype=float))
    values, inverse = np.unique(diag, return_inverse=True)
    groups = [np.flatnonzero(inverse == g) for g in range(len(values))]
    if len(groups) * min(U.shape[1], d) > max_reduced_fraction * d and len(groups) > 1:
        # Cheap upper bound on R already too large: do not even compute the block SVDs.
        G = np.diag(diag) + _congruence(U, K)
        vals, vecs = dense_smallest_eigvecs(G, k)
        return vals, vecs, "dense"
    bases = [_range_basis(U[T], rtol) for T in groups]
    R = sum(Y.shape[1] for Y in bases)
    if max_reduced_fraction * d < R:
        G = np.diag(diag) + _congruence(U, K)
        vals, vecs = dense_smallest_eigvecs(G, k)
        return vals, vecs, "dense"
    # Reduced problem on the invariant subspace spanned by blockdiag(Y_T).
    YtU = np.vstack([Y.T @ U[T] for T, Y in zip(groups, bases)])          # R x r
    red_diag = np.concatenate([np.full(Y.shape[1], v) for v, Y in zip(values, bases)])
    if R:
        mu, Z = np.linalg.eigh(sym(np.diag(red_diag) + _congruence(YtU, K)))
    else:
        mu, Z = np.zeros(0), np.zeros((0, 0))
    lifted = np.zeros((d, R))                          # the reduced eigenvectors in R^d
    start = 0
    for T, Y in zip(groups, bases):
        lifted[T, start:start + Y.shape[1]] = Y
        start += Y.shape[1]
    lifted = lifted @ Z
    # Tied eigenspaces D_T = E_T (dimension |T| - r_T) + the reduced eigenvectors tied to delta_T.
    scale = max(float(np.abs(values).max()), float(np.abs(mu).max()) if R else 0.0)
    owner = _tied_clusters(mu, lifted, values, groups, tie_rtol * scale)
    near = [np.flatnonzero(owner == g) for g in range(len(groups))]
    mult = np.array([len(T) - Y.shape[1] + len(J) for T, Y, J in zip(groups, bases, near)])
    free = np.flatnonzero(owner < 0)                   # reduced eigenpairs on their own
    all_vals = np.concatenate([values[mult > 0], mu[free]])
    sources = np.concatenate([np.flatnonzero(mult > 0), -1 - free])   # >=0: group id
    counts = np.concatenate([mult[mult > 0], np.ones(len(free), dtype=int)])
    order = np.lexsort((np.arange(len(all_vals)), all_vals))    # tied eigenspaces first on ties
    out_vals, out_vecs, remaining = [], [], k
    for idx in order:
        if remaining == 0:
            break
        take = min(int(counts[idx]), remaining)
        src = int(sources[idx])
        if src >= 0:                                   # (part of) the tied eigenspace D_T
            T, Y, J = groups[src], bases[src], near[src]
            if take == counts[idx]:
                V = np.zeros((d, take - len(J)))
                V[T] = _complement_basis(Y, len(T))
                V = np.hstack([V, lifted[:, J]])
            else:
                V = np.zeros((d, take))
                V[T] = _low_leverage_subspace(_far_basis(Y, lifted[T][:, J]), take)
            out_vals.append(np.full(take, values[src]))
        else:                                          # a reduced eigenvector, mapped back
            V = lifted[:, [-1 - src]]
            out_vals.append(np.array([mu[-1 - src]]))
        out_vecs.append(V)
        remaining -= take
    return np.concatenate(out_vals), np.hstack(out_vecs), "tied"
