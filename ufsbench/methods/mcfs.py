"""MCFS (Cai, Zhang & He, "Unsupervised Feature Selection for Multi-Cluster Data", KDD 2010)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram

from ufsbench.cache import cached_call
from ufsbench.methods._checks import check_int, check_number
from ufsbench.methods.base import UFSSelector, register
from ufsbench.numerics import knn_graph, ranking_from_scores
from ufsbench.numerics import graphs
from ufsbench.numerics.lars import lasso_lars_ridge_path
from ufsbench.numerics.spectral import generalized_spectral_embedding


def sparse_spectral_coefficients(X: np.ndarray, Y: np.ndarray, cardinality: int,
                                 ridge: float = 1e-3,
                                 solver: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Stage 2 of MCFS: one LARS-lasso regression of every column y_k of Y on X.

    For each k the lasso path of min ||y_k - X a||^2 + ridge ||a||^2 (+ l1) is traced by LARS
    with the lasso modification on the Gram matrix X^T X + ridge I (Cai's ``SR.m``); the
    coefficient vector taken is the one at the *last* path step with exactly ``cardinality``
    non-zeros, rescaled to unit l2 norm. If the path never has that many non-zeros (possible
    only without ridge), the last step with the largest cardinality below it is taken.
    Returns A (d, K) and the cardinality reached per column.

    ``solver``: ``"gram"`` forms the d x d Gram and runs scikit-learn's ``lars_path_gram``;
    ``"implicit"`` runs :func:`ufsbench.numerics.lars.lasso_lars_ridge_path`, the same path
    without the Gram (O(n d) per step, O(n d) memory); ``"auto"`` = implicit when d > n, else
    gram (see the class docstring for the measurements behind the switch).
    """
    n, d = X.shape
    if solver not in ("auto", "gram", "implicit"):
        raise ValueError(f"solver={solver!r} must be 'auto', 'gram' or 'implicit'")
    if solver == "auto":
        solver = "implicit" if d > n else "gram"
    XY = X.T @ Y
    coefs = np.zeros((d, Y.shape[1]))
    reached = np.zeros(Y.shape[1], dtype=int)
    # Lasso steps may drop variables, so the path can be longer than the target cardinality.
    max_iter = min(4 * cardinality + 20, 8 * d)
    if solver == "gram":
        gram = X.T @ X
        gram[np.diag_indices(d)] += ridge
    for j in range(Y.shape[1]):
        if solver == "gram":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                _, _, path = lars_path_gram(XY[:, j], gram, n_samples=n, method="lasso",
                                            max_iter=max_iter)
            nnz = np.count_nonzero(path, axis=0)
        else:
            sparse_path = lasso_lars_ridge_path(X, XY[:, j], ridge, n_samples=n,
                                                max_iter=max_iter)
            nnz = sparse_path.nnz()
        ok = np.flatnonzero(nnz <= cardinality)
        best = ok[nnz[ok] == nnz[ok].max()][-1]   # last step with the largest admissible nnz
        a = path[:, best] if solver == "gram" else sparse_path.coef(best)
        norm = np.linalg.norm(a)
        coefs[:, j] = a / norm if norm > 0 else a
        reached[j] = nnz[best]
    return coefs, reached


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
      so the model is refitted per h (subsets for different h need not be nested), as in Cai's
      code; FSASL's variant (one fit at max h, truncated) is not used. ``scores_`` is still set.
    * LARS *with the lasso modification* (variables may leave the active set) on the Gram matrix
      X^T X + ``ridge`` I with ``ridge = 1e-3`` (Cai's ``SR.m``); the ridge is what lets the path
      reach h >= n non-zeros. X is neither centred nor scaled and there is no intercept. The
      coefficient vector at the *last* path step with exactly h non-zeros is taken and rescaled
      to unit l2 norm before the max. The score is max_k |a_{k,j}| with the absolute value
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
      Measured (``python benchmarks/bench_mcfs.py``, h = 100, K = c, OMP_NUM_THREADS=1):
      prostate_ge 102 x 5966 and synthetic 100 x 10000 in a few seconds instead of 15-40 s, with
      a peak of a few MB instead of 0.9-2.4 GB; see the script's output for the exact numbers.
    * K (``n_eigenvectors``) defaults to the number of clusters c (the paper's experiments and
      FSASL); Cai's code default is 5.
    * Graph: k = 5 neighbours, "or"-symmetrised, heat kernel exp(-||x_i - x_j||^2 / sigma) with
      ``sigma=None`` = the mean squared kNN distance (Cai's code uses exp(-d^2 / (2 t^2)) with t
      the mean pairwise distance; both are data-driven widths). ``weight="cosine"`` is the
      paper's dot-product weighting on normalised data.
    * Fewer than h features with a non-zero score (K small, or h close to d): the support is
      padded with the zero-score features of lowest index (Cai's code pads likewise, with a
      warning).
    """

    selection_kind = "subset"

    def __init__(self, n_features_to_select=None, n_clusters=2, random_state=None, k=5,
                 weight="heat", sigma=None, n_eigenvectors=None, ridge=1e-3):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.k = k
        self.weight = weight
        self.sigma = sigma
        self.n_eigenvectors = n_eigenvectors
        self.ridge = ridge

    def _check_params(self, n: int) -> int:
        """Validate the parameters; return K, the number of eigenvectors."""
        owner = type(self).__name__
        K = self.n_clusters_ if self.n_eigenvectors is None else self.n_eigenvectors
        check_int(owner, "n_eigenvectors", K, minimum=1, maximum=n - 1,
                  hint=f"at most n_samples - 1 = {n - 1}")
        check_number(owner, "ridge", self.ridge, low=0.0, hint="Cai's code uses 1e-3")
        return int(K)

    def _fit(self, X):
        n, d = X.shape
        K = self._check_params(n)
        # Large n: sparse graph and Lanczos eigenvectors (no n x n array, no O(n^3) eigh).
        graph = graphs.sparse_knn_graph if n >= graphs.SPARSE_MIN_SAMPLES else knn_graph
        S = cached_call(graph, X, k=min(self.k, n - 1), weight=self.weight, sigma=self.sigma)
        self.embedding_, self.eigenvalues_ = generalized_spectral_embedding(S, int(K))
        self.coef_, self.cardinality_ = sparse_spectral_coefficients(
            X, self.embedding_, self.n_features_to_select_, self.ridge)
        self.scores_ = np.abs(self.coef_).max(axis=1)
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[ranking_from_scores(self.scores_)[: self.n_features_to_select_]] = True
