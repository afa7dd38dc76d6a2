"""K-means from given sample starts, as Deng Cai's ``litekmeans`` computes it.

UFSOL's released code (and other MATLAB UFS code) clusters with ``litekmeans(X, k,
'Replicates', r)``: each replicate starts from k distinct samples drawn at random, runs Lloyd
until no label changes (at most 100 passes), and the replicate with the smallest sum of
(non-squared) Euclidean distances of the samples to their centres wins. :func:`litekmeans`
takes the starts as arguments (sample indices per replicate, drawn by the caller or recorded
from a run of that code), so a run can be repeated exactly.

Per pass, as in ``litekmeans``: each sample goes to the centre minimising ||c||^2 - 2 x.c (the
first such centre on a tie); if a cluster is left empty, the samples farthest from their
centres (largest ||x||^2 + ||c||^2 - 2 x.c, the first of equal ones first) are moved, one per
empty cluster in increasing cluster order; then every centre becomes the mean of its samples.
"""

from __future__ import annotations

import numpy as np


def litekmeans(Y: np.ndarray, k: int, starts, max_iter: int = 100) -> tuple[np.ndarray,
                                                                              np.ndarray, float]:
    """(labels, centres, sum of distances) of the best replicate; one replicate per start.

    Parameters
    ----------
    Y : ndarray (n, p)
        The samples (rows).
    k : int
        Number of clusters.
    starts : sequence of sequences of int
        One list of k sample indices (0-based) per replicate: replicate r starts from the
        centres Y[starts[r]].
    max_iter : int, default 100
        Cap on the Lloyd passes of a replicate (``litekmeans``' MaxIter).

    Returns
    -------
    labels : ndarray (n,) of int, 0..k-1
    centres : ndarray (k, p)
    sum_dist : float
        sum_i ||y_i - c_{labels_i}||, the replicate criterion (a later replicate wins only when
        it is strictly smaller).
    """
    Y = np.asarray(Y, dtype=float)
    y_sq = np.einsum("ij,ij->i", Y, Y)
    best = None
    for start in starts:
        labels, centres, sum_dist = _replicate(Y, y_sq, k, np.asarray(start, dtype=int),
                                               max_iter)
        if best is None or sum_dist < best[2]:
            best = (labels, centres, sum_dist)
    if best is None:
        raise ValueError("litekmeans needs at least one start")
    return best


def _replicate(Y, y_sq, k, start, max_iter):
    n = Y.shape[0]
    rows = np.arange(n)
    centres = Y[start].copy()
    labels = np.full(n, -1)
    for it in range(1, max_iter + 1):  # noqa: B007 - it tells whether the cap ended the passes
        previous = labels
        # ||c||^2 - 2 x.c: the squared distance without the sample's own ||x||^2
        partial = np.einsum("ij,ij->i", centres, centres)[None, :] - 2.0 * (Y @ centres.T)
        labels = np.argmin(partial, axis=1)
        nearest = partial[rows, labels]
        _fill_empty_clusters(labels, nearest + y_sq, k)
        centres = _means(Y, labels, k)
        if np.array_equal(labels, previous):
            break
    if it >= max_iter:
        # the cap ended the passes: distances to the final centres
        partial = np.einsum("ij,ij->i", centres, centres)[None, :] - 2.0 * (Y @ centres.T)
    dist = np.sqrt(np.maximum(y_sq[:, None] + partial, 0.0))[rows, labels]
    # per cluster, then over clusters, summed in order (litekmeans' sumD and sum(sumD))
    per_cluster = [np.cumsum(dist[labels == j])[-1] if np.any(labels == j) else 0.0
                   for j in range(k)]
    return labels, centres, float(np.cumsum(per_cluster)[-1])


def _fill_empty_clusters(labels, sq_dist, k):
    """Give every empty cluster one of the samples farthest from their centres (in place)."""
    missing = np.setdiff1d(np.arange(k), labels)
    if missing.size:
        farthest = np.argsort(-sq_dist, kind="stable")[: missing.size]
        labels[farthest] = missing


def _means(Y, labels, k):
    counts = np.bincount(labels, minlength=k).astype(float)
    sums = np.column_stack([np.bincount(labels, weights=column, minlength=k) for column in Y.T])
    return sums / counts[:, None]
