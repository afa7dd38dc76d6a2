"""UFSOL: unsupervised feature selection with ordinal locality (Guo, Guo, Kong & He, ICME 2017).

Settings of the paper, of the authors' released code (AutoUFSTool ``UFSs/UFSoL/UFSwithOL.m``
with ``TripletLap.m``, ``solveUV.m``, ``litekmeans.m``, commit 8e3231a) and of this class; the
``released`` preset of ``configs/method/ufsol.yaml`` sets the code's column, and
``ufsbench conformance`` checks it against outputs of that code (:mod:`ufsbench.conformance.ufsol`).

=====================  ============================  ==============================  =========================
setting                paper (as printed)            authors' code (as released)     our default
=====================  ============================  ==============================  =========================
preprocessing          none stated                   every sample to unit l2 norm    ``zscore`` (features)
W0 (Algorithm 1)       d2 identity columns,          first c axes,                   ``init="random"``
                       "randomly selected"           ``eye(d)(:, 1:c)``
d2, k                  c, 5                          c, 5                            c, 5
triplet distances      "dist" (squared Euclidean     Euclidean (``EuDist2``)         ``"sqeuclidean"``
                       for projected pairs, §3.1)
C normalisation        each row to [0, 1] (§4.3)     row min-max to [0, 1]           row min-max
graphs (Table 2)       none, similarity (sigma 1),   triplet only                    all four, ``"triplet"``
                       max-margin, triplet
R_ii (Eq. 7)           1/sqrt(||W_i||^2 + eps),      1/(2 ||W_i||); 2 ||W_i|| = 0    ``eps=1e-8``
                       eps not given                 -> 5e-7 (beta/5e-7 on zero rows)
(U, V) step            K-means on W^T X (Th. 1)      litekmeans, 10 random-sample    k-means++ x 10, previous
                                                     starts, best by sum of          partition, Lloyd from its
                                                     distances; kept only if         centroids: smallest SSE
                                                     ||W'X - UV||_F falls            (never increases (6))
stop                   "less than 40 iterations      ||W - W_prev||_F <= 5e-7 or     relative change of (6)
                       in most experiments"          10 iterations (never met)       < 1e-6, or 40 iterations
alpha, beta            grid {1e-6, 1e-4, ..., 1e6}   wrapper default 1e6, 1e2        1, 1
scores                 ||W_i||                       sum(W.^2, 2), descending        ||W_i||
=====================  ============================  ==============================  =========================
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy import linalg as sla
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import (
    MEMORY_CONSTRAINT,
    POSITIVE_INT,
    FitCost,
    UFSSelector,
    register,
)
from ufsbench.numerics import knn_graph, l21_reweight, row_norms, sym
from ufsbench.numerics.exact_kmeans import descent_kmeans_labels
from ufsbench.numerics.graphs import sparse_knn_graph
from ufsbench.numerics.indicators import indicator_gram, indicator_projection
from ufsbench.numerics.litekmeans import litekmeans
from ufsbench.numerics.lowrank_eig import smallest_eigh_shift_invert
from ufsbench.numerics.sparse_gram import (
    SPARSE_COLUMN_FRACTION,
    SparsePlusOffset,
    sparse_dense_product,
)
from ufsbench.numerics.triplet import ordinal_laplacian, sparse_triplet_weights, triplet_weights

GRAPHS = ("none", "similarity", "maxmargin", "triplet")
PREPROCESS = ("unit_norm", "zscore", "none")
SOLVERS = ("auto", "dense", "shift_invert")
#: W0: d2 distinct coordinate axes drawn at random (Algorithm 1), or the first d2 axes.
INITS = ("random", "axes")
#: The distances of the triplet weights (Eq. (2)).
TRIPLET_METRICS = ("sqeuclidean", "euclidean")
#: The (U, V) step: a K-means step that never increases (6), or the authors' solveUV.
V_STEPS = ("descent", "litekmeans")
#: Values of the deprecated ``eigen_solver`` (``solver``'s old name), accepted for one release with
#: a FutureWarning; "lanczos" (plain Lanczos on G, a comparison path) runs "shift_invert".
DEPRECATED_EIGEN_SOLVERS = {"auto": "auto", "dense": "dense", "shift_invert": "shift_invert",
                            "lanczos": "shift_invert"}


def ufsol_laplacian(X: np.ndarray, graph: str, k: int = 5, sigma: float | None = 1.0,
                    normalize_c: bool = True, sparse: bool = False,
                    metric: str = "sqeuclidean") -> np.ndarray:
    """The (n, n) matrix L of UFSOL's graph term for each variant of C (§3.3; samples as rows).

    ``none``: L = 0 (alpha = 0). ``similarity``: C_ij = exp(-||x_i - x_j||^2 / sigma) for j in
    N_i (directed kNN heat kernel, sigma = 1 in §5.2), already in [0, 1]. ``maxmargin``:
    C_ij = -1/n for all i, j, so L = (1/n) 1 1^T - I = -H (H the centring matrix): negative
    semi-definite on purpose, alpha Tr(W^T X L X^T W) = -alpha * total scatter of the projection.
    ``triplet``: Eq. (2) with the §4.3 per-row min-max normalisation to [0, 1]
    (:func:`ufsbench.numerics.triplet.triplet_weights`), on the distances ``metric``
    ("sqeuclidean", or "euclidean" as the authors' ``TripletLap``); ``normalize_c=False`` keeps
    the raw Eq. (2) weights (rows sum to 0, indefinite L; a variant for comparison, not the
    paper's nor the authors' code's). L = D - (C + C^T)/2 throughout.

    ``sparse=True`` returns the kNN graphs (similarity, triplet) as CSR matrices built without
    any n x n array (:mod:`ufsbench.numerics.graphs` neighbour search), the same entries;
    "none" and "maxmargin" are not sparse and have no sparse form (see :func:`graph_gram`).
    """
    n = X.shape[0]
    if sparse and graph in ("none", "maxmargin"):
        raise UFSBenchError(f"graph={graph!r} has no sparse Laplacian; use graph_gram")
    if graph == "none":
        return np.zeros((n, n))
    if graph == "maxmargin":
        return np.full((n, n), 1.0 / n) - np.eye(n)
    if graph == "similarity":
        C = (sparse_knn_graph(X, k=k, weight="heat", sigma=sigma, symmetric=False) if sparse
             else knn_graph(X, k=k, weight="heat", sigma=sigma, symmetric=False))
    elif graph == "triplet":
        C = (sparse_triplet_weights(X, k=k, normalize=normalize_c, metric=metric) if sparse
             else triplet_weights(X, k=k, normalize=normalize_c, metric=metric))
    else:
        raise UFSBenchError(f"graph={graph!r} is unknown; use one of {', '.join(GRAPHS)}")
    return ordinal_laplacian(C)


def graph_gram(X: np.ndarray, graph: str, k: int = 5, sigma: float | None = 1.0,
               normalize_c: bool = True, metric: str = "sqeuclidean") -> np.ndarray:
    """X^T L X (d x d) for UFSOL's graph term without the n x n L (samples as rows).

    ``none``: 0. ``maxmargin``: L = (1/n) 1 1^T - I, so X^T L X = (1/n) s s^T - X^T X with
    s = X^T 1. ``similarity`` / ``triplet``: X^T (L X) with the sparse L of
    :func:`ufsol_laplacian` (O(n k d) for the product).
    """
    n, d = X.shape
    if graph == "none":
        return np.zeros((d, d))
    if graph == "maxmargin":
        s = X.sum(axis=0)
        return np.outer(s, s) / n - X.T @ X
    L = ufsol_laplacian(X, graph, k=k, sigma=sigma, normalize_c=normalize_c, sparse=True,
                        metric=metric)
    return sym(X.T @ sparse_dense_product(L, X))


def _metric_apply(base: sp.csr_matrix, labels: np.ndarray):
    """Y -> M Y for M = base - V^T V (base = alpha L + I sparse, V the scaled indicator of
    ``labels``) in O(nnz(base) + n c) per column: row i of V^T V Y is the mean of Y's rows over
    the cluster of sample i."""
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    indicator = sp.csr_matrix((np.ones(labels.shape[0]), (inverse, np.arange(labels.shape[0]))),
                              shape=(counts.shape[0], labels.shape[0]))

    def apply_m(Y: np.ndarray) -> np.ndarray:
        means = (indicator @ Y) / (counts[:, None] if Y.ndim == 2 else counts)
        out = np.asarray(base @ Y)
        out -= means[inverse]
        return out

    return apply_m


@lru_cache(maxsize=1)
def _threadpools():
    """The process's thread pools (threadpoolctl scans the loaded libraries once)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@register("ufsol")
class UFSOL(UFSSelector):
    """UFSOL: joint l2,1 feature selection and K-means with an ordinal-locality (triplet) graph.

    Guo, Guo, Kong & He, "Unsupervised Feature Selection with Ordinal Locality", IEEE ICME 2017.
    With samples as rows (the paper's X is d x n, here X^T), the model (5) is

        min_{W,U,V} ||W^T X^T - U V||_F^2 + beta ||W||_{2,1} + alpha Tr(W^T X^T L X W)
        s.t. W^T W = I (d x d2), V >= 0, V V^T = I,

    solved by Algorithm 1 on the half-quadratic surrogate (6): R_ii = 1/sqrt(||W_i||^2 + eps)
    (Eq. 7); (U, V) by K-means on Y = X W (Theorem 1, U = Y^T V^T); W = the d2 eigenvectors of
    G = beta/2 R + X^T (alpha L + I - V^T V) X with the smallest eigenvalues (§4.2). Features are
    ranked by ||W_i||_2 (``scores_``); ``labels_`` is the last K-means partition.

    Variants of C (``graph``; Table 2 has all four, see :func:`ufsol_laplacian`): ``"none"``
    (alpha = 0: feature selection + K-means, Theorem 1), ``"similarity"`` (heat kernel, sigma = 1),
    ``"maxmargin"`` (C_ij = -1/n), ``"triplet"`` (Eq. (2), the paper's method, default).

    Decisions where the paper is silent or ambiguous:

    * ``graph="none"`` ignores ``alpha`` (the effective weight ``alpha_`` is 0), so the cartesian
      config grid holds identical graph=none fits for every alpha (same selection for a fixed
      random_state; the best-over-grid rule is unaffected). Conversely alpha = 0 with any graph
      is the graph=none model.
    * Triplet normalisation (§4.3, "normalize each nonzero C_ij to [0,1] by row"): per-row min-max
      over the k neighbour weights, i.e. C_ij = (max_l d_il - d_ij) / (max_l d_il - min_l d_il);
      see :mod:`ufsbench.numerics.triplet`. The heat-kernel weights are already in (0, 1] and are
      not rescaled. The max-margin C is not normalised: mapping a constant row to [0, 1] would
      either erase it or flip its sign (L = n H, which *minimises* total scatter), contradicting
      §3.3's "maximize data's total separability"; its L = -H is negative semi-definite, which is
      harmless because W^T W = I bounds the objective. (The paper's "L = 1/n 1 I" lost a sign.)
    * Heat-kernel width: the paper's sigma = 1 is scale-dependent; after z-scoring
      ||x_i - x_j||^2 is about 2d, exp(-2d) underflows and the similarity variant silently becomes
      the graph=none one. ``sigma=None`` (default) takes the mean squared kNN distance (as ``ls``);
      ``sigma=1.0`` reproduces the paper's setting (meaningful with ``preprocess="unit_norm"``).
    * Constant features (zero variance after preprocessing) are removed before fitting and rank
      last (``scores_ = -1``, zero rows in ``W_``): they have zero scatter in every term, so the
      W-step would otherwise prefer them, which selects nothing useful.
    * ``normalize_c=True`` (default) is §4.3's per-row normalisation of C to [0, 1], which the
      authors' public code (``TripletLap``) also always applies. ``normalize_c=False`` keeps the
      raw Eq. (2) weights (rows sum to 0, farther neighbours negative, L indefinite): neither the
      paper's nor the code's model, kept as a variant for comparison.
    * dist in S^i of Eq. (2) (``triplet_metric``): squared Euclidean by default, the metric §3.1
      uses for the projected pairs; ``"euclidean"`` is what the authors' ``TripletLap`` uses.
    * Preprocessing (the paper states none). ``"zscore"`` (the default, and the benchmark
      config's setting) centres every feature and scales it to unit variance. Reason: every data
      term of (5) is a scatter to be *minimised* under W^T W = I, so on raw or sample-normalised
      data the W-step favours features of small overall variance, whatever their cluster
      structure; with unit-variance features a small within-cluster (and neighbourhood) scatter
      means a large between-cluster share, which is what makes the planted features of
      ``make_synthetic`` win (tested). ``"unit_norm"`` scales every sample to unit l2 norm, as
      the authors' code does (the ``released`` preset; with it the paper's sigma = 1 is
      meaningful, ||x_i - x_j||^2 <= 4). ``"none"`` uses X as given. The graph is built on the
      preprocessed X. Centring alone changes nothing: I - V^T V, L and H all annihilate
      constant vectors.
    * d > n: X^T M X then has a null space of dimension >= d - n, where every data term vanishes
      whatever M (unless M is indefinite, i.e. the max-margin graph); the W-step then lands in it
      or, for large beta, stays near the initial axes. This is a property of model (5), not of
      the solver; expect near-random rankings on d >> n data with the PSD graphs.
    * W0 (``init``): d2 distinct identity columns drawn with ``random_state`` (Algorithm 1, step
      2), or the first d2 (``"axes"``, the authors' code); d2 = ``n_components`` or, by default,
      the number of clusters c (§5.2).
    * eps of Eq. (7) (value not stated): ``eps`` = 1e-8 by default. The first R-step gives every
      feature outside W0 the weight 1/sqrt(eps); for large beta the W-step then hardly leaves the
      initial coordinates (a property of Algorithm 1 with an axis start, not of this code).
      ``eps=0`` with ``zero_row_norm`` is the authors' rule: R_ii = 1/||W_i||, and
      1/zero_row_norm on a zero row (their tol = 5e-7 in place of 2 ||W_i||, i.e.
      zero_row_norm = 2.5e-7: 400 times the default's weight on W0's zero rows, which locks W
      on W0's axes unless alpha is large; see :mod:`ufsbench.conformance.ufsol`).
    * (U, V) step (``v_step``). ``"descent"`` (default): scikit-learn KMeans (k-means++,
      ``n_init`` restarts, seeded from ``random_state``), plus two further candidates, the
      previous partition itself and Lloyd started from its centroids in the new Y; the partition
      with the smallest within-cluster sum of squares is kept. This makes the V-step a true
      descent step, so the objective of (6) provably never increases (plain K-means restarts
      could return a worse partition). ``"litekmeans"``: the authors' ``solveUV`` -- one
      K-means before the first iteration on X W0, then one per iteration, each
      :func:`ufsbench.numerics.litekmeans.litekmeans` from ``n_init`` starts of c distinct
      samples (drawn with ``random_state``, or the recorded ``kmeans_init``), its partition kept
      only if ||Y - U V||_F is below the previous (U, V)'s, whose centres U come from the
      embedding that produced them. Not a descent step: (6) may increase.
    * Stopping: relative change of the objective below ``tol`` (strictly; ``tol=0`` runs
      ``max_iter`` iterations, as the authors' code does, whose ||W - W_prev||_F <= 5e-7 is never
      met because the eigenvectors' order and signs change) or ``max_iter`` iterations (the
      paper: "less than 40 iterations in most of our experiments"; at the default setting the
      cap ends the fit on jaffe, umist, coil20 and USPS, where (6) still falls by 1e-4..1e-3 per
      iteration: ``converged_`` False and a ConvergenceWarning). ``objective_history_`` holds
      F_eps(W_t, V_t) = Tr(Y^T (alpha L + I - V^T V) Y) + beta sum_i sqrt(||W_i||^2 + eps), the
      value of (6) at the optimal R, after every iteration (not the authors' ``valVec``);
      ``orthogonality_history_`` holds max |W_t^T W_t - I|.
    * W-step solver (``solver``): ``"dense"`` forms G (d x d) and calls LAPACK;
      ``"shift_invert"`` runs Lanczos on (G - sI)^{-1} applied through the Woodbury identity,
      warm-started from the previous W, O(d n^2) per iteration
      (:mod:`ufsbench.numerics.lowrank_eig`; plain Lanczos on G converges very slowly when R
      spans many orders of magnitude). ``"auto"`` = dense when d <= 2n (where LAPACK is faster,
      docs/performance-history.md), else shift_invert. On mostly-zero data (a z-scored
      bag-of-words set: each column is sparse plus the constant value of its zero rows) the
      shift_invert set-up X A^{-1} X^T and every product with X use the non-zero entries plus
      a rank-one correction (:mod:`ufsbench.numerics.sparse_gram`), and M = alpha L + I -
      V^T V is applied through the sparse L and the cluster means: the same iterates up to
      round-off (basehock: 66 -> 16 CPU s, one BLAS thread).
    * Large n (e.g. USPS, 9298 x 256): the dense W-step never forms the n x n
      M = alpha L + I - V^T V. X^T M X = alpha X^T L X + X^T X - (V X)^T (V X) is assembled in
      d x d form: X^T L X once per fit from the sparse kNN/triplet L (built by a blockwise
      neighbour search, no n x n distance matrix; for max-margin (1/n) s s^T - X^T X),
      V X from the cluster sums; the objective is Tr(W^T (X^T M X) W). The shift_invert solver
      (chosen for d > 2n, i.e. small n) keeps the n x n M; tests check both forms agree.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of K-means clusters (``labels_``), and d2 when ``n_components`` is None.
    random_state : int, RandomState instance or None, default None
        Seeds W0 (``init="random"``), the K-means restarts or starts of the V-steps (unless
        ``kmeans_init`` gives them) and the order of tied scores (``score_tie_rtol``; 0 when
        None).
    alpha : float, default 1.0
        Weight of the graph term (paper grid {1e-6, 1e-4, ..., 1e6}).
    beta : float, default 1.0
        Weight of ||W||_{2,1} (same grid).
    graph : "triplet", "similarity", "maxmargin" or "none", default "triplet"
        The variant of C.
    k : int, default 5
        Neighbours of N_i (5 in the paper).
    sigma : float or None, default None
        Heat-kernel width of graph="similarity" (1 in the paper; None = mean squared kNN
        distance, see above).
    n_components : int or None, default None
        d2, the projection dimension (None = number of clusters).
    preprocess : "zscore", "unit_norm" or "none", default "zscore"
        See above ("unit_norm": the authors' code).
    init : "random" or "axes", default "random"
        W0: d2 identity columns drawn with ``random_state``, or the first d2 (the authors' code).
    triplet_metric : "sqeuclidean" or "euclidean", default "sqeuclidean"
        The distances of Eq. (2) ("euclidean": the authors' code).
    eps : float >= 0, default 1e-8
        The perturbation of Eq. (7); 0 needs ``zero_row_norm``.
    zero_row_norm : float > 0 or None, default None
        With ``eps=0``: the value of ||W_i|| taken for a zero row of W, so R_ii =
        1/zero_row_norm (2.5e-7 in the authors' code); unused when eps > 0.
    max_iter : int, default 40
        Iteration cap (the paper: "less than 40 iterations in most of our experiments").
    tol : float, default 1e-6
        Stop when the relative objective change is below ``tol`` (0: always ``max_iter``
        iterations).
    n_init : int, default 10
        K-means restarts (replicates) per V-step.
    v_step : "descent" or "litekmeans", default "descent"
        The (U, V) step (see above; "litekmeans": the authors' ``solveUV``).
    kmeans_init : array-like of int (calls, n_init, n_clusters) or None, default None
        ``v_step="litekmeans"`` only: the sample indices (0-based) each replicate of each
        K-means call starts from, in call order (the initial call, then one per iteration; at
        least max_iter + 1 calls), e.g. the starts a run of the authors' code drew; None draws
        them from ``random_state``.
    solver : "auto", "dense" or "shift_invert", default "auto"
        The W-step's eigensolver (see above).
    normalize_c : bool, default True
        The §4.3 normalisation of the triplet C; False = raw Eq. (2).
    eigen_solver : deprecated
        The old name of ``solver`` (a FutureWarning; "lanczos" runs "shift_invert"); removed in
        the next release.
    memory : None, str or joblib.Memory, default None
        Where to cache the graph term (X^T L X, or L for the n x n solvers; it depends on the
        preprocessed X, graph, k, sigma, normalize_c and triplet_metric only); None computes it
        on every fit.

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||W_i||_2; -1 for constant features.
    W_ : ndarray (n_features, d2)
        The last W (zero rows for constant features).
    labels_ : ndarray (n_samples,)
        The last K-means partition.
    alpha_ : float
        The effective graph weight (0 for graph="none").
    solver_ : str
        The W-step solver used.
    objective_history_ : list of float
        F_eps(W_t, V_t), the value of (6) at the optimal R, after every iteration.
    orthogonality_history_ : list of float
        max |W_t^T W_t - I| after every iteration.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the objective test (not ``max_iter``) ended the fit.
    """

    #: Version of this method's selections: stored records of another revision are stale.
    single_threaded_blas = True         # no fit of it was faster on two BLAS threads
    revision = 1
    #: At beta >> alpha (1e6 against 1e-6) W^T W = I puts W on n_components coordinate axes:
    #: row norms of 1 give or take an ulp (ORL: the top 40, binalpha: the top 36), whose order
    #: without a tolerance is round-off's. Ties are ordered by a permutation seeded by
    #: random_state; tie groups span at most the tolerance (numerics.sparsity.tie_groups).
    score_tie_rtol = 1e-12

    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, np.inf, closed="left")],
        "beta": [Interval(Real, 0, np.inf, closed="left")],
        "graph": [StrOptions(set(GRAPHS))],
        "k": [Interval(Integral, 1, None, closed="left")],              # the paper: 5
        # None: the data-driven width (mean squared kNN distance).
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        # d2 must also stay below the number of features, which the fit checks.
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "preprocess": [StrOptions(set(PREPROCESS))],
        "init": [StrOptions(set(INITS))],
        "triplet_metric": [StrOptions(set(TRIPLET_METRICS))],
        # Eq. (7)'s R_ii = 1 / sqrt(||W_i||^2 + eps); eps = 0 needs zero_row_norm (relation
        # check), and an infinite eps makes the objective infinite.
        "eps": [Interval(Real, 0, np.inf, closed="left")],
        "zero_row_norm": [Interval(Real, 0, np.inf, closed="neither"), None],
        "max_iter": POSITIVE_INT,
        "tol": [Interval(Real, 0, np.inf, closed="left")],
        "n_init": POSITIVE_INT,
        "v_step": [StrOptions(set(V_STEPS))],
        "kmeans_init": ["array-like", None],
        "solver": [StrOptions(set(SOLVERS))],
        "eigen_solver": [StrOptions(set(DEPRECATED_EIGEN_SOLVERS)),
                         Hidden(StrOptions({"deprecated"}))],
        "normalize_c": ["boolean"],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1.0,
                 beta=1.0, graph="triplet", k=5, sigma=None, n_components=None,
                 preprocess="zscore", init="random", triplet_metric="sqeuclidean", eps=1e-8,
                 zero_row_norm=None, max_iter=40, tol=1e-6, n_init=10, v_step="descent",
                 kmeans_init=None, solver="auto", normalize_c=True, eigen_solver="deprecated",
                 memory=None):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.graph = graph
        self.k = k
        self.sigma = sigma
        self.n_components = n_components
        self.preprocess = preprocess
        self.init = init
        self.triplet_metric = triplet_metric
        self.eps = eps
        self.zero_row_norm = zero_row_norm
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.v_step = v_step
        self.kmeans_init = kmeans_init
        self.solver = solver
        self.eigen_solver = eigen_solver
        self.normalize_c = normalize_c
        self.memory = memory

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """``max_iter`` (40) iterations, which the default fits mostly run. Each has a V-step
        of K-means restarts on the n x c projection (3e-5 n s) and a W-step: with the dense
        solver (d <= 2n) the few smallest eigenvectors of a d x d matrix, whose reduction to
        tridiagonal form dominates (7e-11 d^3 s); with shift-invert (d > 2n) an LU of an n x n
        system (2.2e-11 n^3 s) and the Woodbury products X A^{-1} X^T (9.5e-11 n^2 d s, times
        the non-zero share, at least 0.05, where mostly-zero X is read through its non-zeros).
        Measured (one BLAS thread) against modelled: USPS (9298 x 256, dense) 10.4 and 11 s;
        coil20 5.1 and 4.7 s; basehock (1993 x 4862, 1.4 % non-zero) 13.9 and 13 s; synthetic
        2000 x 5000 2.0 and 2.1 s an iteration, 3000 x 6200 5.3 and 5.9 s."""
        n, d = float(n_samples), float(n_features)
        solver = params.get("solver", "auto")
        if solver == "auto":
            solver = "dense" if d <= 2 * n else "shift_invert"
        iterations = int(params.get("max_iter", 40))
        v_step = 3e-5 * n
        if solver == "dense":
            w_step = 7e-11 * d ** 3
            what = f"the smallest eigenvectors of a {n_features} x {n_features} matrix"
            memory = 8.0 * (4 * d ** 2 + 2 * n * d)
        else:
            share = min(1.0, max(nonzero_fraction, SPARSE_COLUMN_FRACTION))
            w_step = 2.2e-11 * n ** 3 + 9.5e-11 * n ** 2 * d * share
            what = f"LU factorisations of {n_samples} x {n_samples} systems and n x n x d products"
            memory = 8.0 * (6 * n ** 2 + 2 * n * d)
        return FitCost(iterations * (w_step + v_step), memory,
                       f"{what} in its {iterations} iterations")

    def _check_parameter_relations(self) -> None:
        if self.eps == 0 and self.zero_row_norm is None:
            raise self._invalid("eps=0 needs zero_row_norm (R_ii = 1/sqrt(||W_i||^2 + eps) is "
                                "infinite on the zero rows of W0); give eps > 0 or "
                                "zero_row_norm > 0")
        if self.kmeans_init is not None:
            self._check_kmeans_init()

    def _check_kmeans_init(self) -> None:
        """Recorded starts: v_step="litekmeans", shape (calls >= max_iter + 1, n_init,
        n_clusters), non-negative integer sample indices."""
        if self.v_step != "litekmeans":
            raise self._invalid(f"kmeans_init holds litekmeans starts; it needs "
                                f"v_step='litekmeans' (got v_step={self.v_step!r})")
        starts = np.asarray(self.kmeans_init)
        expected = (int(self.max_iter) + 1, int(self.n_init), int(self.n_clusters))
        if (starts.ndim != 3 or starts.shape[0] < expected[0]
                or starts.shape[1:] != expected[1:]):
            raise self._invalid(f"kmeans_init must have shape (calls >= max_iter + 1, n_init, "
                                f"n_clusters) = ({expected[0]}+, {expected[1]}, {expected[2]}): "
                                f"one list of n_clusters sample indices per replicate of the "
                                f"initial and every iteration's K-means; got shape "
                                f"{starts.shape}")
        if starts.dtype.kind not in "iu" or starts.min() < 0:
            raise self._invalid("kmeans_init must hold non-negative integer sample indices "
                                "(0-based)")

    # -- checks ------------------------------------------------------------------------------
    def _embedding_dim(self, d: int) -> int:
        """d2 (``n_components``, or the number of clusters), which must stay below d."""
        d2 = self.n_clusters_ if self.n_components is None else int(self.n_components)
        if d2 >= d:
            raise UFSBenchError(f"n_components={d2} must satisfy 1 <= n_components < n_features="
                                f"{d}; the paper uses the number of clusters")
        return d2

    # -- steps -------------------------------------------------------------------------------
    def _v_step(self, Y: np.ndarray, previous: np.ndarray | None, rng) -> np.ndarray:
        """(U, V) by K-means on Y (Theorem 1), never worse than the previous partition
        (:func:`ufsbench.numerics.exact_kmeans.descent_kmeans_labels`; its K-means is
        scikit-learn's computed without the per-call overhead, the same labels)."""
        seed = int(rng.randint(np.iinfo(np.int32).max))
        return descent_kmeans_labels(Y, self.n_clusters_, previous, int(self.n_init), seed)

    def _w_step(self, X, M, r_diag, d2, W_prev, solver,
                offset_x: SparsePlusOffset | None = None, apply_m=None):
        """W = the d2 smallest eigenvectors of G = beta/2 R + X^T M X (§4.2, step 3).

        ``offset_x``: X as sparse plus offset row (shift_invert only), ``apply_m``: Y -> M Y.
        """
        diag = 0.5 * self.beta * r_diag
        if solver == "dense":
            G = M.copy()                        # here M is already X^T M X (d x d), see _fit
            G[np.diag_indices_from(G)] += diag
            # = eigh_smallest(G, d2) without its sym(G) copy: G is exactly symmetric here.
            _, W = sla.eigh(G, subset_by_index=[0, d2 - 1], driver="evr", overwrite_a=True)
        elif solver == "shift_invert":
            # Lower bound on lambda_min(G): M = alpha L + I - V^T V is PSD except for the
            # max-margin graph, where alpha L = -alpha H >= -alpha I, and the raw triplet C.
            low: float | None = float(diag.min())
            if self.graph == "maxmargin":
                low -= self.alpha_ * self._x_norm2
            elif self.graph == "triplet" and not self.normalize_c and self.alpha_ > 0:
                low = None                      # raw triplet L is indefinite: Weyl bound
            factor = X.T if offset_x is None else offset_x
            _, W = smallest_eigh_shift_invert(diag, factor, M, d2, v0=W_prev, lower_bound=low,
                                              apply_m=apply_m)
        else:
            raise ValueError(f"unknown W-step solver {solver!r}")
        return W

    def _objective(self, Y, M, W, gram: bool = False) -> float:
        """F_eps of (6) at the optimal R: Tr(Y^T M Y) + beta sum_i sqrt(||W_i||^2 + eps).

        ``gram``: M is X^T M X (d x d) and Tr(Y^T M Y) = Tr(W^T (X^T M X) W).
        """
        quad = np.sum(W * (M @ W)) if gram else np.sum(Y * (M @ Y))
        return float(quad + self.beta * np.sum(np.sqrt(row_norms(W) ** 2 + self.eps)))

    def _solve_uv(self, Y, labels, centres, start):
        """The authors' (U, V) step (``solveUV``): litekmeans on Y from the given starts; its
        partition replaces the previous one only if ||Y - U V||_F = ||Y - centres[labels]||_F
        decreases, the previous centres being those of the embedding that produced them."""
        new_labels, new_centres, _ = litekmeans(Y, self.n_clusters_, start)
        if np.linalg.norm(Y - new_centres[new_labels]) < np.linalg.norm(Y - centres[labels]):
            return new_labels, new_centres
        return labels, centres

    def _kmeans_starts(self, n: int, rng):
        """The starts of every litekmeans call, in order (the initial one first): the recorded
        ``kmeans_init``, or n_clusters distinct samples per replicate drawn from ``rng``."""
        c, replicates = self.n_clusters_, int(self.n_init)
        if self.kmeans_init is not None:
            starts = np.asarray(self.kmeans_init)
            if starts.max() >= n:
                raise UFSBenchError(f"kmeans_init holds sample index {int(starts.max())}, but X "
                                    f"has {n} samples (indices are 0-based)")
            yield from starts
            return
        while True:
            yield [rng.choice(n, size=c, replace=False) for _ in range(replicates)]

    def _reweight(self, W: np.ndarray) -> np.ndarray:
        """R_ii of Eq. (7), 1 / sqrt(||W_i||^2 + eps); with eps = 0 a zero row of W gets
        1 / zero_row_norm."""
        if self.eps > 0:
            return l21_reweight(W, eps=self.eps, factor=1.0)
        norms = np.sqrt(np.einsum("ij,ij->i", W, W))
        norms[norms == 0] = self.zero_row_norm
        return 1.0 / norms

    def _initial_w(self, d: int, d2: int, rng) -> np.ndarray:
        """W0 (Algorithm 1, step 2): d2 distinct identity columns, drawn or the first d2."""
        W = np.zeros((d, d2))
        rows = (np.arange(d2) if self.init == "axes"
                else rng.choice(d, size=d2, replace=False))
        W[rows, np.arange(d2)] = 1.0
        return W

    def _resolve_solver(self, n: int, d: int) -> str:
        solver = self.solver
        if self.eigen_solver != "deprecated":
            solver = DEPRECATED_EIGEN_SOLVERS[self.eigen_solver]
            warnings.warn(f"UFSOL's eigen_solver is deprecated and will be removed in the next "
                          f"release; use solver={solver!r} (eigen_solver={self.eigen_solver!r} "
                          f"was given)", FutureWarning, stacklevel=4)
        if solver == "auto":
            solver = "dense" if d <= 2 * n else "shift_invert"
        return solver

    def _data_term(self, X: np.ndarray, gram: bool) -> np.ndarray:
        """Algorithm 1, step 1 (C by (2) or the variant, and L): X^T (alpha L + I) X (d x d)
        for the dense W-step, else alpha L + I (n x n)."""
        n = X.shape[0]
        graph_args = dict(graph=self.graph, k=self._neighbours(n), sigma=self.sigma,
                          normalize_c=bool(self.normalize_c), metric=self.triplet_metric)
        if gram:
            base = X.T @ X                                              # X^T I X
            if self.alpha_ > 0:
                base += self.alpha_ * cached_call(self.memory, graph_gram, X, **graph_args)
            return base
        L = (cached_call(self.memory, ufsol_laplacian, X, **graph_args)
             if self.alpha_ > 0 else np.zeros((n, n)))
        return self.alpha_ * L + np.eye(n)                              # alpha L + I

    def _fit(self, X):
        n, d_in = X.shape
        d2 = self._embedding_dim(d_in)
        rng = check_random_state(self.random_state)
        X, keep = self._kept_features(self._preprocess(X), d2)
        self.alpha_ = 0.0 if self.graph == "none" else float(self.alpha)
        solver = self.solver_ = self._resolve_solver(n, X.shape[1])
        self._x_norm2 = float(np.linalg.norm(X, 2) ** 2) if (
            solver == "shift_invert" and self.graph == "maxmargin") else 0.0
        W = self._initial_w(X.shape[1], d2, rng)
        # One OpenMP thread for scikit-learn's Lloyd in the V-step: on n x c data its parallel
        # chunks cost more in synchronisation than they save (umist, 2 busy cores: 30 s of CPU
        # per default fit against 2 s), and the runner fits on one thread, so a direct fit
        # repeats its round-off.
        with _threadpools().limit(limits=1, user_api="openmp"):
            W, labels, history, ortho, converged = self._iterate(X, W, rng, solver)
        self.W_ = np.zeros((d_in, d2))
        self.W_[keep] = W
        self.labels_ = labels
        self.objective_history_ = history
        self.orthogonality_history_ = ortho
        self._stopped(len(history), converged, test="relative objective change < tol")
        self.scores_ = np.full(d_in, -1.0)                 # constant features rank last
        self.scores_[keep] = row_norms(W)

    def _kept_features(self, X: np.ndarray, d2: int) -> tuple[np.ndarray, np.ndarray]:
        """X without its constant features, and the mask of the kept ones."""
        spread = X.std(axis=0)
        keep = spread > 1e-12 * max(float(spread.max(initial=0.0)), 1e-300)
        if int(keep.sum()) <= d2:
            raise UFSBenchError(f"only {int(keep.sum())} non-constant feature(s); UFSOL needs more "
                                f"than n_components={d2}")
        return X[:, keep], keep

    def _iterate(self, X, W, rng, solver):
        """Algorithm 1 from W0: (W, labels, objective history, orthogonality history,
        converged)."""
        d2 = W.shape[1]
        # d x d form (the dense W-step): X^T M X with M = alpha L + I - V^T V is
        # alpha X^T L X + X^T X - (V X)^T (V X); neither M nor any n x n matrix is formed.
        gram = solver == "dense"
        base = self._data_term(X, gram)
        # Mostly-zero data (z-scored: sparse plus a constant row): the Woodbury products of
        # the shift_invert W-step on the non-zero part, and M by the sparse alpha L + I.
        offset_x = SparsePlusOffset.from_median(X) if solver == "shift_invert" else None
        base_sparse = (sp.csr_matrix(base) if offset_x is not None
                       and self.graph != "maxmargin" else None)
        Y = X @ W
        released_v = self.v_step == "litekmeans"
        starts = self._kmeans_starts(X.shape[0], rng) if released_v else None
        labels = centres = None
        if released_v:                        # the authors' (U0, V0): K-means on X W0
            labels, centres, _ = litekmeans(Y, self.n_clusters_, next(starts))
        history, ortho = [], []
        exactly_symmetric = False
        for t in range(int(self.max_iter)):
            r_diag = self._reweight(W)                                    # Eq. (7)
            if released_v:
                labels, centres = self._solve_uv(Y, labels, centres, next(starts))
            else:
                labels = self._v_step(Y, labels, rng)                      # Theorem 1
            if gram:                                                       # X^T M X (d x d)
                VX = indicator_projection(X, labels)
                M = base - VX.T @ VX
            else:
                M = base - indicator_gram(labels)                          # alpha L + I - V^T V
            # sym(M) is M itself when M is exactly symmetric (A^T A products run as BLAS syrk,
            # graph terms are symmetrised once): checked once, then the d x d passes are saved.
            exactly_symmetric = exactly_symmetric or np.array_equal(M, M.T)
            if not exactly_symmetric:
                M = sym(M)
            apply_m = None if base_sparse is None else _metric_apply(base_sparse, labels)
            W = self._w_step(X, M, r_diag, d2, W, solver, offset_x, apply_m)  # eigen step
            Y = X @ W                                                      # also the next V-step's
            history.append(self._objective(Y, M, W, gram=gram))
            ortho.append(float(np.abs(W.T @ W - np.eye(d2)).max()))
            # strict: tol = 0 runs max_iter iterations (as the authors' code does, whose own
            # test ||W - W_prev||_F <= 5e-7 is never met)
            if t > 0 and abs(history[-2] - history[-1]) < self.tol * max(abs(history[-2]),
                                                                          1e-300):
                return W, labels, history, ortho, True
        return W, labels, history, ortho, False

    def _preprocess(self, X):
        if self.preprocess == "unit_norm":
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            return X / np.where(norms > 0, norms, 1.0)
        if self.preprocess == "zscore":
            std = X.std(axis=0)
            return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
        return X
