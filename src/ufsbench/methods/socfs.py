"""SOCFS (Han & Kim, CVPR 2015) and its triplet-regularised variant of UFSOL's Table 2.

Settings of SOCFS: the paper (its text is not available here; the model as restated by UFSOL
§2.2 and the header of Han's code), the authors' code as released (AutoUFSTool
``UFSs/SOCFS/SOCFS.m``, Han's "Revised Aug, 2015"; preset ``released``) and our default.

=============  ==========================  ===================================  ====================
setting        paper (as restated)         authors' code (as released)          our default
=============  ==========================  ===================================  ====================
bias b         in the model                b-step commented out: b = 0          b = 0
m              projection dimension        d when not passed (errors for        c (n_components=None)
                                           d > n); the cases pass m = c
lambda         tuned (UFSOL: 1e-6 .. 1e6)  100                                  100 (grid 1e-6 .. 1e6)
lambda2        E >= 0 splitting penalty    100                                  100
start          not stated                  E = orth(rand(n, m)),                E, B: Q factors of
                                           B = orth(rand(m, m)), W, H = rand    uniform draws; W, H
                                                                                uniform
D0             not stated                  I                                    reweighted from W0
eps in D       not stated                  2.2e-16                              1e-8
iterations     not stated                  50 x 50, fixed                       50 x 50 at most; stop
                                                                                at relative decrease
                                                                                <= 1e-7
ranking        ||w_i|| decreasing          sort ascending (worst first)         ||w_i|| decreasing
=============  ==========================  ===================================  ====================

``released`` sets lambda_ = lambda2 = 100, 50 x 50 iterations with tol=0 (the fixed count is then
the stop: ``converged_`` True), d_init="identity", eps=2.2e-16; its start is drawn from
``random_state`` unless ``init`` gives (E0, B0, W0, H0) (``ufsbench.conformance.socfs`` injects
the recorded Octave draws: the selection moves a lot with the start).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy import linalg as sla
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import MEMORY_CONSTRAINT, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics import l21_reweight, orthonormal_polar, row_norms
from ufsbench.numerics.gram_solve import cholesky_solve, metric_gram, solve_gram_plus_diag
from ufsbench.numerics.irls import smoothed_l21_norm
from ufsbench.numerics.sparse_gram import SparsePlusOffset
from ufsbench.numerics.triplet import ordinal_laplacian, sparse_triplet_weights

#: The weights of the first W-step: "start" (the l2,1 reweighting of the start W0) or
#: "identity" (D0 = I, Han's code).
D_INITS = ("start", "identity")


def centred_columns(X: np.ndarray, raw: np.ndarray | None = None) -> SparsePlusOffset | None:
    """X (the model's data: raw centred, or raw itself when ``raw`` is None) as the uncentred
    data plus an offset row, whose zeros its products keep (:mod:`ufsbench.numerics.sparse_gram`);
    None where the uncentred data are too dense for that to pay (dense products)."""
    return (SparsePlusOffset.from_mean(X, centred=X) if raw is None
            else SparsePlusOffset.from_mean(raw, raw.mean(axis=0), centred=X))


def regression_step(X: np.ndarray, metric, raw: np.ndarray | None = None,
                    data: SparsePlusOffset | None = None):
    """W = (X^T M X + diag(reg))^{-1} X^T T as a function of (T, reg), for a fixed X and M.

    Computes what ``solve_gram_plus_diag(X, T, reg, metric)`` computes (M = None: I; else a
    sparse symmetric positive definite n x n matrix), with what does not depend on (T, reg)
    formed once:

    * d <= n: X^T M X (d x d, O(n d^2)) is formed here instead of once per outer iteration
      (coil20: 50 products of 1440 x 1024); the d x d system, which changes with reg, is solved
      every time (Cholesky).
    * d > n: the push-through form W = R^{-1} X^T (M X R^{-1} X^T + I)^{-1} T. Its n x n matrix
      K = X R^{-1} X^T comes from :class:`ufsbench.numerics.sparse_gram.SparsePlusOffset`
      (the uncentred data ``raw`` plus the offset row -mean(raw); None: X itself), a sparse
      product where most columns of ``raw`` are sparse, else one BLAS syrk. For M = I the
      system K + I is solved by Cholesky, as ``solve_gram_plus_diag`` does (LAPACK posv
      called directly: the same factorisation without scipy.linalg.solve's checks and
      condition estimate, half its time at n = 2000). For M != I, M K + I = M (K + M^{-1}), so
      (M K + I)^{-1} T = (K + M^{-1})^{-1} M^{-1} T: a symmetric positive definite system
      (Cholesky) with the dense M^{-1} formed once, instead of an LU of the non-symmetric
      M K + I every iteration. X^T Y by the same sparse split. Same W up to round-off.
      ``data``: :func:`centred_columns` of (X, raw) when the caller has built it (None on
      dense data).
    """
    n, d = X.shape
    if d <= n:
        gram = metric_gram(X, metric)
        return lambda T, reg: solve_gram_plus_diag(X, T, reg, metric, gram=gram)
    if data is None:
        data = centred_columns(X, raw)
    metric_inv = None
    if metric is not None:
        dense = metric.toarray() if sp.issparse(metric) else np.asarray(metric, dtype=float)
        metric_inv = sla.cho_solve(sla.cho_factor(dense), np.eye(n))
        metric_inv = 0.5 * (metric_inv + metric_inv.T)

    def step(T, reg):
        reg = np.broadcast_to(np.asarray(reg, dtype=float), (d,))
        if data is None:
            Z = X / np.sqrt(reg)[None, :]
            A = Z @ Z.T                                 # X R^{-1} X^T (syrk)
        else:
            A = data.outer(reg)
        if metric_inv is None:
            A[np.diag_indices(n)] += 1.0
        else:
            A += metric_inv
            T = metric_inv @ T
        Y = cholesky_solve(A, T)                        # (K + M^-1)^-1 M^-1 T
        return (X.T @ Y if data is None else data.tdot(Y)) / reg[:, None]  # R^{-1} X^T Y

    return step


@register("socfs")
class SOCFS(UFSSelector):
    """Simultaneous Orthogonal basis Clustering Feature Selection.

    Dongyoon Han, Junmo Kim. "Unsupervised Simultaneous Orthogonal Basis Clustering Feature
    Selection." Proc. IEEE CVPR 2015, pp. 5016-5023. Model as stated in the header of Han's code
    and restated by UFSOL §2.2 (our notation, samples as rows; see ``papers/baselines.md`` §6)::

        min  ||X W - E B^T||_F^2 + lambda ||W||_{2,1}
        s.t. B^T B = I, E^T E = I, E >= 0,

    with W (d x m) the projection, B (m x c) the orthogonal latent cluster bases and E (n x c)
    the orthogonal non-negative cluster indicators. As in Han's code, E >= 0 is handled by the
    splitting E = H, H >= 0, with the penalty lambda2 ||E - H||_F^2. One outer iteration:

    1. ``inner_iter`` times: E = polar(X W B + lambda2 H) (exact: ||E B^T||^2 is constant on
       the constraint set), then H = max(E, 0) (exact).
    2. B = polar(W^T X^T E) (exact).
    3. W = (X^T X + lambda D)^{-1} X^T E B^T with D_ii = 1 / (2 sqrt(||w_i||^2 + eps)), the
       l2,1 reweighting (an MM step), solved in n x n form when d > n (:func:`regression_step`;
       a sparse product forms its n x n matrix when most columns of X are sparse).

    Every step is exact or a majorise-minimise step, so the penalised smoothed objective
    ``||XW - EB^T||^2 + lambda sum_i sqrt(||w_i||^2 + eps) + lambda2 ||E - H||^2`` does not
    increase (``objective_history_``; tested). Features are ranked by ||w_i||_2 in DECREASING
    order (two circulating copies of the code sort ascending, a bug).

    Decisions where the paper / code are silent or differ from the model
    --------------------------------------------------------------------
    * X is centred per feature (``center=True``, as Han's code).
    * The bias b of the stated model is dropped (b = 0), as in Han's code where the b-step is
      commented out.
    * m (``n_components``) = n_clusters when None (UFSOL §5.2: d2 = c); m >= c is required by
      B^T B = I.
    * Start as Han's code: E = orth(rand(n, c)), B = orth(rand(m, c)), W and H uniform random,
      drawn from ``random_state``.
    * ``init`` (a dict of the four arrays "E" (n x c), "B" (m x c), "W" (d x m), "H" (n x c))
      replaces the random start; the arrays are used as given.
    * The first W-step's weights: ``d_init="start"`` reweights from the random W0 (so the first
      step is already the MM step of the l2,1 surrogate at W0); ``"identity"`` uses D0 = I as
      Han's code (a plain ridge step first).
    * Han's code runs a fixed 50 x 50 iterations; we keep those caps (``max_iter``,
      ``inner_iter``) and additionally stop when the relative objective decrease over an outer
      iteration is at most ``tol`` (``tol=0`` reproduces the fixed count, which is then the
      stop rule; with tol > 0 a fit the cap ends warns, ``converged_`` False).
    * eps = 1e-8 inside the square root of the l2,1 reweighting (the paper gives no value).
    * ``labels_`` = argmax of each row of E.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of E, B and H (the clusters of ``labels_``).
    random_state : int, RandomState instance or None, default None
        Seeds the random start (E, B, W, H) when ``init`` is None.
    lambda_ : float, default 100.0
        Weight of ||W||_{2,1} (the paper's lambda; Han's default 100).
    lambda2 : float, default 100.0
        Weight of the splitting penalty ||E - H||^2 enforcing E >= 0 (Han's default 100).
    n_components : int or None, default None
        m, the projection dimension (None = n_clusters; at least n_clusters).
    max_iter : int, default 50
        Cap on the outer iterations (Han's code: 50).
    inner_iter : int, default 50
        Number of E/H rounds per outer iteration (Han's code: 50).
    tol : float, default 1e-7
        Stop when the relative objective decrease over an outer iteration is at most ``tol``
        (0 = the fixed counts).
    eps : float, default 1e-8
        Smoothing of the l2,1 reweighting.
    center : bool, default True
        Centre every feature (Han's code).
    init : None or dict, default None
        The start {"E", "B", "W", "H"} (see above); None draws it from ``random_state``.
    d_init : "start" or "identity", default "start"
        The first W-step's l2,1 weights (see above).
    m : deprecated
        The old name of ``n_components`` (a FutureWarning; removed in the next release).

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_i||_2, higher is better.
    W_ : ndarray (n_features, m)
        The final W (d x m).
    B_ : ndarray (m, n_clusters)
        The final B (m x c).
    E_ : ndarray (n_samples, n_clusters)
        The final E (n x c).
    H_ : ndarray (n_samples, n_clusters)
        The final H (n x c).
    labels_ : ndarray (n_samples,)
        argmax of each row of E.
    objective_history_ : list of float
        The smoothed objective after each outer iteration (non-increasing).
    n_iter_ : int
        Outer iterations run.
    converged_ : bool
        Whether the ``tol`` test (or, with tol=0, the fixed count) ended the fit.
    """

    single_threaded_blas = True         # no fit of it was faster on two BLAS threads
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        # The l2,1 reweighting needs lambda_ > 0 (a small value such as 1e-6 instead of 0).
        "lambda_": [Interval(Real, 0, np.inf, closed="neither")],
        "lambda2": [Interval(Real, 0, np.inf, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "m": [Interval(Integral, 1, None, closed="left"), None, Hidden(StrOptions({"deprecated"}))],
        "max_iter": POSITIVE_INT,
        "inner_iter": POSITIVE_INT,
        "tol": [Interval(Real, 0, np.inf, closed="left")],               # 0 = the fixed count
        # eps > 0 keeps D_ii = 1 / (2 sqrt(||w_i||^2 + eps)) finite for zero rows of W.
        "eps": [Interval(Real, 0, np.inf, closed="neither")],
        "center": ["boolean"],
        # None draws the start from random_state; a dict gives it: {"E", "B", "W", "H"}.
        "init": [None, dict],
        "d_init": [StrOptions(set(D_INITS))],
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, lambda_=100.0,
                 lambda2=100.0, n_components=None, max_iter=50, inner_iter=50, tol=1e-7,
                 eps=1e-8, center=True, m="deprecated", init=None, d_init="start"):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.lambda_ = lambda_
        self.lambda2 = lambda2
        self.n_components = n_components
        self.m = m
        self.max_iter = max_iter
        self.inner_iter = inner_iter
        self.tol = tol
        self.eps = eps
        self.center = center
        self.init = init
        self.d_init = d_init

    # Hook for the triplet variant: an (n, n) PSD matrix P (sparse) adding
    # alpha Tr(W^T X^T P X W).
    def _graph_penalty(self, X):
        return None

    def _projection_dim(self) -> tuple[str, int | None]:
        """(the name it was passed under, n_components): ``m`` is its deprecated name."""
        if self.m != "deprecated":
            return "m", self.m
        return "n_components", self.n_components

    def _start(self, n: int, d: int, c: int, m: int) -> tuple[np.ndarray, ...]:
        """(E0, B0, W0, H0): drawn from ``random_state`` (E0, B0 the Q factors of uniform
        draws, W0, H0 uniform), or the arrays of ``init`` as given, once their shapes are
        checked (Han's code draws the same kinds of matrix, with ``orth`` for E0 and B0)."""
        if self.init is None:
            rng = check_random_state(self.random_state)
            E = np.linalg.qr(rng.uniform(size=(n, c)))[0]
            B = np.linalg.qr(rng.uniform(size=(m, c)))[0]
            W = rng.uniform(size=(d, m))
            H = rng.uniform(size=(n, c))
            return E, B, W, H
        shapes = {"E": (n, c), "B": (m, c), "W": (d, m), "H": (n, c)}
        if set(self.init) != set(shapes):
            raise UFSBenchError(f"{type(self).__name__}: init must give exactly the keys "
                                f"E, B, W, H; got {sorted(self.init)}")
        start = []
        for key, shape in shapes.items():
            value = np.array(self.init[key], dtype=float)
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise UFSBenchError(f"{type(self).__name__}: init[{key!r}] must be a finite "
                                    f"{shape} array (n, d, m, c = {n}, {d}, {m}, {c}); got "
                                    f"shape {value.shape}")
            start.append(value)
        return tuple(start)

    def _check_parameter_relations(self) -> None:
        name, value = self._projection_dim()
        if value is not None and value < self.n_clusters:
            raise self._invalid(f"{name}={value!r} must not be below n_clusters="
                                f"{self.n_clusters!r}; B^T B = I needs m >= n_clusters "
                                f"({name}=None sets m = n_clusters)")

    def _fit(self, X):
        n, d = X.shape
        c = self.n_clusters_
        name, value = self._projection_dim()
        if name == "m":
            warnings.warn(f"{type(self).__name__}'s m is deprecated and will be removed in the "
                          f"next release; use n_components", FutureWarning, stacklevel=3)
        m = c if value is None else int(value)
        raw = X if self.center else None
        if self.center:
            X = X - X.mean(axis=0)
        E, B, W, H = self._start(n, d, c, m)
        P = self._graph_penalty(X)
        metric = None if P is None else sp.identity(n, format="csr") + P      # sparse I + P
        # d > n: products with X keep the zeros of the uncentred data (same numbers up to
        # round-off; the plain BLAS products on dense data).
        data = centred_columns(X, raw) if d > n else None
        product = (lambda W: X @ W) if data is None else data.dot
        w_step = regression_step(X, metric, raw, data)
        lam, lam2, eps = float(self.lambda_), float(self.lambda2), float(self.eps)

        def objective(XW, W, B, E, H):
            value = (np.sum((XW - E @ B.T) ** 2) + lam * smoothed_l21_norm(W, eps)
                     + lam2 * np.sum((E - H) ** 2))
            if P is not None:
                value += float(np.sum(XW * (P @ XW)))
            return float(value)

        history, converged = [], False
        XW = product(W)
        # The first W-step's l2,1 weights: from the start W0, or D0 = I (Han's code).
        weights = np.ones(d) if self.d_init == "identity" else l21_reweight(W, eps)
        for _ in range(self.max_iter):
            XWB = XW @ B                        # fixed during the inner loop
            for _ in range(self.inner_iter):
                E = orthonormal_polar(XWB + lam2 * H)
                H = np.maximum(E, 0.0)
            B = orthonormal_polar(XW.T @ E)
            W = w_step(E @ B.T, lam * weights)
            weights = l21_reweight(W, eps)
            XW = product(W)                     # for the objective and the next iteration
            history.append(objective(XW, W, B, E, H))
            if (len(history) > 1 and self.tol > 0
                    and history[-2] - history[-1] <= self.tol * abs(history[-2])):
                converged = True
                break
        # tol = 0 asks for the fixed count of Han's code: reaching it is the requested stop.
        self._stopped(len(history), converged or self.tol == 0,
                      test="relative objective decrease <= tol" if self.tol > 0
                      else "fixed count of max_iter iterations (tol=0)")
        self.W_, self.B_, self.E_, self.H_ = W, B, E, H
        self.objective_history_ = history
        self.labels_ = np.argmax(E, axis=1)
        self.scores_ = row_norms(W)


@register("socfs_triplet")
class SOCFSTriplet(SOCFS):
    """SOCFS + triplet (reconstructed): SOCFS with UFSOL's triplet-induced regulariser (Table 2).

    UFSOL (Guo, Guo, Kong, He, "Unsupervised Feature Selection with Ordinal Locality", ICME 2017)
    §5.1 evaluates "SOCFS with a triplet-induced regularization" without writing the model. We
    reconstruct it (``papers/baselines.md`` §6b, marked [reconstructed - verify]) as the SOCFS
    objective plus ``alpha Tr(W^T X^T L_t X W)``, where L_t = D - (C + C^T)/2 is the Laplacian
    of UFSOL's triplet graph C (Eq. (2); rows normalised to [0, 1] as in §4.3 so that L_t is PSD),
    built by the shared ``ufsbench.numerics.triplet`` (``triplet_weights``, squared Euclidean
    distances, per-row min-max normalisation; ``ordinal_laplacian``). Only the W-step changes:
    W = (X^T (I + alpha L_t) X + lambda D)^{-1} X^T E B^T, still an MM step, so the objective
    stays non-increasing. With ``alpha=0`` the fit is identical to SOCFS for the same seed.

    Decisions: the graph is built on the (centred) X the model sees, with k neighbours (k = 5);
    centring does not change the distances. UFSOL's code scales samples to unit norm before
    building its graph; we do not (the SOCFS part has no such step). L_t is kept sparse
    (O(n k) entries, neighbours by a blockwise search on large n), so for d <= n the W-step's
    X^T (I + alpha L_t) X costs O(n k d + n d^2) and no n x n matrix is formed; for d > n the
    W-step solves the symmetric n x n system with (I + alpha L_t)^{-1}, formed once
    (:func:`regression_step`).

    The attributes are SOCFS's; so are the parameters other than ``alpha``, ``k`` and
    ``memory``.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of E, B and H (the clusters of ``labels_``).
    random_state : int, RandomState instance or None, default None
        Seeds the random start (E, B, W, H) when ``init`` is None.
    lambda_ : float, default 100.0
        Weight of ||W||_{2,1} (the paper's lambda; Han's default 100).
    lambda2 : float, default 100.0
        Weight of the splitting penalty ||E - H||^2 enforcing E >= 0 (Han's default 100).
    alpha : float, default 1.0
        Weight of the triplet regulariser alpha Tr(W^T X^T L_t X W) (0 = plain SOCFS).
    k : int, default 5
        Neighbours of the triplet graph.
    n_components : int or None, default None
        m, the projection dimension (None = n_clusters; at least n_clusters).
    max_iter : int, default 50
        Cap on the outer iterations (Han's code: 50).
    inner_iter : int, default 50
        Number of E/H rounds per outer iteration (Han's code: 50).
    tol : float, default 1e-7
        Stop when the relative objective decrease over an outer iteration is at most ``tol``
        (0 = the fixed counts).
    eps : float, default 1e-8
        Smoothing of the l2,1 reweighting.
    center : bool, default True
        Centre every feature (Han's code).
    m : deprecated
        The old name of ``n_components`` (a FutureWarning; removed in the next release).
    init : None or dict, default None
        The start {"E", "B", "W", "H"} (see SOCFS); None draws it from ``random_state``.
    d_init : "start" or "identity", default "start"
        The first W-step's l2,1 weights (see SOCFS).
    memory : None, str or joblib.Memory, default None
        Where to cache the triplet graph C (it depends on X and k only); None computes it on
        every fit.
    """

    reconstructed = True  # the paper does not write the model; every report row says so

    _parameter_constraints = {
        **SOCFS._parameter_constraints,
        # Weight of the triplet regulariser, e.g. 1.0; 0 is plain SOCFS.
        "alpha": [Interval(Real, 0, np.inf, closed="left")],
        "k": POSITIVE_INT,
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, lambda_=100.0,
                 lambda2=100.0, alpha=1.0, k=5, n_components=None, max_iter=50, inner_iter=50,
                 tol=1e-7, eps=1e-8, center=True, m="deprecated", init=None, d_init="start",
                 memory=None):
        super().__init__(n_features_to_select=n_features_to_select, n_clusters=n_clusters,
                         random_state=random_state, lambda_=lambda_, lambda2=lambda2,
                         n_components=n_components, max_iter=max_iter, inner_iter=inner_iter,
                         tol=tol, eps=eps, center=center, m=m, init=init, d_init=d_init)
        self.alpha = alpha
        self.k = k
        self.memory = memory

    def _graph_penalty(self, X):
        if self.alpha == 0:
            return None
        k = self._neighbours(X.shape[0])
        # n k entries
        C = cached_call(self.memory, sparse_triplet_weights, X, k=k, normalize=True)
        return float(self.alpha) * ordinal_laplacian(C)
