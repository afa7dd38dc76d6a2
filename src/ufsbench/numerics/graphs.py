"""Sample graphs shared by the graph-based selectors: kNN graphs, heat kernels, Laplacians.

All functions take X with samples as rows (n_samples, n_features). ``knn_graph`` and
``laplacian`` return dense (n, n) arrays for dense input (the form the small-n methods use).

Large n (USPS: 9298 x 256) needs neither an n x n distance matrix nor a dense graph: from
``SPARSE_MIN_SAMPLES`` samples on, :func:`nearest_neighbors` finds each sample's k nearest
neighbours block by block (:func:`knn_search`, O(block x n) memory, the same neighbours and
distances as the dense path up to round-off, ties broken by index in both), and
:func:`sparse_knn_graph` returns the kNN affinity as a ``scipy.sparse`` CSR matrix with the same
entries as :func:`knn_graph`. ``laplacian`` keeps sparse input sparse.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist, pdist, squareform

from ufsbench.numerics.linalg import sym

#: Below this many features direct differences (pdist, cdist) are exact and fast enough; above
#: it the Gram form wins.
GRAM_FORM_MIN_FEATURES = 512
#: From this many samples on, neighbours come from the blockwise search and graphs are sparse
#: (an n x n float64 matrix would be >= 72 MB, and its full argsort dominates the fit).
SPARSE_MIN_SAMPLES = 3000
#: Entries of one block of approximate distances in :func:`knn_search` (8 MB of float64).
KNN_BLOCK_CELLS = 1 << 20


def squared_distances(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances between the rows of X (and Y), clipped at 0.

    From ``GRAM_FORM_MIN_FEATURES`` features on, the Gram form ||x||^2 + ||y||^2 - 2 x.y: one
    BLAS matrix product, 3-10x faster than ``scipy.spatial.distance.cdist`` at d = 1000-10000
    (cdist loops without BLAS).
    Its round-off (relative 1e-13 of the squared norms) is removed where it matters: the
    distances of a sample to itself are exactly 0. Rows far from the origin relative to their
    spread lose precision in this form, so such data is centred first (distances are
    translation invariant).
    """
    X = np.asarray(X, dtype=float)
    if X.shape[1] < GRAM_FORM_MIN_FEATURES:
        # Few features: direct differences are exact and already fast. Between the rows of X
        # alone, pdist computes each pair once by the same loop as cdist (the same bits, in
        # half the time).
        D = cdist(X, Y, metric="sqeuclidean") if Y is not None else squareform(
            pdist(X, metric="sqeuclidean"))
        return np.maximum(D, 0.0, out=D)
    same = Y is None
    Y = X if same else np.asarray(Y, dtype=float)
    centre = X.mean(axis=0) if same else np.vstack([X, Y]).mean(axis=0)
    Xc, Yc = X - centre, (X - centre if same else Y - centre)
    xx = np.einsum("ij,ij->i", Xc, Xc)
    yy = xx if same else np.einsum("ij,ij->i", Yc, Yc)
    D = Xc @ Yc.T
    D *= -2.0
    D += xx[:, None]
    D += yy[None, :]
    np.maximum(D, 0.0, out=D)
    if same:
        np.fill_diagonal(D, 0.0)
        D = sym(D)  # exact symmetry, so kNN ties break the same way from both ends
    return D


def gram_squared_distances(Z: np.ndarray) -> np.ndarray:
    """||z_i - z_j||^2 between the rows of Z (n x m), by the Gram form at any m.

    :func:`squared_distances` takes cdist's direct differences below
    ``GRAM_FORM_MIN_FEATURES`` columns: n^2 m scalar operations (the largest cost of a SOGFS fit
    on isolet, m = 308, n = 1560, for the distances of its projections X W). Here one BLAS
    product on the centred rows, clipped at 0, exactly 0 on the diagonal and exactly symmetric;
    its round-off is ~1e-16 of the squared row norms. Not the Gram branch of
    :func:`squared_distances`: that one multiplies two copies of the centred rows, this one
    Zc Zc^T (a symmetric rank-k product), and the last bits of the two differ.
    """
    Zc = Z - Z.mean(axis=0)
    sq = np.einsum("ij,ij->i", Zc, Zc)
    D = Zc @ Zc.T
    D *= -2.0
    D += sq[:, None]
    D += sq[None, :]
    np.maximum(D, 0.0, out=D)
    np.fill_diagonal(D, 0.0)
    return sym(D)


class GramDistanceBlocks:
    """Row blocks of the Gram-form squared distances between the rows of X, without an n x n
    array: block j is (rows, ||x_i||^2 + ||x_j||^2 - 2 x_i . x_j for i in rows and every j, on
    centred X), one BLAS product a block, computed when asked for (any block, in any order or
    thread: the same bits). Not clipped at 0 and not exactly 0 on the diagonal: round-off of ~d
    eps times the squared norms, which callers handle as they need."""

    def __init__(self, X: np.ndarray, rows_per_block: int):
        self.n = X.shape[0]
        self.step = max(1, int(rows_per_block))
        self.Xc = X - X.mean(axis=0)
        self.xx = np.einsum("ij,ij->i", self.Xc, self.Xc)

    def __len__(self) -> int:
        return -(-self.n // self.step)

    def __getitem__(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        start = j * self.step
        rows = np.arange(start, min(start + self.step, self.n))
        G = self.Xc[rows] @ self.Xc.T
        G *= -2.0
        G += self.xx[rows, None]
        G += self.xx[None, :]
        return rows, G


def mean_distance(X: np.ndarray, block_cells: int = KNN_BLOCK_CELLS) -> float:
    """Mean Euclidean distance over all n^2 ordered pairs of rows, the n zero self-distances
    included: ``mean(mean(EuDist2(X)))``, the heat-kernel width t of Cai's ``constructW``.

    Gram form on centred data (one BLAS product per block of rows, O(block x n) memory), as
    ``EuDist2`` computes it; self-distances are exactly 0. Summed block by block in a fixed
    order, so the value is deterministic.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    blocks = GramDistanceBlocks(X, block_cells // max(n, 1))
    total = 0.0
    for j in range(len(blocks)):
        rows, D = blocks[j]
        np.maximum(D, 0.0, out=D)
        D[np.arange(len(rows)), rows] = 0.0
        total += float(np.sqrt(D, out=D).sum())
    return total / float(n) ** 2


#: Candidates per row beyond k that :func:`knn_indices` partitions out before it sorts.
KNN_CANDIDATE_SLACK = 16


def knn_indices(distances: np.ndarray, k: int) -> np.ndarray:
    """Indices (n, k) of each sample's k nearest neighbours, the sample itself excluded.

    Ties are broken by index, so that the graph is deterministic: the first k columns of a
    stable argsort of each row. Only each row's t = k + ``KNN_CANDIDATE_SLACK`` smallest
    entries are sorted (``argpartition``, O(n) a row, instead of a sort of all n): taken in
    index order and sorted stably, they give the same k indices whenever the k-th smallest
    value is below the (t + 1)-th, which leaves no tie across the cut; the rows where it is
    not are sorted whole.
    """
    n = distances.shape[0]
    if not 1 <= k < n:
        raise ValueError(f"k={k} neighbours needs 1 <= k < n_samples={n}")
    D = distances.copy()
    np.fill_diagonal(D, np.inf)
    t = k + KNN_CANDIDATE_SLACK
    if t >= n - 1:
        return np.argsort(D, axis=1, kind="stable")[:, :k]
    rows = np.arange(n)[:, None]
    part = np.argpartition(D, t, axis=1)
    candidates = np.sort(part[:, :t], axis=1)                     # index order
    values = D[rows, candidates]
    order = np.argsort(values, axis=1, kind="stable")[:, :k]
    idx = candidates[rows, order]
    cut = D[rows[:, 0], part[:, t]]                               # the (t + 1)-th smallest
    tied = np.flatnonzero(values[rows[:, 0], order[:, -1]] >= cut)
    if tied.size:
        idx[tied] = np.argsort(D[tied], axis=1, kind="stable")[:, :k]
    return idx


def knn_mask(distances: np.ndarray, k: int, symmetric: bool = True) -> np.ndarray:
    """Boolean (n, n) adjacency: j in N_k(i), or'ed with its transpose when ``symmetric``."""
    n = distances.shape[0]
    idx = knn_indices(distances, k)
    mask = np.zeros((n, n), dtype=bool)
    mask[np.repeat(np.arange(n), k), idx.ravel()] = True
    return mask | mask.T if symmetric else mask


def knn_graph(X: np.ndarray, k: int = 5, weight: str = "binary", sigma: float | None = 1.0,
              symmetric: bool = True) -> np.ndarray:
    """Symmetric kNN affinity matrix.

    weight
        ``"binary"``: S_ij = 1 if j in N_k(i) or i in N_k(j) (e.g. DGUFS Eq. (3)).
        ``"heat"``: S_ij = exp(-||x_i - x_j||^2 / sigma) on the same support (He et al. 2005;
        the papers use sigma = 1; ``sigma=None`` takes the mean squared kNN distance, the
        usual data-driven width, for data on scales where sigma = 1 underflows).
        ``"cosine"``: cosine similarity on the same support.

    From ``SPARSE_MIN_SAMPLES`` samples on, the graph is built by :func:`sparse_knn_graph`
    (no n x n distance matrix, no full sort) and densified: the same entries up to round-off.
    """
    if np.shape(X)[0] >= SPARSE_MIN_SAMPLES:
        return sparse_knn_graph(X, k, weight=weight, sigma=sigma, symmetric=symmetric).toarray()
    D = squared_distances(X)
    mask = knn_mask(D, k, symmetric=symmetric)
    if weight == "binary":
        return mask.astype(float)
    if weight == "heat":
        if sigma is None:
            sigma = float(np.mean(D[mask])) or 1.0
        return np.where(mask, np.exp(-D / sigma), 0.0)
    if weight == "cosine":
        norms = np.linalg.norm(X, axis=1)
        norms[norms == 0] = 1.0
        C = (X @ X.T) / np.outer(norms, norms)
        return np.where(mask, C, 0.0)
    raise ValueError(f"unknown weight {weight!r}; use 'binary', 'heat' or 'cosine'")


def laplacian(S: np.ndarray, normalized: bool = False) -> np.ndarray:
    """Graph Laplacian of a symmetric affinity S: L = D - S, or I - D^-1/2 S D^-1/2.

    A ``scipy.sparse`` S gives a sparse (CSR) L with the same entries.
    """
    if sp.issparse(S):
        return _sparse_laplacian(sp.csr_matrix(S, dtype=float), normalized)
    degree = S.sum(axis=1)
    if not normalized:
        L = np.negative(S)                       # D - S in one pass over S: the same values
        L[np.diag_indices_from(L)] += degree
        return L
    inv_sqrt = np.zeros_like(degree)
    positive = degree > 0
    inv_sqrt[positive] = 1.0 / np.sqrt(degree[positive])
    return np.eye(S.shape[0]) - inv_sqrt[:, None] * S * inv_sqrt[None, :]


def connected_component_labels(S, tol: float = 0.0) -> tuple[int, np.ndarray]:
    """(count, labels) of the connected components of the graph whose edges are |S_ij| > tol
    (either direction)."""
    from scipy.sparse.csgraph import connected_components

    if sp.issparse(S):
        A = abs(sp.csr_matrix(S))
        adjacency = (tol < A).astype(np.int8)
        adjacency = adjacency + adjacency.T
    else:
        adjacency = (np.abs(S) > tol) | (np.abs(S.T) > tol)
    count, labels = connected_components(adjacency, directed=False)
    return int(count), labels


def connected_components_count(S: np.ndarray, tol: float = 0.0) -> int:
    """Number of connected components of the graph whose edges are |S_ij| > tol."""
    return connected_component_labels(S, tol)[0]


def _sparse_laplacian(S: sp.csr_matrix, normalized: bool) -> sp.csr_matrix:
    degree = np.asarray(S.sum(axis=1)).ravel()
    n = S.shape[0]
    if not normalized:
        return sp.csr_matrix(sp.diags(degree) - S)
    inv_sqrt = np.zeros_like(degree)
    positive = degree > 0
    inv_sqrt[positive] = 1.0 / np.sqrt(degree[positive])
    scale = sp.diags(inv_sqrt)
    return sp.csr_matrix(sp.identity(n, format="csr") - scale @ S @ scale)


def sq_distances_at(X: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                    block_cells: int = KNN_BLOCK_CELLS) -> np.ndarray:
    """||x_r - x_c||^2 for broadcastable index arrays, by direct differences.

    Summed feature by feature in order, the order of ``cdist``'s loop, so the values are
    bitwise those of ``cdist(..., "sqeuclidean")`` and exact ties break the same way. Computed
    in chunks of the leading axis holding about ``block_cells`` differences.
    """
    rows, cols = np.broadcast_arrays(rows, cols)
    out = np.empty(rows.shape)
    if rows.size == 0:
        return out
    per_item = max(rows[0].size, 1) * X.shape[1]
    step = max(1, block_cells // per_item)
    for start in range(0, rows.shape[0], step):
        part = slice(start, start + step)
        # Features on the first axis: numpy reduces a non-contiguous axis slice by slice, in
        # order (pairwise summation applies only along the contiguous axis).
        diff = np.ascontiguousarray(np.moveaxis(X[rows[part]] - X[cols[part]], -1, 0))
        diff *= diff
        out[part] = diff.sum(axis=0)
    return out


def _knn_rows_exact(X: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Fallback of :func:`knn_search` for rows whose candidates were not provably enough."""
    idx = np.empty((len(rows), k), dtype=np.intp)
    dist = np.empty((len(rows), k))
    for out, i in enumerate(rows):
        d = cdist(X[i:i + 1], X, metric="sqeuclidean")[0]
        d[i] = np.inf
        order = np.argsort(d, kind="stable")[:k]
        idx[out], dist[out] = order, d[order]
    return idx, dist


def knn_search(X: np.ndarray, k: int, extra: int | None = None,
               block_cells: int = KNN_BLOCK_CELLS) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest neighbours (n, k) and their squared distances, without an n x n matrix.

    Rows are processed in blocks: the Gram-form distances of a block to all samples (one BLAS
    product on centred data) give ``k + extra`` candidates per row; their exact squared
    distances (direct differences, as ``cdist``) are sorted by (distance, index), the same
    tie-breaking as :func:`knn_indices`. A row's answer is accepted only when its k-th exact
    distance lies strictly below the smallest Gram-form distance of the non-candidates minus a
    bound on the Gram form's round-off; otherwise the row is redone against all samples. So the
    result equals ``knn_indices(cdist(X, X, "sqeuclidean"), k)`` whatever the data.
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    if not 1 <= k < n:
        raise ValueError(f"k={k} neighbours needs 1 <= k < n_samples={n}")
    m = min(k + (k if extra is None else int(extra)), n - 1)
    blocks = GramDistanceBlocks(X, max(1, min(n, block_cells // n, block_cells // max(m * d, 1))))
    xx = blocks.xx
    # |Gram-form error| <= ~d eps (||x||^2 + ||y||^2); a generous multiple of it.
    slack = 8.0 * (d + 8) * np.finfo(float).eps * (xx + xx.max())
    idx = np.empty((n, k), dtype=np.intp)
    dist = np.empty((n, k))
    redo = []
    for j in range(len(blocks)):
        rows, G = blocks[j]
        G[np.arange(len(rows)), rows] = np.inf                         # the sample itself
        if m < n - 1:
            part = np.argpartition(G, m, axis=1)
            cand, bound = part[:, :m], G[np.arange(len(rows)), part[:, m]]
        else:
            cand = np.argsort(G, axis=1)[:, :m]
            bound = np.full(len(rows), np.inf)
        exact = sq_distances_at(X, rows[:, None], cand)
        order = np.lexsort((cand, exact), axis=-1)[:, :k]
        idx[rows] = np.take_along_axis(cand, order, axis=1)
        dist[rows] = np.take_along_axis(exact, order, axis=1)
        redo.extend(rows[dist[rows, -1] >= bound - slack[rows]].tolist())
    if redo:
        again = np.asarray(redo)
        idx[again], dist[again] = _knn_rows_exact(X, again, k)
    return idx, dist


def nearest_neighbors(X: np.ndarray, k: int,
                      large: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices (n, k) of each sample's k nearest neighbours and their squared distances.

    ``large=None`` chooses by size: below ``SPARSE_MIN_SAMPLES`` samples the dense path
    (``knn_indices(squared_distances(X))``, bit for bit what the methods always used), from it
    on :func:`knn_search` (no n x n matrix). ``large=True/False`` forces a path (tests).
    """
    X = np.asarray(X, dtype=float)
    if large is None:
        large = X.shape[0] >= SPARSE_MIN_SAMPLES
    if large:
        return knn_search(X, k)
    D = squared_distances(X)
    idx = knn_indices(D, k)
    return idx, np.take_along_axis(D, idx, axis=1)


def sparse_knn_graph(X: np.ndarray, k: int = 5, weight: str = "binary",
                     sigma: float | None = 1.0, symmetric: bool = True,
                     large: bool | None = None) -> sp.csr_matrix:
    """:func:`knn_graph` as a CSR matrix, from :func:`nearest_neighbors` (same entries).

    The support is the directed kNN edges i -> j (j in N_i), or'ed with their reverses when
    ``symmetric``; squared distances are symmetric exactly, so both directions carry one value.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if weight not in ("binary", "heat", "cosine"):
        raise ValueError(f"unknown weight {weight!r}; use 'binary', 'heat' or 'cosine'")
    idx, dist = nearest_neighbors(X, k, large=large)
    rows, cols, values = np.repeat(np.arange(n), idx.shape[1]), idx.ravel(), dist.ravel()
    if symmetric:
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
        values = np.concatenate([values, values])
        _, first = np.unique(rows * n + cols, return_index=True)
        rows, cols, values = rows[first], cols[first], values[first]
    if weight == "binary":
        values = np.ones_like(values)
    elif weight == "heat":
        if sigma is None:
            sigma = float(np.mean(values)) or 1.0
        values = np.exp(-values / sigma)
    else:
        norms = np.linalg.norm(X, axis=1)
        norms[norms == 0] = 1.0
        values = np.einsum("ij,ij->i", X[rows], X[cols]) / (norms[rows] * norms[cols])
    S = sp.csr_matrix((values, (rows, cols)), shape=(n, n))
    S.eliminate_zeros()
    return S
