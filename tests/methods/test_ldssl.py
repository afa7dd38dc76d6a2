"""Tests of LDSSL (reconstructed): X ~ XWH, kernel local discriminant graph, l1 on W."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.ldssl import LDSSL
from ufsbench.numerics import knn_indices, squared_distances
from ufsbench.numerics.local_discriminant import local_discriminant_laplacian


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_samples=80, n_features=40, n_informative=5, n_clusters=3,
                          random_state=4)


def test_registered_and_reconstructed_label():
    sel = make_selector("ldssl", alpha=0.1, beta=2.0)
    assert isinstance(sel, LDSSL) and sel.selection_kind == "ranking"
    assert LDSSL.reconstructed is True
    assert "reconstructed" in LDSSL.__doc__.splitlines()[0].lower()


def test_factors_stay_non_negative(data):
    sel = LDSSL(alpha=1.0, beta=1.0, random_state=0, max_iter=50).fit(data.X)
    assert np.all(sel.W_ >= 0) and np.all(sel.H_ >= 0)
    assert np.all(np.isfinite(sel.W_)) and np.all(np.isfinite(sel.H_))
    assert sel.W_.shape == (40, 2) and sel.H_.shape == (2, 40)      # q = n_clusters = 2


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e2, 1e-2), (1e-2, 1e2), (1e4, 1e4),
                                        (0.0, 0.0)])
def test_objective_non_increasing(data, alpha, beta):
    sel = LDSSL(alpha=alpha, beta=beta, random_state=1, max_iter=80, tol=0.0).fit(data.X)
    h = np.asarray(sel.objective_history_)
    assert len(h) == 80
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1])), (alpha, beta)


def test_objective_matches_definition(data):
    sel = LDSSL(alpha=0.5, beta=2.0, rho=3.0, random_state=0, max_iter=20).fit(data.X)
    X = data.X - data.X.min(axis=0)
    X = X / X.max()
    W, H, L = sel.W_, sel.H_, sel.laplacian_
    expected = (np.sum((X - X @ W @ H) ** 2) + 0.5 * np.trace(W.T @ X.T @ L @ X @ W)
                + 2.0 * np.abs(W).sum() + 1.5 * np.sum((W.T @ W - np.eye(W.shape[1])) ** 2))
    assert sel.objective_history_[-1] == pytest.approx(expected, rel=1e-10)


def test_local_discriminant_laplacian_psd_and_brute_force():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 4))
    D = squared_distances(X)
    nbrs = knn_indices(D, 3)
    K = np.exp(-D / 2.0)
    L = local_discriminant_laplacian(K, nbrs, lam=0.5)
    assert np.allclose(L, L.T) and np.allclose(L @ np.ones(12), 0.0, atol=1e-12)
    assert np.linalg.eigvalsh(L).min() > -1e-12
    Hc = np.eye(4) - 0.25
    brute = np.zeros((12, 12))
    for i in range(12):
        idx = np.r_[i, nbrs[i]]
        S = np.zeros((12, 4))
        S[idx, np.arange(4)] = 1.0
        brute += S @ Hc @ np.linalg.inv(Hc @ K[np.ix_(idx, idx)] @ Hc + 0.5 * np.eye(4)) @ Hc @ S.T
    assert np.allclose(L, brute)


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e-2, 1e2)])
def test_planted_features_score_above_noise(seed, alpha, beta):
    ds = make_synthetic(n_samples=100, n_features=60, n_informative=6, n_clusters=3,
                        random_state=seed)
    sel = LDSSL(alpha=alpha, beta=beta, n_features_to_select=6, n_clusters=3,
                random_state=0).fit(ds.X)
    truth = np.isin(np.arange(60), ds.informative)
    assert roc_auc_score(truth, sel.scores_) >= 0.9
    assert len(set(sel.top_features(6)) & set(ds.informative)) >= 4


def test_deterministic_for_fixed_seed(data):
    a = LDSSL(random_state=7, max_iter=30).fit(data.X)
    b = LDSSL(random_state=7, max_iter=30).fit(data.X)
    c = LDSSL(random_state=8, max_iter=30).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)
    assert not np.array_equal(a.scores_, c.scores_)


def test_bad_input_and_parameters(data):
    with pytest.raises(UFSBenchError, match="negative"):
        LDSSL(preprocess="none").fit(data.X)
    with pytest.raises(UFSBenchError, match="'beta' parameter"):
        LDSSL(beta=-1.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="'lam' parameter"):
        LDSSL(lam=0.0).fit(data.X)


def _frozen_fit(sel, X, iterations):
    """The plain loop of the update rules: eight products with X an iteration and the objective
    from the n x d residual. The reference for both solvers."""
    from sklearn.utils import check_random_state

    from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part
    X = X - X.min(axis=0)
    X = X / X.max()
    L = sel.laplacian_
    L_pos, L_neg = pos_part(L), neg_part(L)
    rng = check_random_state(sel.random_state)
    q = sel.W_.shape[1]
    W, H = rng.uniform(0.0, 1.0, (X.shape[1], q)), rng.uniform(0.0, 1.0, (q, X.shape[1]))
    history = []
    for _ in range(iterations):
        XW = X @ W
        H = multiplicative_step(H, XW.T @ X, (XW.T @ XW) @ H)
        numer = X.T @ (X @ H.T + sel.alpha * (L_neg @ XW)) + sel.rho * W
        denom = (X.T @ (XW @ (H @ H.T) + sel.alpha * (L_pos @ XW))
                 + sel.rho * (W @ (W.T @ W)) + 0.5 * sel.beta)
        W = W * multiplicative_step(np.ones_like(W), numer, denom) ** sel.eta
        history.append(sel._objective(X, W, H, L))
    return np.linalg.norm(W, axis=1), history


def _sparse_wide(wide_data):
    """The wide data as non-negative counts-like data with 5 % non-zeros (bag-of-words shape)."""
    mask = np.random.default_rng(0).random(wide_data.X.shape) < 0.05
    return np.abs(wide_data.X) * mask


@pytest.mark.parametrize("solver", ["data", "gram"])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e4, 1e-4), (1e-4, 1e4), (1e2, 1e2)])
@pytest.mark.parametrize("shape", ["tall", "wide", "sparse"])
def test_solvers_match_the_reference_loop(data, wide_data, shape, solver, alpha, beta):
    """Scores and objective history of both solvers against the allocating loop, on n > d, d > n
    and d > n data with 5 % non-zeros (the "data" solver's CSR path) in column-major order (as
    the .mat loader gives it); round-off only."""
    X = (data.X if shape == "tall" else _sparse_wide(wide_data) if shape == "sparse"
         else wide_data.X)
    X = np.asfortranarray(X)
    sel = LDSSL(alpha=alpha, beta=beta, n_clusters=3, random_state=0, max_iter=40, tol=0.0,
                solver=solver).fit(X)
    scores, history = _frozen_fit(sel, X, 40)
    np.testing.assert_allclose(sel.scores_, scores, rtol=1e-9, atol=1e-12 * scores.max())
    np.testing.assert_allclose(sel.objective_history_, history, rtol=1e-9)


def test_auto_solver_picks_gram_for_tall_data_only(data, wide_data, monkeypatch):
    import ufsbench.methods.ldssl as ldssl_module
    seen = []
    for name in ("_DataProducts", "_GramProducts"):
        cls = getattr(ldssl_module, name)
        monkeypatch.setattr(ldssl_module, name,
                            lambda *args, _cls=cls, _name=name: seen.append(_name) or _cls(*args))
    LDSSL(random_state=0, max_iter=2).fit(data.X)          # 80 x 40
    LDSSL(random_state=0, max_iter=2).fit(wide_data.X)     # 40 x 200
    assert seen == ["_GramProducts", "_DataProducts"]


def test_data_solver_holds_sparse_x_in_csr_form(wide_data):
    import scipy.sparse as sp

    from ufsbench.methods.ldssl import SPARSE_DENSITY, _DataProducts
    X = _sparse_wide(wide_data)
    assert np.count_nonzero(X) < SPARSE_DENSITY * X.size
    L = np.eye(X.shape[0]) - 1.0 / X.shape[0]
    assert sp.issparse(_DataProducts(X, L, 1.0).X)
    assert not sp.issparse(_DataProducts(wide_data.X, L, 1.0).X)


def test_bad_solver(data):
    with pytest.raises(UFSBenchError, match="'solver' parameter"):
        LDSSL(solver="dense").fit(data.X)


def test_stop_test_and_cap(data):
    from sklearn.exceptions import ConvergenceWarning

    sel = LDSSL(random_state=0, tol=1e-3, max_iter=2000).fit(data.X)
    h = np.asarray(sel.objective_history_)
    change = np.abs(np.diff(h)) / np.abs(h[:-1])
    assert sel.converged_ and sel.n_iter_ == len(h) < 2000
    assert change[-1] < 1e-3 and np.all(change[:-1] >= 1e-3)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        capped = LDSSL(random_state=0, max_iter=5).fit(data.X)
    assert not capped.converged_ and capped.n_iter_ == 5


@pytest.mark.parametrize("cells", [1 << 22, 100])    # one block of local sets, or one per block
def test_heat_local_laplacian_from_the_local_sets_equals_the_dense_one(cells, monkeypatch):
    """The large-n form (kernel on each local set, CSR) is the dense kernel form up to
    round-off, and exactly symmetric."""
    from ufsbench.numerics import local_discriminant
    from ufsbench.numerics.local_discriminant import heat_local_discriminant_laplacian
    X = np.random.default_rng(5).standard_normal((70, 9))
    D = squared_distances(X)
    nbrs = knn_indices(D, 4)
    dense = local_discriminant_laplacian(np.exp(-D / 3.0), nbrs, lam=0.5)
    monkeypatch.setattr(local_discriminant, "LOCAL_DIFFERENCE_CELLS", cells)
    sparse = heat_local_discriminant_laplacian(X, nbrs, 3.0, lam=0.5)
    assert (sparse != sparse.T).nnz == 0
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-12, atol=1e-13)


def test_many_samples_take_the_sparse_graph_with_the_same_scores(data, monkeypatch):
    """From graphs.SPARSE_MIN_SAMPLES samples on, L_ld is a CSR matrix built without the n x n
    distances; the fit's scores equal the dense graph's up to round-off."""
    import scipy.sparse as sp

    import ufsbench.methods.ldssl as ldssl_module
    kw = dict(n_clusters=3, random_state=0, max_iter=40, tol=0.0)
    dense = make_selector("ldssl", **kw).fit(data.X)
    monkeypatch.setattr(ldssl_module, "SPARSE_MIN_SAMPLES", data.X.shape[0])
    sparse = make_selector("ldssl", **kw).fit(data.X)
    assert sp.issparse(sparse.laplacian_) and not sp.issparse(dense.laplacian_)
    np.testing.assert_allclose(sparse.laplacian_.toarray(), dense.laplacian_, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-8,
                               atol=1e-10 * dense.scores_.max())
    assert np.array_equal(sparse.ranking_[:10], dense.ranking_[:10])
