"""EUFS: Embedded Unsupervised Feature Selection (Wang, Tang & Liu, AAAI 2015)."""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ufsbench.cache import cached_call
from ufsbench.methods.base import (
    MEMORY_CONSTRAINT,
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    FitCost,
    UFSSelector,
    register,
)
from ufsbench.numerics import knn_graph, l21_norm, laplacian, orthonormal_polar, row_norms
from ufsbench.numerics.graphs import SPARSE_MIN_SAMPLES, sparse_knn_graph
from ufsbench.numerics.indicators import kmeans_scaled_indicator
from ufsbench.numerics.lanes import BlockLanes
from ufsbench.numerics.prox import row_shrink

#: How the graph term's products are formed: "auto" (= "dense"), "dense" or "sparse".
SOLVERS = ("auto", "dense", "sparse")
#: Marks a deprecated parameter that was not passed (scikit-learn's convention).
DEPRECATED = "deprecated"


@register("eufs")
class EUFS(UFSSelector):
    """Embedded Unsupervised Feature Selection: sparse NMF-style clustering without projection.

    Suhang Wang, Jiliang Tang, Huan Liu. "Embedded Unsupervised Feature Selection." Proc. AAAI
    2015 (AAAI-29), pp. 470-476. Model as restated by KMUFS Eq. (35) (our notation, samples as
    rows; ``papers/baselines.md`` §7; the paper's own equation numbers were not available to us)::

        min_{U, V}  ||X - U V^T||_{2,1} + alpha ||V||_{2,1} + beta Tr(U^T L U)
        s.t.        U^T U = I, U >= 0,

    U (n x c) the relaxed cluster indicator, V (d x c) the latent cluster centres: a feature
    whose row of V is zero takes no part in the clustering, so features are ranked by ||v_r||_2.
    The loss is l2,1 over samples (robust), the penalty l2,1 over the feature rows of V.

    ADMM (the paper's solver; each sub-step re-derived in ``baselines.md`` §7). With E = X - U V^T,
    Z = U (Z >= 0), the graph term written bilinearly as beta Tr(U^T L Z), multipliers Y1 (Z - U)
    and Y2 (X - U V^T - E) and penalty mu, one iteration is:

    1. E = rowshrink(X - U V^T + Y2/mu, 1/mu);
    2. V = rowshrink((X - E + Y2/mu)^T U, alpha/mu) (uses U^T U = I);
    3. Z = max(U - Y1/mu - (beta/mu) L U, 0);
    4. U = polar(Z + Y1/mu + (X - E + Y2/mu) V - (beta/mu) L Z);
    5. Y1 += mu (Z - U); Y2 += mu (X - U V^T - E); mu = min(rho mu, mu_max).

    ADMM is not monotone: ``objective_history_`` records the model objective at U (not
    asserted to decrease), ``residual_history_`` the relative primal residuals
    max(||Z - U||_F / sqrt(c), ||X - U V^T - E||_F / ||X||_F), which the tests check tend to 0.

    Decisions where the paper is silent or the public code is wrong
    ---------------------------------------------------------------
    * mu = **min**(rho mu, mu_max): the circulating ``eufs.m`` uses max(), which jumps mu to
      1e10 after one iteration and removes all shrinkage (a bug).
    * The U-step uses (beta/mu) L Z, as the derivation gives (``eufs.m`` uses beta L Z).
    * rho = 1.1, mu_max = 1e10 (code); mu0 = 1e-3 (a comment in Lim's code says the paper sets
      mu0 between 1e-6 and 1e-3); at most ``max_iter`` = 300 iterations (the code runs a fixed
      10, with a ``ConvergenceWarning`` when the cap ends the fit).
    * Stop: when the relative primal residual is below ``tol`` (1e-7), or when V (whose row norms
      are the scores) has stopped moving: V non-zero and ||V_t - V_{t-1}||_F <= ``v_tol``
      ||V_t||_F (1e-7). With mu growing by rho a step, the shrinkage alpha / mu and with it V's
      remaining change fall by 1/rho a step, so the distance to V's limit is about
      v_tol rho / (rho - 1) = 1.1e-6 relative: the sixth digit. On umist, coil20 (defaults) the
      primal residual stalls at 0.5 and 1e-3 (Z >= 0 and the orthonormal U do not meet), so
      without the V test every fit ran its cap of 300 iterations; the V test ends them at 148
      and 245 with the same top-100 sets. A V that is still exactly zero never counts as
      settled: at small mu the shrinkage zeroes it, and it appears only once alpha / mu is low
      enough (coil20: after about 95 iterations).
    * Start: U0 = the K-means (10 restarts, seeded) scaled indicator, entries 1/sqrt(n_j), which
      satisfies both constraints; V0 = X^T U0; Y1 = Y2 = 0 (``eufs.m`` starts from U = V = 0,
      i.e. an arbitrary polar factor of a zero matrix).
    * Graph: kNN (k = 5) heat-kernel affinity (width ``sigma``; None = mean squared kNN distance)
      and its unnormalised Laplacian L = D - S (Lim's code expects an RBF-kernel L);
      ``normalized_laplacian=True`` uses the normalised L that KMUFS writes.
    * ``labels_`` = argmax of each row of Z (the non-negative copy of U).

    Computation: steps 1 and 5 and the objective's ||X - U V^T||_{2,1} run row block by row block
    (about 1 MB of each n x d array at a time), so that the element-wise operations of a block
    work in the cache; only Y2, E and A = X - E + Y2/mu are held n x d, X - U V^T is recomputed
    from U and V where needed. Every element-wise operation is the one of the equations in the
    same order, so the iterates are those of the plain loop up to the BLAS products' round-off
    (which the ADMM amplifies: a different summation order of L U, ``solver="sparse"``, moves
    the scores by up to 10 % on basehock). The products with A are formed as (U^T A)^T and
    (V^T A^T)^T, which OpenBLAS computes 2-4x faster than A^T U and A V. An X with fewer than 5 %
    non-zeros (bag-of-words data) is read through its non-zeros only. BLAS runs on one thread
    whatever the caller allows (``single_threaded_blas``): the ADMM amplifies the different
    round-off of another thread count (basehock's scores moved by up to 45 % and the selection
    with them between one and two OpenBLAS threads), and its rank-c products gain nothing from
    threads. On large X (from 32 MB) the row blocks of steps 1 and 5 run instead in as many
    threads as the caller lets BLAS use (``ufsbench.numerics.lanes``), with the bits of one
    thread.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        Number of top-ranked features ``support_`` keeps (None: min(50, n_features)); the fit
        does not depend on it.
    n_clusters : int, default 2
        c, the number of columns of U and V (the clusters of the start and of ``labels_``).
    random_state : int, RandomState instance or None, default None
        Seeds the K-means restarts of the start U0.
    alpha : float, default 1.0
        Weight of ||V||_{2,1} (grid {1e-6, ..., 1e6}).
    beta : float, default 1.0
        Weight of the graph term Tr(U^T L U) (same grid).
    k : int, default 5
        Neighbours of the kNN heat-kernel graph.
    sigma : float or None, default None
        Heat-kernel width of the graph (None: mean squared kNN distance).
    normalized_laplacian : use I - D^{-1/2} S D^{-1/2} instead of D - S.
    mu0 : float, default 1e-3
        Initial ADMM penalty mu.
    rho : float >= 1, default 1.1
        Growth factor of mu per iteration.
    mu_max : float, default 1e10
        Cap of mu; at least ``mu0``, inf for no cap.
    max_iter : int, default 300
        Iteration cap.
    tol : float, default 1e-7
        Tolerance on the relative primal residual (0, with ``v_tol=0``, runs all ``max_iter``
        iterations).
    v_tol : relative change of V below which the fit stops (1e-7; 0 disables the test).
    solver : "auto", "dense" (BLAS products with the n x n L) or "sparse" (CSR L: O(n k c)
        instead of O(n^2 c) per product, 2-3x faster fits at n ~ 600). "auto" is "dense" below
        ``ufsbench.numerics.graphs.SPARSE_MIN_SAMPLES`` (3000) samples and "sparse" from there
        (where the graph is built sparse anyway and a dense n x n L would be read twice per
        iteration: USPS, 9298 samples, 42 -> 8 s). Below, "auto" keeps the dense products
        because the ADMM amplifies the different round-off to ~1e-5 relative in the scores at
        some grid points (10 % on basehock), as much as it amplifies a change of the memory
        order of X.
    memory : None, str or joblib.Memory, default None
        Where to cache the kNN heat-kernel graph (it depends on X, k and sigma only); None computes
        it on every fit.
    graph_form : deprecated
        The old name of ``solver`` (a FutureWarning; removed in the next release).

    Attributes
    ----------
    scores_ : ndarray (n_features,)
        ||v_r||, the row norms of V.
    labels_ : ndarray (n_samples,)
        argmax of each row of Z.
    U_ : ndarray (n_samples, n_clusters)
        The last U.
    V_ : ndarray (n_features, n_clusters)
        The last V.
    Z_ : ndarray (n_samples, n_clusters)
        The last Z (the non-negative copy of U).
    E_ : ndarray (n_samples, n_features)
        The last E.
    mu_ : float
        The final penalty.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the residual or V test (not ``max_iter``) ended the fit.
    objective_history_ : list of float
        The model objective at U after each iteration (not monotone).
    residual_history_ : list of float
        The relative primal residual after each iteration.
    """

    # Products of rank c (two BLAS threads: slower fits, and another selection on basehock);
    # the row blocks of steps 1 and 5 take the caller's threads instead (numerics.lanes).
    single_threaded_blas = True
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "alpha": NON_NEGATIVE,
        "beta": NON_NEGATIVE,
        "k": POSITIVE_INT,
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "normalized_laplacian": ["boolean"],
        "mu0": POSITIVE,
        # The penalty may only grow.
        "rho": [Interval(Real, 1, None, closed="left")],
        # inf is allowed: no cap.
        "mu_max": [Interval(Real, 0, None, closed="right")],
        "max_iter": POSITIVE_INT,
        # 0 (with v_tol = 0) runs all max_iter iterations.
        "tol": NON_NEGATIVE,
        "v_tol": NON_NEGATIVE,
        "solver": [StrOptions(set(SOLVERS))],
        "graph_form": [StrOptions({"dense", "sparse"}), Hidden(StrOptions({DEPRECATED}))],
        "memory": MEMORY_CONSTRAINT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, alpha=1.0,
                 beta=1.0, k=5, sigma=None, normalized_laplacian=False, mu0=1e-3, rho=1.1,
                 mu_max=1e10, max_iter=300, tol=1e-7, v_tol=1e-7, solver="auto", memory=None,
                 graph_form=DEPRECATED):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.sigma = sigma
        self.normalized_laplacian = normalized_laplacian
        self.mu0 = mu0
        self.rho = rho
        self.mu_max = mu_max
        self.max_iter = max_iter
        self.tol = tol
        self.v_tol = v_tol
        self.solver = solver
        self.memory = memory
        self.graph_form = graph_form

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """Up to ``max_iter`` (300) ADMM iterations of element-wise passes and thin products over
        n x d arrays (1.3e-8 n d s each; the default fits stop after 109-300), after the kNN
        graph (6e-11 n^2 d s). Measured (one BLAS thread) against modelled: jaffe 0.39 and
        0.56 s, coil20 6.2 and 5.9 s, USPS 8.3 and 10.6 s, basehock 20.6 and 39 s (read
        through its non-zeros), synthetic 10000 x 1000 31 and 45 s, 187 x 20000 7.6 and 15 s.
        Memory: four n x d arrays."""
        n, d = float(n_samples), float(n_features)
        iterations = int(params.get("max_iter", 300))
        seconds = iterations * 1.3e-8 * n * d + 6e-11 * n ** 2 * d
        return FitCost(seconds, 32.0 * n * d,
                       f"element-wise passes over {n_samples} x {n_features} arrays in up to "
                       f"{iterations} ADMM iterations")

    def _check_parameter_relations(self) -> None:
        # mu = min(rho mu, mu_max) only grows: a cap below the start would shrink it at once.
        if self.mu_max < self.mu0:
            raise self._invalid(f"mu0={self.mu0!r} must not exceed mu_max={self.mu_max!r}; "
                                f"lower mu0 (e.g. 1e-3) or raise mu_max (e.g. 1e10)")

    def graph_laplacian(self, X: np.ndarray, sparse: bool = False):
        """The Laplacian of the kNN heat-kernel graph: dense, or with ``sparse`` a CSR matrix
        (built without an n x n array from ``SPARSE_MIN_SAMPLES`` samples on)."""
        graph = (sparse_knn_graph if sparse and X.shape[0] >= SPARSE_MIN_SAMPLES
                 else knn_graph)
        S = cached_call(self.memory, graph, X, k=self._neighbours(X.shape[0]),
                        weight="heat", sigma=self.sigma)
        L = laplacian(S, normalized=self.normalized_laplacian)
        return sp.csr_matrix(L) if sparse else L

    def _solver(self, n_samples: int) -> str:
        """``solver`` ("auto" resolved for ``n_samples``), from the deprecated ``graph_form``
        where that was passed (FutureWarning)."""
        if self.graph_form != DEPRECATED:
            warnings.warn("EUFS's graph_form is deprecated and will be removed in the next "
                          "release; use solver", FutureWarning, stacklevel=4)
            return self.graph_form
        if self.solver == "auto":
            return "sparse" if n_samples >= SPARSE_MIN_SAMPLES else "dense"
        return self.solver

    def objective(self, X, U, V, L) -> float:
        """||X - U V^T||_{2,1} + alpha ||V||_{2,1} + beta Tr(U^T L U)."""
        return self._objective(X - U @ V.T, U, V, L @ U)

    def _objective(self, XmUV, U, V, LU) -> float:
        """The objective from X - U V^T and L U, which the ADMM loop already holds."""
        return float(l21_norm(XmUV) + self.alpha * l21_norm(V) + self.beta * np.sum(U * LU))

    def _fit(self, X):
        c = self.n_clusters_
        alpha, beta = float(self.alpha), float(self.beta)
        # sparse: ~2k + 1 non-zeros a row, O(n k c) products
        L = self.graph_laplacian(X, sparse=self._solver(X.shape[0]) == "sparse")
        U, _ = kmeans_scaled_indicator(X, c, self.random_state)
        V = X.T @ U
        Y1 = np.zeros_like(U)
        mu = float(self.mu0)
        x_norm = max(np.linalg.norm(X), np.finfo(float).tiny)
        steps = _BlockedSteps(X)
        try:
            LU = L @ U                                   # L U, reused by the objective and step 3
            history, residuals = [], []
            converged = False
            for _ in range(self.max_iter):
                V_old = V
                A = steps.e_step(U, V, mu)                                       # step 1
                V = row_shrink((U.T @ A).T, alpha / mu)                          # step 2
                Z = np.maximum(U - Y1 / mu - (beta / mu) * LU, 0.0)              # step 3
                U = orthonormal_polar(Z + Y1 / mu + (V.T @ A.T).T - (beta / mu) * (L @ Z))  # step 4
                r2_norm, fit_loss = steps.dual_step(U, V, mu)
                LU = L @ U
                Y1 += mu * (Z - U)                                               # step 5
                residuals.append(max(np.linalg.norm(Z - U) / np.sqrt(c), r2_norm / x_norm))
                mu = min(self.rho * mu, float(self.mu_max))
                history.append(fit_loss + alpha * l21_norm(V) + beta * float(np.sum(U * LU)))
                if residuals[-1] < self.tol or self._v_settled(V, V_old):
                    converged = True
                    break
        finally:
            steps.close()
        self._stopped(len(history), converged, test="relative primal residual < tol or "
                      "relative change of V <= v_tol")
        self.U_, self.V_, self.Z_, self.E_ = U, V, Z, steps.E
        self.mu_ = mu
        self.objective_history_ = history
        self.residual_history_ = residuals
        self.labels_ = np.argmax(Z, axis=1)
        self.scores_ = row_norms(V)

    def _v_settled(self, V: np.ndarray, V_old: np.ndarray) -> bool:
        """||V - V_old||_F <= v_tol ||V||_F for a non-zero V (see the class docstring)."""
        size = np.linalg.norm(V)
        return bool(size > 0 and np.linalg.norm(V - V_old) <= self.v_tol * size)


#: Bytes of one row block of an n x d array in the blocked steps: the block's temporaries stay
#: in the cache between the element-wise operations instead of a pass over memory each.
BLOCK_BYTES = 1 << 20
#: Bytes of X from which the blocked steps run in lanes (threads): on smaller X the threads'
#: hand-offs cost more than they save (jaffe, 1.2 MB: 0.42 -> 0.74 s on two lanes; coil20,
#: 11.8 MB: 6.8 -> 7.1 s), on basehock (77 MB) they save 15 %.
LANES_MIN_BYTES = 32 << 20
#: Below this fraction of non-zero entries the blocked steps read X through its non-zeros only:
#: 20 % faster steps at 1 % non-zeros, 5 % faster at 5 %, break-even near 7 % (d ~ 4000).
SPARSE_DENSITY = 0.05


class _BlockedSteps:
    """The n x d parts of an ADMM iteration, row block by row block.

    Holds Y2 and E (n x d, row-major) and the buffer A = X - E + Y2/mu. Every element-wise
    operation is the one of the equations in the same order (so the same bits); X - U V^T is
    recomputed from X, U and V where it is needed (the same BLAS call on the same block gives
    the same bits) instead of being stored. A sparse X (fewer than ``SPARSE_DENSITY`` non-zeros,
    bag-of-words data) is read through its non-zeros: where x = 0, (x - g) + y is y - g and
    x - g is -g exactly (IEEE arithmetic is symmetric in sign), so one pass over the block
    replaces two and the dense X is never read; only the sign of an exact zero may differ.
    From ``LANES_MIN_BYTES`` of X on, the blocks run in the lanes of
    :class:`ufsbench.numerics.lanes.BlockLanes` (as many threads as the caller lets BLAS use,
    each with its own scratch rows), the same bits as one thread.
    """

    def __init__(self, X: np.ndarray) -> None:
        X = np.ascontiguousarray(X)
        n, d = X.shape
        self.Y2, self.E, self.A = (np.zeros((n, d)) for _ in range(3))
        #: A holds X - U V^T for the U and V of the last dual step (dense X): the next E-step's
        #: residual, the same U and V, so it is not computed twice (A itself is dead by then).
        self.residual_in_A = False
        rows = max(1, min(n, BLOCK_BYTES // (8 * d)))
        self.blocks = [slice(i, min(i + rows, n)) for i in range(0, n, rows)]
        self.lanes = BlockLanes(len(self.blocks), None if X.nbytes >= LANES_MIN_BYTES else 1)
        self.scratch = [(np.empty((rows, d)), np.empty((rows, d)))
                        for _ in range(self.lanes.n_lanes)]
        self.fit_rows = np.empty(n)
        self.X: np.ndarray | None = X
        # per block of a sparse X: the flat positions (in the block) and values of its non-zeros
        self.nonzeros: list[tuple[np.ndarray, np.ndarray]] | None = None
        if np.count_nonzero(X) < SPARSE_DENSITY * X.size:
            self.nonzeros = []
            for b in self.blocks:
                flat = X[b].reshape(-1)
                where = np.flatnonzero(flat)
                self.nonzeros.append((where, flat[where]))
            self.X = None

    def close(self) -> None:
        """Ends the lanes' threads."""
        self.lanes.close()

    def e_step(self, U, V, mu):
        """E = rowshrink(X - U V^T + Y2/mu, 1/mu) (step 1); returns A = X - E + Y2/mu. U and V
        are those of the last :meth:`dual_step`, or the start's before the first."""
        self.lanes.map(lambda j, lane: self._e_block(j, lane, U, V, mu))
        self.residual_in_A = False
        return self.A

    def _e_block(self, j, lane, U, V, mu):
        b = self.blocks[j]
        Yn = np.divide(self.Y2[b], mu, out=self.scratch[lane][0][:b.stop - b.start])
        E, A = self.E[b], self.A[b]
        if self.nonzeros is None:
            if self.residual_in_A:
                np.add(A, Yn, out=E)
            else:
                _residual(self.X[b], U[b], V, out=E)
                np.add(E, Yn, out=E)
            row_shrink(E, 1.0 / mu, out=E)
            np.subtract(self.X[b], E, out=A)
            A += Yn
            return
        where, x = self.nonzeros[j]
        y = Yn.reshape(-1)[where]
        np.matmul(U[b], V.T, out=E)                                      # G = U V^T
        g = E.reshape(-1)[where]
        np.subtract(Yn, E, out=E)                                        # x = 0: y - g
        E.reshape(-1)[where] = (x - g) + y
        row_shrink(E, 1.0 / mu, out=E)
        e = E.reshape(-1)[where]
        np.subtract(Yn, E, out=A)                                        # x = 0: y - e
        A.reshape(-1)[where] = (x - e) + y

    def dual_step(self, U, V, mu):
        """Y2 += mu (X - U V^T - E) (step 5); returns ||X - U V^T - E||_F and ||X - U V^T||_{2,1}."""
        minus_U = -U
        sq = 0.0
        for block_sq in self.lanes.map(lambda j, lane: self._dual_block(j, lane, U, minus_U,
                                                                        V, mu)):
            sq += block_sq                                               # in block order
        self.residual_in_A = self.nonzeros is None
        return float(np.sqrt(sq)), float(self.fit_rows.sum())

    def _dual_block(self, j, lane, U, minus_U, V, mu) -> float:
        b = self.blocks[j]
        m = b.stop - b.start
        XmUV = self.scratch[lane][0][:m]
        if self.nonzeros is None:
            assert self.X is not None                    # a dense X is kept when not sparse
            XmUV = self.A[b]                             # kept for the next E-step
            _residual(self.X[b], U[b], V, out=XmUV)
        else:
            where, x = self.nonzeros[j]
            np.matmul(minus_U[b], V.T, out=XmUV)                         # x = 0: -g
            XmUV.reshape(-1)[where] += x
        self.fit_rows[b] = row_norms(XmUV)
        R2 = np.subtract(XmUV, self.E[b], out=self.scratch[lane][1][:m])
        flat = R2.reshape(-1)
        block_sq = float(flat @ flat)
        R2 *= mu
        self.Y2[b] += R2
        return block_sq


def _residual(X, U, V, out):
    """X - U V^T written into ``out`` (no n x d temporary)."""
    np.matmul(U, V.T, out=out)
    return np.subtract(X, out, out=out)
