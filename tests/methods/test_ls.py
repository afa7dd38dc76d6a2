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
    with np.errstate(invalid="ignore", divide="ignore"):        # constant features: 0 / 0
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


def _whole_matrix_scores(X, S):
    """He et al.'s Eq. (2) on the whole matrix at once: the blocked fast path must match it."""
    degree = np.asarray(S.sum(axis=1)).ravel()
    X = np.ascontiguousarray(X)
    centred = X - (degree @ X) / max(degree.sum(), np.finfo(float).tiny)
    spread = np.einsum("i,ij,ij->j", degree, centred, centred)
    smoothness = spread - np.einsum("ij,ij->j", centred, S @ centred)
    with np.errstate(invalid="ignore", divide="ignore"):        # the constant feature
        return smoothness / spread


@pytest.mark.parametrize("weight", ["heat", "binary"])
@pytest.mark.parametrize("layout", [np.ascontiguousarray, np.asfortranarray])
def test_column_blocks_equal_the_dense_formula_and_the_whole_matrix_form(weight, layout,
                                                                          monkeypatch):
    """Many column blocks (a ragged last one), both memory orders, a constant feature."""
    from ufsbench.methods import ls

    X = make_synthetic(n_samples=60, n_features=203, n_informative=6, n_clusters=3,
                       random_state=1).X * np.linspace(0.5, 20.0, 203) + 3.0
    X[:, 17] = 2.5                                            # constant: no information
    X = layout(X)
    monkeypatch.setattr(ls, "BLOCK_CELLS", 60 * 32)           # 32 columns a block, 7 blocks
    sel = make_selector("ls", weight=weight, n_features_to_select=20).fit(X)
    assert np.isinf(sel.laplacian_scores_[17]) and sel.ranking_[-1] == 17
    keep = np.arange(203) != 17
    ref = _dense_laplacian_scores(X, 5, weight)
    np.testing.assert_allclose(sel.laplacian_scores_[keep], ref[keep], rtol=1e-10)
    S = graphs.sparse_knn_graph(X, k=5, weight=weight, sigma=None)
    frozen = _whole_matrix_scores(X, S)
    np.testing.assert_allclose(sel.laplacian_scores_[keep], frozen[keep], rtol=1e-12)
    np.testing.assert_array_equal(np.argsort(sel.laplacian_scores_[keep], kind="stable"),
                                  np.argsort(frozen[keep], kind="stable"))


def test_laplacian_scores_blocks_do_not_change_the_result(monkeypatch):
    """One block or many: the same per-column arithmetic, so equal up to the gemv mean."""
    from ufsbench.methods import ls

    X = np.asfortranarray(np.random.default_rng(2).normal(size=(40, 150)))
    S = graphs.sparse_knn_graph(X, k=4, weight="binary")
    whole = ls.laplacian_scores(X, S)
    monkeypatch.setattr(ls, "BLOCK_CELLS", 40 * 16)
    for a, b in zip(ls.laplacian_scores(X, S), whole):
        np.testing.assert_allclose(a, b, rtol=1e-13)
