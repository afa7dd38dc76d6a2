"""DGUFS written plainly from the paper, for tests only: Algorithm 2 on the full d x n matrices.

Guo & Zhu, AAAI 2018: Y-step (8) and Z-step (9) by the l2,0 projection of Theorem 1, M-step
(11) or its §4.3 relaxation, L-step by Theorem 2 (full eigendecomposition), multipliers and
penalty by (13)-(15), labels from the c leading eigenpairs of L (§4.3). Every iterate is a dense
d x n or n x n array: the selector's row-sparse storage and subset eigensolver must give the
same supports and, up to round-off, the same L, Y and objective. ``update_order="zylm"`` and
``affinity_scaling="minmax"`` are the authors' code's order (Z, Y, L, M) and its ``speedUp``
min-max scaling of H Y^T Z H and of the L-step's matrix.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from sklearn.utils import check_random_state

from ufsbench.methods.dgufs import m_step, minmax_offdiagonal, rank_threshold_psd, similarity_graph
from ufsbench.numerics import row_norms, sym
from ufsbench.numerics.linalg import double_centre, seeded_eigsh
from ufsbench.numerics.sparsity import l20_project, top_rows


def reference_dgufs(X, n_features_to_select, n_clusters, random_state=None, alpha=1e3, beta=0.5,
                    k=5, m_update="relaxed", gamma=0.005, mu=1.0, rho=1.1, mu_max=1e10,
                    max_iter=50, tol=5e-7, graph="knn", update_order="yzml",
                    affinity_scaling="none"):
    """A fit's support_, labels_, L_, M_, Y_ (d x n), n_iter_, objective_history_ and
    support_history_, from the equations on full matrices."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    m = n_features_to_select
    S = similarity_graph(X, graph=graph, k=min(k, n - 1))              # Eq. (3)
    scale = minmax_offdiagonal if affinity_scaling == "minmax" else (lambda C: C)
    Xt = X.T                                                           # d x n
    Y, Z, Lam1 = (np.zeros((d, n)) for _ in range(3))
    L, M, Lam2 = (np.zeros((n, n)) for _ in range(3))
    HLH = double_centre(L)                                            # H L H, footnote 4
    objective, supports = [], []
    for _ in range(max_iter):
        if update_order == "zylm":
            Z = _z_step(Xt, Y, HLH, Lam1, mu, beta, m)
            Y, y_rows = _y_step(Z, HLH, Lam1, mu, beta, m)
            L, kept = _l_step(M, Y, Z, S, Lam2, mu, beta, alpha, scale)
            M = m_step(L + Lam2 / mu, mu, m_update, gamma)
        else:
            Y, y_rows = _y_step(Z, HLH, Lam1, mu, beta, m)
            Z = _z_step(Xt, Y, HLH, Lam1, mu, beta, m)
            M = m_step(L + Lam2 / mu, mu, m_update, gamma)             # Eq. (11) / §4.3
            L, kept = _l_step(M, Y, Z, S, Lam2, mu, beta, alpha, scale)
        HLH = double_centre(L)
        r1, r2 = float(np.max(np.abs(Z - Y))), float(np.max(np.abs(L - M)))
        objective.append(-beta * float(np.sum(S * L))
                         - (1 - beta) * float(np.sum((Y[y_rows] @ HLH) * Y[y_rows]))
                         + alpha * len(kept))                          # objective (5)
        supports.append(y_rows)
        if r1 < tol and r2 < tol:
            break
        Lam1 += mu * (Z - Y)                                           # Eq. (13)
        Lam2 += mu * (L - M)                                           # Eq. (14)
        mu = min(rho * mu, mu_max)                                     # Eq. (15)
    support = np.zeros(d, dtype=bool)
    support[supports[-1]] = True
    assert np.count_nonzero(row_norms(Y) > 0) == m
    return SimpleNamespace(support_=support, labels_=_labels(L, n_clusters, random_state), L_=L,
                           M_=M, Y_=Y, n_iter_=len(objective), objective_history_=objective,
                           support_history_=supports)


def _y_step(Z, HLH, Lam1, mu, beta, m):
    U = Z + ((1 - beta) * (Z @ HLH) + Lam1) / mu
    return l20_project(U, m), top_rows(U, m)                           # Eq. (8), Theorem 1


def _z_step(Xt, Y, HLH, Lam1, mu, beta, m):
    V = Xt - Y - ((1 - beta) * (Y @ HLH) - Lam1) / mu
    return Xt - l20_project(V, Xt.shape[0] - m)                        # Eq. (9)


def _l_step(M, Y, Z, S, Lam2, mu, beta, alpha, scale):
    A = scale(M + ((1 - beta) * scale(double_centre(Y.T @ Z)) + beta * S - Lam2) / mu)
    return rank_threshold_psd(A, 2.0 * alpha / mu, subset=False)       # Theorem 2


def _labels(L, c, random_state):
    """§4.3: V-hat = (R diag(sqrt(xi)))^T of the c leading eigenpairs (Lanczos started from a
    vector drawn from ``random_state``); the label of a sample is its row of largest |V-hat|."""
    n = L.shape[0]
    v0 = check_random_state(random_state).uniform(-1.0, 1.0, size=n)
    if not np.any(L):
        return np.zeros(n, dtype=int)
    if c >= n:
        xi, R = np.linalg.eigh(sym(L))
    else:
        xi, R = seeded_eigsh(sym(L), k=c, which="LA", v0=v0, tol=0.0)
    return np.argmax(np.abs((R * np.sqrt(np.maximum(xi, 0.0))).T), axis=0)
