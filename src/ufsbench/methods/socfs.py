"""SOCFS (Han & Kim, CVPR 2015) and its triplet-regularised variant of UFSOL's Table 2."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.methods.base import MEMORY_CONSTRAINT, POSITIVE_INT, UFSSelector, register
from ufsbench.numerics import l21_reweight, orthonormal_polar, row_norms
from ufsbench.numerics.gram_solve import solve_gram_plus_diag
from ufsbench.numerics.irls import smoothed_l21_norm
from ufsbench.numerics.triplet import ordinal_laplacian, sparse_triplet_weights


def regression_step(X: np.ndarray, metric):
    """W = (X^T M X + diag(reg))^{-1} X^T T as a function of (T, reg), for a fixed X and M.

    Computes what ``solve_gram_plus_diag(X, T, reg, metric)`` computes, but for d <= n (its
    primal d x d form) X^T M X is formed once here instead of once per outer iteration: an
    O(n d^2) product that costs as much as the rest of a SOCFS fit (coil20: 50 products of
    1440 x 1024). The d x d system itself changes with reg and is solved every time (Cholesky).
    For d > n the n x n push-through form depends on reg throughout and is left as it is.
    """
    n, d = X.shape
    gram = None if d > n else (X.T @ X if metric is None else X.T @ (metric @ X))
    return lambda T, reg: solve_gram_plus_diag(X, T, reg, metric, gram=gram)


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
       l2,1 reweighting (an MM step), solved in n x n form when d > n.

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
    * Han's code runs a fixed 50 x 50 iterations; we keep those caps (``max_iter``,
      ``inner_iter``) and additionally stop when the relative objective decrease over an outer
      iteration falls below ``tol`` (``tol=0`` reproduces the fixed count).
    * eps = 1e-8 inside the square root of the l2,1 reweighting (the paper gives no value).
    * ``labels_`` = argmax of each row of E.

    Parameters
    ----------
    lambda_ : float, default 100.0
        Weight of ||W||_{2,1} (the paper's lambda; Han's default 100).
    lambda2 : float, default 100.0
        Weight of the splitting penalty ||E - H||^2 enforcing E >= 0 (Han's default 100).
    n_components : int or None, default None
        m, the projection dimension (None = n_clusters; at least n_clusters).
    max_iter, inner_iter : int, default 50, 50
        Caps on the outer iterations and on the E/H rounds per outer iteration (Han's code).
    tol : float, default 1e-7
        Stop when the relative objective decrease over an outer iteration is at most ``tol``
        (0 = the fixed counts).
    eps : float, default 1e-8
        Smoothing of the l2,1 reweighting.
    center : bool, default True
        Centre every feature (Han's code).
    m : deprecated
        The old name of ``n_components`` (a FutureWarning; removed in the next release).

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||w_i||_2, higher is better.
    W_, B_, E_, H_ : ndarray
        The final iterates (d x m, m x c, n x c, n x c).
    labels_ : ndarray (n_samples,)
        argmax of each row of E.
    objective_history_ : list of float
        The smoothed objective after each outer iteration (non-increasing).
    n_iter_ : int
        Outer iterations run.
    """

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
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, lambda_=100.0,
                 lambda2=100.0, n_components=None, max_iter=50, inner_iter=50, tol=1e-7,
                 eps=1e-8, center=True, m="deprecated"):
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

    # Hook for the triplet variant: an (n, n) PSD matrix P (sparse) adding
    # alpha Tr(W^T X^T P X W).
    def _graph_penalty(self, X):
        return None

    def _projection_dim(self) -> tuple[str, int | None]:
        """(the name it was passed under, n_components): ``m`` is its deprecated name."""
        if self.m != "deprecated":
            return "m", self.m
        return "n_components", self.n_components

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
        if self.center:
            X = X - X.mean(axis=0)
        rng = check_random_state(self.random_state)
        E = np.linalg.qr(rng.uniform(size=(n, c)))[0]
        B = np.linalg.qr(rng.uniform(size=(m, c)))[0]
        W = rng.uniform(size=(d, m))
        H = rng.uniform(size=(n, c))
        P = self._graph_penalty(X)
        metric = None if P is None else sp.identity(n, format="csr") + P      # sparse I + P
        w_step = regression_step(X, metric)
        lam, lam2, eps = float(self.lambda_), float(self.lambda2), float(self.eps)

        def objective(XW, W, B, E, H):
            value = (np.sum((XW - E @ B.T) ** 2) + lam * smoothed_l21_norm(W, eps)
                     + lam2 * np.sum((E - H) ** 2))
            if P is not None:
                value += float(np.sum(XW * (P @ XW)))
            return float(value)

        history = []
        self.n_iter_ = 0
        XW = X @ W
        for _ in range(self.max_iter):
            XWB = XW @ B                        # fixed during the inner loop
            for _ in range(self.inner_iter):
                E = orthonormal_polar(XWB + lam2 * H)
                H = np.maximum(E, 0.0)
            B = orthonormal_polar(XW.T @ E)
            W = w_step(E @ B.T, lam * l21_reweight(W, eps))
            XW = X @ W                          # for the objective and the next iteration
            history.append(objective(XW, W, B, E, H))
            self.n_iter_ += 1
            if (len(history) > 1 and self.tol > 0
                    and history[-2] - history[-1] <= self.tol * abs(history[-2])):
                break
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
    (O(n k) entries, neighbours by a blockwise search on large n), so the W-step's
    X^T (I + alpha L_t) X costs O(n k d + n d^2) and no n x n matrix is formed.

    Parameters
    ----------
    alpha : weight of the triplet regulariser (0 = plain SOCFS).
    k : neighbours of the triplet graph (5).
    memory : None, str or joblib.Memory, default None
        Where to cache the triplet graph C (it depends on X and k only); None computes it on
        every fit.

    The other parameters and the attributes are SOCFS's.
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
                 tol=1e-7, eps=1e-8, center=True, m="deprecated", memory=None):
        super().__init__(n_features_to_select=n_features_to_select, n_clusters=n_clusters,
                         random_state=random_state, lambda_=lambda_, lambda2=lambda2,
                         n_components=n_components, max_iter=max_iter, inner_iter=inner_iter,
                         tol=tol, eps=eps, center=center, m=m)
        self.alpha = alpha
        self.k = k
        self.memory = memory

    def _graph_penalty(self, X):
        if self.alpha == 0:
            return None
        k = min(self.k, X.shape[0] - 1)
        # n k entries
        C = cached_call(self.memory, sparse_triplet_weights, X, k=k, normalize=True)
        return float(self.alpha) * ordinal_laplacian(C)
