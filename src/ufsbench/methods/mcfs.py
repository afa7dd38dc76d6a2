"""MCFS (Cai, Zhang & He, "Unsupervised Feature Selection for Multi-Cluster Data", KDD 2010).

================  =====================  ==============================  ======================
setting           paper (as printed)     authors' code (as released)     our default
================  =====================  ==============================  ======================
graph             kNN, k = 5; 0/1, heat  constructW: k = 5, heat kernel  k = 5, heat,
                  kernel or dot-product  exp(-d^2 / (2 t^2)), t = mean   sigma = mean squared
                  weights                Euclidean distance over all     kNN distance
                                         pairs (3000 random samples
                                         when n > 3000)
K eigenvectors    number of clusters c   ``nUseEigenfunction`` = 5       c (``n_components``)
                                         (the shared cases pass c)
multiple          --                     LAPACK's basis (moves with the  canonical basis of the
eigenvalue                               BLAS build), the constant       eigenspace
                                         vector Gram-Schmidted first
regression        LARS, cardinality =    LARS-lasso on X^T X + 1e-3 I,   the same path
                  the feature count h    stopped at h active variables
counts h < H      --                     one path to the largest count   a path per count h,
asked together                           H; h takes the last step with   stopped at h
                                         h active (not nested in H's)    (``path_cardinality``)
score             max_k |a_kj|           max_k |a_kj|, unit-norm a_k     the same
================  =====================  ==============================  ======================

``released`` sets sigma="mean_distance" (Cai's width; all pairs instead of a random subsample
for n > 3000) with k = 5, heat weights, K = c and ridge 1e-3; a case that asked ``MCFS_p`` for
several counts at once also sets ``path_cardinality`` to the largest of them
(``ufsbench.conformance.mcfs``).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import MEMORY_CONSTRAINT, NON_NEGATIVE, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics import graphs, knn_graph, ranking_from_scores
from ufsbench.numerics.lars import ROUNDOFF_ZERO, SparseLarsPath, lasso_lars_ridge_path
from ufsbench.numerics.spectral import generalized_spectral_embedding

#: Marks a deprecated parameter that was not passed (scikit-learn's convention).
DEPRECATED = "deprecated"


def lars_max_iter(n_features: int) -> int:
    """Safety cap on the steps of one path (lasso steps may drop variables, so a path is longer
    than its cardinality; it normally ends at the cardinality stop long before this)."""
    return 8 * n_features


#: alpha_0 of every path is scaled to at least this (see :func:`path_scale`).
_PATH_ALPHA0 = 2.0 ** 30


def path_scale(xy: np.ndarray, n_samples: int) -> float:
    """The power of two s by which y is scaled before its LARS path is traced.

    Both LARS solvers stop once alpha = max |correlation| / n drops to float32 eps (~1.2e-7), an
    absolute threshold (scikit-learn's rule). On small-n data unscaled MCFS paths reach it long before
    h non-zeros (lymphoma: 127-194, pix10p: 102-109 instead of up to 300), while Cai's ``lars.m``
    has no such stop and runs until h variables are active. The lasso path of s y is s times the
    path of y with the same steps; scaling by a power of two is exact in floating point, so the
    steps before the unscaled path's stop are the same bits (times s) and so are the unit-norm
    coefficients MCFS takes there -- the path only goes on to the counts the unscaled one
    misses. s lifts alpha_0 to 2^30, putting the stop at ~1e-16 relative to alpha_0 (round-off level).
    """
    alpha0 = float(np.max(np.abs(xy))) / n_samples if xy.size else 0.0
    if not np.isfinite(alpha0) or alpha0 <= 0.0 or alpha0 >= _PATH_ALPHA0:
        return 1.0
    return float(np.ldexp(1.0, int(np.ceil(np.log2(_PATH_ALPHA0 / alpha0)))))


def spectral_lars_paths(X: np.ndarray, Y: np.ndarray, cardinality: int, ridge: float = 1e-3,
                        solver: str = "auto") -> list[SparseLarsPath]:
    """The LARS-lasso path of every column y_k of Y on X, up to ``cardinality`` non-zeros (stage 2).

    For each k the lasso path of min ||y_k - X a||^2 + ridge ||a||^2 (+ l1) is traced by LARS
    with the lasso modification on the Gram matrix X^T X + ridge I (Cai's ``SR.m``) until the
    first step with ``cardinality`` non-zeros (Cai's ``lars.m`` stop), with y_k scaled by
    :func:`path_scale` so that no absolute alpha threshold ends it before. The path for a
    smaller cardinality is a prefix of this one, bit for bit (tests check it for both solvers).

    ``solver``: ``"gram"`` forms the d x d Gram and runs scikit-learn's ``lars_path_gram``
    (which has no cardinality stop: it is run for 2h + 20 steps, doubled until the count is
    reached or the path ends, and cut at the count -- a longer run repeats the shorter one's
    steps bit for bit); ``"implicit"`` runs :func:`ufsbench.numerics.lars.lasso_lars_ridge_path`,
    the same path without the Gram (O(n d) per step, O(n d) memory); ``"auto"`` = implicit when
    d > n, else gram (see the class docstring for the measurements behind the switch).
    """
    n, d = X.shape
    if solver not in ("auto", "gram", "implicit"):
        raise ValueError(f"solver={solver!r} must be 'auto', 'gram' or 'implicit'")
    if solver == "auto":
        solver = "implicit" if d > n else "gram"
    XY = X.T @ Y
    XY *= [path_scale(XY[:, j], n) for j in range(XY.shape[1])]
    cap = lars_max_iter(d)
    if solver == "implicit":
        return [lasso_lars_ridge_path(X, XY[:, j], ridge, n_samples=n, max_iter=cap,
                                      stop_nnz=cardinality) for j in range(Y.shape[1])]
    gram = X.T @ X
    gram[np.diag_indices(d)] += ridge
    return [_gram_path_to_cardinality(XY[:, j], gram, n, cardinality, cap)
            for j in range(Y.shape[1])]


def _gram_path_to_cardinality(xy, gram, n_samples, cardinality, cap) -> SparseLarsPath:
    """``lars_path_gram`` up to the first step with ``cardinality`` non-zeros (see above)."""
    max_iter = min(2 * cardinality + 20, cap)
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            alphas, _, dense = lars_path_gram(xy, gram, n_samples=n_samples, method="lasso",
                                              max_iter=max_iter)
        path = SparseLarsPath.from_dense(alphas, dense)
        reached = np.flatnonzero(path.nnz() >= cardinality)
        if reached.size:                       # cut at the cardinality stop
            end = int(reached[0]) + 1
            return SparseLarsPath(path.n_features, path.alphas[:end], path.active[:end],
                                  path.coefs[:end])
        if dense.shape[1] <= max_iter or max_iter >= cap:   # ended before max_iter, or capped
            return path
        max_iter = min(2 * max_iter, cap)


def best_step(nnz: np.ndarray, cardinality: int) -> int:
    """The step MCFS takes for ``cardinality`` h: the *first* step with h non-zeros, where a
    path run for h stops (Cai's ``lars.m`` with its cardinality stop, as ``MCFS_p.m`` run for
    h). A path that ends below h (no ridge and h > n, or d < h) gives its last step with the
    largest number of non-zeros. Only the steps up to the first with >= h non-zeros are looked
    at: all of a path run for h, the same prefix of a longer one."""
    nnz = np.asarray(nnz)
    over = np.flatnonzero(nnz >= cardinality)
    if over.size and nnz[over[0]] == cardinality:
        return int(over[0])
    head = nnz[: over[0]] if over.size else nnz
    return int(np.flatnonzero(head == head.max())[-1])


def step_supports(path: SparseLarsPath) -> list[np.ndarray]:
    """Each step's non-zero coefficients' features, a drop's round-off remainder excluded: the
    variables :func:`ufsbench.numerics.lars.cardinality` counts (its count is their number)."""
    # All steps at once (a few numpy calls per path instead of four per step): each step's
    # largest |coefficient| by a segmented max, the threshold ROUNDOFF_ZERO * max per step.
    lengths = np.array([len(c) for c in path.coefs], dtype=np.intp)
    if not lengths.any():
        return [np.zeros(0, dtype=int) for _ in lengths]
    magnitude = np.abs(np.concatenate(path.coefs))
    features = np.concatenate([np.asarray(a) for a in path.active])
    bounds = np.concatenate(([0], np.cumsum(lengths)))      # step s: [bounds[s], bounds[s+1])
    largest = np.zeros(lengths.size)
    filled = lengths > 0
    largest[filled] = np.maximum.reduceat(magnitude, bounds[:-1][filled])
    keep = magnitude > np.repeat(ROUNDOFF_ZERO * largest, lengths)
    kept_before = np.concatenate(([0], np.cumsum(keep)))
    kept = kept_before[bounds[1:]] - kept_before[bounds[:-1]]
    return np.split(features[keep], np.cumsum(kept)[:-1])


def active_during_steps(path: SparseLarsPath,
                        supports: list[np.ndarray] | None = None) -> np.ndarray:
    """How many variables were active while each step was taken: Cai's ``vars`` when
    ``lars.m`` records the step, before the decrement of a lasso drop.

    That is |support(s) U support(s - 1)| (supports without drop remainders, as
    :func:`ufsbench.numerics.lars.cardinality` counts): the step's non-zeros plus the
    variables it dropped. Independent of whether a solver lists a dropped variable (at ~0) in
    the step's active set. ``supports``: :func:`step_supports` of the path, when the caller
    has them.
    """
    supports = step_supports(path) if supports is None else supports
    # Python sets: a step's support has at most a few hundred indices, where a set union is
    # several times faster than np.union1d's sort.
    sets = [set(support.tolist()) for support in supports]
    counts = [len(sets[0])]
    counts += [len(sets[s] | sets[s - 1]) for s in range(1, len(sets))]
    return np.array(counts, dtype=int)


def last_step_with_active(active: np.ndarray, nnz: np.ndarray, cardinality: int) -> int:
    """The step Cai's ``SR.m`` takes for ``cardinality`` h from a path run to a larger count:
    the *last* step during which h variables were active (``lars.m`` overwrites its record of
    h at every such step; at a drop step the record holds h - 1 non-zeros and the dropped
    variable at ~0). A path that never had h active: :func:`best_step`'s choice."""
    hits = np.flatnonzero(np.asarray(active) == cardinality)
    return int(hits[-1]) if hits.size else best_step(nnz, cardinality)


class CardinalityCoefficients:
    """One column's LARS path kept only at the steps some cardinality 1..H takes (compact).

    ``coef(h)`` is the unit-norm coefficient vector MCFS takes for cardinality h <= H. With
    ``path_cardinality`` None (the path was run to H), the same bits as from a path run for h
    (its prefix: :func:`best_step`); with P >= H, the step Cai's ``SR.m`` records for h on the
    path run to P (:func:`last_step_with_active`), the same bits for every H <= P.
    """

    def __init__(self, path: SparseLarsPath, max_cardinality: int,
                 path_cardinality: int | None = None):
        self.n_features, self.max_cardinality = path.n_features, max_cardinality
        if path_cardinality is None:
            self.nnz, self.active = path.nnz(), None
        else:   # one pass over the steps for both counts (nnz = len(support) = cardinality)
            supports = step_supports(path)
            self.nnz = np.array([len(support) for support in supports], dtype=int)
            self.active = active_during_steps(path, supports)
            # The last step with each count of active variables, in one pass over the steps:
            # what last_step_with_active finds for a count that occurs.
            self.last_with_active = {int(a): s for s, a in enumerate(self.active)}
        steps = {self.step(h) for h in range(1, max_cardinality + 1)}
        self.kept = {s: (path.active[s], path.coefs[s]) for s in steps}

    def step(self, cardinality: int) -> int:
        """The path step taken for ``cardinality``."""
        if self.active is None:
            return best_step(self.nnz, cardinality)
        if cardinality in self.last_with_active:
            return self.last_with_active[cardinality]
        return last_step_with_active(self.active, self.nnz, cardinality)

    def coef(self, cardinality: int) -> tuple[np.ndarray, int]:
        """(a / ||a||, its number of non-zeros) at the step taken for ``cardinality``."""
        if not 1 <= cardinality <= self.max_cardinality:
            raise ValueError(f"cardinality {cardinality} outside 1..{self.max_cardinality}")
        step = self.step(cardinality)
        a = np.zeros(self.n_features)
        active, values = self.kept[step]
        a[active] = values
        norm = np.linalg.norm(a)
        return (a / norm if norm > 0 else a), int(self.nnz[step])


def coefficients_for(columns: list[CardinalityCoefficients],
                     cardinality: int) -> tuple[np.ndarray, np.ndarray]:
    """A (d, K) with column k = ``columns[k].coef(cardinality)``, and the cardinality reached."""
    pairs = [c.coef(cardinality) for c in columns]
    return np.column_stack([a for a, _ in pairs]), np.array([r for _, r in pairs], dtype=int)


def sparse_spectral_coefficients(X: np.ndarray, Y: np.ndarray, cardinality: int,
                                 ridge: float = 1e-3,
                                 solver: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Stage 2 of MCFS: one LARS-lasso regression of every column y_k of Y on X.

    The coefficient vector taken from each path (:func:`spectral_lars_paths`) is the one at the
    *first* path step with exactly ``cardinality`` non-zeros (:func:`best_step`), rescaled to
    unit l2 norm. If the path never reaches that many non-zeros (without ridge when h > n), the
    last step with the largest cardinality below it is taken. Returns A (d, K) and the
    cardinality reached per column.
    """
    paths = spectral_lars_paths(X, Y, cardinality, ridge, solver)
    return coefficients_for([CardinalityCoefficients(p, cardinality) for p in paths],
                            cardinality)


@register("mcfs")
class MCFS(UFSSelector):
    """Multi-Cluster Feature Selection: spectral embedding, then sparse regression per eigenvector.

    Cai, Zhang & He (2010), §3 (the equation numbers below are those of the paper's §3 as
    restated in ``papers/baselines.md`` §2):

    1. (Eqs. 1-2) kNN graph S (heat kernel, 0/1 or dot-product weights), D = diag(S 1),
       L = D - S; Y = the K generalised eigenvectors of L y = lambda D y with the smallest
       non-trivial eigenvalues (the constant one, lambda = 0, is dropped); Y^T D Y = I.
    2. (Eqs. 3-4) for each y_k: min ||y_k - X a_k||^2 s.t. ||a_k||_1 <= gamma, solved by LARS
       with a *cardinality* target instead of gamma: a_k has exactly ``n_features_to_select``
       non-zeros.
    3. (Eq. 5) MCFS(j) = max_k |a_{k,j}|; the h features with the largest score are selected.

    Decisions where the paper is silent (following Deng Cai's public ``MCFS_p.m``/``SR.m`` unless
    stated):

    * ``selection_kind = "subset"``: the LARS cardinality equals the requested feature count h,
      so the subsets for different h need not be nested, as in Cai's code; FSASL's variant (one
      fit at max h, truncated) is not used. ``scores_`` is still set. But one fit serves every
      h <= H exactly (``one_fit_serves_counts``): the embedding does not depend on h, and the
      path run for h (up to its first step with h non-zeros) is a bitwise prefix of the path run
      for H, so the step a fit with h takes is found on the stored path. ``top_features(h)``
      returns that subset (the same bits as a refit with ``n_features_to_select = h``: tests
      compare both), and the runner fits once per setting.
    * LARS *with the lasso modification* (variables may leave the active set) on the Gram matrix
      X^T X + ``ridge`` I with ``ridge = 1e-3`` (Cai's ``SR.m``); the ridge is what lets the path
      reach h >= n non-zeros. Cai's ``lars.m`` runs until h variables are active; scikit-learn's
      rule (which both our solvers mirror) also stops at alpha <= float32 eps, absolute, which
      ends the unscaled small-n paths at 102-214 non-zeros (allaml, srbct, lymphoma, pix10p,
      prostate_ge, jaffe, pie10p), so that higher counts would get zero scores. Each y_k is
      therefore scaled by a power of two first (:func:`path_scale`, exact: the same steps, the
      same unit-norm coefficients), and the path goes on to h non-zeros as Cai's does.
    * Which step of the path: the *first* with h non-zeros, where the path stops. This is the
      paper's "specify the cardinality" and what Cai's ``lars.m`` returns when ``MCFS_p.m`` is
      run for h (its stop: ``vars >= h``). Run with a list of counts, Cai's ``SR.m`` instead
      stops at the largest and takes, for each smaller h, the *last* step with h non-zeros
      before it, so a count's subset depends on the largest count asked for; not copied.
      Non-zeros are counted as Cai's ``vars``, the active-set size after the step's drops: at a
      lasso drop step the dropped coefficient is zero in exact arithmetic, but round-off leaves
      ~1e-17 of the step's largest in ~10 % of the drops, depending on the BLAS kernel, and
      counting that remainder stops a path one step early (another gemv kernel alone moves 4
      subsets on lymphoma and pix10p). ``lars.cardinality`` counts
      coefficients above 1e-12 of the step's largest (remainders <= 7e-17, coefficients that
      stay >= 2e-8 on the papers' data sets).
      X is neither centred nor scaled and there is no intercept. The coefficient vector is
      rescaled to unit l2 norm before the max. The score is max_k |a_{k,j}| with the absolute value
      (skfeature forgets it).
    * How the LARS path is computed (speed only; same path): for d > n the Gram X^T X + ridge I
      is never formed. ``ufsbench.numerics.lars.lasso_lars_ridge_path`` runs LARS-lasso on the
      implicit Gram -- the lasso path of the augmented design [X; sqrt(ridge) I] without
      materialising it: correlations with the equiangular direction as X^T (X_A w), Cholesky
      rows X_A^T x_j, diagonal ||x_j||^2 + ridge -- O(n d) per step and O(n d) memory instead of
      an O(n d^2) Gram product, 8 d^2 bytes (times 3: scikit-learn copies it twice) and O(|A| d)
      per step. Its step logic mirrors scikit-learn's ``lars_path_gram`` statement by statement,
      so supports are identical and coefficients agree to ~1e-11 (tests compare both). The
      alternatives were rejected: ``lars_path_gram`` needs a dense ndarray Gram (it copies it and
      swaps its rows and columns in place), and ``lars_path`` on the augmented design would form
      an (n + d) x d matrix. For d <= n the formed Gram stays (one n d^2 product, then O(|A| d)
      per step beats O(n d) per step: 1000 x 256, K = 10, h = 100: 0.8 s vs 4.6 s).
      Measured (docs/performance-history.md, h = 100, K = c, OMP_NUM_THREADS=1):
      prostate_ge 102 x 5966 and synthetic 100 x 10000 in a few seconds instead of 15-40 s, with
      a peak of a few MB instead of 0.9-2.4 GB.
    * Which eigenvectors when an eigenvalue is multiple: a kNN graph with C connected components
      (att/orl 3, jaffe and pix10p 6, coil20 9 at k = 5) has lambda = 0 C times, and the
      eigensolver's basis of that eigenspace is decided by round-off. Each eigenvector is
      regressed separately with an l1 penalty, so the selection depends on the basis: the same
      code gave different subsets on att, orl, jaffe and pix10p under three BLAS configurations
      (Skylake-X and Haswell kernels, 1 or 2 threads), and a fresh run's coil20 and att subsets
      differed from stored ones with Jaccard down to 0.5. The paper (any basis of the
      eigenspace is a solution) and Cai's ``eigs`` leave this open; we take the canonical basis
      of :func:`ufsbench.numerics.linalg.canonical_eigenbasis`.
    * K (``n_components``) defaults to the number of clusters c (the paper's experiments and
      FSASL); Cai's code default is 5.
    * Graph: k = 5 neighbours, "or"-symmetrised, heat kernel exp(-||x_i - x_j||^2 / sigma) with
      ``sigma=None`` = the mean squared kNN distance; ``sigma="mean_distance"`` is Cai's
      ``constructW`` width, exp(-d^2 / (2 t^2)) with t the mean pairwise distance (both are
      data-driven widths). ``weight="cosine"`` is the paper's dot-product weighting on
      normalised data.
    * Several counts from one path (``path_cardinality=P``): Cai's ``MCFS_p`` given a list of
      counts runs one LARS path per eigenvector to the largest, P, and ``SR.m`` takes for each
      count h the last step during which h variables were active
      (:func:`last_step_with_active`), so its h-subset depends on P. With P given, every fit
      with h <= P does the same; None (default) runs the path to h itself.
    * Fewer than h features with a non-zero score (K small, or h close to d): the support is
      padded with the zero-score features of lowest index (Cai's code pads likewise, with a
      warning).

    Parameters
    ----------
    n_features_to_select : int or None, default None
        h, the size of the exact subset and the LARS cardinality target (None: min(50,
        n_features)).
    n_clusters : int, default 2
        K, the number of eigenvectors regressed, when ``n_components`` is None; unused
        otherwise.
    random_state : int, RandomState instance or None, default None
        Unused: the fit is deterministic.
    k : int, default 5
        Neighbours of the kNN graph.
    weight : {"heat", "binary", "cosine"}, default "heat"
        Edge weight of the graph: heat kernel, 0/1 or dot product (cosine).
    sigma : float, "mean_distance" or None, default None
        Heat-kernel width (None: mean squared kNN distance; "mean_distance": Cai's 2 t^2, t
        the mean pairwise distance).
    n_components : K, the eigenvectors regressed (the embedding dimension; None: n_clusters).
    ridge : the ridge of the LARS Gram X^T X + ridge I (1e-3, Cai's ``SR.m``).
    path_cardinality : int or None, default None
        Where each LARS path stops: None at ``n_features_to_select`` h (a path per count);
        P >= h at P, h then taking the last step with h active variables (Cai's ``MCFS_p``
        asked for several counts at once, P the largest).
    memory : None, str or joblib.Memory, default None
        Where to cache the kNN graph (it depends on X, k, weight and sigma only); None computes it
        on every fit.
    n_eigenvectors : deprecated
        The old name of ``n_components`` (a FutureWarning; removed in the next release).

    Attributes
    ----------
    support_ : ndarray of bool (n_features,)
        The h selected features.
    scores_ : ndarray (n_features,)
        max_k |a_kj| of the unit-norm coefficients.
    coef_ : ndarray (n_features, K)
        The coefficient vectors a_k, each rescaled to unit l2 norm.
    cardinality_ : ndarray of int (K,)
        Non-zeros of each coefficient vector.
    embedding_ : ndarray (n_samples, K)
        Y, the K generalised eigenvectors.
    eigenvalues_ : ndarray (K,)
        Their eigenvalues lambda.
    """

    selection_kind = "subset"
    one_fit_serves_counts = True
    #: Version of the selections: raised whenever a fix changes them (CHANGELOG.md, Method history).
    revision = 3
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "k": POSITIVE_INT,
        "weight": [StrOptions({"heat", "binary", "cosine"})],
        "sigma": [Interval(Real, 0, None, closed="neither"), StrOptions({"mean_distance"}), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "ridge": NON_NEGATIVE,
        "path_cardinality": [Interval(Integral, 1, None, closed="left"), None],
        "memory": MEMORY_CONSTRAINT,
        "n_eigenvectors": [Interval(Integral, 1, None, closed="left"), None,
                           Hidden(StrOptions({DEPRECATED}))],
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, k=5,
                 weight="heat", sigma=None, n_components=None, ridge=1e-3,
                 path_cardinality=None, memory=None, n_eigenvectors=DEPRECATED):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.k = k
        self.weight = weight
        self.sigma = sigma
        self.n_components = n_components
        self.ridge = ridge
        self.path_cardinality = path_cardinality
        self.memory = memory
        self.n_eigenvectors = n_eigenvectors

    def _check_parameter_relations(self) -> None:
        h, P = self.n_features_to_select, self.path_cardinality
        if h is not None and P is not None and h > P:
            raise self._invalid(f"path_cardinality={P} must be at least n_features_to_select={h} "
                                f"(the path must reach the count it serves)")

    def _n_components_param(self):
        """``n_components``, from the deprecated ``n_eigenvectors`` where that was passed."""
        if self.n_eigenvectors != DEPRECATED:
            warnings.warn("MCFS's n_eigenvectors is deprecated and will be removed in the next "
                          "release; use n_components", FutureWarning, stacklevel=4)
            return self.n_eigenvectors
        return self.n_components

    def _n_eigenvectors(self, n: int) -> int:
        """K, the number of eigenvectors: at most n - 1, as the constant one is dropped."""
        given = self._n_components_param()
        K = self.n_clusters_ if given is None else given
        if n - 1 < K:
            given = (f"n_components={K}" if given is not None
                     else f"n_components=None takes n_clusters={K}, which")
            raise UFSBenchError(f"MCFS: {given} must be at most n_samples - 1 = {n - 1} (the "
                                f"constant eigenvector is dropped)")
        return int(K)

    def _fit(self, X):
        n, d = X.shape
        K = self._n_eigenvectors(n)
        h = self.n_features_to_select_
        P = self.path_cardinality
        if P is not None and h > P:
            raise UFSBenchError(f"MCFS: path_cardinality={P} must be at least the "
                                f"{h} features to select")
        self.embedding_, self.eigenvalues_ = generalized_spectral_embedding(
            self._graph(X, self._neighbours(n)), int(K))
        paths = spectral_lars_paths(X, self.embedding_, h if P is None else min(P, d),
                                    self.ridge)
        # Only the steps some count 1..h takes are kept (what _subset_for needs).
        self._path_steps = [CardinalityCoefficients(p, h, P) for p in paths]
        self.coef_, self.cardinality_ = coefficients_for(self._path_steps, h)
        self.scores_ = np.abs(self.coef_).max(axis=1)
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[ranking_from_scores(self.scores_)[:h]] = True

    def _graph(self, X: np.ndarray, k: int):
        """The kNN graph (cached at ``memory``); large n: sparse, so that the embedding is
        computed by Lanczos (no n x n array, no O(n^3) eigh)."""
        n = X.shape[0]
        graph = graphs.sparse_knn_graph if n >= graphs.SPARSE_MIN_SAMPLES else knn_graph
        sigma = self.sigma
        if sigma == "mean_distance":
            sigma = (2.0 * cached_call(self.memory, graphs.mean_distance, X) ** 2
                     if self.weight == "heat" else None)
        return cached_call(self.memory, graph, X, k=k, weight=self.weight, sigma=sigma)

    def _subset_for(self, h: int) -> np.ndarray:
        """The features a fit with n_features_to_select = h selects (Eq. 5 on its coefficients)."""
        coef, _ = coefficients_for(self._path_steps, h)
        return np.sort(ranking_from_scores(np.abs(coef).max(axis=1))[:h])
