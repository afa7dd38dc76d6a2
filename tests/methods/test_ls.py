"""Laplacian Score (He, Cai & Niyogi, NIPS 2005): the sparse graph gives the dense-formula scores."""

import numpy as np
import pytest

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.methods.base import make_selector
from ufsbench.numerics import graphs
from ufsbench.numerics.graphs import knn_graph


def _dense_laplacian_scores(X, k, weight):
    # Eqs. (1)-(2) with the dense (n, n) graph, written out.
    S = knn_graph(X, k=k, weight=weight, sigma=None)
    D = np.diag(S.sum(axis=1))
    L = D - S
    one = np.ones(len(X))
    F = X - np.outer(one, (one @ D @ X) / (one @ D @ one))
    return np.einsum("ij,ij->j", F, L @ F) / np.einsum("ij,ij->j", F, D @ F)


@pytest.mark.parametrize("weight", ["heat", "binary"])
@pytest.mark.parametrize("large", [False, True])
def test_scores_equal_dense_formula_on_both_paths(weight, large, monkeypatch):
    X = make_synthetic(n_samples=80, n_features=15, n_informative=4, n_clusters=3,
                       random_state=0).X
    ref = _dense_laplacian_scores(X, 5, weight)
    if large:
        monkeypatch.setattr(graphs, "SPARSE_MIN_SAMPLES", 2)     # blockwise neighbour search
    sel = make_selector("ls", weight=weight).fit(X)
    np.testing.assert_allclose(sel.laplacian_scores_, ref, rtol=1e-10)
