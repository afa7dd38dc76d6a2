"""K-means UFS written plainly from the paper, for tests only: the ADMM on the p x p matrix A.

Sun, Ding & Fan: A = P_k Sigma_k^2 P_k^T (Eq. 8) formed explicitly, the bi-linear ADMM of
Algorithm 1 (Eqs. 26-31) or the quadratic one of Eqs. (12)-(25) with (mu I - A)^{-1} by a dense
solve, every polar factor from a thin SVD, the start of Eq. (32) and the stopping rule of §III-D
as the selector takes them. The selector's rank-k factor of A and Gram-based polar factor must
give the same supports in every iteration.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ufsbench.methods.kmufs import _initial_basis
from ufsbench.numerics import top_rows
from ufsbench.numerics.linalg import orthonormal_polar
from ufsbench.numerics.preprocess import zscore


def reference_kmufs(X, n_features_to_select, n_clusters, mu0=0.1, rho=1.05, mu_max=1e7,
                    admm="bilinear", max_iter=3000, patience=30):
    """A fit's support_, V_, U_, W_, objective_history_, v_norm_history_, residual_history_,
    n_iter_ and converged_ (``admm`` "bilinear" or "vanilla")."""
    h = n_features_to_select
    Xs = zscore(np.asarray(X, dtype=float))
    _, sigma, Vt = np.linalg.svd(Xs, full_matrices=False)
    P = Vt.T
    k = min(n_clusters, P.shape[1])
    Z = P[:, :k] * sigma[:k]
    A = Z @ Z.T                                                        # Eq. (8), p x p
    diag_A = np.einsum("ij,ij->i", P[:, :k], P[:, :k] * sigma[:k] ** 2)
    V = _initial_basis(P, h)                                           # Eq. (32)
    U, W = V.copy(), V.copy()
    Omega, Gamma = np.zeros_like(V), np.zeros_like(V)
    bilinear = admm == "bilinear"
    mu = float(mu0) if bilinear else sigma[0] ** 2 + float(mu0)
    objective, v_norms, residuals = [], [], []
    support, stable, converged, t = None, 0, False, 0
    for t in range(1, max_iter + 1):  # noqa: B007 - t counts the iterations run
        B, C = U - Omega / mu, W - Gamma / mu
        if bilinear:
            D = A @ U + mu * (B + C)                                   # Eq. (28)
            if np.linalg.norm(D) > 0:
                V = np.sqrt(h) * D / np.linalg.norm(D)                 # Eq. (29)
            U = orthonormal_polar(A @ V + mu * (V + Omega / mu))       # Eqs. (30)-(31)
        else:
            V = 0.5 * mu * np.linalg.solve(mu * np.eye(len(A)) - A, B + C)   # Eq. (22)
            U = orthonormal_polar(V + Omega / mu)                      # Eqs. (23)-(24)
        v_norms.append(float(np.linalg.norm(V)))
        F = V + Gamma / mu
        new_support = top_rows(F, h)                                   # Eqs. (25)-(26)
        W = np.zeros_like(F)
        W[new_support] = F[new_support]
        Omega = Omega + mu * (V - U)                                   # Eq. (17)
        Gamma = Gamma + mu * (V - W)                                   # Eq. (18)
        if mu <= mu_max:
            mu *= rho                                                  # Eq. (19)
        objective.append(-float(diag_A[new_support].sum()))
        residuals.append(float(np.sqrt(np.linalg.norm(V - U) ** 2 + np.linalg.norm(V - W) ** 2)))
        stable = stable + 1 if support is not None and np.array_equal(new_support, support) else 0
        support = new_support
        if stable >= patience:
            converged = True
            break
    mask = np.zeros(Xs.shape[1], dtype=bool)
    mask[support] = True
    return SimpleNamespace(support_=mask, V_=V, U_=U, W_=W, objective_history_=objective,
                           v_norm_history_=v_norms, residual_history_=residuals, n_iter_=t,
                           converged_=converged)
