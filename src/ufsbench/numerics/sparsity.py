"""Row-sparsity helpers: l2,1 norms and reweighting, the l2,0 row projection."""

from __future__ import annotations

import numpy as np


def row_norms(W: np.ndarray) -> np.ndarray:
    """l2 norm of every row of W."""
    return np.sqrt(np.einsum("ij,ij->i", W, W))


def column_norms(W: np.ndarray) -> np.ndarray:
    """l2 norm of every column of W."""
    return np.sqrt(np.einsum("ij,ij->j", W, W))


def l21_norm(W: np.ndarray) -> float:
    """||W||_{2,1} = sum_i ||w_i||_2."""
    return float(row_norms(W).sum())


def l21_reweight(W: np.ndarray, eps: float = 1e-8, factor: float = 0.5) -> np.ndarray:
    """Diagonal of the iteratively reweighted l2,1 surrogate (Nie et al., NIPS 2010).

    Returns d_i = factor / sqrt(||w_i||^2 + eps), so that Tr(W^T D W) majorises ||W||_{2,1} up to
    a constant. ``factor=0.5`` gives the usual D_ii = 1 / (2 ||w_i||); ``factor=1`` gives the
    R_ii = 1 / sqrt(||w_i||^2 + eps) of UFSOL's Eq. (7). The smoothing ``eps`` keeps zero rows finite.
    """
    return factor / np.sqrt(np.einsum("ij,ij->i", W, W) + eps)


def top_rows(W: np.ndarray, m: int) -> np.ndarray:
    """Indices of the m rows of W with the largest l2 norm (ties broken by lower index)."""
    return largest_indices(row_norms(W), m)


def largest_indices(values: np.ndarray, m: int) -> np.ndarray:
    """Sorted indices of the m largest ``values``, ties to the lower index: the first m of a
    stable sort by decreasing value.

    In O(n) instead of the sort's O(n log n) (3x at n = 10^4, called once per iteration by the
    l2,0 projections): with v the m-th largest value (a partition), every value above v is
    taken, then the lowest-indexed values equal to v up to m. NaN (which no order places)
    falls back to the sort, where it comes last.
    """
    values = np.asarray(values)
    n = values.size
    if m <= 0:
        return np.zeros(0, dtype=np.intp)
    if m >= n:
        return np.arange(n)
    if np.isnan(values).any():
        return np.sort(np.lexsort((np.arange(n), -values))[:m])
    kth = np.partition(values, n - m)[n - m]
    above = np.flatnonzero(values > kth)
    ties = np.flatnonzero(values == kth)[: m - above.size]
    return np.sort(np.concatenate([above, ties]))


def largest_positions(norms: np.ndarray, idx: np.ndarray, m: int) -> np.ndarray:
    """Positions (sorted) of the m largest ``norms``, ties to the lower row index ``idx``:
    :func:`top_rows`'s rule among the rows ``idx`` (of a matrix stored on those rows only)."""
    return np.sort(np.lexsort((idx, -norms))[:m])


def smallest_positions(norms: np.ndarray, idx: np.ndarray, m: int) -> np.ndarray:
    """Positions of the m smallest ``norms``, ties to the higher row index ``idx``: the rows
    ``l20_project(., d - m)`` zeroes (the complement of the d - m :func:`top_rows` keeps)."""
    return np.lexsort((-idx, norms))[:m]


def l20_project(W: np.ndarray, m: int) -> np.ndarray:
    """Euclidean projection onto {W : ||W||_{2,0} <= m}: keep the m largest-norm rows, zero the rest.

    This is Theorem 1 / Algorithm 1 of DGUFS and the W-step (26) of K-means UFS. Exactly m rows
    are kept even when some of them are zero, so that the support always has m features.
    """
    if not 0 <= m <= W.shape[0]:
        raise ValueError(f"cannot keep m={m} rows of a matrix with {W.shape[0]} rows")
    keep = top_rows(W, m)
    out = np.zeros_like(W)
    out[keep] = W[keep]
    return out


def ranking_from_scores(scores: np.ndarray, tie_rtol: float = 0.0,
                        tie_order: np.ndarray | None = None) -> np.ndarray:
    """Feature indices ordered from most to least important (higher score first; ties: lower
    index first, or lower ``tie_order`` when given; NaN last).

    ``tie_rtol`` > 0 also counts as tied the scores that differ from their neighbour in sorted
    order by at most ``tie_rtol`` * max|score|: a difference of round-off then does not decide
    the order (it would follow the CPU's BLAS kernel, e.g. when many rows of a projection have
    norm 1 to the last bit or two). ``tie_order`` (a permutation of the indices) orders tied
    features instead of their index, e.g. a seeded one where index order would favour one
    corner of an image.
    """
    scores = np.asarray(scores, dtype=float)
    index = np.arange(scores.size) if tie_order is None else np.asarray(tie_order)
    order = np.lexsort((index, -np.nan_to_num(scores, nan=-np.inf)))
    if tie_rtol <= 0 or scores.size < 2:
        return order
    group = np.empty(scores.size, dtype=int)
    # The raw scores: nan_to_num's -inf -> -1.8e308 would set the tolerance's scale.
    group[order] = tie_groups(scores[order], tie_rtol)
    return np.lexsort((index, group))


def tie_groups(ranked: np.ndarray, tie_rtol: float = 0.0) -> np.ndarray:
    """Group number of each score of a descending sequence. A group opens at a score and takes
    the scores after it while they are within ``tie_rtol`` * max|score| of that first score
    (``tie_rtol`` = 0: while they equal it). No two scores of a group differ by more than the
    tolerance, so a long run of small steps (hundreds of near-zero rows 1e-13 apart, spanning
    2e-10) is not one group. NaN (read as -inf) and +-inf never tie."""
    ranked = np.asarray(ranked, dtype=float)
    ranked = np.where(np.isnan(ranked), -np.inf, ranked)   # (nan_to_num would make -inf finite)
    if ranked.size < 2:
        return np.zeros(ranked.size, dtype=int)
    finite = np.isfinite(ranked)
    scale = float(np.abs(ranked[finite]).max()) if finite.any() else 0.0
    tolerance = tie_rtol * scale
    if tolerance <= 0:
        with np.errstate(invalid="ignore"):             # -inf - -inf = nan: a new group
            starts_group = ~(ranked[:-1] - ranked[1:] <= 0.0)
        return np.concatenate(([0], np.cumsum(starts_group)))
    opens = np.ones(ranked.size, dtype=bool)
    ascending = -ranked
    first = 0
    while first < ranked.size:
        if not finite[first]:
            first += 1
            continue
        # The first score more than the tolerance below this group's first (-inf never joins).
        after = int(np.searchsorted(ascending, ascending[first] + tolerance, side="right"))
        opens[first + 1:after] = False
        first = max(after, first + 1)
    return np.cumsum(opens) - 1
