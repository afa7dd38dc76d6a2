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


def test_mean_distance_is_the_mean_over_all_pairs_with_self_pairs():
    from scipy.spatial.distance import cdist

    X = np.random.default_rng(3).normal(size=(70, 30)) * 4.0 + 100.0   # far from the origin
    expected = cdist(X, X).mean()                  # n^2 entries, the zero diagonal included
    assert graphs.mean_distance(X) == pytest.approx(expected, rel=1e-12)
    assert graphs.mean_distance(X, block_cells=7 * 70) == pytest.approx(expected, rel=1e-12)


def test_mean_distance_width_is_cais_heat_kernel():
    """sigma="mean_distance": weights exp(-d^2 / (2 t^2)), t = mean pairwise distance."""
    from scipy.spatial.distance import cdist

    X = make_synthetic(n_samples=60, n_features=25, n_informative=4, n_clusters=3,
                       random_state=4).X
    t = cdist(X, X).mean()
    ref = _dense_laplacian_scores_with(X, knn_graph(X, k=5, weight="heat", sigma=2 * t * t))
    sel = make_selector("ls", sigma="mean_distance").fit(X)
    np.testing.assert_allclose(sel.laplacian_scores_, ref, rtol=1e-10)
    default = make_selector("ls").fit(X)
    assert not np.allclose(default.laplacian_scores_, ref, rtol=1e-6)     # another width


def _dense_laplacian_scores_with(X, S):
    D = np.diag(S.sum(axis=1))
    one = np.ones(len(X))
    F = X - np.outer(one, (one @ D @ X) / (one @ D @ one))
    return np.einsum("ij,ij->j", F, (D - S) @ F) / np.einsum("ij,ij->j", F, D @ F)


def test_cosine_graph_is_max_symmetrised_so_one_sided_negative_edges_vanish():
    """Cai's constructW: directed kNN cosine weights G, then W = max(G, G^T) (absent = 0)."""
    from ufsbench.methods.ls import cosine_knn_graph

    X = np.random.default_rng(5).normal(size=(40, 2))   # neighbours across the origin
    k = 4
    D = graphs.squared_distances(X)
    idx = graphs.knn_indices(D, k)
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    G = np.zeros((40, 40))
    for i in range(40):
        G[i, idx[i]] = unit[idx[i]] @ unit[i]
    expected = np.maximum(G, G.T)
    S = cosine_knn_graph(X, k).toarray()
    np.testing.assert_allclose(S, expected, rtol=1e-13, atol=1e-15)
    one_sided = (G != 0) & (G.T == 0) & (G < 0)
    assert one_sided.any() and np.all(S[one_sided] == 0)      # the case that tells max from "or"
    assert np.any(S < 0)                                      # mutual negative edges stay
    sel = make_selector("ls", weight="cosine", k=k).fit(X)
    np.testing.assert_allclose(sel.laplacian_scores_, _dense_laplacian_scores_with(X, expected),
                               rtol=1e-10)


def test_released_preset_is_cais_default_call():
    sel = make_selector("ls", preset="released")
    assert (sel.k, sel.weight, sel.sigma) == (5, "heat", "mean_distance")


@pytest.mark.parametrize("sigma", ["median", 0.0, -1.0])
def test_bad_width_is_refused_before_fitting(sigma):
    from ufsbench.methods.base import InvalidSelectorParameterError

    with pytest.raises(InvalidSelectorParameterError, match="sigma"):
        make_selector("ls", sigma=sigma).fit(np.random.default_rng(0).normal(size=(10, 3)))
