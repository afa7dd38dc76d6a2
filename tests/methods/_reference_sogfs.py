"""Reference SOGFS for the tests: Algorithm 2 of Nie, Zhu & Li (AAAI 2016) computed densely.

Initial S by problem (1) in closed form (25) with alpha of Eq. (27) (or each row's alpha_i of
Eq. (26)); then repeat: W by Algorithm 1 (problem (13), Eq. (12)), L_S = D - (S + S^T)/2, F = the c
smallest eigenvectors of L_S (problem (14)), each s_i by the simplex projection (18) over whole
sorted rows, lambda doubled / halved towards c components, until S has c components. Everything
is a dense n x n array, F and every eigenvalue come from a dense ``eigh``, components are counted
by a breadth-first search of S's support; the selector's decisions where the paper is silent
(canonical F of an S with more than c components, the shared W-step) are taken as they are.
"""

from collections import deque

import numpy as np

import ufsbench.methods.sogfs as sogfs_mod
from ufsbench.numerics import knn_indices, l21_norm, laplacian, squared_distances, sym
from ufsbench.numerics.graphs import gram_squared_distances
from ufsbench.numerics.laplacian_eig import canonical_null_space_vectors
from ufsbench.numerics.preprocess import center_unit_norm


def _components(S):
    """(count, labels) of the connected components of S's support, by breadth-first search."""
    adjacency = (S != 0) | (S.T != 0)
    labels = np.full(S.shape[0], -1)
    count = 0
    for start in range(S.shape[0]):
        if labels[start] >= 0:
            continue
        labels[start], queue = count, deque([start])
        while queue:
            for j in np.flatnonzero(adjacency[queue.popleft()] & (labels < 0)):
                labels[j] = count
                queue.append(j)
        count += 1
    return count, labels


def _initial_s(D0, k, alpha, local0, per_sample):
    """Problem (1): each row's k nearest with alpha_i of Eq. (26), or (25) with one alpha."""
    if not per_sample:
        return sogfs_mod.s_step(D0, alpha, local0, full_sort=True)
    S = np.zeros_like(D0)
    for i, row in enumerate(D0):
        order = np.argsort(np.where(np.arange(len(row)) == i, np.inf, row), kind="stable")
        d = row[order[: k + 1]]
        S[i, order[:k]] = (d[k] - d[:k]) / (k * d[k] - d[:k].sum())
    return S


def _f_step(S, L, c, component_test):
    """(F, component count, verdict -1 / 0 / 1) with a dense eigh of L."""
    n_comp, labels = _components(S)
    vals, vecs = np.linalg.eigh(L)
    F = canonical_null_space_vectors(labels, c) if n_comp > c else vecs[:, :c]
    if component_test == "support":
        verdict = int(np.sign(n_comp - c))
    elif vals[:c].sum() > sogfs_mod.EIGENGAP_FEWER:
        verdict = -1
    else:
        verdict = 1 if vals[:c + 1].sum() < sogfs_mod.EIGENGAP_MORE else 0
    return F, n_comp, verdict


def sogfs_reference(X, n_clusters, gamma=1.0, n_components=None, k=5, max_iter=50,
                    inner_iter=1, inner_tol=None, reset_q=False, tol=1e-5, stop="components",
                    min_iter=1, component_test="support", eps=1e-8, lambda_factor=2.0,
                    initial_alpha="global", neighbours="all", final_w_step=False,
                    solver="auto"):
    """Dict of the iterates' records: objective_history, w_objective_history,
    n_components_history, lambda_history, n_iter, converged, scores, similarity (dense)."""
    n, d = X.shape
    k, c = min(k, n - 1), n_clusters
    m = sogfs_mod._projection_dim(n_components, d)
    X = center_unit_norm(X)
    D0 = squared_distances(X)
    alpha = sogfs_mod.alpha_eq27(D0, k)                               # Eq. (27)
    local0 = knn_indices(D0, k) if neighbours == "local" else None
    S = _initial_s(D0, k, alpha, local0, initial_alpha == "per_sample")
    lam = alpha
    L = laplacian(sym(S))
    F = _f_step(S, L, c, component_test)[0]
    q, W = np.ones(d), None
    out = {"objective_history": [], "w_objective_history": [], "n_components_history": [],
           "lambda_history": []}

    def w_update(L, q, W):
        q = np.ones(d) if reset_q else q
        W, q, w_hist, _ = sogfs_mod.w_step(X, L, q, gamma, m, inner_iter, eps, solver, W0=W,
                                           tol=inner_tol)
        out["w_objective_history"].extend(w_hist)
        return W, q

    verdicts, converged = [], False
    for it in range(max_iter):
        W, q = w_update(L, q, W)
        Mdist = gram_squared_distances(X @ W)
        dist = Mdist + lam * squared_distances(F)
        nbrs = None
        if neighbours == "local":
            nbrs = local0 if it < sogfs_mod.FROZEN_NEIGHBOUR_ITERS else knn_indices(Mdist, k)
        S = sogfs_mod.s_step(dist, alpha, nbrs, full_sort=True)       # (18)
        L = laplacian(sym(S))
        F_new, n_comp, verdict = _f_step(S, L, c, component_test)     # (14)
        h = out["objective_history"]
        h.append(float(np.sum(Mdist * S)) + alpha * float(np.sum(S * S))
                 + gamma * l21_norm(W) + 2.0 * lam * float(np.sum(F_new * (L @ F_new))))
        out["n_components_history"].append(n_comp)
        out["lambda_history"].append(lam)
        if verdict < 0:
            lam *= lambda_factor
            F = F_new
        elif verdict > 0:
            lam /= lambda_factor
        else:
            F = F_new
            converged = it + 1 >= min_iter and (
                stop == "components" or (len(h) > 1 and verdicts[-1] == 0
                                         and abs(h[-1] - h[-2]) <= tol * max(abs(h[-2]), 1e-12)))
        verdicts.append(verdict)
        if converged:
            break
    if final_w_step:
        W, q = w_update(L, q, W)
    out.update(n_iter=len(out["objective_history"]), converged=converged,
               scores=np.linalg.norm(W, axis=1), similarity=S)
    return out
