"""Tests of SF2SOG (reconstructed): orthogonal l2,0 projection, flexible embedding, optimal graph."""

import itertools

import numpy as np
import pytest

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.sf2sog import SF2SOG, _GramTraceOperator, _preprocess, l20_orthogonal_trace_min
from ufsbench.numerics import laplacian, sym
from ufsbench.numerics.adaptive_neighbors import adaptive_neighbor_graph
from ufsbench.numerics.preprocess import center_unit_norm, zscore
from ufsbench.testing import peak_traced_bytes


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_samples=90, n_features=40, n_informative=6, n_clusters=3,
                          random_state=2)


def _nonzero_rows(W):
    return int(np.count_nonzero(np.linalg.norm(W, axis=1) > 1e-14))


def test_registered_subset_and_reconstructed_label():
    sel = make_selector("sf2sog", lam=0.1, gamma=10.0)
    assert isinstance(sel, SF2SOG) and sel.selection_kind == "subset"
    assert SF2SOG.reconstructed is True
    assert "reconstructed" in SF2SOG.__doc__.splitlines()[0].lower()


@pytest.mark.parametrize("h", [3, 6, 11])
def test_constraints_exact_h_orthonormal_simplex(data, h):
    sel = SF2SOG(n_features_to_select=h, n_clusters=3).fit(data.X)
    W, G = sel.W_, sel.G_
    m = min(3, h)
    assert W.shape == (40, m)
    assert np.allclose(W.T @ W, np.eye(m), atol=1e-10)
    assert sel.support_.sum() == h and _nonzero_rows(W) == h
    assert np.all(np.linalg.norm(W[~sel.support_], axis=1) == 0)
    assert np.all(G >= 0) and np.allclose(G.sum(axis=1), 1.0)
    assert np.all(np.diag(G) == 0)
    assert np.array_equal(np.sort(sel.top_features(h)), np.flatnonzero(sel.support_))


@pytest.mark.parametrize("lam,gamma", [(1.0, 1.0), (1e2, 1e-2), (1e-2, 1e2), (1e4, 1e-4)])
def test_objective_non_increasing(data, lam, gamma):
    sel = SF2SOG(n_features_to_select=8, n_clusters=3, lam=lam, gamma=gamma, tol=0.0,
                 patience=100, max_iter=12).fit(data.X)
    h = np.asarray(sel.objective_history_)
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1])), h


def test_objective_matches_definition(data):
    sel = SF2SOG(n_features_to_select=8, n_clusters=3, lam=2.0, gamma=0.5).fit(data.X)
    Xs = (data.X - data.X.mean(0)) / data.X.std(0)
    W, Y, G, S = sel.W_, sel.Y_, sel.G_, sel.S_
    # Tr(Y^T L_G Y) = 1/2 sum_ij G_ij ||y_i - y_j||^2 with L_G = D - (G + G^T)/2
    pair = 0.5 * sum(G[i, j] * np.sum((Y[i] - Y[j]) ** 2) for i in range(90) for j in range(90))
    assert np.trace(Y.T @ laplacian(sym(G)) @ Y) == pytest.approx(pair, rel=1e-10)
    expected = pair + 2.0 * np.sum((Xs @ W - Y) ** 2) + 0.5 * np.sum((G - S) ** 2)
    assert sel.objective_history_[-1] == pytest.approx(expected, rel=1e-9)


def test_y_step_is_optimal_for_final_w_and_previous_graph(data):
    """Y = lam (L + lam I)^{-1} X W zeroes the gradient 2 L Y + 2 lam (Y - X W)."""
    sel = SF2SOG(n_features_to_select=8, n_clusters=3, lam=0.7, gamma=3.0, max_iter=1).fit(data.X)
    Xs = (data.X - data.X.mean(0)) / data.X.std(0)
    L = laplacian(sym(sel.S_))                        # with max_iter=1, Y was computed with G = S
    grad = L @ sel.Y_ + 0.7 * (sel.Y_ - Xs @ sel.W_)
    assert np.max(np.abs(grad)) < 1e-9 * np.max(np.abs(sel.Y_))


def test_closed_form_h_equals_m_matches_brute_force():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((7, 7))
    M = A @ A.T
    W, rows, value = l20_orthogonal_trace_min(M, h=2, m=2)
    brute = min(np.trace(M[np.ix_(r, r)]) for r in itertools.combinations(range(7), 2))
    assert value == pytest.approx(brute)
    assert np.allclose(W.T @ W, np.eye(2)) and _nonzero_rows(W) == 2


def test_w_step_bounds_for_h_greater_than_m():
    """Never worse than the diagonal start; never below the brute-force optimum."""
    rng = np.random.default_rng(1)
    for _ in range(5):
        A = rng.standard_normal((8, 8))
        M = A @ A.T
        W, rows, value = l20_orthogonal_trace_min(M, h=4, m=2)
        assert np.allclose(W.T @ W, np.eye(2), atol=1e-10) and len(rows) == 4
        assert np.all(np.linalg.norm(np.delete(W, rows, axis=0), axis=1) == 0)
        diag_rows = np.argsort(np.diag(M), kind="stable")[:4]
        start = np.linalg.eigvalsh(M[np.ix_(diag_rows, diag_rows)])[:2].sum()
        brute = min(np.linalg.eigvalsh(M[np.ix_(r, r)])[:2].sum()
                    for r in itertools.combinations(range(8), 4))
        assert brute - 1e-9 <= value <= start + 1e-9
        assert value == pytest.approx(np.trace(W.T @ M @ W))


def test_large_gamma_keeps_prior_graph(data):
    sel = SF2SOG(n_features_to_select=6, n_clusters=3, gamma=1e8).fit(data.X)
    assert np.max(np.abs(sel.G_ - sel.S_)) < 1e-5
    Xs = (data.X - data.X.mean(0)) / data.X.std(0)
    from ufsbench.numerics import squared_distances
    assert np.allclose(sel.S_, adaptive_neighbor_graph(squared_distances(Xs), 5))


def test_small_gamma_graph_is_nearest_neighbour_in_embedding(data):
    """gamma -> 0: each row of G puts its mass on the nearest other sample in Y (no self-loops)."""
    sel = SF2SOG(n_features_to_select=6, n_clusters=3, gamma=1e-9, max_iter=1).fit(data.X)
    D = np.sum((sel.Y_[:, None] - sel.Y_[None]) ** 2, axis=2)
    np.fill_diagonal(D, np.inf)
    assert np.array_equal(np.argmax(sel.G_, axis=1), np.argmin(D, axis=1))


@pytest.mark.parametrize("gamma", [1e-3, 1.0, 1e3])
def test_g_step_equals_the_projection_of_whole_off_diagonal_rows(data, gamma):
    """The windowed projection with the diagonal at -inf gives G bit for bit as the simplex
    projection of each row's n - 1 off-diagonal entries sorted whole."""
    from ufsbench.numerics import project_simplex_rows, squared_distances
    sel = SF2SOG(n_features_to_select=6, n_clusters=3, gamma=gamma, max_iter=2).fit(data.X)
    n = sel.S_.shape[0]
    off = ~np.eye(n, dtype=bool)
    V = sel.S_ - squared_distances(sel.Y_) / (4.0 * gamma)
    whole = np.zeros((n, n))
    whole[off] = project_simplex_rows(V[off].reshape(n, n - 1)).ravel()
    np.testing.assert_array_equal(sel._g_step(sel.Y_, sel.S_), whole)


@pytest.mark.parametrize("h", [6, 10])
def test_planted_features_selected(data, h):
    sel = SF2SOG(n_features_to_select=h, n_clusters=3).fit(data.X)
    assert set(data.informative) <= set(np.flatnonzero(sel.support_))


def test_constant_features_never_selected(data):
    X = data.X.copy()
    X[:, [0, 7]] = 3.0
    sel = SF2SOG(n_features_to_select=6, n_clusters=3).fit(X)
    assert not sel.support_[[0, 7]].any() and sel.support_.sum() == 6


def test_deterministic(data):
    a = SF2SOG(n_features_to_select=8, random_state=0).fit(data.X)
    b = SF2SOG(n_features_to_select=8, random_state=5).fit(data.X)
    assert np.array_equal(a.support_, b.support_) and np.array_equal(a.W_, b.W_)


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="'gamma' parameter"):
        SF2SOG(gamma=0.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="'preprocess' parameter"):
        SF2SOG(preprocess="minmax").fit(data.X)
    with pytest.raises(UFSBenchError, match="'solver' parameter"):
        SF2SOG(solver="magic").fit(data.X)


def test_deprecated_unit_preprocess_warns_and_fits_as_center_unit(data):
    with pytest.warns(FutureWarning, match="preprocess='center_unit'"):
        old = SF2SOG(n_features_to_select=6, n_clusters=3, preprocess="unit",
                     max_iter=3).fit(data.X)
    new = SF2SOG(n_features_to_select=6, n_clusters=3, preprocess="center_unit",
                 max_iter=3).fit(data.X)
    np.testing.assert_array_equal(old.support_, new.support_)
    assert old.objective_history_ == new.objective_history_


def test_preprocessing_is_the_shared_standardisation():
    X = np.column_stack([np.arange(6.0) * 3 + 2, np.full(6, 7.0), [1.0, -1, 2, 0, 5, 3]])
    U = center_unit_norm(X)
    np.testing.assert_allclose(U.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(U, axis=0), [1.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_array_equal(_preprocess(X, "center_unit"), U)
    np.testing.assert_array_equal(_preprocess(X, "zscore"), zscore(X))
    np.testing.assert_array_equal(_preprocess(X, "none"), X)


@pytest.fixture(scope="module")
def wide():
    """d > 2n: the regime where the fit must not form the d x d W-step matrix."""
    return make_synthetic(n_samples=40, n_features=300, n_informative=6, n_clusters=3,
                          random_state=5)


@pytest.mark.parametrize("lam,gamma,h", [(1.0, 1.0, 3), (1.0, 1.0, 12), (1e4, 1e-4, 12),
                                         (1e-2, 1e2, 20), (1e-6, 1e6, 8)])
def test_factored_path_equals_dense_path(wide, lam, gamma, h):
    """Same iterates: support, W, objective history (M = B^T B never formed vs M dense)."""
    kw = dict(lam=lam, gamma=gamma, n_features_to_select=h, n_clusters=3)
    dense = SF2SOG(solver="dense", **kw).fit(wide.X)
    fast = SF2SOG(solver="factored", **kw).fit(wide.X)
    assert np.array_equal(fast.support_, dense.support_)
    np.testing.assert_allclose(fast.objective_history_, dense.objective_history_, rtol=1e-9)
    # W is unique up to a rotation of its columns: compare the projectors W W^T.
    assert np.allclose(fast.W_ @ fast.W_.T, dense.W_ @ dense.W_.T, atol=1e-7)


def test_gram_operator_matches_dense_matrix():
    rng = np.random.default_rng(3)
    B = rng.standard_normal((6, 25))
    M, op = B.T @ B, _GramTraceOperator(B)
    W = rng.standard_normal((25, 2))
    rows = np.array([1, 4, 9, 20])
    assert np.allclose(op.diagonal(), np.diag(M))
    assert np.allclose(op.dot(W), M @ W)
    assert np.allclose(op.block(rows), M[np.ix_(rows, rows)])
    assert op.largest_eigenvalue() == pytest.approx(np.linalg.eigvalsh(M)[-1])
    for h in (2, 5):
        a = l20_orthogonal_trace_min(M, h, 2)
        b = l20_orthogonal_trace_min(op, h, 2)
        assert np.array_equal(a[1], b[1]) and a[2] == pytest.approx(b[2], rel=1e-10)


def test_gram_operator_largest_eigenvalue_by_lanczos_on_many_samples():
    """From LANCZOS_MIN_SIZE samples on lambda_max(B B^T) comes from Lanczos: the LAPACK value
    to round-off, whether the top eigenvalue stands apart or two nearly coincide."""
    from ufsbench.methods.sf2sog import LANCZOS_MIN_SIZE
    rng = np.random.default_rng(4)
    n = LANCZOS_MIN_SIZE
    for top in ([40.0, 20.0], [40.0, 40.0 * (1 - 1e-9)]):
        Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
        spectrum = np.concatenate([top, rng.uniform(0.0, 10.0, n - 2)])
        B = (Q * np.sqrt(spectrum)) @ np.linalg.qr(rng.standard_normal((n, n)))[0]
        # B B^T = Q diag(spectrum) Q^T
        expected = np.linalg.eigvalsh(B @ B.T)[-1]
        # LAPACK's own error is ~n eps ||B B^T||; 1e-13 relative leaves a margin of ~10.
        assert _GramTraceOperator(B).largest_eigenvalue() == pytest.approx(expected, rel=1e-13)



def test_gram_operator_largest_eigenvalue_through_sparse_factors():
    """With B = diag(s) Phi^T X for a mostly-zero X, Lanczos runs on diag(s) Phi^T X X^T Phi
    diag(s) through X's non-zeros: the value of the formed B B^T to round-off."""
    from ufsbench.methods.sf2sog import LANCZOS_MIN_SIZE
    from ufsbench.numerics.sparse_gram import SparsePlusOffset
    rng = np.random.default_rng(5)
    n, d = LANCZOS_MIN_SIZE, 800
    X = zscore(rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.02))
    Xs = SparsePlusOffset.from_median(X)
    assert Xs is not None
    Phi = np.linalg.qr(rng.standard_normal((n, n)))[0]
    s = np.sqrt(rng.uniform(0.0, 1.0, n))
    B = s[:, None] * (Phi.T @ X)
    expected = np.linalg.eigvalsh(B @ B.T)[-1]
    op = _GramTraceOperator(B, (s, Phi, Xs))
    assert op.largest_eigenvalue() == pytest.approx(expected, rel=1e-13)
    # The operator is used, not the formed matrix: a wrong factor changes the value.
    wrong = _GramTraceOperator(B, (np.sqrt(2.0) * s, Phi, Xs))
    assert wrong.largest_eigenvalue() == pytest.approx(2 * expected, rel=1e-13)

def test_factored_fit_forms_no_d_by_d_array():
    """At d = 4000, n = 50 one d x d float64 array is 128 MB; the fit stays far below."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4000))
    sel, peak = peak_traced_bytes(lambda: SF2SOG(n_features_to_select=20, n_clusters=3, max_iter=3).fit(X))
    assert sel.support_.sum() == 20
    assert peak < 0.1 * 8 * 4000 ** 2


def test_stop_test_and_cap(data):
    from sklearn.exceptions import ConvergenceWarning

    kw = dict(n_features_to_select=8, n_clusters=3, lam=1.0, gamma=1.0)
    sel = SF2SOG(**kw).fit(data.X)
    assert sel.converged_ and sel.n_iter_ == len(sel.objective_history_) < 50
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        capped = SF2SOG(max_iter=1, **kw).fit(data.X)
    assert not capped.converged_ and capped.n_iter_ == 1
