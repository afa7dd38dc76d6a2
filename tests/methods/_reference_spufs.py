"""Reference SPUFS for the tests: the plain IRLS of the BL9 model, written from its equations.

    min_W ||X - X W||_F^2 + alpha ||W||_{2,1} + beta Tr(W^T X^T L X W)        (BL9 model)
    W = (X^T X + beta X^T L X + alpha Q)^{-1} X^T X,  q_r = 1 / (2 sqrt(||w_r||^2 + eps))
                                                                              (BL9 step 2)

with Q = I at the start and L the Laplacian of the kNN heat-kernel graph. Every d x d matrix is
formed and solved directly: slow, but nothing in it is the selector's code.
"""

import numpy as np

from ufsbench.numerics import knn_graph, laplacian


def spufs_reference(X, alpha=1.0, beta=1.0, k=5, sigma=None, eps=1e-8, max_iter=100, tol=1e-6):
    """(W, smoothed objective after each step) of the plain IRLS."""
    n, d = X.shape
    L = laplacian(knn_graph(X, k=min(k, n - 1), weight="heat", sigma=sigma))
    gram, graph = X.T @ X, X.T @ L @ X
    q = np.ones(d)
    history = []
    for it in range(max_iter):
        W = np.linalg.solve(gram + beta * graph + alpha * np.diag(q), gram)     # BL9 step 2
        XW = X @ W
        row_sq = np.sum(W ** 2, axis=1)
        history.append(float(np.sum((X - XW) ** 2) + alpha * np.sum(np.sqrt(row_sq + eps))
                             + beta * np.trace(XW.T @ L @ XW)))
        q = 1.0 / (2.0 * np.sqrt(row_sq + eps))
        if it > 0 and abs(history[-2] - history[-1]) < tol * max(abs(history[-2]), 1e-300):
            break
    return W, history
