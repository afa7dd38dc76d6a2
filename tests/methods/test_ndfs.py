"""Tests of NDFS (Li et al., AAAI 2012): F >= 0, orthogonality, monotone objective, fast path."""

import numpy as np
import pytest

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.testing import assert_same_partition, fits_cache_off_cold_warm


@pytest.fixture(scope="module")
def fitted(data):
    return make_selector("ndfs", n_clusters=3, alpha=1e-2, beta=1e2, random_state=0,
                         tol=None, max_iter=30).fit(data.X)


def test_nonnegative_unit_columns_and_orthogonal(fitted):
    F = fitted.F_
    assert np.all(np.isfinite(F)) and F.min() >= 0.0
    assert np.allclose(np.linalg.norm(F, axis=0), 1.0)
    assert np.abs(F.T @ F - np.eye(3)).max() < 1e-6           # gamma = 1e8


@pytest.mark.parametrize("gamma", [1e8, 1.0, 1e-3])
def test_stays_finite_nonnegative_on_mixed_sign_data(data, gamma):
    # Centred synthetic data have negative entries, so M has both signs; with a small gamma the
    # plain rule F * gamma F / (M F + gamma F F^T F) would divide by negative numbers.
    X = data.X - 5.0 * data.X.mean()
    for iters in (1, 3, 10):
        sel = make_selector("ndfs", n_clusters=3, gamma=gamma, max_iter=iters, tol=None,
                            random_state=0).fit(X)
        assert np.all(np.isfinite(sel.F_)) and sel.F_.min() >= 0.0
        assert np.all(np.isfinite(sel.scores_))


def test_objective_non_increasing(fitted):
    h = np.asarray(fitted.objective_history_)
    assert len(h) == 30
    assert np.all(np.diff(h) <= 1e-6 * np.abs(h[:-1]))


def test_w_step_normal_equations(data, fitted):
    # W solves (X^T X + beta D) W = X^T F with the D of the last iteration's start.
    X = data.X
    sel = make_selector("ndfs", n_clusters=3, alpha=1e-2, beta=1e2, random_state=0, tol=None,
                        max_iter=1).fit(X)
    lhs = X.T @ X @ sel.W_ + 1e2 * sel.W_                      # D_0 = I
    assert np.allclose(lhs, X.T @ sel.F_, atol=1e-8)


def test_planted_features_ranked_first(fitted, data):
    assert set(fitted.top_features(6)) == set(data.informative)


def test_labels_recover_clusters(fitted, data):
    from ufsbench.evaluation import clustering_accuracy
    assert clustering_accuracy(data.y, fitted.labels_) > 0.95


def test_deterministic(data):
    a = make_selector("ndfs", n_clusters=3, random_state=4, max_iter=5, tol=None).fit(data.X)
    b = make_selector("ndfs", n_clusters=3, random_state=4, max_iter=5, tol=None).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)


@pytest.mark.parametrize("order", ["f_first", "w_first"])
def test_remembered_xt_f_gives_the_bits_of_recomputing_it(data, order, monkeypatch):
    """X^T F is remembered for the last F (LastProduct): a fit equals, bit for bit, one that
    forms every product afresh (a stale product would change the scores)."""
    import ufsbench.methods.ndfs as ndfs_module

    kw = dict(n_clusters=3, random_state=4, max_iter=8, tol=None, order=order)
    remembered = make_selector("ndfs", **kw).fit(data.X)
    calls = []

    def afresh(self, Y):
        calls.append(Y is self.last)
        self.last = Y
        return self.B @ Y
    monkeypatch.setattr(ndfs_module.LastProduct, "__call__", afresh)
    fresh = make_selector("ndfs", **kw).fit(data.X)
    assert any(calls)                                 # the same F was asked for again
    assert np.array_equal(remembered.scores_, fresh.scores_)
    assert np.array_equal(remembered.F_, fresh.F_)


def test_woodbury_matches_dense_when_d_exceeds_n(wide_data):
    X = wide_data.X
    kw = dict(n_clusters=3, alpha=1.0, beta=1.0, max_iter=8, tol=None, random_state=0)
    dense = make_selector("ndfs", solver="dense", **kw).fit(X)
    fast = make_selector("ndfs", solver="woodbury", **kw).fit(X)
    assert np.allclose(dense.scores_, fast.scores_, rtol=1e-7, atol=1e-10)
    assert np.allclose(dense.F_, fast.F_, atol=1e-9)


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="'beta' parameter"):
        make_selector("ndfs", beta=0.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="'init_offset' parameter"):
        make_selector("ndfs", init_offset=0.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="'update' parameter"):
        make_selector("ndfs", update="plain").fit(data.X)


def test_large_n_path_equals_dense_path(data, monkeypatch):
    from ufsbench.numerics import graphs

    kw = dict(n_clusters=3, alpha=1e-2, beta=1e2, random_state=0, tol=None, max_iter=8)
    dense = make_selector("ndfs", **kw).fit(data.X)
    monkeypatch.setattr(graphs, "SPARSE_MIN_SAMPLES", 2)   # sparse graph, Lanczos, blocks
    large = make_selector("ndfs", **kw).fit(data.X)
    # No kNN edge joins the planted clusters, so L's smallest eigenvalue is multiple and dense
    # eigh and the per-component Lanczos path return different bases of its eigenspace: K-means
    # finds the same start clusters from either but may number them differently. The updates,
    # scores and objective are invariant under a permutation of F's columns.
    assert_same_partition(large.init_labels_, dense.init_labels_)
    np.testing.assert_allclose(large.scores_, dense.scores_, rtol=1e-6)
    np.testing.assert_allclose(large.objective_history_, dense.objective_history_, rtol=1e-8)


def reference_fit(X, c, alpha, beta, max_iter, gamma=1e8, tol=1e-6, eps=1e-8, method="auto"):
    """The explicit F/W iteration (small n, the reference): the dense n x n M of Eq. (13) from the
    d x n solve T, its element-wise sign split, W = T F. Returns (scores, n_iter)."""
    from ufsbench.numerics import knn_graph, l21_reweight, laplacian, sym
    from ufsbench.numerics.gram_solve import solve_gram_plus_diag
    from ufsbench.numerics.nmf import multiplicative_step, neg_part, pos_part
    from ufsbench.numerics.spectral import spectral_soft_indicator, unit_columns

    n, d = X.shape
    L = laplacian(knn_graph(X, k=5, weight="heat", sigma=None), normalized=True)
    F, _ = spectral_soft_indicator(L, c, 0, 0.2)
    weights, eye, history = np.ones(d), np.eye(n), []
    sel = make_selector("ndfs", alpha=alpha, beta=beta, gamma=gamma, eps=eps)
    for _ in range(max_iter):
        T = solve_gram_plus_diag(X, eye, beta * weights, method=method)
        M = sym(L + alpha * (eye - X @ T))
        F = unit_columns(multiplicative_step(F, gamma * F + neg_part(M) @ F,
                                             pos_part(M) @ F + gamma * F @ (F.T @ F)))
        W = T @ F
        weights = l21_reweight(W, eps=eps)
        history.append(sel.objective(X, F, W, L))
        if len(history) > 1 and history[-2] - history[-1] <= tol * abs(history[-2]):
            break
    return np.linalg.norm(W, axis=1), len(history)


@pytest.mark.parametrize("alpha, beta", [(1.0, 1.0), (1e-6, 1e-6), (1e6, 1e-6), (1e-2, 1e4),
                                         (1e6, 1e6)])
@pytest.mark.parametrize("wide", [False, True])
def test_fit_matches_frozen_reference(data, wide_data, alpha, beta, wide):
    # d < n: Cholesky / Z Z^T form; d > n: n x n Cholesky inverse. Same scores up to round-off.
    X = wide_data.X if wide else data.X
    ref, iters = reference_fit(X, 3, alpha, beta, max_iter=40)
    sel = make_selector("ndfs", n_clusters=3, alpha=alpha, beta=beta, random_state=0,
                        max_iter=40, update="split").fit(X)
    assert sel.n_iter_ == iters
    np.testing.assert_allclose(sel.scores_, ref, rtol=1e-9, atol=1e-12 * ref.max())


def operator_and_dense_m(X, F_shape_seed, alpha, beta, gamma, wide):
    """(selector, its M operator, the dense n x n M of Eq. (13)) for random D weights."""
    import scipy.sparse as sp

    from ufsbench.numerics import knn_graph, laplacian

    n, d = X.shape
    weights = np.random.default_rng(F_shape_seed).uniform(0.5, 2.0, size=d)
    L = laplacian(knn_graph(X, k=5, weight="heat", sigma=None), normalized=True)
    sel = make_selector("ndfs", alpha=alpha, beta=beta, gamma=gamma)
    A = sp.csr_matrix(L) + (0 if wide else alpha * sp.identity(n, format="csr"))
    op = sel._m_operator(X, A, None if wide else X.T @ X, weights)
    M = L + alpha * (np.eye(n) - X @ np.linalg.solve(X.T @ X + beta * np.diag(weights), X.T))
    return sel, op, M


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("alpha, beta", [(1.0, 1.0), (1e2, 1e-2), (1e-2, 1e2)])
def test_printed_update_without_the_n_by_n_matrix(data, wide_data, wide, alpha, beta):
    # Eq. (16) from M F alone (d <= n: the W-step's solve; d > n: one n x n Cholesky solve)
    # equals the rule with the dense M, and forms no n x n block of the split.
    from ufsbench.methods import ndfs as module

    X = wide_data.X if wide else data.X
    sel, op, M = operator_and_dense_m(X, 0, alpha, beta, 1e3, wide)
    F = np.random.default_rng(0).uniform(0.1, 1.0, size=(X.shape[0], 3))
    denominator = M @ F + 1e3 * F @ (F.T @ F)
    assert denominator.min() > 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "split_products_sym", None)                # not called
        np.testing.assert_allclose(sel._f_step(F, op), F * (1e3 * F) / denominator, rtol=1e-10)


@pytest.mark.parametrize("wide", [False, True])
def test_unsafe_rows_take_the_split_form(data, wide_data, wide):
    # Small gamma and F with entries near 0: Eq. (16)'s denominator is negative in some rows;
    # those rows take the sign-split form, the others Eq. (16), and F stays non-negative.
    from ufsbench.numerics.nmf import neg_part, pos_part

    X = wide_data.X if wide else data.X - 5.0 * data.X.mean()
    n = X.shape[0]
    gamma = 10.0 if wide else 1e-3
    sel, op, M = operator_and_dense_m(X, 3, 1.0, 1.0, gamma, wide)
    F = np.random.default_rng(3).uniform(0.0, 1.0, size=(n, 3)) ** 6
    G = gamma * F @ (F.T @ F)
    expected = F * (gamma * F) / (M @ F + G)
    unsafe = np.any((M @ F + G <= 0) & (F > 0), axis=1)
    assert 0 < unsafe.sum() < n
    split = F * (gamma * F + neg_part(M) @ F) / (pos_part(M) @ F + G)
    expected[unsafe] = split[unsafe]
    step = sel._f_step(F, op)
    assert step.min() >= 0.0
    np.testing.assert_allclose(step, expected, rtol=1e-9)
    np.testing.assert_allclose(op.rows(np.arange(n)), M, atol=1e-10)
    plus, minus = op.split(F)
    np.testing.assert_allclose(plus, pos_part(M) @ F, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(minus, neg_part(M) @ F, rtol=1e-9, atol=1e-12)


def test_printed_and_split_updates_agree_at_the_papers_gamma(data, wide_data):
    # gamma = 1e8: the two rules differ at second order in M F / (gamma F): same ranking.
    for X in (data.X, wide_data.X):
        kw = dict(n_clusters=3, alpha=1.0, beta=1.0, random_state=0, max_iter=20, tol=None)
        printed = make_selector("ndfs", **kw).fit(X)
        split = make_selector("ndfs", update="split", **kw).fit(X)
        np.testing.assert_allclose(printed.scores_, split.scores_, rtol=1e-6)
        np.testing.assert_array_equal(printed.ranking_[:20], split.ranking_[:20])


@pytest.mark.parametrize("block_cells", [60 * 60, 60 * 7, 60])       # 1, 9 and 60 row blocks
def test_symmetric_block_split_equals_dense_split(block_cells):
    from ufsbench.methods.ndfs import split_products_sym
    from ufsbench.numerics import laplacian
    from ufsbench.numerics.graphs import sparse_knn_graph
    from ufsbench.numerics.nmf import neg_part, pos_part

    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 5))
    F = rng.uniform(size=(60, 4))
    Z = rng.standard_normal((60, 3))
    A = laplacian(sparse_knn_graph(X, 5, weight="heat", sigma=None), normalized=True)
    A = A + 0.3 * np.eye(60)
    M = np.asarray(A) - Z @ Z.T
    plus, minus = split_products_sym(A, lambda r, s, out: np.matmul(Z[r], Z[s:].T, out=out), F,
                                     block_cells=block_cells)
    np.testing.assert_allclose(plus, pos_part(M) @ F, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(minus, neg_part(M) @ F, rtol=1e-13, atol=1e-13)


def test_cached_start_equals_direct_start(data, tmp_path):
    X = np.tile(data.X, (1, 20))                                     # 90 x 1200 >= min_cells
    kw = dict(n_clusters=3, random_state=2, max_iter=3, tol=None)
    direct, cold, warm = fits_cache_off_cold_warm("ndfs", X, tmp_path, **kw)
    assert len(list(tmp_path.rglob("output.pkl"))) == 2              # the graph and the start
    for sel in (cold, warm):
        np.testing.assert_array_equal(sel.init_labels_, direct.init_labels_)
        np.testing.assert_array_equal(sel.scores_, direct.scores_)


def test_a_printed_step_that_raises_the_objective_is_replaced_by_the_split(data, monkeypatch):
    from ufsbench.methods.ndfs import NDFS
    from ufsbench.numerics.nmf import multiplicative_step

    X = data.X
    sel, op, M = operator_and_dense_m(X, 5, 1.0, 1.0, 1e3, False)
    F = np.random.default_rng(5).uniform(0.1, 1.0, size=(X.shape[0], 3))
    G = 1e3 * F @ (F.T @ F)
    split = multiplicative_step(F, 1e3 * F + np.maximum(-M, 0) @ F, np.maximum(M, 0) @ F + G)
    printed = sel._f_step(F, op)
    assert not np.allclose(printed, split)                           # Eq. (16) taken here
    monkeypatch.setattr(NDFS, "_printed_step", lambda self, F, *a: 3.0 * F)   # raises it
    np.testing.assert_allclose(sel._f_step(F, op), split, rtol=1e-9)


def test_objective_non_increasing_where_the_printed_rule_alone_rises():
    # Eq. (16) alone raises J here (relative +6.6e-4 in one step at alpha = 1e4, beta = 1e-6;
    # Isolet at alpha = 1e6, beta = 1e-6: +11 %); the split fallback keeps it non-increasing.
    from ufsbench.datasets.synthetic import make_synthetic

    data = make_synthetic(n_samples=90, n_features=60, n_informative=6, n_clusters=5,
                          random_state=1)
    sel = make_selector("ndfs", n_clusters=5, alpha=1e4, beta=1e-6, random_state=0,
                        max_iter=30, tol=None).fit(data.X)
    h = np.asarray(sel.objective_history_)
    assert np.all(np.diff(h) <= 1e-6 * np.abs(h[:-1]))


# -- the authors' computation (preset "released") and its pieces ------------------------------

def sample_starts(n, c, restarts=5, seed=0):
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(n, c, replace=False) for _ in range(restarts)])


def authors_reference(X, c, starts, alpha=0.1, beta=1.0, gamma=1e3, iters=30):
    """NDFS.m's start and AAAI2012.m's loop written out densely: adaptive graph (k = 5),
    normalised Laplacian, spectral clustering from the given starts, the 0/1 F, W_0 = 0; per
    iteration G = (X^T X + beta D)^{-1} (d x d), W = G X^T F, D from that W, M = L + alpha
    (I - X G X^T), Eq. (16) with eps in numerator and denominator, columns to unit norm.
    Returns (sum(W^2, 2), start labels)."""
    from ufsbench.numerics import laplacian, squared_distances
    from ufsbench.numerics.adaptive_neighbors import adaptive_neighbor_graph
    from ufsbench.numerics.graphs import connected_components_count
    from ufsbench.numerics.spectral import kmeans_from_sample_starts

    eps = np.finfo(float).eps
    n, d = X.shape
    S = adaptive_neighbor_graph(squared_distances(X), 5)
    S = 0.5 * (S + S.T)
    assert connected_components_count(S) <= c            # the c eigenvectors are determined
    L = laplacian(S, normalized=True)
    V = np.linalg.eigh(L)[1][:, :c]
    labels = kmeans_from_sample_starts(V / np.linalg.norm(V, axis=1, keepdims=True), starts)
    F = np.zeros((n, c))
    F[np.arange(n), labels] = 1.0
    D = np.full(d, 0.5 / np.sqrt(eps))
    for _ in range(iters):
        G = np.linalg.inv(X.T @ X + beta * np.diag(D))
        W = G @ X.T @ F
        D = 0.5 / np.sqrt(np.sum(W * W, axis=1) + eps)
        M = L + alpha * (np.eye(n) - X @ G @ X.T)
        M = 0.5 * (M + M.T)
        F = F * (gamma * F + eps) / (M @ F + gamma * F @ F.T @ F + eps)
        F = F / np.sqrt(np.sum(F * F, axis=0) + eps)
    return np.sum(W * W, axis=1), labels


@pytest.mark.parametrize("wide", [False, True])
def test_released_preset_is_the_authors_computation(data, wide_data, wide):
    # d <= n (Cholesky of X^T X + beta D) and d > n (n x n push-through) against the d x d
    # inverse of the authors' loop: the same scores up to round-off, the same start partition.
    X = wide_data.X if wide else data.X
    starts = sample_starts(X.shape[0], 3)
    ref, ref_labels = authors_reference(X, 3, starts)
    sel = make_selector("ndfs", preset="released", n_clusters=3, init=starts,
                        max_iter=30).fit(X)
    assert_same_partition(sel.init_labels_, ref_labels)
    np.testing.assert_allclose(sel.scores_ ** 2, ref, rtol=1e-7, atol=1e-9 * ref.max())
    # the 0/1 start freezes the memberships: a zero entry of F stays zero under Eq. (16)
    np.testing.assert_array_equal(sel.labels_, sel.init_labels_)
    assert sel.n_iter_ == 30 and sel.converged_                       # the fixed count


@pytest.mark.skipif(not __import__("os").environ.get("UFSBENCH_DATA"),
                    reason="needs the shared data and reference cases")
def test_released_start_is_the_authors_partition_on_jaffe():
    # With the K-means starts the authors' sc.m drew, our spectral start is their partition.
    from ufsbench.conformance import case_data, load_case, reference_dir
    from ufsbench.conformance.ndfs import case_params

    directory = reference_dir()
    if directory is None or not (directory / "ndfs__jaffe__c_classes.json").is_file():
        pytest.skip("no shared reference cases")
    case = load_case(directory / "ndfs__jaffe__c_classes.json")
    X = case_data(case)
    params = {**case_params(case, X), "max_iter": 1}
    sel = make_selector("ndfs", preset="released", **params).fit(X)
    assert_same_partition(sel.init_labels_, case["extra"]["sc_init_labels"])


def test_kmeans_from_sample_starts_is_a_lloyd_fixed_point_and_keeps_the_best_restart():
    from scipy.spatial.distance import cdist

    from ufsbench.numerics.spectral import kmeans_from_sample_starts

    rng = np.random.default_rng(0)
    Y = rng.standard_normal((60, 3))
    Y[:20, 0] += 3.0
    Y[20:40, 1] -= 3.0
    starts = sample_starts(60, 4, restarts=8, seed=1)

    def spread(labels):                           # sum of (unsquared) distances to the means
        centres = np.array([Y[labels == j].mean(axis=0) for j in range(4)])
        return np.linalg.norm(Y - centres[labels], axis=1).sum(), centres

    labels = kmeans_from_sample_starts(Y, starts)
    total, centres = spread(labels)
    np.testing.assert_array_equal(np.argmin(cdist(Y, centres), axis=1), labels)
    singles = [spread(kmeans_from_sample_starts(Y, row[None]))[0] for row in starts]
    assert np.isclose(total, min(singles)) and len(set(np.round(singles, 9))) > 1
    Q = np.linalg.qr(rng.standard_normal((3, 3)))[0]                 # distances unchanged
    np.testing.assert_array_equal(kmeans_from_sample_starts(Y @ Q, starts), labels)


def test_kmeans_from_sample_starts_refills_an_empty_cluster():
    from ufsbench.numerics.spectral import kmeans_from_sample_starts

    Y = np.array([[0.0], [0.0], [1.0], [5.0], [6.0]])
    # two identical starting centres: every sample goes to the first (ties to the lower index),
    # the second is refilled with the farthest sample and Lloyd goes on from there
    labels = kmeans_from_sample_starts(Y, [[0, 1]])
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1])


def test_canonical_bottom_eigvecs_do_not_depend_on_the_solver():
    # 4 connected components, c = 2: the two vectors are a cut of the 4-dimensional null space.
    # The dense (LAPACK) and sparse (per-component Lanczos) solvers return different bases of
    # it; the canonical cut is the same, and so are the labels from given starts.
    import scipy.sparse as sp

    from ufsbench.numerics import laplacian
    from ufsbench.numerics.graphs import connected_components_count
    from ufsbench.numerics.spectral import bottom_eigvecs_canonical, spectral_clustering_labels

    rng = np.random.default_rng(3)
    X = np.vstack([rng.standard_normal((15, 4)) + 40.0 * j for j in range(4)])
    from ufsbench.numerics.adaptive_neighbors import adaptive_affinity
    S = adaptive_affinity(X, 3).toarray()
    assert connected_components_count(S) == 4
    L = laplacian(S, normalized=True)
    dense, sparse = bottom_eigvecs_canonical(L, 2), bottom_eigvecs_canonical(sp.csr_matrix(L), 2)
    np.testing.assert_allclose(dense, sparse, atol=1e-8)
    assert np.abs(L @ dense).max() < 1e-10
    starts = sample_starts(60, 2, restarts=4)
    np.testing.assert_array_equal(spectral_clustering_labels(L, 2, starts),
                                  spectral_clustering_labels(sp.csr_matrix(L), 2, starts))


@pytest.mark.parametrize("init, message", [
    ([[0, 1]], "n_clusters=3"), ([[0, 1, 1]], "distinct"), ([[0.0, 1.0, 2.0]], "integers"),
    ([[0, 1, -2]], "non-negative"), ([0, 1, 2], "shape"),
])
def test_bad_init_refused_before_computing(init, message):
    from ufsbench.methods.base import check_setting

    with pytest.raises(UFSBenchError, match="init"):
        check_setting("ndfs", {"n_clusters": 3, "init": init})


def test_init_beyond_the_samples_refused(data):
    with pytest.raises(UFSBenchError, match="sample index 90"):
        make_selector("ndfs", n_clusters=3, init=[[0, 1, 90]]).fit(data.X)


def test_stop_test_cap_and_fixed_count(data):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    kw = dict(n_clusters=3, alpha=1e-2, beta=1e2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fixed = make_selector("ndfs", tol=None, max_iter=7, **kw).fit(data.X)
        stopped = make_selector("ndfs", **kw).fit(data.X)             # tol = 1e-6, cap 100
    assert fixed.n_iter_ == 7 and fixed.converged_
    h = np.asarray(stopped.objective_history_)
    change = (h[:-1] - h[1:]) / np.abs(h[:-1])
    assert stopped.converged_ and stopped.n_iter_ < 100
    assert change[-1] <= 1e-6 and np.all(change[:-1] > 1e-6)         # stopped at the first
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        capped = make_selector("ndfs", tol=1e-12, max_iter=3, **kw).fit(data.X)
    assert not capped.converged_ and capped.n_iter_ == 3

