"""Reference SOGFS for the tests: Algorithm 2 of Nie, Zhu & Li (AAAI 2016) computed densely.

Initial S by problem (1) in closed form (25) with alpha of Eq. (27); then repeat: W by
Algorithm 1 (problem (13), Eq. (12)), L_S = D - (S + S^T)/2, F = the c smallest eigenvectors of
L_S (problem (14)), each s_i by the simplex projection (18) over whole sorted rows, lambda
doubled / halved towards c components. Everything is a dense n x n array and F comes from a
dense ``eigh``; the selector's decisions where the paper is silent (canonical F of an S with more
than c components, its lambda and stopping rules, the shared W-step) are taken as they are.
"""

import numpy as np

import ufsbench.methods.sogfs as sogfs_mod
from ufsbench.numerics import eigh_smallest, knn_indices, l21_norm, laplacian, squared_distances
from ufsbench.numerics import sym
from ufsbench.numerics.graphs import connected_component_labels
from ufsbench.numerics.laplacian_eig import canonical_null_space_vectors
from ufsbench.numerics.preprocess import center_unit_norm


def _f_step(S, L, c):
    n_comp, labels = connected_component_labels(S)
    if n_comp > c:
        return canonical_null_space_vectors(labels, c), n_comp
    return eigh_smallest(L, c)[1], n_comp


def sogfs_reference(X, n_clusters, gamma=1.0, n_components=None, k=5, max_iter=50,
                    inner_iter=1, tol=1e-5, eps=1e-8, lambda_factor=2.0, neighbours="all",
                    solver="auto"):
    """Dict of the iterates' records: objective_history, w_objective_history,
    n_components_history, n_iter, scores, similarity (dense)."""
    n, d = X.shape
    k, c = min(k, n - 1), n_clusters
    m = sogfs_mod._projection_dim(n_components, d)
    X = center_unit_norm(X)
    D0 = squared_distances(X)
    alpha = sogfs_mod.alpha_eq27(D0, k)                               # Eq. (27)
    local0 = knn_indices(D0, k) if neighbours == "local" else None
    S = sogfs_mod.s_step(D0, alpha, local0, full_sort=True)          # (25)
    lam = alpha
    L = laplacian(sym(S))
    F = _f_step(S, L, c)[0]
    q, W = np.ones(d), None
    out = {"objective_history": [], "w_objective_history": [], "n_components_history": []}
    for it in range(max_iter):
        W, q, w_hist, _ = sogfs_mod.w_step(X, L, q, gamma, m, inner_iter, eps, solver, W0=W)
        out["w_objective_history"].extend(w_hist)
        XW = X @ W
        Mdist = squared_distances(XW)
        dist = Mdist + lam * squared_distances(F)
        nbrs = None
        if neighbours == "local":
            nbrs = local0 if it < sogfs_mod.FROZEN_NEIGHBOUR_ITERS else knn_indices(Mdist, k)
        S = sogfs_mod.s_step(dist, alpha, nbrs, full_sort=True)       # (18)
        L = laplacian(sym(S))
        F_new, n_comp = _f_step(S, L, c)                               # (14)
        objective = (float(np.sum(Mdist * S)) + alpha * float(np.sum(S * S))
                     + gamma * l21_norm(W) + 2.0 * lam * float(np.sum(F_new * (L @ F_new))))
        out["objective_history"].append(objective)
        out["n_components_history"].append(n_comp)
        if n_comp < c:
            lam *= lambda_factor
            F = F_new
        elif n_comp > c:
            lam /= lambda_factor
        else:
            F = F_new
            h = out["objective_history"]
            if (len(h) > 1 and out["n_components_history"][-2] == c
                    and abs(objective - h[-2]) <= tol * max(abs(h[-2]), 1e-12)):
                break
    out.update(n_iter=len(out["objective_history"]), scores=np.linalg.norm(W, axis=1),
               similarity=S)
    return out
