"""K-means UFS (Sun, Ding & Fan, "K-means Derived Unsupervised Feature Selection using Improved
ADMM"; preprint, CUHK-Shenzhen, no venue or year in the extraction): the h features minimising
the K-means objective, solved by the bi-linear ADMM of the paper's Algorithm 1."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ufsbench.methods.base import POSITIVE, POSITIVE_INT, FitCost, UFSSelector, register
from ufsbench.numerics import top_rows
from ufsbench.numerics.linalg import GRAM_RCOND, eigh_largest
from ufsbench.numerics.polar import polar_factor
from ufsbench.numerics.preprocess import zscore
from ufsbench.numerics.sparse_gram import SparsePlusOffset

ADMM_FORMS = ("bilinear", "vanilla", "exact")


def _leading_right_singular(Xs: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The r leading singular values and right singular vectors of Xs (r < min(n, d)) from the
    smaller Gram matrix, or None when sigma_r^2 <= ``GRAM_RCOND`` sigma_1^2 (then the thin SVD).

    n <= d: the r largest eigenpairs (w, U_r) of Xs Xs^T (n x n; on mostly-zero data by the
    sparse-plus-offset split of ``numerics.sparse_gram``), P_r = Xs^T U_r diag(w)^{-1/2};
    n > d: those of Xs^T Xs (d x d) are (sigma^2, P_r) directly. Only span(P_h) and
    A = P_k Sigma_k^2 P_k^T enter the ADMM, which is equivariant under V0 -> V0 R for orthogonal R,
    so the selection depends on the subspace. Its round-off error is ~eps sigma_1^2 /
    (sigma_r^2 - sigma_{r+1}^2), that of the SVD's times sigma_1 / (sigma_r + sigma_{r+1})
    (basehock, r = 100: 1.3e-13 from the SVD's subspace).
    """
    n, d = Xs.shape
    if n <= d:
        split = SparsePlusOffset.from_median(Xs)
        G = Xs @ Xs.T if split is None else split.outer(np.ones(d))
    else:
        G = Xs.T @ Xs
    w, vecs = eigh_largest(G, r)
    if not w[-1] > GRAM_RCOND * w[0]:
        return None
    sigma = np.sqrt(w)
    if n > d:
        return sigma, vecs
    P = Xs.T @ vecs if split is None else split.tdot(vecs)
    return sigma, P / sigma


def _initial_basis(P: np.ndarray, h: int) -> np.ndarray:
    """h orthonormal columns: the leading left singular vectors P, completed when h > rank.

    When h exceeds the number of singular vectors (h > n_samples for wide data), the missing
    columns are the coordinate axes of the features least represented in span(P) (largest residual
    1 - ||P[j]||^2, ties by index), projected off span(P) twice and orthonormalised by QR.
    """
    missing = h - P.shape[1]
    if missing <= 0:
        return P[:, :h].copy()
    residual = 1.0 - np.einsum("ij,ij->i", P, P)
    axes = np.lexsort((np.arange(len(residual)), -residual))[:missing]
    E = np.zeros((P.shape[0], missing))
    E[axes, np.arange(missing)] = 1.0
    for _ in range(2):
        E -= P @ (P.T @ E)
    Q, _ = np.linalg.qr(E)
    return np.hstack([P, Q])


class _FactoredA:
    """A = Z Z^T with Z = P_k Sigma_k (p x k), applied without forming the p x p matrix."""

    def __init__(self, P_k: np.ndarray, sigma_k: np.ndarray):
        self.P_k, self.eig = P_k, sigma_k ** 2          # eigenvalues of A: sigma_j^2
        self.Z = P_k * sigma_k

    def dot(self, Y: np.ndarray) -> np.ndarray:          # A Y, O(p h k)
        return self.Z @ (self.Z.T @ Y)

    def shifted_solve(self, mu: float, Y: np.ndarray) -> np.ndarray:
        """(mu I - A)^{-1} Y = Y / mu + P_k diag(1/(mu - s^2) - 1/mu) P_k^T Y, O(p h k)."""
        return Y / mu + self.P_k @ ((1.0 / (mu - self.eig) - 1.0 / mu)[:, None] * (self.P_k.T @ Y))


@register("kmufs")
class KMeansUFS(UFSSelector):
    """K-means UFS: the h features whose rank-k spectral K-means objective is best (exact subset).

    Sun, Ding & Fan, "K-means Derived Unsupervised Feature Selection using Improved ADMM"
    (preprint, CUHK-Shenzhen; the extraction gives no venue or year). With X standardised per
    feature and the thin SVD X = P Sigma Q^T (X is p x n in the paper; here samples are rows and
    the SVD is taken of the n x p matrix),
    A = P_k Sigma_k^2 P_k^T (Eq. 8), k = ``n_clusters``, h = ``n_features_to_select``, and the
    model is (Eq. 11)

        min_V -Tr(V^T A V)   s.t.  V^T V = I_h,  V has exactly h non-zero rows.

    The selected features are the non-zero rows of W at the end of the ADMM.

    ``admm="bilinear"`` (default, the paper's Algorithm 1, Eqs. 26-31): with B = U - Omega/mu,
    C = W - Gamma/mu,
      V = sqrt(h) D / ||D||_F,  D = A U + mu B + mu C               (Eqs. 28-29)
      U = polar factor of H = A V + mu (V + Omega/mu)               (Eqs. 30-31)
      W = l2,0 projection of F = V + Gamma/mu onto h rows           (Eqs. 25-26)
      Omega += mu (V - U), Gamma += mu (V - W), mu <- rho mu        (Eqs. 17-19)
    ``admm="vanilla"``: the quadratic ADMM of Eqs. (12)-(25) that the paper argues against, with
    V = mu/2 (mu I - A)^{-1} (B + C) (Eq. 22) and U = polar factor of V + Omega/mu (Eqs. 23-24);
    W and the multipliers as above. ``v_norm_history_`` records ||V||_F after every V-step of both
    forms, for the contrast of the paper's Fig. 2.
    ``admm="exact"`` (NOT in the paper; see "Closed form" below): the h largest diagonal entries
    of A, no iterations.

    Initialisation (§III-C, Eq. 32): V = U = W = P_h, the h leading eigenvectors of A;
    Omega = Gamma = 0; mu = ``mu0``; stop when the selected set has not changed for ``patience``
    (30) iterations or after ``max_iter`` (3000) iterations (§III-D); mu stops growing once it
    exceeds ``mu_max`` = 1e7 (§III-C). Everything is deterministic; ``random_state`` is unused.

    Cost. The leading h (or k) right singular vectors of the standardised X come from the r
    largest eigenpairs of its smaller Gram matrix when r = max(h, k) < min(n, p) (the n x n Gram
    of basehock's mostly-zero X by a sparse product; 1.2 s instead of the 6-9 s of its thin SVD),
    else from the thin SVD (``_leading_right_singular``). A is never formed: A Y = Z (Z^T Y) with
    Z = P_k Sigma_k (p x k) and (mu I - A)^{-1} Y = Y/mu + P_k diag(1/(mu - s_j^2) - 1/mu) P_k^T Y,
    both O(p h k). The
    polar factor of the p x h matrix H costs O(p h^2), which no factorisation of A avoids, so an
    iteration costs O(p h (k + h)) instead of O(p^2 h) with the dense A (the plain form of
    tests/methods/_reference_kmufs.py; the measurements are in docs/performance-history.md). The polar
    factor is taken from the h x h Gram (``numerics.polar.polar_factor``: H (H^T H)^{-1/2}, one
    p h^2 Gram product, an h x h ``eigh`` and one p h^2 product), about 5x faster than the thin
    SVD of the p x h matrix (the reference's form) at p = 2000, h = 100. While mu is small, H is
    dominated by A V (rank k < h) and its Gram too ill-conditioned for that form (kappa(H) > 1e4
    in the first 150-190 iterations on ALLAML, Prostate-GE, PIX10P, BASEHOCK); up to
    kappa(H) = 1e8 a second orthogonalisation pass on the same Gram eigendecomposition gives the
    polar factor to ~eps kappa(H) (the SVD form's own sensitivity) at about 2.5x less than the
    SVD, which only the first few iterations (kappa up to 1e12) still need. The element-wise
    updates write into preallocated p x h buffers (the same arithmetic, bit for bit).

    Closed form (our observation, not the paper's). If V has exactly h non-zero rows S and
    V^T V = I_h, its h x h block V_S is orthogonal, so Tr(V^T A V) = Tr(A_SS) = sum_{i in S} A_ii.
    Problem (11) is therefore solved exactly by the h features with the largest A_ii
    (= ||row_i(P_k Sigma_k)||^2, the variance of feature i captured by the k leading principal
    components). ``objective_history_`` records -sum_{i in S_t} A_ii for the support S_t of W after
    each iteration, which is the objective (11) at the best V with that support, and
    ``optimal_objective_`` the exact minimum, so the ADMM's gap to the optimum is visible.

    Decisions where the paper is silent or ambiguous
    ------------------------------------------------
    - Standardisation uses the population standard deviation (ddof=0); a constant feature becomes
      an all-zero feature (A_ii = 0, never preferred).
    - Every "mu^T" of the extraction is read as mu^t (papers/README.md).
    - When h > k, the eigenvectors of A beyond the k-th span its null space and are not unique;
      V0 takes the next left singular vectors of X (they are eigenvectors of A with eigenvalue 0),
      i.e. P_h from the thin SVD of X. If h exceeds the number of singular vectors (h > n for wide
      data) the basis is completed deterministically (see ``_initial_basis``).
    - W0 = P_h as the paper writes (not yet row-sparse); the first W-step makes it so.
    - mu0: Algorithm 1 and §V-C say 0.1, §III-C says "1e-4 to 1e-1 depending on the data set";
      we use 0.1. For ``admm="vanilla"`` the paper's mu0 = lambda_1(A) + 0.1 (so mu I - A stays
      positive definite); we use lambda_1 + ``mu0``, i.e. exactly the paper's value by default.
    - mu_max: "if mu is larger than mu_max we stop updating mu": mu is multiplied by rho only
      while mu <= mu_max.
    - Stopping: the set S_t of non-zero rows of W is compared after every iteration; the fit stops
      once S_t has equalled S_{t-1} for ``patience`` consecutive iterations (``converged_`` True),
      else after ``max_iter`` iterations (``converged_`` False).
    - If D (Eq. 29) is exactly zero the V-step keeps the previous V (the maximiser is undefined).
    - The ADMM is non-convex: no monotone decrease is claimed by the paper nor tested.

    Observed (tests/benchmark, not claims of the paper): the bi-linear ADMM stops after ~270-340
    iterations at 90-98% of the optimal objective (digits, isolet, synthetic); the vanilla ADMM's
    ||V||_F peaks ~1e4-1e5 times sqrt(h) and, on digits and isolet, its selected set alternates
    between two sets with period 2, so it runs to ``max_iter``.

    Parameters
    ----------
    n_features_to_select : int or None, default None
        h, the size of the exact subset (the non-zero rows of V); None: min(50, n_features).
    n_clusters : int, default 2
        k, the rank of A = P_k Sigma_k^2 P_k^T (Eq. 8).
    random_state : int, RandomState instance or None, default None
        Unused: the fit is deterministic.
    mu0 : initial penalty mu (bilinear) or offset above lambda_1(A) (vanilla); > 0.
    rho : growth factor of mu per iteration; >= 1 (the paper: 1.05).
    mu_max : mu stops growing above this value (the paper: 1e7).
    admm : "bilinear" (Algorithm 1), "vanilla" (Eqs. 12-25) or "exact" (closed form, not in paper).
    max_iter : iteration cap (the paper: 3000).
    patience : stop after this many iterations without a change of the selected set (paper: 30).

    Attributes
    ----------
    support_ : ndarray of bool (n_features,)
        The h selected features (the non-zero rows of W).
    V_ : ndarray (n_features, h) or None
        The final V (p x h); None for ``admm="exact"``.
    U_ : ndarray (n_features, h) or None
        The final U (p x h); None for ``admm="exact"``.
    W_ : ndarray (n_features, h) or None
        The final W (p x h); None for ``admm="exact"``.
    objective_history_ : list of float
        -sum_{i in S_t} A_ii for the support S_t of W after each iteration.
    v_norm_history_ : list of float
        ||V||_F after every V-step.
    residual_history_ : list of float
        sqrt(||V-U||_F^2 + ||V-W||_F^2) per iteration.
    optimal_objective_ : float
        The exact minimum of (11) (see "Closed form" above).
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the ``patience`` test (not ``max_iter``) ended the fit.
    feature_weights_ : ndarray (n_features,)
        The diagonal A_ii / n_samples, in [0, 1].
    """

    selection_kind = "subset"
    # Thin p x h products only (two threads: 2-4x slower fits, and on allaml another subset).
    single_threaded_blas = True
    _parameter_constraints = {
        **UFSSelector._parameter_constraints,
        "mu0": POSITIVE,
        # mu may only grow (Eq. (19)).
        "rho": [Interval(Real, 1, None, closed="left")],
        "mu_max": POSITIVE,
        "admm": [StrOptions(set(ADMM_FORMS))],
        "max_iter": POSITIVE_INT,
        "patience": POSITIVE_INT,
    }

    def __init__(self, n_features_to_select=None, *, n_clusters=2, random_state=None, mu0=0.1,
                 rho=1.05, mu_max=1e7, admm="bilinear", max_iter=3000, patience=30):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.mu0 = mu0
        self.rho = rho
        self.mu_max = mu_max
        self.admm = admm
        self.max_iter = max_iter
        self.patience = patience

    @classmethod
    def expected_fit_cost(cls, n_samples: int, n_features: int, params: dict,
                          nonzero_fraction: float = 1.0) -> FitCost | None:
        """About 450 ADMM iterations (the default fits stop after 280-950), each O(d h^2) over
        the d x h iterates: d (2.2e-8 h + 9.3e-11 h^2) s, with h = ``n_features_to_select``
        (None: min(50, d)), after a thin SVD of X (2.5e-11 n d min(n, d) s). Measured (one BLAS
        thread) against modelled: pix10p (100 x 10000) h = 50, 100, 300: 4.4, 11.5, 65 s and
        6.6, 14, 68 s; synthetic 187 x 20000 (h = 100) 23.9 and 28 s; 3000 x 2000 (h = 300)
        16.9 and 14 s; USPS (h = 100) 0.75 and 0.37 s. Memory: a dozen d x h arrays."""
        n, d = float(n_samples), float(n_features)
        h = float(params.get("n_features_to_select") or min(50, n_features))
        iterations = min(450, int(params.get("max_iter", 3000)))
        seconds = iterations * d * (2.2e-8 * h + 9.3e-11 * h ** 2) + 2.5e-11 * n * d * min(n, d)
        return FitCost(seconds, 8.0 * (12 * d * h + n * d),
                       f"~{iterations} ADMM iterations over {n_features} x {int(h)} iterates")

    def _fit(self, X):
        h, k = self.n_features_to_select_, self.n_clusters_
        Xs = zscore(X)
        # Thin SVD of the paper's X (p x n) = of Xs^T: its left singular vectors are Xs's right ones.
        leading = (_leading_right_singular(Xs, max(h, k)) if max(h, k) < min(Xs.shape)
                   else None)
        if leading is None:
            _, sigma, Vt = np.linalg.svd(Xs, full_matrices=False)
            leading = sigma, Vt.T
        sigma, P = leading
        k = min(k, P.shape[1])
        P_k, sigma_k = P[:, :k], sigma[:k]
        diag_A = np.einsum("ij,ij->i", P_k, P_k * sigma_k ** 2)    # A_ii = ||row_i(P_k Sigma_k)||^2
        self.feature_weights_ = diag_A / X.shape[0]
        self.optimal_objective_ = -float(np.sum(diag_A[top_rows(diag_A[:, None], h)]))
        if self.admm == "exact":
            support = top_rows(diag_A[:, None], h)
            self.V_ = self.U_ = self.W_ = None
            self.objective_history_, self.v_norm_history_, self.residual_history_ = [], [], []
            self._stopped(0, True)                                  # closed form: no iterations
        else:
            operator = _FactoredA(P_k, sigma_k)
            V0 = _initial_basis(P, h)                                  # Eq. (32)
            support = self._admm(operator, V0, diag_A, sigma_k[0] ** 2 if k else 0.0)
        self.support_ = np.zeros(X.shape[1], dtype=bool)
        self.support_[support] = True

    def _admm(self, A, V0: np.ndarray, diag_A: np.ndarray, lambda_1: float) -> np.ndarray:
        h = V0.shape[1]
        bilinear = self.admm == "bilinear"
        V, U, W = V0.copy(), V0.copy(), V0.copy()
        Omega, Gamma = np.zeros_like(V0), np.zeros_like(V0)
        mu = float(self.mu0) if bilinear else lambda_1 + float(self.mu0)
        objective, v_norms, residuals = [], [], []
        support, stable, converged, t = None, 0, False, 0
        # Scratch p x h buffers, written in place every iteration: the same element-wise
        # arithmetic as the equations (bit for bit), without a fresh p x h allocation per term.
        Om, Gm, T1, T2 = (np.empty_like(V0) for _ in range(4))
        w_rows = None                          # the non-zero rows of W (None: W = P_h is dense)
        for t in range(1, self.max_iter + 1):  # noqa: B007 - t counts the iterations run
            np.divide(Omega, mu, out=Om)
            np.divide(Gamma, mu, out=Gm)
            np.subtract(U, Om, out=T1)                                 # B
            np.subtract(W, Gm, out=T2)                                 # C
            T1 += T2                                                   # B + C
            if bilinear:
                T1 *= mu
                D = A.dot(U)
                D += T1                                                # Eq. (28)
                norm_D = np.linalg.norm(D)
                if norm_D > 0:
                    D *= np.sqrt(h) / norm_D
                    V = D                                              # Eq. (29)
                H = A.dot(V)
                np.add(V, Om, out=T2)
                T2 *= mu
                H += T2
                U = polar_factor(H)                                    # Eqs. (30)-(31)
            else:
                V = 0.5 * mu * A.shifted_solve(mu, T1)                 # Eq. (22)
                U = polar_factor(np.add(V, Om, out=T2))                # Eqs. (23)-(24)
            v_norms.append(float(np.linalg.norm(V)))
            F = np.add(V, Gm, out=Gm)
            new_support = top_rows(F, h)                               # Eqs. (25)-(26):
            if w_rows is None:                                         # the l2,0 projection
                W[:] = 0.0
            else:
                W[w_rows] = 0.0
            W[new_support] = F[new_support]
            w_rows = new_support
            norm_VmU = np.linalg.norm(np.subtract(V, U, out=T1))
            T1 *= mu
            Omega += T1                                                # Eq. (17)
            norm_VmW = np.linalg.norm(np.subtract(V, W, out=T2))
            T2 *= mu
            Gamma += T2                                                # Eq. (18)
            if mu <= self.mu_max:
                mu *= self.rho                                         # Eq. (19)
            objective.append(-float(diag_A[new_support].sum()))
            residuals.append(float(np.sqrt(norm_VmU ** 2 + norm_VmW ** 2)))
            stable = stable + 1 if support is not None and np.array_equal(new_support, support) else 0
            support = new_support
            if stable >= self.patience:
                converged = True
                break
        self.V_, self.U_, self.W_ = V, U, W
        self.objective_history_, self.v_norm_history_ = objective, v_norms
        self.residual_history_ = residuals
        self._stopped(t, converged, test=f"selected set unchanged for patience={self.patience} "
                                         f"iterations")
        return new_support
