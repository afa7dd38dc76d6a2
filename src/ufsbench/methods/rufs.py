"""RUFS: Robust Unsupervised Feature Selection (Qian & Zhai, IJCAI 2013).

Settings: the paper (its text is not available here; the model as restated by KMUFS Eq. (34)
and the header of Qian's code), the authors' code as released (AutoUFSTool ``UFSs/RUFS``:
the start of ``Robust_unsupervised.m`` and the solver ``RUFS.m``; preset ``released``) and our
default.

=============  ======================  ======================================  ======================
setting        paper (as restated)     authors' code (as released)             our default
=============  ======================  ======================================  ======================
graph L        local learning (FSASL   adaptive neighbours, k = 5,             local learning, k = 5,
               pipeline)               (A + A^T) / 2, normalised Laplacian     lambda_r = 0.1
c              number of clusters      10 (hard-coded)                         ``n_clusters``
nu, alpha,     tuned                   5, 5, 4                                 1, 1, 1 (grid 1e-6 ..
beta                                                                           1e6)
G^T G = I      constraint              penalty (zeta/4) ||G^T G - I||^2,       same, zeta = 1e7
                                       zeta = 1e7
extra terms    none                    1e-4 sum_j ||F_:j||, 0.1 1^T G 1        none
G0             not stated              spectral clustering (sc.m, K-means      K-means on X
                                       20 replicates): 0/1 indicator           (k-means++, 10),
                                                                               scaled indicator +
                                                                               0.2, unit columns
F0, W0         not stated              max((G^T G)^-1 G^T X, 0) + 0.2 x mean;  same
                                       (X^T X + (beta/alpha) I)^-1 X^T G
solver         not stated              projected L-BFGS blocks W, G, F         IRLS W-step, split
                                       (Armijo 0.2, backtrack 0.5, 10 pairs)   multiplicative G, F
eps            not stated              2.2e-16 in the gradients                1e-8 in every l2,1
stop           not stated              |objective change| <= 1e-4 or           relative decrease
                                       projected gradient <= 1e-4 x initial,   <= 1e-6, 20
                                       MaxIter 10 (11 rounds)                  iterations
ranking        ||w_i|| decreasing      sum(W.^2, 2) decreasing                 ||w_i|| decreasing
=============  ======================  ======================================  ======================

``released`` sets graph="adaptive", clustering="spectral", start="indicator", n_init=20,
solver="lbfgs", gamma_f=1e-4, mu=0.1, nu=5, alpha=5, beta=4, eps=2.2e-16, max_iter=11, tol=1e-4;
c is ``n_clusters`` (pass 10 to repeat the wrapper). Under Octave the authors' ``kmeans`` runs
Deng Cai's ``litekmeans``; its recorded starts, given as ``init``, make the start the same
partition (``ufsbench.conformance.rufs``, which also shows how much of the outcome round-off
decides on some data).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.cache import cached_call, cached_seeded_call, memory_location
from ufsbench.methods.base import (
    MEMORY_CONSTRAINT,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    FitCost,
    UFSSelector,
    register,
)
from ufsbench.numerics import l21_reweight, laplacian, row_norms
from ufsbench.numerics.adaptive_neighbors import adaptive_affinity
from ufsbench.numerics.gram_solve import gram_form, solve_gram_plus_diag
from ufsbench.numerics.graphs import nearest_neighbors, sparse_knn_graph, sq_distances_at
from ufsbench.numerics.indicators import kmeans_scaled_indicator
from ufsbench.numerics.irls import smoothed_l21_norm, smoothed_row_norms
from ufsbench.numerics.lbfgs import lbfgs_block
from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part
from ufsbench.numerics.sparse_gram import SparseOuterGram, sparse_outer_gram
from ufsbench.numerics.sparsity import column_norms
from ufsbench.numerics.spectral import (
    kmeans_from_sample_starts,
    scaled_indicator,
    spectral_clustering_labels,
    spectral_soft_indicator,
)


def local_learning_weights(X: np.ndarray, k: int = 5, lambda_r: float = 0.1,
                           sigma: float | None = None) -> sp.csr_matrix:
    """A (n x n, sparse CSR): row i holds the local kernel-ridge weights that predict x_i from N_i.

    Row i of A holds the kernel-ridge-regression weights that predict sample i from its k nearest
    neighbours N_i: A_{i,N_i} = K(i, N_i) (K(N_i, N_i) + lambda_r I)^{-1}, with the heat kernel
    K(x, y) = exp(-||x - y||^2 / sigma) (FSASL ``localLearnMx_KRR.m``: k = 5, lambda_r = 0.1).
    The neighbourhood kernel block is the dense RBF block (diagonal 1), not the sparse kNN
    affinity that ``localLearnMx_KRR.m`` reads (a known pitfall, ``papers/baselines.md`` §5).
    ``sigma=None`` takes the mean squared kNN distance (sigma = 1 underflows on raw pixels).
    Only the k x k neighbourhood distances are computed (never an n x n matrix on large n),
    bitwise as ``cdist`` (:func:`neighbourhood_sq_distances`).
    """
    n = X.shape[0]
    idx, d_in = nearest_neighbors(X, k)                                # N_i, ||x_i - x_j||^2
    if sigma is None:
        sigma = float(d_in.mean()) or 1.0
    k_in = np.exp(-d_in / sigma)                                       # K(i, N_i)    (n, k)
    d_nn = neighbourhood_sq_distances(np.asarray(X, dtype=float), idx)
    k_nn = np.exp(-d_nn / sigma)                                       # K(N_i, N_i)  (n, k, k)
    k_nn += lambda_r * np.eye(idx.shape[1])
    weights = np.linalg.solve(k_nn, k_in[:, :, None])[:, :, 0]          # symmetric blocks
    return sp.csr_matrix((weights.ravel(), (np.repeat(np.arange(n), idx.shape[1]),
                                            idx.ravel())), shape=(n, n))


#: Below this fraction of non-zero entries the neighbourhood distances skip the zero columns.
SUPPORT_DENSITY = 0.25


def neighbourhood_sq_distances(X: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """||x_a - x_b||^2 for a, b in each row of ``idx`` (n x k x k), bitwise the values of
    ``sq_distances_at(X, idx[:, :, None], idx[:, None, :])`` (those of ``cdist``).

    That sum runs over the features in order; a feature where both samples are zero adds an
    exact +0.0, which leaves every partial sum unchanged. So on mostly-zero X (below
    ``SUPPORT_DENSITY`` non-zero entries; a bag of words such as basehock, 1.4 %) each
    neighbourhood sums only over the columns where one of its k samples is non-zero, in the same
    order: the same floats, 10x faster there. Denser X takes the one vectorised call.
    """
    if np.count_nonzero(X) > SUPPORT_DENSITY * X.size:
        return sq_distances_at(X, idx[:, :, None], idx[:, None, :])
    out = np.empty((*idx.shape, idx.shape[1]))
    local = np.arange(idx.shape[1])
    for i, members in enumerate(idx):
        columns = np.flatnonzero(np.any(X[members] != 0, axis=0))
        out[i] = sq_distances_at(X[np.ix_(members, columns)], local[:, None], local[None, :])
    return out


def local_learning_matrix(X: np.ndarray, k: int = 5, lambda_r: float = 0.1,
                          sigma: float | None = None) -> np.ndarray:
    """T = (I - A)^T (I - A), the local-learning regulariser of RUFS (symmetric PSD, n x n,
    sparse CSR), with A from :func:`local_learning_weights`."""
    IA = sp.identity(X.shape[0], format="csr") - local_learning_weights(X, k, lambda_r, sigma)
    return sp.csr_matrix(IA.T @ IA)


def residual_row_norms(X_rows: np.ndarray, G: np.ndarray, F: np.ndarray, eps: float,
                       out: np.ndarray) -> np.ndarray:
    """sqrt(||x_i - g_i F||^2 + eps) for every row, bitwise ``smoothed_row_norms(X - G @ F,
    eps)`` without its two n x d temporaries: G F is written into ``out`` (row-major n x d, the
    layout ``G @ F`` has) and subtracted in place from ``X_rows`` (X in row-major order, so the
    subtraction runs over two contiguous arrays; ``X - G @ F`` on a column-major X strides).
    The product, the subtraction and the row sums see the same operands in the same layouts as
    the plain formula, so every bit is the same."""
    np.matmul(G, F, out=out)
    np.subtract(X_rows, out, out=out)
    return smoothed_row_norms(out, eps)


def rufs_start(X: np.ndarray, n_clusters: int, random_state=None):
    """(G0, F0) of RUFS (class doc, "Start"): the K-means scaled indicator (10 restarts) plus 0.2
    x its mean non-zero entry, unit columns; F0 = max((G0^T G0)^{-1} G0^T X, 0) + 0.2 x its
    mean positive entry. Data and seed only, so cached per data set and seed."""
    G, _ = kmeans_scaled_indicator(X, n_clusters, random_state, offset=0.2)
    F = np.linalg.lstsq(G, X, rcond=None)[0]
    F = np.maximum(F, 0.0)
    F += 0.2 * (F[F > 0].mean() if np.any(F > 0) else 1.0)
    return G, F


def rufs_first_steps(X: np.ndarray, n_clusters: int, random_state, ratio: float, eps: float,
                     start_memory: str | None = None):
    """(G0, F0, W0, W1, norms_r0): the start, the first uniform-ridge W0 = (X^T X + ratio I)^{-1}
    X^T G0, the first reweighted W-step W1 and the smoothed row norms of X - G0 F0 -- everything
    of a fit that precedes the first G-step. It depends on the data, the seed and ratio =
    beta / alpha only (not on nu, nor on alpha and beta apart), so a grid sweep computes it once
    per ratio (17 ratios on RUFS's 7 x 7 (alpha, beta) grid) and reads it back for every other
    setting; the formulas are those of the loop in ``RUFS._fit``, so the results are bitwise
    the same. ``start_memory``: where the start (:func:`rufs_start`) is cached, shared by every
    ratio (a location, part of this function's cache key; None computes it)."""
    G, F = cached_seeded_call(start_memory, rufs_start, X, random_state, n_clusters=n_clusters)
    return (G, F, *first_steps_from(X, G, F, ratio, eps, dual_outer_gram(X)))


def dual_outer_gram(X: np.ndarray) -> SparseOuterGram | None:
    """The sparse-column form of the W-step's n x n matrix (``ufsbench.numerics.sparse_gram``)
    where that step takes the n x n form (d > n) and X is mostly zero, else None."""
    return sparse_outer_gram(X) if gram_form(X) == "dual" else None


def first_steps_from(X: np.ndarray, G: np.ndarray, F: np.ndarray, ratio: float, eps: float,
                     outer: SparseOuterGram | None = None):
    """(W0, W1, norms_r) of :func:`rufs_first_steps` for a given start (G0, F0); ``outer``:
    :func:`dual_outer_gram` of X."""
    W0 = solve_gram_plus_diag(X, G, ratio, outer=outer)
    q_h = 0.5 / smoothed_row_norms(X @ W0 - G, eps)
    W1 = solve_gram_plus_diag(X, q_h[:, None] * G, ratio * l21_reweight(W0, eps), q_h,
                              outer=outer)
    norms_r = residual_row_norms(np.ascontiguousarray(X), G, F, eps, np.empty(X.shape))
    return W0, W1, norms_r


def start_labels(X: np.ndarray, L, n_clusters: int, clustering: str, starts=None,
                 random_state=None, n_init: int = 10) -> np.ndarray:
    """The partition RUFS starts from (0-based labels): K-means on the rows of X, or spectral
    clustering on the graph's Laplacian L (its c bottom eigenvectors, rows scaled to unit norm,
    K-means; ``sc.m`` of the authors' pipeline). ``starts`` (r x c sample indices) gives the
    K-means starts (Lloyd from each, the best of the r kept, as ``litekmeans.m``); else
    k-means++ with ``n_init`` restarts seeded from ``random_state``."""
    if clustering == "spectral":
        if starts is not None:
            return spectral_clustering_labels(L, n_clusters, starts)
        return spectral_soft_indicator(L, n_clusters, random_state, n_init=n_init)[1]
    if starts is not None:
        return kmeans_from_sample_starts(X, starts)
    return kmeans_scaled_indicator(X, n_clusters, random_state, n_init=n_init)[1]


def factors_from_labels(X: np.ndarray, labels: np.ndarray, n_clusters: int, start: str):
    """(G0, F0) from a partition: G0 the 0/1 indicator (``start="indicator"``, the authors'
    code) or the scaled indicator plus 0.2 x its mean non-zero entry with unit columns
    (``"soft"``); F0 = max((G0^T G0)^{-1} G0^T X, 0) + 0.2 x its mean positive entry."""
    if start == "indicator":
        G = np.zeros((labels.size, n_clusters))
        G[np.arange(labels.size), labels] = 1.0
    else:
        G = scaled_indicator(labels, n_clusters, offset=0.2)
    return G, _centres(X, G)


def _centres(X: np.ndarray, G: np.ndarray) -> np.ndarray:
    F = np.maximum(np.linalg.lstsq(G, X, rcond=None)[0], 0.0)
    F += 0.2 * (F[F > 0].mean() if np.any(F > 0) else 1.0)
    return F


#: The |f change| stops of Qian's W-, G- and F-blocks and the W-block's gradient test (RUFS.m).
W_BLOCK_FTOL, W_BLOCK_GTOL, GF_BLOCK_TOL = 1e-4, 1e-3, 1e-3


@register("rufs")
class RUFS(UFSSelector):
    """Robust Unsupervised Feature Selection.

    Mingjie Qian, Chengxiang Zhai. "Robust Unsupervised Feature Selection." Proc. IJCAI 2013,
    pp. 1621-1627. Model as restated by KMUFS Eq. (34) and the header of Qian's code (our
    notation, samples as rows; ``papers/baselines.md`` §5)::

        min_{G, F, W}  ||X - G F||_{2,1} + nu Tr(G^T L G) + alpha ||X W - G||_{2,1}
                       + beta ||W||_{2,1}        s.t. G >= 0, F >= 0, G^T G = I,

    G (n x c) soft cluster labels, F (c x d) cluster centres, W (d x c) the regression whose row
    norms rank the features; both l2,1 losses are sums over samples (robust to outlier samples).
    G^T G = I is enforced, as in Qian's code, by the penalty (zeta / 4) ||G^T G - I||_F^2.

    Solver (NOT the authors' projected L-BFGS; the IRLS / multiplicative alternative that
    ``baselines.md`` §5 describes). Every l2,1 norm is smoothed to sum_i sqrt(||r_i||^2 + eps)
    and majorised by its reweighted quadratic (Nie et al., NIPS 2010). One outer iteration:

    1. W-step (exact minimiser of the majoriser): with Q_h = diag(1 / (2 sqrt(||x_i W - g_i||^2
       + eps))) and D_W = diag(1 / (2 sqrt(||w_r||^2 + eps))),
       W = (X^T Q_h X + (beta / alpha) D_W)^{-1} X^T Q_h G (n x n form when d > n).
    2. G-step: split multiplicative rule G <- G * (grad- / grad+)^eta of the majorised
       G-objective tr((X - GF)^T Q_r (X - GF)) + nu tr(G^T L G) + alpha tr((XW - G)^T Q_h
       (XW - G)) + (zeta/4) ||G^T G - I||^2, with every mixed-sign matrix (X F^T, X W, L) split
       into its positive and negative parts (``ufsbench.numerics.nmf``; Ding, Li & Jordan 2010):
         grad+/2 = Q_r G F F^T + Q_r (XF^T)- + nu L+ G + alpha Q_h G + alpha Q_h (XW)- + zeta/2 G G^T G
         grad-/2 = Q_r (XF^T)+ + nu L- G + alpha Q_h (XW)+ + zeta/2 G
       The objective is quartic in G, so eta = 1/4 (``exponent=0.25``, default) is the exponent
       that the auxiliary-function argument covers (Yang & Oja, IEEE TNN 2011; the derivation is
       spelled out in ``ufsbench.methods.scfs``); eta = 1 is the NDFS-style rule, faster but
       without that guarantee.
    3. F-step: F <- F * (G^T Q_r X)+ / (G^T Q_r G F + (G^T Q_r X)-), a valid majorise-minimise
       step for the quadratic (Q_r-weighted) non-negative least squares (exponent 1 is proven
       here: the objective is quadratic in F and G^T Q_r G >= 0).

    Hence the smoothed penalised objective (``objective_history_``) does not increase (tested);
    G and F stay non-negative and finite on data with negative entries.

    Decisions where the paper is silent or the code differs from the model
    ----------------------------------------------------------------------
    * Graph: ``graph="local_learning"`` (default) is the authors' pipeline, T = (I - A)^T (I - A)
      from kernel ridge regression on the k = 5 neighbours with lambda_r = 0.1
      (:func:`local_learning_matrix`); ``graph="knn"`` is the normalised kNN heat-kernel
      Laplacian KMUFS writes in Eq. (34).
    * F >= 0 is kept for data with negative entries (no shift of X): the sign split keeps the
      updates valid; only non-negative centres can then be represented.
    * Code-only terms of Qian's implementation (gamma_F sum_j ||F_:j||, mu 1^T G 1) are omitted.
    * Start: G0 = the K-means (10 restarts) scaled indicator plus 0.2 x its mean non-zero entry,
      columns rescaled to unit norm (a hard 0/1 start would freeze the memberships under
      multiplicative updates); F0 = max((G0^T G0)^{-1} G0^T X, 0) + 0.2 x its mean positive entry
      (as Qian's code); W0 = (X^T X + (beta/alpha) I)^{-1} X^T G0 (as Qian's code).
    * zeta = 1e7 as Qian's code; eps = 1e-8 inside every smoothed norm; at most ``max_iter`` outer
      iterations (code: 20), stop when the relative objective decrease is below ``tol``.
      The cap ends the default fits and nearly every fit of the paper grids: at iteration 20
      the objective still falls by 2-5 % an iteration (jaffe 3.8 %, umist 1.7 %, coil20 5.3 %;
      the penalty on G^T G - I is 12-30 % of it), while the ranking has settled: the top 100
      after 20 iterations share a Jaccard index of 0.96-1.00 with those after 40 and 80
      (2026-11-27). A stop on the objective would run longer, not shorter.
    * ``labels_`` = argmax of each row of G.
    * Start options: ``clustering`` ("kmeans" on X, or "spectral" on the graph's Laplacian as
      ``sc.m``), ``start`` ("soft" as above, or "indicator": the 0/1 indicator of the authors'
      code, whose zeros the multiplicative G-step never moves), ``init`` (K-means starts as
      sample indices, one row per restart: Lloyd from each, the best kept, as ``litekmeans.m``)
      and ``n_init`` (k-means++ restarts when ``init`` is None). ``init_labels_`` is the
      partition of the start (set whenever the start is not the cached default).
    * ``solver="lbfgs"`` is Qian's algorithm (:func:`lbfgs_block`): each round runs his W-block
      (L-BFGS on alpha sum ||x_i W - g_i|| + beta sum ||w^r||, stop at |f change| < 1e-4 or
      ||grad|| <= 1e-3), G-block (projected L-BFGS over G >= 0 with his code-only mu 1^T G 1,
      stop at |f change| < 1e-3 or projected gradient <= 1e-3 x the spectral norm of its first
      gradient) and F-block (projected L-BFGS with gamma_f sum_j ||F_:j||, stop at |f change|
      < 1e-3; as in his code its gradients divide by the residual norms of the block's start),
      each keeping the point before the step that triggered its stop. The fit stops when his
      objective (with ||G^T G - I||_2, the spectral norm) changes by at most ``tol``, or the
      spectral norm of the stacked (projected) gradients is at most ``tol`` times the Frobenius
      norm of the initial gradient (his initial W-gradient takes the data term with the sign of
      G - X W), or after ``max_iter`` rounds (his MaxIter = 10 tests after the 11th round's
      updates: ``max_iter=11``); ``objective_history_`` is his objective per round. The smoothing
      in his gradients (W / (||w^r|| + eps), F / (||F_:j|| + eps)) is ``eps``.
    * Cost: G0, F0 depend on the data and the seed only and are cached at ``memory``
      (:func:`rufs_start`); the W-step forms X^T Q_h X (or its n x n form) as a symmetric
      rank-k product (the n x n one, on mostly-zero X such as basehock, from the non-zero
      entries of the sparse columns: ``ufsbench.numerics.sparse_gram``, the same matrix up to
      round-off, 5x faster there); the neighbourhood distances of the local-learning graph skip
      the columns where a neighbourhood is zero (:func:`neighbourhood_sq_distances`, bitwise the
      same); the row norms of X - G F and X W - G computed for the objective serve
      the next iteration's reweighting. The start, W0 and the first W-step depend on
      beta / alpha only and are cached per ratio (:func:`rufs_first_steps`); the residuals
      X - G F go through one row-major buffer (:func:`residual_row_norms`). These keep every
      bit of the plain loop (at small beta / alpha one-ulp noise on the residual norms moves
      coil20's scores by up to 4e-7 relative, and stored grid results must stay reproducible),
      except the sparse-column n x n form, which only mostly-zero data with d > n takes (of the
      paper sets, basehock: its default scores move by 1e-13 relative, the selection is the
      same).

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of G and W and of rows of F (the clusters of the start and of
        ``labels_``).
    random_state : int, RandomState instance or None, default None
        Seeds the ``n_init`` k-means++ restarts of the start when ``init`` is None.
    nu : float, default 1.0
        Weight of the graph term Tr(G^T L G) (KMUFS Eq. (34) name; grid {1e-6, ..., 1e6}).
    alpha : float, default 1.0
        Weight of the robust regression ||X W - G||_{2,1} (same grid).
    beta : float, default 1.0
        Weight of ||W||_{2,1} (same grid).
    k : int, default 5
        Neighbours of the graph.
    graph : "local_learning" (the FSASL pipeline's T), "knn" (normalised kNN Laplacian) or
        "adaptive" (normalised Laplacian of the adaptive-neighbour graph, the authors' wrapper).
    lambda_r : float, default 0.1
        Local kernel-ridge parameter of ``graph="local_learning"``.
    sigma : heat-kernel width (None: mean squared kNN distance).
    zeta : float, default 1e7
        Weight of the orthogonality penalty (zeta / 4) ||G^T G - I||_F^2.
    exponent : float in (0, 1], default 0.25
        eta of the G-step G <- G * (grad- / grad+)^eta (0.25 is covered by the
        auxiliary-function argument, 1 is the NDFS-style rule).
    max_iter : int, default 20
        Cap on the outer iterations (``solver="lbfgs"``: on the rounds, see above).
    tol : float, default 1e-6
        Stop when the relative objective decrease is at most ``tol`` (0: exactly ``max_iter``
        iterations); ``solver="lbfgs"``: Qian's epsilon (see above).
    eps : float, default 1e-8
        Smoothing of every l2,1 norm, sum_i sqrt(||r_i||^2 + eps).
    clustering : {"kmeans", "spectral"}, default "kmeans"
        The start's clustering: K-means on X, or spectral clustering on the graph's Laplacian
        (as ``sc.m``).
    start : {"soft", "indicator"}, default "soft"
        G0: the scaled indicator plus 0.2 x its mean non-zero entry, or the 0/1 indicator of
        the authors' code (whose zeros the multiplicative G-step never moves).
    init : None or array-like (r, n_clusters) of int, default None
        K-means starts of the start as sample indices, one row per restart (Lloyd from each,
        the best kept, as ``litekmeans.m``); None draws ``n_init`` k-means++ starts from
        ``random_state``.
    n_init : int, default 10
        k-means++ restarts of the start when ``init`` is None.
    solver : "irls" (default) or "lbfgs" (Qian's projected L-BFGS blocks).
    gamma_f : float, default 0.0
        Weight of the code-only term gamma_f sum_j ||F_:j|| of Qian's F-block; only
        ``solver="lbfgs"`` minimises it, ``"irls"`` refuses a non-zero value.
    mu : float, default 0.0
        Weight of the code-only term mu 1^T G 1 of Qian's G-block; only ``solver="lbfgs"``
        minimises it, ``"irls"`` refuses a non-zero value.
    memory : None, str or joblib.Memory, default None
        Where to cache the graph (it depends on X, graph, k, lambda_r and sigma only) and, for an
        integer ``random_state``, the start (X, n_clusters and the seed only) and the steps before
        the first G-step (X, n_clusters, the seed, beta / alpha and eps only); None computes them on
        every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_r||, the row norms of W.
    labels_ : ndarray (n_samples,)
        argmax of each row of G.
    G_ : ndarray (n_samples, n_clusters)
        The final G.
    F_ : ndarray (n_clusters, n_features)
        The final F.
    W_ : ndarray (n_features, n_clusters)
        The final W.
    objective_history_ : list of float
        The smoothed penalised objective after each outer iteration (``solver="lbfgs"``:
        Qian's objective per round).
    n_iter_ : int
        Outer iterations (or rounds) run.
    converged_ : bool
        Whether the stop test (or, with ``tol=0``, the fixed count) ended the fit.
    init_labels_ : ndarray (n_samples,)
        The partition of the start; set whenever the start is not the cached default.
    """

    single_threaded_blas = True         # no fit of it was faster on two BLAS threads
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "nu": NON_NEGATIVE,
        # The W-step's ridge is beta / alpha.
        "alpha": POSITIVE,
        "beta": POSITIVE,
        "k": POSITIVE_INT,
        "graph": [StrOptions({"local_learning", "knn", "adaptive"})],
        # Keeps K(N_i, N_i) + lambda_r I invertible when neighbours coincide.
        "lambda_r": POSITIVE,
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "zeta": NON_NEGATIVE,
        # 0.25 is the exponent the auxiliary-function argument covers; 1 the NDFS-style rule.
        "exponent": [Interval(Real, 0, 1, closed="right")],
        "max_iter": POSITIVE_INT,
        # 0 runs all max_iter iterations.
        "tol": NON_NEGATIVE,
        # Keeps every reweighting 1 / (2 sqrt(||r_i||^2 + eps)) finite at a zero residual.
        "eps": POSITIVE,
        "clustering": [StrOptions({"kmeans", "spectral"})],
        "start": [StrOptions({"soft", "indicator"})],
        # K-means starts as sample indices, one row of n_clusters per restart.
        "init": [None, "array-like"],
        "n_init": POSITIVE_INT,
        "solver": [StrOptions({"irls", "lbfgs"})],
        # Terms of Qian's code only (solver="lbfgs"): gamma_f sum_j ||F_:j||, mu 1^T G 1.
        "gamma_f": NON_NEGATIVE,
        "mu": NON_NEGATIVE,
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, nu=1.0,
                 alpha=1.0, beta=1.0, k=5, graph="local_learning", lambda_r=0.1, sigma=None,
                 zeta=1e7, exponent=0.25, max_iter=20, tol=1e-6, eps=1e-8, clustering="kmeans",
                 start="soft", init=None, n_init=10, solver="irls", gamma_f=0.0, mu=0.0,
                 memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.nu = nu
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.graph = graph
        self.lambda_r = lambda_r
        self.sigma = sigma
        self.zeta = zeta
        self.exponent = exponent
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.clustering = clustering
        self.start = start
        self.init = init
        self.n_init = n_init
        self.solver = solver
        self.gamma_f = gamma_f
        self.mu = mu
        self.memory = memory

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """``max_iter`` (20) iterations, which the default fits run, each a reweighted
        regression solved in the d x d form for d <= n (a syrk, 2e-11 n d^2 s, and a Cholesky
        factor, 1.2e-11 d^3 s; for d > n the n x n form, with n and d swapped) and passes over
        n x d arrays (5e-8 n d s), after the kNN graph (6e-11 n^2 d s). Measured (one BLAS
        thread) against modelled: jaffe 0.15 and 0.16 s, coil20 3.2 and 2.5 s, USPS 7.1 and
        4.0 s, basehock 9.0 and 21 s, synthetic 10000 x 1000 19.1 and 21 s, 187 x 20000 1.7
        and 4.0 s. Memory: the d x d (or n x n) system and a few n x d arrays."""
        if params.get("solver", "irls") == "lbfgs":
            return None
        n, d = float(n_samples), float(n_features)
        small, large = min(n, d), max(n, d)
        iterations = int(params.get("max_iter", 20))
        step = 2e-11 * large * small ** 2 + 1.2e-11 * small ** 3 + 5e-8 * n * d
        seconds = iterations * step + 6e-11 * n ** 2 * d
        return FitCost(seconds, 8.0 * (2 * small ** 2 + 4 * n * d),
                       f"a {int(small)} x {int(small)} regression system and passes over "
                       f"{n_samples} x {n_features} arrays in each of its {iterations} iterations")

    def _check_parameter_relations(self) -> None:
        if self.solver == "irls" and (self.gamma_f != 0 or self.mu != 0):
            raise self._invalid(f"gamma_f={self.gamma_f!r} and mu={self.mu!r} are terms of "
                                f"Qian's code, which only solver='lbfgs' minimises; use "
                                f"gamma_f=0 and mu=0 with solver='irls'")
        self._check_sample_starts(self.init)

    def graph_matrix(self, X: np.ndarray) -> sp.csr_matrix:
        """The n x n PSD regulariser L of the nu-term (local learning or normalised kNN), sparse
        (CSR): both have O(n k^2) entries, so large n needs no n x n array."""
        if self.graph == "adaptive":          # k + 1 neighbours: k weights and the (k+1)-th
            S = cached_call(self.memory, adaptive_affinity, X, k=self._neighbours(X.shape[0], 2))
            return laplacian(S, normalized=True)
        k = self._neighbours(X.shape[0])
        if self.graph == "local_learning":
            return cached_call(self.memory, local_learning_matrix, X, k=k, lambda_r=self.lambda_r,
                               sigma=self.sigma)
        S = cached_call(self.memory, sparse_knn_graph, X, k=k, weight="heat", sigma=self.sigma)
        return laplacian(S, normalized=True)

    def objective(self, X, G, F, W, L) -> float:
        """Smoothed penalised objective that the iterations decrease."""
        eps = float(self.eps)
        return self._objective(smoothed_row_norms(X - G @ F, eps),
                               smoothed_row_norms(X @ W - G, eps), G, W, L)

    def _objective(self, norms_r, norms_h, G, W, L) -> float:
        """The objective from the smoothed row norms of X - G F (``norms_r``) and X W - G
        (``norms_h``), which the next iteration's reweighting reuses (no n x d recomputation)."""
        c = G.shape[1]
        GtG = G.T @ G
        return float(float(norms_r.sum()) + self.nu * np.sum(G * (L @ G))
                     + self.alpha * float(norms_h.sum())
                     + self.beta * smoothed_l21_norm(W, self.eps)
                     + 0.25 * self.zeta * np.sum((GtG - np.eye(c)) ** 2))

    def _fit(self, X):
        c = self.n_clusters_
        alpha, beta, nu, zeta, eps = (float(self.alpha), float(self.beta), float(self.nu),
                                      float(self.zeta), float(self.eps))
        eta = float(self.exponent)
        L = self.graph_matrix(X)
        if self.solver == "lbfgs":
            G, F = self._start_factors(X, L)
            return self._fit_lbfgs(X, L, G, F)
        L_pos, L_neg = pos_part(L), neg_part(L)

        # Everything before the first G-step (G0, F0, W0 = (X^T X + (beta/alpha) I)^{-1} X^T G0
        # as Qian's code, the first W-step W1) depends on the data, the seed and beta / alpha
        # only: computed once per ratio in a sweep, read from ``memory`` afterwards.
        outer = dual_outer_gram(X)                     # mostly-zero X, n x n W-step
        if self._kmeans_soft_start():
            G, F, W, W1, norms_r = cached_seeded_call(
                self.memory, rufs_first_steps, X, self.random_state, n_clusters=c,
                ratio=beta / alpha, eps=eps, start_memory=memory_location(self.memory))
        else:
            G, F = self._start_factors(X, L)
            W, W1, norms_r = first_steps_from(X, G, F, beta / alpha, eps, outer)

        # Smoothed row norms of the current X - G F and X W - G: every reweighting
        # 1 / (2 sqrt(||r_i||^2 + eps)) below is 0.5 / these (bitwise l21_reweight), and the
        # objective of one iteration provides both for the next one. The two n x d residuals
        # X - G F of every iteration go through one row-major buffer.
        X_rows, buf = np.ascontiguousarray(X), np.empty(X.shape)
        norms_h = None
        history, converged = [], False
        for it in range(self.max_iter):
            # 1. W-step: reweighted (Q_h, D_W) ridge regression, exact (the first one: W1).
            if it == 0:
                W = W1
            else:
                q_h = 0.5 / norms_h
                W = solve_gram_plus_diag(X, q_h[:, None] * G,
                                         (beta / alpha) * l21_reweight(W, eps), q_h, outer=outer)
            # 2. G-step: split multiplicative rule on the majorised G-objective.
            XW = X @ W
            q_r = (0.5 / norms_r)[:, None]
            q_h = l21_reweight(XW - G, eps)[:, None]
            XF = X @ F.T
            grad_pos = (q_r * (G @ (F @ F.T)) + q_r * neg_part(XF) + nu * (L_pos @ G)
                        + alpha * q_h * G + alpha * q_h * neg_part(XW)
                        + 0.5 * zeta * (G @ (G.T @ G)))
            grad_neg = (q_r * pos_part(XF) + nu * (L_neg @ G) + alpha * q_h * pos_part(XW)
                        + 0.5 * zeta * G)
            G = multiplicative_step(G, grad_neg ** eta, grad_pos ** eta)
            # 3. F-step: Q_r-weighted non-negative least squares, split multiplicative rule.
            q_r = (0.5 / residual_row_norms(X_rows, G, F, eps, buf))[:, None]  # l21_reweight
            GQX = (q_r * G).T @ X                                  # G^T Q_r X
            F = multiplicative_step(F, pos_part(GQX), (G.T @ (q_r * G)) @ F + neg_part(GQX))
            norms_r = residual_row_norms(X_rows, G, F, eps, buf)
            norms_h = smoothed_row_norms(XW - G, eps)
            history.append(self._objective(norms_r, norms_h, G, W, L))
            if (len(history) > 1 and self.tol > 0
                    and history[-2] - history[-1] <= self.tol * abs(history[-2])):
                converged = True
                break
        # tol = 0 asks for exactly max_iter iterations: reaching them is the requested stop.
        self._stopped(len(history), converged or self.tol == 0,
                      test="relative objective decrease <= tol" if self.tol > 0
                      else "fixed count of max_iter iterations (tol=0)")
        self._finish(G, F, W, history)

    def _finish(self, G, F, W, history) -> None:
        self.G_, self.F_, self.W_ = G, F, W
        self.objective_history_ = history
        self.labels_ = np.argmax(G, axis=1)
        self.scores_ = row_norms(W)

    # -- the start ------------------------------------------------------------------------------
    def _kmeans_soft_start(self) -> bool:
        """The default start (K-means on X, k-means++ with 10 restarts, soft indicator), which
        a sweep reads from ``memory`` together with the steps before the first G-step."""
        return (self.clustering == "kmeans" and self.start == "soft" and self.init is None
                and self.n_init == 10)

    def _start_factors(self, X, L):
        """(G0, F0) from the start the parameters name (:func:`start_labels`,
        :func:`factors_from_labels`); the partition is kept as ``init_labels_``."""
        c = self.n_clusters_
        starts = self._sample_starts(self.init, X.shape[0])
        self.init_labels_ = start_labels(X, L, c, self.clustering, starts,
                                         self.random_state, int(self.n_init))
        return factors_from_labels(X, self.init_labels_, c, self.start)

    # -- solver="lbfgs": Qian's algorithm -----------------------------------------------------
    def _fit_lbfgs(self, X, L, G, F) -> None:
        """Qian's RUFS.m: W0 = (X^T X + (beta/alpha) I)^{-1} X^T G0, then rounds of the three
        block solvers (W, G, F; :func:`lbfgs_block`) until |change of his objective| <= tol, the
        2-norm of the stacked (projected) gradients <= tol x the initial gradient norm, or
        max_iter rounds (see the class docstring)."""
        a, b = float(self.alpha), float(self.beta)
        L = sp.csr_matrix(self.nu * L)
        W = solve_gram_plus_diag(X, G, b / a)
        value = self._qian_objective(X, L, G, F, W)
        tol = float(self.tol) * self._qian_initial_gradient_norm(X, L, G, F, W)
        history, converged = [], False
        for _ in range(self.max_iter):
            W, grad_w = self._w_block(X, G, W)
            G, grad_g = self._g_block(X, L, F, W, G)
            F, grad_f = self._f_block(X, G, F)
            previous, value = value, self._qian_objective(X, L, G, F, W)
            history.append(value)
            stacked = np.vstack([grad_f.T, grad_g, grad_w])
            if abs(value - previous) <= self.tol or np.linalg.norm(stacked, 2) <= tol:
                converged = True
                break
        self._stopped(len(history), converged,
                      test="objective change <= tol or projected gradient <= tol x initial")
        self._finish(G, F, W, history)

    def _qian_objective(self, X, L, G, F, W) -> float:
        """The objective Qian's code prints and tests: the model's four terms, gamma_f times the
        norms of F's ROWS, mu 1^T G 1 and (zeta/4) ||G^T G - I||_2^2 (spectral norm)."""
        c = G.shape[1]
        return float(row_norms(G @ F - X).sum() + self.gamma_f * row_norms(F).sum()
                     + self.mu * G.sum()
                     + np.sum(G * (L @ G)) + self.alpha * row_norms(X @ W - G).sum()
                     + self.beta * row_norms(W).sum()
                     + 0.25 * self.zeta * np.linalg.norm(G.T @ G - np.eye(c), 2) ** 2)

    def _qian_initial_gradient_norm(self, X, L, G, F, W) -> float:
        """||[grad_F^T; grad_G; grad_W]||_F at the start, as Qian's code computes it: its W part
        is alpha X^T (G - X W)/r + beta W / (||w|| + eps), i.e. the data term with the sign of
        G - X W (the block solver uses X W - G)."""
        eps = float(self.eps)
        R = G @ F - X
        r_f = row_norms(R)
        grad_f = G.T @ (R / r_f[:, None]) + self.gamma_f * F / (column_norms(F) + eps)[None, :]
        grad_g = self._g_gradient(G, F, W, L, R, r_f, G - X @ W)
        H = G - X @ W
        grad_w = (self.alpha * X.T @ (H / row_norms(H)[:, None])
                  + self.beta * W / (row_norms(W) + eps)[:, None])
        return float(np.sqrt(np.sum(grad_f ** 2) + np.sum(grad_g ** 2) + np.sum(grad_w ** 2)))

    def _g_gradient(self, G, F, W, L, R, r_f, H) -> np.ndarray:
        c = G.shape[1]
        return (R @ F.T / r_f[:, None] + self.mu + 2 * (L @ G)
                + self.alpha * H / row_norms(H)[:, None] + self.zeta * G @ (G.T @ G - np.eye(c)))

    def _w_block(self, X, G, W):
        """Qian's UpdateW: alpha sum_i ||x_i W - g_i|| + beta sum_r ||w^r||, unconstrained."""
        a, b, eps = float(self.alpha), float(self.beta), float(self.eps)

        def value(W):
            R = X @ W - G
            r, phi = row_norms(R), row_norms(W)
            return a * r.sum() + b * phi.sum(), (R, r, phi)

        def gradient(W, state):
            R, r, phi = state
            return a * X.T @ (R / r[:, None]) + b * W / (phi + eps)[:, None]

        return lbfgs_block(W, value, gradient, projected=False, ftol=W_BLOCK_FTOL,
                           gtol=W_BLOCK_GTOL)

    def _g_block(self, X, L, F, W, G):
        """Qian's UpdateG: sum_i ||x_i - g_i F|| + mu 1^T G 1 + tr(G^T L G) + alpha sum_i
        ||x_i W - g_i|| + (zeta/4) ||G^T G - I||_F^2 over G >= 0; its gradient test is relative
        to the spectral norm of the first gradient."""
        c, XW = G.shape[1], X @ W

        def value(G):
            R, H = G @ F - X, G - XW
            r_f, r_h = row_norms(R), row_norms(H)
            phi = (self.mu * G.sum() + np.sum(G * (L @ G)) + self.alpha * r_h.sum()
                   + 0.25 * self.zeta * np.sum((G.T @ G - np.eye(c)) ** 2))
            return r_f.sum() + phi, (R, r_f, H)

        def gradient(G, state):
            return self._g_gradient(G, F, W, L, *state)

        first = gradient(G, value(G)[1])
        return lbfgs_block(G, value, gradient, projected=True, ftol=GF_BLOCK_TOL,
                           gtol=GF_BLOCK_TOL * np.linalg.norm(first, 2))

    def _f_block(self, X, G, F):
        """Qian's UpdateF: sum_i ||x_i - g_i F|| + gamma_f sum_j ||F_:j|| over F >= 0. As in his
        code, every gradient divides the residual rows by their norms at the block's START (the
        norms are not refreshed inside the block), and there is no gradient test."""
        eps, gamma_f = float(self.eps), float(self.gamma_f)
        r_start = row_norms(G @ F - X)

        def value(F):
            R = G @ F - X
            phi = column_norms(F)
            return row_norms(R).sum() + gamma_f * phi.sum(), (R, phi)

        def gradient(F, state):
            R, phi = state
            return G.T @ (R / r_start[:, None]) + gamma_f * F / (phi + eps)[None, :]

        return lbfgs_block(F, value, gradient, projected=True, ftol=GF_BLOCK_TOL)
