"""Tests of SOGFS (Nie, Zhu & Li, AAAI 2016) and of its tied diagonal-plus-low-rank eigensolver."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _reference_sogfs import sogfs_reference  # noqa: I001 (tests/methods on sys.path)
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

import ufsbench.methods.sogfs as sogfs_mod
from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.numerics import laplacian, project_simplex_rows, squared_distances, sym
from ufsbench.numerics.diag_lowrank import dense_smallest_eigvecs, smallest_eigvecs_tied_diag_plus_lowrank
from ufsbench.testing import forced_lanes, peak_traced_bytes, record_calls


def _blobs(n_per=30, d=12, c=3, seed=0, sep=12.0):
    rng = np.random.default_rng(seed)
    centres = sep * rng.standard_normal((c, d))
    y = np.repeat(np.arange(c), n_per)
    return centres[y] + rng.standard_normal((len(y), d)), y


def _assert_simplex_rows(S):
    assert np.all(S >= 0)
    np.testing.assert_allclose(S.sum(axis=1), 1.0, atol=1e-10)
    np.testing.assert_array_equal(np.diag(S), 0.0)


# -- simplex projection (shared numerics, the closed form of problem (18)) ---------------------
@pytest.mark.parametrize("seed", range(5))
def test_simplex_projection_matches_bruteforce_qp(seed):
    rng = np.random.default_rng(seed)
    V = rng.normal(scale=2.0, size=(4, 6))
    P = project_simplex_rows(V)
    for v, p in zip(V, P):
        res = minimize(lambda s: np.sum((s - v) ** 2), np.full(6, 1 / 6), jac=lambda s: 2 * (s - v),
                       bounds=[(0, 1)] * 6, method="SLSQP", options={"ftol": 1e-14},
                       constraints=[{"type": "eq", "fun": lambda s: s.sum() - 1}])
        np.testing.assert_allclose(p, res.x, atol=1e-6)


def test_s_step_rows_on_simplex_and_local_support():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 4))
    D = squared_distances(X)
    _assert_simplex_rows(sogfs_mod.s_step(D, alpha=0.3))
    nbrs = np.argsort(D + np.diag(np.full(25, np.inf)), axis=1)[:, :5]
    S = sogfs_mod.s_step(D, alpha=0.3, neighbours=nbrs)
    _assert_simplex_rows(S)
    assert np.all((S > 0).sum(axis=1) <= 5)


def test_alpha_eq27_gives_k_neighbours_on_average():
    """With alpha of Eq. (27) the initial rows have about k non-zeros (Determination of alpha)."""
    rng = np.random.default_rng(1)
    D = squared_distances(rng.normal(size=(80, 5)))
    alpha = sogfs_mod.alpha_eq27(D, 5)
    nnz = (sogfs_mod.s_step(D, alpha) > 0).sum(axis=1)
    assert 3.5 <= nnz.mean() <= 7.5


@pytest.mark.parametrize("neighbours", ["all", "local"])
def test_initial_graph_from_the_gram_distances_on_many_samples(neighbours, monkeypatch):
    """From SPARSE_MIN_SAMPLES samples on the input-space distances come from Gram products
    (with neighbours="all" row block by row block, S then CSR): alpha and S agree with the
    direct differences' to round-off, with the same support."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 8)) + 4.0 * rng.integers(0, 3, size=(60, 1))
    alpha, _, S = sogfs_mod.initial_graph(X, k=5, neighbours=neighbours, full_sort=False)
    monkeypatch.setattr(sogfs_mod, "SPARSE_MIN_SAMPLES", 50)
    monkeypatch.setattr(sogfs_mod, "S_BLOCK_CELLS", 7 * 60)          # 7 rows; the last block short
    alpha_large, _, S_large = sogfs_mod.initial_graph(X, k=5, neighbours=neighbours,
                                                      full_sort=False)
    assert sp.issparse(S_large) == (neighbours == "all")
    S_large = S_large.toarray() if sp.issparse(S_large) else S_large
    assert alpha_large == pytest.approx(alpha, rel=1e-12)
    np.testing.assert_allclose(S_large, S, atol=1e-12)
    assert np.array_equal(S_large > 0, S > 0)


@pytest.mark.parametrize("k", [1, 5, 30])
def test_alpha_eq27_reads_the_k_plus_1_smallest_as_a_full_sort_does(k):
    """alpha of Eq. (27) from a partition of each row: the value of the full row sort, bit for
    bit, on data with many exactly tied distances."""
    rng = np.random.default_rng(k)
    D = squared_distances(np.round(rng.normal(size=(40, 2)), 0))
    Ds = D.copy()
    np.fill_diagonal(Ds, np.inf)
    Ds = np.sort(Ds, axis=1)[:, : k + 1]
    expected = float(np.mean(0.5 * k * Ds[:, k] - 0.5 * Ds[:, :k].sum(axis=1)))
    assert sogfs_mod.alpha_eq27(D, k) == expected


# -- the W-step: Algorithm 1 ----------------------------------------------------------------------
def _graph_laplacian(X, seed=0):
    D = squared_distances(X)
    return laplacian(sym(sogfs_mod.s_step(D, sogfs_mod.alpha_eq27(D, 5))))


@pytest.mark.parametrize("shape,solver", [((60, 20), "dense"), ((30, 90), "auto"),
                                          ((30, 90), "dense")])
def test_algorithm1_never_increases_objective9_and_keeps_w_orthonormal(shape, solver):
    rng = np.random.default_rng(3)
    X = rng.normal(size=shape)
    L = _graph_laplacian(X)
    m = shape[1] // 2
    W, q, hist, _ = sogfs_mod.w_step(X, L, np.ones(shape[1]), 0.5, m, n_iter=12, solver=solver)
    assert np.all(np.diff(hist) <= 1e-9 * max(abs(hist[0]), 1.0)), hist
    assert hist[-1] < hist[0]            # it does move
    np.testing.assert_allclose(W.T @ W, np.eye(m), atol=1e-10)
    np.testing.assert_allclose(q, 0.5 / np.sqrt((W ** 2).sum(axis=1) + 1e-8))   # Eq. (12)


@pytest.mark.parametrize("sparse_k", [False, True])
def test_tied_solver_matches_dense_on_nondegenerate_tied_diagonal(sparse_k):
    """K dense or scipy.sparse (SOGFS's L_S from SPARSE_MIN_SAMPLES samples on): the same
    eigenpairs as the dense eigendecomposition of G."""
    rng = np.random.default_rng(0)
    d, n = 120, 8
    U, A = rng.normal(size=(d, n)), rng.normal(size=(n, n))
    diag = rng.choice([1.0, 2.5, 4.0], size=d)
    G = np.diag(diag) + U @ A @ A.T @ U.T
    # choose k at a spectral gap so that the subspace is unique
    allv = np.linalg.eigvalsh(G)
    gaps = np.flatnonzero(np.diff(allv) > 1e-3) + 1
    k = int(gaps[np.argmin(np.abs(gaps - 60))])
    vals_d, V_d = dense_smallest_eigvecs(G, k)
    K = sp.csr_matrix(A @ A.T) if sparse_k else A @ A.T
    vals_t, V_t, path = smallest_eigvecs_tied_diag_plus_lowrank(diag, U, K, k)
    assert path == "tied"
    vals_f, V_f, path = smallest_eigvecs_tied_diag_plus_lowrank(diag, U, K, k,
                                                               max_reduced_fraction=0.0)
    assert path == "dense"
    np.testing.assert_allclose(vals_f, vals_d, atol=1e-9)
    np.testing.assert_allclose(V_f @ V_f.T, V_d @ V_d.T, atol=1e-8)
    np.testing.assert_allclose(vals_t, vals_d, atol=1e-9)
    np.testing.assert_allclose(V_t @ V_t.T, V_d @ V_d.T, atol=1e-8)
    np.testing.assert_allclose(V_t.T @ V_t, np.eye(k), atol=1e-10)


def test_tied_solver_degenerate_cut_is_a_valid_and_basis_free_minimiser():
    """Q = I, d >> n: the m smallest eigenvalues all equal gamma; we return the subspace nearest
    the lowest-leverage axes, whatever the orientation of U's basis."""
    rng = np.random.default_rng(2)
    d, n, m = 90, 10, 40
    U = rng.normal(size=(d, n))
    K = np.eye(n)
    vals, V, _ = smallest_eigvecs_tied_diag_plus_lowrank(np.full(d, 0.7), U, K, m)
    G = 0.7 * np.eye(d) + U @ U.T
    np.testing.assert_allclose(vals, np.linalg.eigvalsh(G)[:m], atol=1e-9)
    np.testing.assert_allclose(G @ V, 0.7 * V, atol=1e-9)
    np.testing.assert_allclose(V.T @ V, np.eye(m), atol=1e-10)
    R = np.linalg.qr(rng.normal(size=(n, n)))[0]          # same range(U), another basis
    V2 = smallest_eigvecs_tied_diag_plus_lowrank(np.full(d, 0.7), U @ R, K, m)[1]
    np.testing.assert_allclose(V @ V.T, V2 @ V2.T, atol=1e-9)
    leverage = (np.linalg.qr(U)[0] ** 2).sum(axis=1)
    chosen = np.argsort(leverage, kind="stable")[:m]
    assert np.all((V[chosen] ** 2).sum(axis=1) > 0.5)      # close to those coordinate axes


# -- the whole method (Algorithm 2) ---------------------------------------------------------------
@pytest.mark.parametrize("value", [0.4, 3, None])
def test_deprecated_m_warns_and_fits_as_n_components(value):
    X, _ = _blobs(n_per=10, d=8)
    with pytest.warns(FutureWarning, match="use n_components"):
        old = make_selector("sogfs", n_clusters=3, m=value, max_iter=3).fit(X)
    new = make_selector("sogfs", n_clusters=3, n_components=value, max_iter=3).fit(X)
    np.testing.assert_array_equal(old.projection_, new.projection_)
    assert old.objective_history_ == new.objective_history_


def test_every_s_update_on_simplex_and_w_orthonormal(monkeypatch):
    seen = []
    real = sogfs_mod.s_step

    def recording(*args, **kwargs):
        S = real(*args, **kwargs)
        seen.append(S)
        return S

    monkeypatch.setattr(sogfs_mod, "s_step", recording)
    X, _ = _blobs(n_per=20, d=10)
    sel = make_selector("sogfs", n_clusters=3, gamma=1.0, max_iter=8).fit(X)
    assert len(seen) == sel.n_iter_ + 1          # initial S + one per iteration
    for S in seen:
        _assert_simplex_rows(S)
    np.testing.assert_array_equal(sel.similarity_, seen[-1])
    m = sel.projection_.shape[1]
    assert m == 5
    np.testing.assert_allclose(sel.projection_.T @ sel.projection_, np.eye(m), atol=1e-10)
    np.testing.assert_allclose(sel.scores_, np.linalg.norm(sel.projection_, axis=1))


@pytest.mark.parametrize("neighbours", ["all", "local"])
def test_blobs_end_with_exactly_c_components(neighbours):
    X, y = _blobs(n_per=25, d=12, c=3, seed=4)
    sel = make_selector("sogfs", n_clusters=3, gamma=1.0, neighbours=neighbours).fit(X)
    assert sel.n_components_ == 3
    assert sel.n_components_history_[-1] == 3
    # the components are the blobs
    table = np.zeros((3, 3), int)
    np.add.at(table, (y, sel.component_labels_), 1)
    assert sorted(table.max(axis=1)) == [25, 25, 25]


def test_lambda_adaptation_rule():
    """lambda starts at alpha (Eq. (27)), doubles below c components, halves above, else stays."""
    X, _ = _blobs(n_per=15, d=8, c=4, seed=1, sep=3.0)
    sel = make_selector("sogfs", n_clusters=4, gamma=1.0, max_iter=30).fit(X)
    lam, comps = sel.lambda_history_, sel.n_components_history_
    assert lam[0] == pytest.approx(sel.alpha_)
    for t in range(len(lam) - 1):
        expected = lam[t] * (2.0 if comps[t] < 4 else 0.5 if comps[t] > 4 else 1.0)
        assert lam[t + 1] == pytest.approx(expected)
    assert len(set(comps)) > 1 or comps[0] == 4       # the rule was exercised or not needed
    sel2 = make_selector("sogfs", n_clusters=4, lambda_init=7.0, max_iter=3).fit(X)
    assert sel2.lambda_history_[0] == 7.0


def test_objective_stop_waits_until_the_objective_settles_at_c_components():
    X, _ = _blobs(n_per=20, d=10)
    sel = make_selector("sogfs", n_clusters=3, gamma=1.0, tol=1e-3, stop="objective").fit(X)
    h = sel.objective_history_
    assert len(h) == sel.n_iter_ and np.all(np.isfinite(h))
    # Three well-separated blobs: the graph reaches c = 3 components at once and the objective
    # settles within a few iterations, far below the cap of 50.
    assert sel.converged_ and sel.n_iter_ < 50
    assert sel.n_components_history_[-1] == 3 and sel.n_components_history_[-2] == 3
    assert abs(h[-1] - h[-2]) <= 1e-3 * abs(h[-2])


@pytest.mark.parametrize("min_iter", [1, 3])
def test_stops_at_the_first_iteration_from_min_iter_whose_graph_has_c_components(min_iter):
    X, _ = _blobs(n_per=15, d=8, c=4, seed=1, sep=3.0)
    sel = make_selector("sogfs", n_clusters=4, min_iter=min_iter).fit(X)
    comps = sel.n_components_history_
    assert sel.converged_ and comps[-1] == 4 == sel.n_components_
    assert 4 not in comps[min_iter - 1:-1]                 # no earlier stop was due
    assert sel.n_iter_ >= min_iter


def test_a_fit_that_cannot_reach_c_components_says_so():
    """Three tight pairs far apart, c = 1, one "local" neighbour: S's support stays inside the
    pairs, so no lambda joins them; lambda only shrinks and the cap ends the fit, with
    converged_ False, a ConvergenceWarning and the component count on record."""
    rng = np.random.default_rng(0)
    centres = 50.0 * rng.standard_normal((3, 4))
    X = np.repeat(centres, 2, axis=0) + 0.01 * rng.standard_normal((6, 4))
    with pytest.warns(ConvergenceWarning, match="exactly c connected components"):
        sel = make_selector("sogfs", n_clusters=1, k=1, neighbours="local", max_iter=8).fit(X)
    assert not sel.converged_ and sel.n_iter_ == 8
    assert sel.n_components_ == 3 and set(sel.n_components_history_) == {3}
    assert sel.lambda_history_[-1] < sel.lambda_history_[0]


@pytest.mark.parametrize("name, neighbours", [("jaffe", "all"), ("jaffe", "local"),
                                              ("umist", "all"), ("umist", "local")])
def test_real_data_fit_ends_with_c_components_or_says_it_did_not(name, neighbours):
    """JAFFE with "local" neighbour sets once ran its 50 iterations halving lambda to ~5e-13 and
    ended with 11 components for c = 10, reported as a fit. Now a fit ends with exactly c
    components, or with converged_ False and a ConvergenceWarning."""
    from ufsbench.testing import data_dir
    directory = data_dir()
    if directory is None or not (directory / f"{name}.mat").is_file():
        pytest.skip(f"{name}.mat not present (set UFSBENCH_DATA)")
    from ufsbench.datasets.registry import read_mat
    X, y = read_mat(directory / f"{name}.mat")[:2]
    c = len(np.unique(y))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = make_selector("sogfs", n_clusters=c, neighbours=neighbours).fit(X)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if sel.converged_:
        assert sel.n_components_ == c == sel.n_components_history_[-1] and not warned
    else:
        assert warned and sel.n_iter_ == sel.max_iter


def test_planted_features_rank_first_when_n_exceeds_d():
    ds = make_synthetic(n_samples=120, n_features=40, n_informative=5, n_clusters=3,
                        random_state=0)
    sel = make_selector("sogfs", n_clusters=3, gamma=1.0).fit(ds.X)
    assert set(sel.ranking_[:5]) == set(ds.informative)


def test_planted_features_rank_high_when_d_exceeds_n():
    ds = make_synthetic(n_samples=60, n_features=150, n_informative=5, n_clusters=3,
                        random_state=3)
    sel = make_selector("sogfs", n_clusters=3, gamma=1.0).fit(ds.X)
    ranks = np.argsort(sel.ranking_)[ds.informative]
    assert sel.w_solver_paths_[0] == "tied"           # degenerate first W-step (Q = I, d > n)
    assert np.all(ranks < 15), ranks                  # all five in the top 10% of 150


def test_gamma_matters_because_q_is_carried_over():
    ds = make_synthetic(n_samples=90, n_features=30, n_informative=5, n_clusters=3,
                        random_state=1)
    a = make_selector("sogfs", n_clusters=3, gamma=1e-3, max_iter=5).fit(ds.X).scores_
    b = make_selector("sogfs", n_clusters=3, gamma=1e3, max_iter=5).fit(ds.X).scores_
    assert not np.allclose(a, b, atol=1e-3)


def test_determinism():
    ds = make_synthetic(n_samples=60, n_features=80, n_informative=5, n_clusters=3,
                        random_state=2)
    a = make_selector("sogfs", n_clusters=3, random_state=0).fit(ds.X)
    b = make_selector("sogfs", n_clusters=3, random_state=0).fit(ds.X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.similarity_, b.similarity_)
    assert a.objective_history_ == b.objective_history_


@pytest.mark.parametrize("old, new", [(dict(w_solver="dense"), dict(solver="dense")),
                                      (dict(solver="fast"), dict(solver="auto"))])
def test_deprecated_solver_names_warn_and_fit_as_the_new_ones(old, new):
    X, _ = _blobs(n_per=10, d=8)
    with pytest.warns(FutureWarning, match="deprecated"):
        a = make_selector("sogfs", n_clusters=3, max_iter=4, **old).fit(X)
    b = make_selector("sogfs", n_clusters=3, max_iter=4, **new).fit(X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert a.objective_history_ == b.objective_history_


def test_solvers_agree_on_the_fit_when_d_below_n():
    X, _ = _blobs(n_per=20, d=10)
    a = make_selector("sogfs", n_clusters=3, solver="auto", max_iter=6).fit(X)
    b = make_selector("sogfs", n_clusters=3, solver="dense", max_iter=6).fit(X)
    np.testing.assert_allclose(a.scores_, b.scores_, atol=1e-8)


@pytest.mark.parametrize("params", [{"gamma": -1.0}, {"n_components": 0}, {"n_components": 1000},
                                    {"n_components": 1.5}, {"m": 0}, {"m": 1000}, {"m": 1.5},
                                    {"solver": "magic"}, {"w_solver": "magic"}, {"neighbours": "some"},
                                    {"solver": "sparse"},
                                    {"lambda_factor": 1.0}, {"preprocess": "zscore"},
                                    {"lambda_init": 0.0}, {"eps": 0.0}, {"tol": -1.0},
                                    {"stop": "never"}, {"min_iter": 0}, {"component_test": "x"},
                                    {"initial_alpha": "local"}, {"inner_tol": -1.0},
                                    {"reset_q": 1}, {"final_w_step": "yes"},
                                    {"min_iter": 5, "max_iter": 4}])
def test_bad_parameters_raise(params):
    X, _ = _blobs(n_per=10, d=6)
    with pytest.raises(UFSBenchError):
        make_selector("sogfs", n_clusters=3, **params).fit(X)


@pytest.mark.slow
def test_srbct_sanity():
    """Real data (d = 2308 >> n = 83): runs, W orthonormal, c components reached."""
    from scipy.io import loadmat
    data = loadmat("/work/shared/datasets/srbct.mat")
    X, y = np.asarray(data["X"], float), np.ravel(data["Y"])
    sel = make_selector("sogfs", n_clusters=len(np.unique(y)), gamma=1.0, max_iter=10).fit(X)
    W = sel.projection_
    np.testing.assert_allclose(W.T @ W, np.eye(W.shape[1]), atol=1e-8)
    assert np.all(np.isfinite(sel.scores_))


# -- the fast path against the dense reference path ------------------------------------------------
@pytest.mark.parametrize("scale,window", [(0.3, 2), (3.0, 16), (30.0, 1)])
def test_partial_sort_simplex_projection_equals_full_sort(scale, window):
    from ufsbench.numerics.simplex import project_simplex_rows_sparse
    rng = np.random.default_rng(7)
    V = rng.normal(scale=scale, size=(40, 60))
    V[np.arange(40), rng.integers(0, 60, 40)] = -np.inf     # excluded entries (SOGFS: s_ii)
    full = np.zeros_like(V)
    for i, v in enumerate(V):
        keep = np.isfinite(v)
        full[i, keep] = project_simplex_rows(v[keep][None, :])[0]
    np.testing.assert_allclose(project_simplex_rows_sparse(V, first_window=window), full,
                               atol=1e-14)


def test_sparse_laplacian_eigvecs_equal_dense_subset_eigh():
    import scipy.sparse as sp

    from ufsbench.numerics import eigh_smallest
    from ufsbench.numerics.laplacian_eig import laplacian_smallest_eigvecs
    X, _ = _blobs(n_per=40, d=6, c=4, seed=5, sep=4.0)
    L = _graph_laplacian(X)
    vals_d, F_d = eigh_smallest(L, 4)
    vals_s, F_s = laplacian_smallest_eigvecs(sp.csr_matrix(L), 4, dense_below=0)
    np.testing.assert_allclose(vals_s, vals_d, atol=1e-12)
    np.testing.assert_allclose(F_s @ F_s.T, F_d @ F_d.T, atol=1e-10)    # same subspace
    warm = laplacian_smallest_eigvecs(sp.csr_matrix(L), 4, warm=F_d, dense_below=0)[1]
    np.testing.assert_allclose(warm @ warm.T, F_d @ F_d.T, atol=1e-10)


def _multi_component_laplacian(sizes, seed=0):
    """Laplacian of a graph of random connected components of the given sizes (sparse)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    blocks = []
    for size in sizes:
        W = rng.random((size, size)) * (rng.random((size, size)) < 8.0 / size)
        W[np.arange(size - 1), np.arange(1, size)] += 0.5               # a path: connected
        blocks.append(sym(W) * (1 - np.eye(size)))
    return sp.csr_matrix(laplacian(sp.block_diag(blocks).toarray()))


@pytest.mark.parametrize("dense_below, path", [(0, "sparse LU"), (0, "Cholesky"),
                                               (0, "Lanczos on L"), (0, "too large to factor"),
                                               (0, "too large for sparse LU"), (10_000, "dense")])
def test_component_eigvecs_hold_the_whole_null_space_and_the_dense_spectrum(
        dense_below, path, monkeypatch):
    """Five components, c = 8: F must hold the 5 null vectors and the 3 smallest positive
    eigenpairs (across components). One Krylov start vector on the whole L sees the 5-fold 0
    eigenvalue once and can return fewer null vectors (seen on isolet: 21 of 22). Krylov per
    component with sparse LU or dense Cholesky shift-inverse or on L itself, and dense eigh,
    all agree."""
    import ufsbench.numerics.laplacian_eig as lap_eig
    from ufsbench.numerics.graphs import connected_component_labels
    from ufsbench.numerics.laplacian_eig import component_smallest_eigvecs
    sparse_graph = path in ("sparse LU", "too large for sparse LU")
    monkeypatch.setattr(lap_eig, "DENSE_FACTOR_MIN_ROW_NNZ", 10**9 if sparse_graph else 0)
    too_large = path.startswith("too large")
    lanczos = path == "Lanczos on L" or too_large
    monkeypatch.setattr(lap_eig, "DIRECT_LANCZOS_MIN", 0 if lanczos else 10**9)
    # "too large ...": the graphs are too full for Lanczos on L by the fill rule, or sparse
    # enough for a sparse LU, but have more rows than a dense factor may have (a sparse LU can
    # fill in there).
    monkeypatch.setattr(lap_eig, "DIRECT_LANCZOS_MAX_FILL", 0.0 if too_large else 1.0)
    if too_large:
        monkeypatch.setattr(lap_eig, "DENSE_FACTOR_MAX", 0)
    eigsh_calls = record_calls(monkeypatch, lap_eig, "seeded_eigsh")
    L = _multi_component_laplacian([150, 90, 40, 12, 2])
    n_comp, labels = connected_component_labels(L)
    assert n_comp == 5
    vals_d, F_d = np.linalg.eigh(L.toarray())
    assert np.all(vals_d[:5] < 1e-12) and vals_d[8] - vals_d[7] > 1e-6
    vals, F = component_smallest_eigvecs(L, labels, 8, dense_below=dense_below)
    np.testing.assert_array_equal(vals[:5], 0.0)
    np.testing.assert_allclose(vals, vals_d[:8], atol=1e-12)
    np.testing.assert_allclose(F @ F.T, F_d[:, :8] @ F_d[:, :8].T, atol=1e-10)
    np.testing.assert_allclose(F.T @ F, np.eye(8), atol=1e-12)
    shift_invert = [kwargs.get("sigma") is not None for _, kwargs in eigsh_calls]
    assert shift_invert == ([] if path == "dense" else [not lanczos] * 4)


@pytest.mark.parametrize("shape,neighbours", [((90, 12), "all"), ((60, 140), "all"),
                                              ((90, 12), "local")])
def test_fit_gives_the_dense_reference_iterates(shape, neighbours, monkeypatch):
    """Sparse S / L_S, partial sorts and the Lanczos F-step give the iterates of the dense
    Algorithm 2 (tests/methods/_reference_sogfs.py) up to round-off."""
    import ufsbench.numerics.laplacian_eig as lap_eig
    ds = make_synthetic(n_samples=shape[0], n_features=shape[1], n_informative=4, n_clusters=3,
                        random_state=5)
    dense = sogfs_reference(ds.X, 3, gamma=1.0, max_iter=15, neighbours=neighbours)
    monkeypatch.setattr(lap_eig, "DENSE_BELOW", 0)            # exercise the sparse F-step
    fast = make_selector("sogfs", n_clusters=3, gamma=1.0, max_iter=15,
                         neighbours=neighbours).fit(ds.X)
    assert fast.n_iter_ == dense["n_iter"]
    assert fast.n_components_history_ == dense["n_components_history"]
    np.testing.assert_allclose(fast.objective_history_, dense["objective_history"], rtol=1e-9)
    np.testing.assert_allclose(fast.w_objective_history_, dense["w_objective_history"],
                               rtol=1e-9)
    np.testing.assert_allclose(fast.scores_, dense["scores"], atol=1e-9)
    np.testing.assert_array_equal(fast.ranking_[:10], fast._rank(dense["scores"])[:10])
    np.testing.assert_allclose(fast.similarity_, dense["similarity"], atol=1e-10)


@pytest.mark.parametrize("shape", [(90, 12), (60, 140)])
def test_blockwise_s_steps_give_the_dense_reference_iterates(shape, monkeypatch):
    """From SPARSE_MIN_SAMPLES samples on, the S-steps run row block by row block and S is CSR:
    the iterates of the dense Algorithm 2 up to round-off."""
    import ufsbench.numerics.laplacian_eig as lap_eig
    ds = make_synthetic(n_samples=shape[0], n_features=shape[1], n_informative=4, n_clusters=3,
                        random_state=5)
    dense = sogfs_reference(ds.X, 3, gamma=1.0, max_iter=15)
    monkeypatch.setattr(lap_eig, "DENSE_BELOW", 0)
    monkeypatch.setattr(sogfs_mod, "SPARSE_MIN_SAMPLES", 50)
    monkeypatch.setattr(sogfs_mod, "S_BLOCK_CELLS", 7 * shape[0])   # 7 rows; the last block short
    blocks = record_calls(monkeypatch, sogfs_mod, "s_step_by_blocks")
    fit = make_selector("sogfs", n_clusters=3, gamma=1.0, max_iter=15).fit(ds.X)
    assert len(blocks) == fit.n_iter_
    assert sp.issparse(fit.similarity_)
    assert fit.n_components_history_ == dense["n_components_history"]
    np.testing.assert_allclose(fit.objective_history_, dense["objective_history"], rtol=1e-9)
    np.testing.assert_allclose(fit.scores_, dense["scores"], atol=1e-9)
    np.testing.assert_array_equal(fit.ranking_[:10], fit._rank(dense["scores"])[:10])
    np.testing.assert_allclose(fit.similarity_.toarray(), dense["similarity"], atol=1e-10)


def test_blockwise_s_steps_never_hold_an_n_by_n_array(monkeypatch):
    """3000 samples, where one n x n float64 array is 72 MB: the blockwise S-step and initial
    graph with 1 MB blocks stay far below it, and give the dense steps' S, alpha and objective
    terms."""
    monkeypatch.setattr(sogfs_mod, "S_BLOCK_CELLS", 1 << 17)
    rng = np.random.default_rng(0)
    n = 3000
    XW = rng.normal(size=(n, 6)) + 5.0 * rng.integers(0, 4, size=(n, 1))
    F = np.linalg.qr(rng.normal(size=(n, 4)))[0]
    (S, m_term, s_term), peak = peak_traced_bytes(
        lambda: sogfs_mod.s_step_by_blocks(XW, F, lam=2.0, alpha=0.5))
    assert peak < 0.2 * n * n * 8
    M = sogfs_mod.gram_squared_distances(XW)
    S_dense = sogfs_mod.s_step(M + 2.0 * squared_distances(F), 0.5)
    np.testing.assert_allclose(S.toarray(), S_dense, atol=1e-12)
    assert m_term == pytest.approx(float(np.sum(M * S_dense)), rel=1e-12)
    assert s_term == pytest.approx(float(np.sum(S_dense * S_dense)), rel=1e-12)
    (alpha, _, S0), peak = peak_traced_bytes(lambda: sogfs_mod.initial_graph(
        XW, k=5, neighbours="all", full_sort=False))
    assert peak < 0.2 * n * n * 8
    assert alpha == pytest.approx(sogfs_mod.alpha_eq27(M, 5), rel=1e-12)
    np.testing.assert_allclose(S0.toarray(), sogfs_mod.s_step(M, alpha), atol=1e-12)


def test_blockwise_graphs_in_lanes_have_the_bits_of_one_thread(monkeypatch):
    """The initial graph and an S-step with their row blocks in three lanes: alpha, S and both
    objective terms bit for bit those of one thread (BLAS on one thread for both)."""
    from threadpoolctl import threadpool_limits
    monkeypatch.setattr(sogfs_mod, "S_BLOCK_CELLS", 11 * 400)          # 37 blocks of 11 rows
    rng = np.random.default_rng(2)
    XW = rng.normal(size=(400, 6)) + 5.0 * rng.integers(0, 4, size=(400, 1))
    F = np.linalg.qr(rng.normal(size=(400, 4)))[0]

    def steps():
        S, m_term, s_term = sogfs_mod.s_step_by_blocks(XW, F, lam=2.0, alpha=0.5, window=4)
        alpha, _, S0 = sogfs_mod.initial_graph_by_blocks(XW, k=5)
        return S, m_term, s_term, alpha, S0

    with threadpool_limits(limits=1, user_api="blas"):
        one = steps()
    lanes_run = forced_lanes(monkeypatch, 3)
    lanes = steps()
    assert lanes_run == {0, 1, 2}
    for a, b in zip(one[:1] + one[4:], lanes[:1] + lanes[4:]):
        assert a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
        assert np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data)
    assert one[1:4] == lanes[1:4]


def test_lanczos_on_l_in_lanes_has_the_bits_of_one_thread(monkeypatch):
    """Lanczos on L with L's products in three lanes (row ranges): the eigenpairs of one lane,
    bit for bit (the products are the same sums, so ARPACK runs the same iterations)."""
    import ufsbench.numerics.laplacian_eig as lap_eig
    monkeypatch.setattr(lap_eig, "DIRECT_LANCZOS_MIN", 0)
    monkeypatch.setattr(lap_eig, "DIRECT_LANCZOS_MAX_FILL", 1.0)
    L = _multi_component_laplacian([700])
    warm = np.random.default_rng(0).normal(size=(700, 6))
    vals, vecs = lap_eig.laplacian_smallest_eigvecs(L, 6, warm=warm, dense_below=0)
    lanes_run = forced_lanes(monkeypatch, 3)
    vals_lanes, vecs_lanes = lap_eig.laplacian_smallest_eigvecs(L, 6, warm=warm, dense_below=0)
    assert lanes_run == {0, 1, 2}
    assert np.array_equal(vals, vals_lanes) and np.array_equal(vecs, vecs_lanes)


def test_fast_path_s_and_laplacian_have_the_dense_bits():
    """The first W-step (Q = I) can be a degenerate cut whose choice moves with round-off in L_S
    (seen on orl): S and the sparse L_S must hold exactly the dense path's numbers."""
    X, _ = _blobs(n_per=20, d=5)
    D = squared_distances(X)
    S = sogfs_mod.s_step(D, sogfs_mod.alpha_eq27(D, 5))
    for lam in (0.01, 1.0, 30.0):                 # every S-step: the same bits as the reference
        np.testing.assert_array_equal(
            S, sogfs_mod.s_step(D, sogfs_mod.alpha_eq27(D, 5), full_sort=True))
        D2 = D + lam * squared_distances(np.random.default_rng(0).normal(size=(60, 3)))
        np.testing.assert_array_equal(sogfs_mod.s_step(D2, 0.7),
                                      sogfs_mod.s_step(D2, 0.7, full_sort=True))
    S_fast, L_fast = make_selector("sogfs")._graph(S)
    np.testing.assert_array_equal(L_fast.toarray(), laplacian(sym(S)))
    np.testing.assert_array_equal(S_fast.toarray(), S)


# -- round-off and the degenerate first W-step (tie tolerance of numerics.diag_lowrank) ----------
def _jaccard_top(a, b, t):
    sa, sb = set(a.ranking_[:t]), set(b.ranking_[:t])
    return len(sa & sb) / len(sa | sb)


@pytest.mark.parametrize("seed", [0, 3])
def test_fit_unchanged_by_round_off_in_the_data_when_d_exceeds_n(seed):
    """d = 120 > n = 40 with an initial S of 4 components: gamma is an eigenvalue of the first
    W-step's G of multiplicity > m, 3 of whose directions come from the reduced problem a few ulps
    off gamma. A 1e-15 change of X must not move the cut (compared without the tie tolerance:
    top-20 Jaccard 0.6-0.9, scores move by up to 0.85)."""
    X, _ = _blobs(n_per=10, d=120, c=4, seed=seed, sep=1.0)
    rng = np.random.default_rng(seed)
    a = make_selector("sogfs", n_clusters=4).fit(X)
    assert a.w_solver_paths_[0] == "tied"
    for _ in range(2):
        b = make_selector("sogfs", n_clusters=4).fit(X * (1 + 1e-15 * rng.standard_normal(X.shape)))
        assert _jaccard_top(a, b, 20) == 1.0 and _jaccard_top(a, b, 60) == 1.0
        np.testing.assert_allclose(b.scores_, a.scores_, atol=1e-9)


def test_first_w_step_unchanged_by_round_off_in_the_graph():
    """The first W-step (Q = I) alone, L_S perturbed by 1e-16-1e-15 within its components."""
    X, _ = _blobs(n_per=10, d=120, c=4, seed=0, sep=1.0)
    Xc = sogfs_mod.center_unit_norm(X)
    D = squared_distances(Xc)
    S = sogfs_mod.s_step(D, sogfs_mod.alpha_eq27(D, 5))
    rng = np.random.default_rng(1)
    W0 = sogfs_mod.w_step(Xc, laplacian(sym(S)), np.ones(120), 1.0, 60)[0]
    for _ in range(3):
        S1 = S * (1 + 1e-15 * rng.standard_normal(S.shape))
        W1 = sogfs_mod.w_step(Xc, laplacian(sym(S1)), np.ones(120), 1.0, 60)[0]
        np.testing.assert_allclose(W1 @ W1.T, W0 @ W0.T, atol=1e-10)


@pytest.mark.slow
def test_orl_top100_unchanged_by_round_off_in_the_data(monkeypatch):
    """orl (400 x 1024): the first W-step cut lies inside an eigenvalue of multiplicity 634. Data
    perturbed by 1e-14 (relative) gives the same top-100 features (without the tie tolerance:
    Jaccard 0.89, scores move by up to 0.96). About 15 s."""
    import os

    from ufsbench.datasets import load_dataset
    monkeypatch.setenv("UFSBENCH_DATA", os.environ.get("UFSBENCH_DATA", "/work/shared/datasets"))
    ds = load_dataset("orl")
    X = np.asarray(ds.X, float)
    c = len(np.unique(ds.y))
    a = make_selector("sogfs", n_clusters=c, gamma=1.0).fit(X)
    rng = np.random.default_rng(0)
    b = make_selector("sogfs", n_clusters=c, gamma=1.0).fit(
        X * (1 + 1e-14 * rng.standard_normal(X.shape)))
    assert _jaccard_top(a, b, 100) == 1.0
    np.testing.assert_allclose(b.scores_, a.scores_, atol=1e-8)


def _classes_of_two_subgroups(seed=1, d=30, n_per=6):
    """3 classes, each two tight subgroups a little apart: the k = 5 graph splits some classes."""
    rng = np.random.default_rng(seed)
    classes = 10 * rng.standard_normal((3, d))
    subgroups = classes[np.repeat(np.arange(3), 2)] + 2.0 * rng.standard_normal((6, d))
    return subgroups[np.repeat(np.arange(6), n_per)] + 0.3 * rng.standard_normal((6 * n_per, d))


def test_fit_does_not_depend_on_the_eigensolvers_basis_of_a_null_space(monkeypatch):
    """An initial S with more components than c (JAFFE at k = 5: 15 for c = 10) makes F of
    problem (14) a c-dimensional part of a larger null space; the part must not be an
    eigensolver's choice (it follows the CPU's BLAS kernel), or the first S-step and the
    selection move with it (by up to 5e-3 in the scores here with an eigensolver's F). The
    F-step takes null spaces from the components, so rotating every multiple eigenvalue's
    basis (and flipping signs) in the eigensolver changes nothing."""
    from scipy.stats import ortho_group

    import ufsbench.numerics.laplacian_eig as lap_eig
    from ufsbench.numerics import connected_components_count
    from ufsbench.numerics.preprocess import center_unit_norm
    X = _classes_of_two_subgroups()
    S0 = sogfs_mod.initial_graph(center_unit_norm(X), k=5, neighbours="all", full_sort=False)[2]
    assert connected_components_count(S0) == 4                  # > c = 3: the cut is exercised
    fit = dict(n_clusters=3, gamma=1.0, max_iter=10)
    reference = make_selector("sogfs", **fit).fit(X)

    def rotated_eigh(A, k, seed):
        vals, U = np.linalg.eigh(A)
        rng = np.random.default_rng(seed)
        for start in np.flatnonzero(np.diff(vals, prepend=-np.inf) > 1e-10):
            run = np.arange(start, len(vals))[np.abs(vals[start:] - vals[start]) <= 1e-10]
            if run.size > 1:
                U[:, run] = U[:, run] @ ortho_group.rvs(run.size, random_state=seed)
        return vals[:k], U[:, :k] * rng.choice([-1.0, 1.0], size=k)

    for seed in (1, 2):
        solver = lambda A, k, seed=seed: rotated_eigh(A, k, seed)  # noqa: E731
        monkeypatch.setattr(lap_eig, "eigh_smallest", solver)
        other = make_selector("sogfs", **fit).fit(X)
        np.testing.assert_allclose(other.scores_, reference.scores_, atol=1e-10)
        assert other.objective_history_ == pytest.approx(reference.objective_history_, rel=1e-10)


def test_round_off_in_the_data_does_not_reorder_unit_norm_rows_at_large_gamma():
    """At gamma = 1000 the m rows W keeps are coordinate axes with norm 1 up to an ulp: their
    order, and so any top-h below m, compared exactly follows round-off (the BLAS kernel on
    JAFFE). They are tied, in an order seeded by random_state, not by index."""
    ds = make_synthetic(n_samples=40, n_features=120, n_informative=5, n_clusters=3,
                        random_state=1)
    fit = dict(n_clusters=3, gamma=1000.0, max_iter=5, random_state=0)
    reference = make_selector("sogfs", **fit).fit(ds.X)
    tied = np.abs(reference.scores_ - reference.scores_.max()) < 1e-12
    assert tied.sum() == 60                                     # m = d/2 rows, all "norm 1"
    assert set(reference.ranking_[:60]) == set(np.flatnonzero(tied))
    assert [reference.tied_at_cut(h) for h in (10, 59, 60)] == [60, 60, 0]
    assert not np.array_equal(reference.ranking_[:60], np.flatnonzero(tied))   # not index order
    other_seed = make_selector("sogfs", **{**fit, "random_state": 1}).fit(ds.X)
    np.testing.assert_array_equal(other_seed.scores_, reference.scores_)      # the fit is one
    assert set(other_seed.ranking_[:60]) == set(reference.ranking_[:60])
    assert not np.array_equal(other_seed.ranking_[:60], reference.ranking_[:60])
    rng = np.random.default_rng(1)
    for _ in range(5):
        X = ds.X * (1 + 1e-15 * rng.standard_normal(ds.X.shape))
        other = make_selector("sogfs", **fit).fit(X)
        np.testing.assert_array_equal(other.ranking_[:60], reference.ranking_[:60])


# -- the switches of the authors' code (the released preset) ------------------------------------
def test_per_sample_initial_graph_is_eq26_with_exactly_k_neighbours():
    X, _ = _blobs(n_per=12, d=6)
    D = squared_distances(X)
    alpha, _, S = sogfs_mod.initial_graph(X, 5, "all", False, per_sample=True)
    assert alpha == sogfs_mod.alpha_eq27(D, 5)
    _assert_simplex_rows(S)
    for i, row in enumerate(D):
        order = np.argsort(np.where(np.arange(len(row)) == i, np.inf, row), kind="stable")
        d = row[order[:6]]
        np.testing.assert_allclose(S[i, order[:5]], (d[5] - d[:5]) / (5 * d[5] - d[:5].sum()),
                                   rtol=1e-12)
        assert np.count_nonzero(S[i]) == 5


def test_eigengap_test_reads_a_negligible_link_as_a_cut():
    """Two groups joined by one weight of 1e-13: one component on the support, two for the
    eigen-gap test (its second eigenvalue ~1e-13 < 1e-9)."""
    import scipy.sparse as sp
    S = np.zeros((6, 6))
    S[:3, :3] = S[3:, 3:] = 0.5
    np.fill_diagonal(S, 0.0)
    S[2, 3] = S[3, 2] = 1e-13
    selector = make_selector("sogfs", component_test="eigengap")
    L = sp.csr_matrix(laplacian(sym(S)))
    F, n_comp, _, verdict = selector._f_step(sp.csr_matrix(S), L, 2, None)
    assert (n_comp, verdict) == (1, 0)
    assert make_selector("sogfs")._f_step(sp.csr_matrix(S), L, 2, None)[3] == -1
    assert sogfs_mod.component_verdict(2, 2, np.array([0.0, 1e-16, 1e-12])) == 1
    assert sogfs_mod.component_verdict(2, 2, np.array([0.0, 2e-9, 0.5])) == -1


def test_inner_rounds_stop_when_objective9_moves_by_less_than_inner_tol():
    """The test reads Tr(W^T X^T L X W) + gamma ||W||_{2,1} without the smoothing eps."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 60))
    L = _graph_laplacian(X)
    run = [sogfs_mod.w_step(X, L, np.ones(60), 0.5, 30, n_iter=r) for r in range(1, 41)]
    plain = np.array([sogfs_mod.w_objective(X, L, W, 0.5, 0.0) for W, *_ in run])
    expected = int(np.argmax(np.abs(np.diff(plain)) < 1e-4)) + 2     # the small step included
    short = sogfs_mod.w_step(X, L, np.ones(60), 0.5, 30, n_iter=40, tol=1e-4)
    assert len(short[2]) == expected < 40
    np.testing.assert_allclose(short[2], run[-1][2][:expected], rtol=1e-12)
    np.testing.assert_allclose(short[0] @ short[0].T, run[expected - 1][0] @ run[expected - 1][0].T,
                               atol=1e-10)


def test_reset_q_starts_every_w_step_from_the_identity():
    ds = make_synthetic(n_samples=40, n_features=90, n_informative=4, n_clusters=3,
                        random_state=0)
    fit = dict(n_clusters=3, inner_iter=3, max_iter=4, stop="objective")
    carried = make_selector("sogfs", **fit).fit(ds.X)
    reset = make_selector("sogfs", reset_q=True, **fit).fit(ds.X)
    assert carried.w_solver_paths_[::3] == ["tied"] + ["dense"] * 3
    assert reset.w_solver_paths_[::3] == ["tied"] * 4          # Q = I: the tied reduction
    assert not np.allclose(carried.scores_, reset.scores_)


def test_final_w_step_is_algorithm1_on_the_final_graph():
    ds = make_synthetic(n_samples=40, n_features=30, n_informative=4, n_clusters=3,
                        random_state=0)
    fit = dict(n_clusters=3, reset_q=True, inner_iter=4)
    plain = make_selector("sogfs", **fit).fit(ds.X)
    final = make_selector("sogfs", final_w_step=True, **fit).fit(ds.X)
    assert final.n_iter_ == plain.n_iter_
    assert len(final.w_objective_history_) == len(plain.w_objective_history_) + 4
    np.testing.assert_array_equal(final.similarity_, plain.similarity_)
    Xc = sogfs_mod.center_unit_norm(ds.X)
    L = laplacian(sym(final.similarity_))
    W = sogfs_mod.w_step(Xc, L, np.ones(30), 1.0, 15, n_iter=4)[0]
    np.testing.assert_allclose(final.projection_ @ final.projection_.T, W @ W.T, atol=1e-9)


RELEASED_SWITCHES = dict(initial_alpha="per_sample", neighbours="local", reset_q=True,
                         inner_iter=20, inner_tol=1e-6, eps=2.220446049250313e-16,
                         component_test="eigengap", min_iter=2, final_w_step=True)


@pytest.mark.parametrize("shape", [(40, 100), (90, 12)])
def test_released_switches_give_the_dense_reference_iterates(shape, monkeypatch):
    """Both fits reach c = 3 components after 5-6 iterations (so the last S-step uses kNN sets
    of the projected data)."""
    import ufsbench.numerics.laplacian_eig as lap_eig
    ds = make_synthetic(n_samples=shape[0], n_features=shape[1], n_informative=4, n_clusters=3,
                        random_state=5)
    dense = sogfs_reference(ds.X, 3, gamma=1.0, max_iter=15, **RELEASED_SWITCHES)
    monkeypatch.setattr(lap_eig, "DENSE_BELOW", 0)            # exercise the sparse F-step
    fast = make_selector("sogfs", n_clusters=3, gamma=1.0, max_iter=15,
                         **RELEASED_SWITCHES).fit(ds.X)
    assert (fast.n_iter_, fast.converged_) == (dense["n_iter"], True)
    assert fast.n_components_history_ == dense["n_components_history"]
    np.testing.assert_allclose(fast.lambda_history_, dense["lambda_history"], rtol=1e-12)
    # eps = 2.2e-16 makes Q_ii = 1 / (2 sqrt(||w_i||^2 + eps)) up to 3e7 for the rows W drops:
    # G = X^T L_S X + gamma Q has a norm ~1e7, so its eigenvectors, and the sums over them,
    # carry round-off ~1e-16 * 1e7 relative to the gaps (1e-9 here, 1e-14 with eps = 1e-8)
    np.testing.assert_allclose(fast.objective_history_, dense["objective_history"], rtol=1e-7)
    np.testing.assert_allclose(fast.w_objective_history_, dense["w_objective_history"],
                               rtol=1e-7)
    np.testing.assert_allclose(fast.scores_, dense["scores"], atol=1e-7)


def test_released_preset_validates_and_sets_the_authors_switches():
    from ufsbench.presets import preset_params
    selector = make_selector("sogfs", preset="released")
    assert {key: selector.get_params()[key] for key in RELEASED_SWITCHES} == {
        **RELEASED_SWITCHES, "inner_iter": 100}
    assert preset_params("sogfs", "released")["stop"] == "components"
