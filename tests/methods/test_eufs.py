"""Tests of EUFS (Wang, Tang & Liu, AAAI 2015): ADMM constraints, residuals, sparsity, planted features."""

import numpy as np
import pytest

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.numerics.prox import row_shrink
from ufsbench.testing import fit_blas_threads


@pytest.fixture(scope="module")
def fitted(data):
    # mu0 = 1, not the default 1e-3: no kNN edge of these data crosses the planted clusters, so
    # at the K-means start L U is pure round-off, and with mu0 = 1e-3 the steps multiply it by
    # beta / mu = 1e3 while alpha / mu zeroes V for the first 27 iterations; U then follows the
    # BLAS kernel's round-off and where the ADMM is after 200 iterations (labels, residual)
    # varies from kernel to kernel. From mu0 = 1 the data drive U from the first step: a 1e-12
    # relative change of X moves the scores by ~1e-13, so the asserts below hold on any kernel.
    return make_selector("eufs", n_clusters=3, random_state=0, n_features_to_select=6,
                         mu0=1.0, max_iter=200).fit(data.X)


def test_constraints(fitted):
    U, Z = fitted.U_, fitted.Z_
    assert np.allclose(U.T @ U, np.eye(3), atol=1e-10)
    assert Z.min() >= 0.0
    # U itself is non-negative up to the (vanishing) residual ||Z - U||
    assert U.min() > -0.05


def test_primal_residuals_tend_to_zero(fitted):
    r = np.asarray(fitted.residual_history_)
    # The K-means start is feasible, so the residual first grows while mu is small (a peak of
    # ~2 near iteration 7 here), then falls at every step as mu grows.
    assert r[-1] < 0.05
    assert r[-1] < 0.1 * r.max()
    assert np.all(np.diff(r[20:]) < 0)
    assert np.all(np.isfinite(fitted.objective_history_))


def test_penalty_grows_by_min_rule(data):
    """mu = min(rho mu, mu_max); the circulating code's max() would jump to mu_max at once."""
    sel = make_selector("eufs", n_clusters=3, random_state=0, mu0=1e-3, rho=1.1,
                        max_iter=7, tol=0.0, v_tol=0.0).fit(data.X)
    assert sel.mu_ == pytest.approx(1e-3 * 1.1 ** 7)
    sel = make_selector("eufs", n_clusters=3, random_state=0, mu0=1.0, rho=10.0, mu_max=50.0,
                        max_iter=4, tol=0.0, v_tol=0.0).fit(data.X)
    assert sel.mu_ == 50.0


def test_exact_zero_rows_and_planted_features(fitted, data):
    V = fitted.V_
    zero = np.linalg.norm(V, axis=1) == 0
    assert zero.sum() > 0
    assert set(np.flatnonzero(~zero)) >= set(data.informative)
    assert set(fitted.top_features(6)) == set(data.informative)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(data.y, fitted.labels_) > 0.95


def test_default_start_keeps_only_planted_features(data):
    # From the default mu0 the fit follows round-off (see ``fitted``): some kernels end with all
    # six planted features, others with three of them and merged clusters. Whichever way it
    # goes, every noise feature ends as an exact zero row (0 exceptions in 345 fits on X
    # perturbed by 1e-15 to 1e-11 relative).
    sel = make_selector("eufs", n_clusters=3, random_state=0, max_iter=200).fit(data.X)
    kept = set(np.flatnonzero(np.linalg.norm(sel.V_, axis=1) > 0))
    assert kept and kept <= set(data.informative)


def test_alpha_zero_gives_no_zero_rows(data):
    sel = make_selector("eufs", n_clusters=3, random_state=0, alpha=0.0, max_iter=50).fit(data.X)
    assert np.all(np.linalg.norm(sel.V_, axis=1) > 0)


def test_deterministic_for_fixed_seed(data):
    a = make_selector("eufs", n_clusters=3, random_state=5, max_iter=20).fit(data.X)
    b = make_selector("eufs", n_clusters=3, random_state=5, max_iter=20).fit(data.X)
    assert np.array_equal(a.scores_, b.scores_)


def test_row_shrink_is_the_l21_prox():
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((8, 3))
    Q[2] *= 0.01                                # a row below the threshold
    tau = 0.5
    W = row_shrink(Q, tau)
    assert np.all(W[2] == 0.0)

    def f(M):
        return tau * np.linalg.norm(M, axis=1).sum() + 0.5 * np.sum((M - Q) ** 2)

    for _ in range(50):
        assert f(W) <= f(W + 1e-3 * rng.standard_normal(W.shape)) + 1e-12
    buffer = Q.copy()                           # in place into a preallocated buffer: same bits
    assert row_shrink(buffer, tau, out=buffer) is buffer and np.array_equal(buffer, W)


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="'rho' parameter"):
        make_selector("eufs", n_clusters=3, rho=0.5).fit(data.X)
    with pytest.raises(UFSBenchError, match="'alpha' parameter"):
        make_selector("eufs", n_clusters=3, alpha=-1.0).fit(data.X)
    with pytest.raises(UFSBenchError, match="mu0=0.001 must not exceed mu_max=0.0001"):
        make_selector("eufs", n_clusters=3, mu_max=1e-4).fit(data.X)


def _frozen_admm(sel, X, iterations):
    """The ADMM loop of the class doc's steps, one fresh array per operation: the reference
    for the in-place, row-blocked loop. The products with A are formed as in the loop, (U^T A)^T
    and (V^T A^T)^T: the ADMM amplifies the round-off of another BLAS form (A^T U) to ~5e-9
    relative in single entries of E, which would hide what is tested here."""
    from ufsbench.numerics import orthonormal_polar
    from ufsbench.numerics.indicators import kmeans_scaled_indicator
    alpha, beta, c = sel.alpha, sel.beta, sel.n_clusters
    L = sel.graph_laplacian(X)
    U, _ = kmeans_scaled_indicator(X, c, sel.random_state)
    V = X.T @ U
    Y1, Y2, mu = np.zeros_like(U), np.zeros_like(X), sel.mu0
    history = []
    for _ in range(iterations):
        E = row_shrink(X - U @ V.T + Y2 / mu, 1.0 / mu)
        A = X - E + Y2 / mu
        V = row_shrink((U.T @ A).T, alpha / mu)
        Z = np.maximum(U - Y1 / mu - (beta / mu) * (L @ U), 0.0)
        U = orthonormal_polar(Z + Y1 / mu + (V.T @ A.T).T - (beta / mu) * (L @ Z))
        R2 = X - U @ V.T - E
        Y1 += mu * (Z - U)
        Y2 += mu * R2
        mu = min(sel.rho * mu, sel.mu_max)
        history.append(sel.objective(X, U, V, L))
    return np.linalg.norm(V, axis=1), history, E


def _sparse_wide(wide_data):
    """The wide data with 3 % of the entries kept (bag-of-words shape): the sparse X path."""
    mask = np.random.default_rng(0).random(wide_data.X.shape) < 0.03
    return wide_data.X * mask


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e-6, 1e6), (1e6, 1e-6), (1e-2, 1e2)])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("block_rows", [None, 7])
@pytest.mark.parametrize("sparse", [False, True])
def test_buffered_loop_matches_the_reference_loop(wide_data, alpha, beta, order, block_rows,
                                                  sparse, monkeypatch):
    """Same scores, objective history and E as the allocating loop, on d > n data in both memory
    orders (the .mat loader gives column-major X), in one row block or in blocks of 7 rows (the
    last one shorter), dense or with 3 % non-zeros (read through its non-zeros); only BLAS
    round-off may differ."""
    import ufsbench.methods.eufs as eufs_module
    X = _sparse_wide(wide_data) if sparse else wide_data.X
    X = np.asarray(X, order=order)
    if block_rows:
        monkeypatch.setattr(eufs_module, "BLOCK_BYTES", 8 * X.shape[1] * block_rows)
    sel = make_selector("eufs", n_clusters=3, random_state=0, alpha=alpha, beta=beta,
                        max_iter=60, tol=0.0, v_tol=0.0).fit(X)
    with fit_blas_threads(sel):                       # the reference rounds as the fit does
        scores, history, E = _frozen_admm(sel, X, 60)
    np.testing.assert_allclose(sel.scores_, scores, rtol=1e-9, atol=1e-12 * scores.max())
    np.testing.assert_allclose(sel.objective_history_, history, rtol=1e-9)
    np.testing.assert_allclose(sel.E_, E, rtol=1e-9, atol=1e-12 * np.abs(E).max())
    assert sel.n_iter_ == 60


def test_sparse_x_is_read_through_its_non_zeros(wide_data):
    from ufsbench.methods.eufs import SPARSE_DENSITY, _BlockedSteps
    X = _sparse_wide(wide_data)
    assert np.count_nonzero(X) < SPARSE_DENSITY * X.size
    assert _BlockedSteps(X).nonzeros is not None
    assert _BlockedSteps(wide_data.X).nonzeros is None


@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e-6, 1e6)])
def test_sparse_solver_agrees_up_to_amplified_round_off(wide_data, alpha, beta):
    """solver="sparse" changes only the summation order of L U and L Z; the ADMM amplifies
    that to ~1e-7 relative in the scores and ~1e-5 in the last objectives here (see the
    parameter's note), far below any change of ranking."""
    fits = [make_selector("eufs", n_clusters=3, random_state=0, alpha=alpha, beta=beta,
                          max_iter=60, tol=0.0, v_tol=0.0, solver=form).fit(wide_data.X)
            for form in ("dense", "sparse")]
    dense, sparse = fits
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=1e-6,
                               atol=1e-9 * dense.scores_.max())
    np.testing.assert_allclose(sparse.objective_history_, dense.objective_history_, rtol=1e-4)
    assert np.array_equal(sparse.top_features(20), dense.top_features(20))


def test_deprecated_graph_form_warns_and_still_selects_the_form(wide_data):
    kw = dict(n_clusters=3, random_state=0, max_iter=5, tol=0.0, v_tol=0.0)
    auto = make_selector("eufs", **kw).fit(wide_data.X)
    dense = make_selector("eufs", solver="dense", **kw).fit(wide_data.X)
    sparse = make_selector("eufs", solver="sparse", **kw).fit(wide_data.X)
    assert np.array_equal(auto.scores_, dense.scores_)                # "auto" is "dense"
    for form, expected in (("dense", dense), ("sparse", sparse)):
        with pytest.warns(FutureWarning, match="graph_form is deprecated.*use solver"):
            old = make_selector("eufs", graph_form=form, **kw).fit(wide_data.X)
        assert np.array_equal(old.scores_, expected.scores_)


def test_stops_when_v_settles(data):
    # The fit that stopped by the V test has the V of a run of the same length without it; its
    # last step moved V by at most v_tol relative, the step before by more.
    kw = dict(n_clusters=3, random_state=0, mu0=1.0, tol=0.0)
    sel = make_selector("eufs", max_iter=300, **kw).fit(data.X)
    n = sel.n_iter_
    assert sel.converged_ and n < 300
    V = {t: make_selector("eufs", max_iter=t, v_tol=0.0, **kw).fit(data.X).V_
         for t in (n - 2, n - 1, n)}
    np.testing.assert_array_equal(V[n], sel.V_)
    assert np.linalg.norm(V[n] - V[n - 1]) <= 1e-7 * np.linalg.norm(V[n])
    assert np.linalg.norm(V[n - 1] - V[n - 2]) > 1e-7 * np.linalg.norm(V[n - 1])


def test_a_zero_v_never_counts_as_settled(data):
    # alpha = 1e6 shrinks V to zero in every step: V does not move, yet the fit runs its cap
    # (at small mu a zero V only means the shrinkage is still large) and says so.
    from sklearn.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="max_iter=30"):
        sel = make_selector("eufs", n_clusters=3, random_state=0, alpha=1e6,
                            max_iter=30).fit(data.X)
    assert not sel.converged_ and sel.n_iter_ == 30 and not np.any(sel.V_)


@pytest.mark.parametrize("sparse", [False, True])
def test_two_lanes_give_the_bits_of_one(wide_data, sparse, monkeypatch):
    """The row blocks of steps 1 and 5 run in two threads: the same iterates bit for bit as in
    one (the sum of squares of the dual residual is added block by block in block order)."""
    import ufsbench.methods.eufs as eufs_module
    from ufsbench.numerics import lanes
    X = _sparse_wide(wide_data) if sparse else wide_data.X
    monkeypatch.setattr(eufs_module, "BLOCK_BYTES", 8 * X.shape[1] * 7)
    monkeypatch.setattr(eufs_module, "LANES_MIN_BYTES", 0)      # lanes on this small X too
    used = []
    fits = []
    for n_lanes in (1, 2):
        def forced(n_blocks, _lanes=None, n_lanes=n_lanes):
            used.append(lanes.BlockLanes(n_blocks, n_lanes))
            return used[-1]

        monkeypatch.setattr(eufs_module, "BlockLanes", forced)
        fits.append(make_selector("eufs", n_clusters=3, random_state=0, max_iter=40, tol=0.0,
                                  v_tol=0.0).fit(X))
    one, two = fits
    assert [lane.n_lanes for lane in used] == [1, 2]
    assert np.array_equal(one.scores_, two.scores_) and np.array_equal(one.E_, two.E_)
    assert one.objective_history_ == two.objective_history_
    assert one.residual_history_ == two.residual_history_


def test_auto_solver_is_sparse_from_the_sparse_graph_size_on(wide_data, monkeypatch):
    """Below graphs.SPARSE_MIN_SAMPLES "auto" is "dense" (bit for bit); from there on it is
    "sparse", with the graph built sparse (no n x n array): the scores agree with the dense
    products up to the amplified round-off."""
    import ufsbench.methods.eufs as eufs_module
    kw = dict(n_clusters=3, random_state=0, max_iter=60, tol=0.0, v_tol=0.0)
    dense = make_selector("eufs", solver="dense", **kw).fit(wide_data.X)
    assert np.array_equal(make_selector("eufs", **kw).fit(wide_data.X).scores_, dense.scores_)
    monkeypatch.setattr(eufs_module, "SPARSE_MIN_SAMPLES", wide_data.X.shape[0])
    sel = make_selector("eufs", **kw)
    assert sel._solver(wide_data.X.shape[0]) == "sparse"
    built = []
    real = eufs_module.sparse_knn_graph
    monkeypatch.setattr(eufs_module, "sparse_knn_graph",
                        lambda *a, **k: built.append(1) or real(*a, **k))
    auto = sel.fit(wide_data.X)
    assert built
    np.testing.assert_allclose(auto.scores_, dense.scores_, rtol=1e-6,
                               atol=1e-9 * dense.scores_.max())
    assert np.array_equal(auto.top_features(20), dense.top_features(20))


def test_small_data_runs_its_blocks_in_one_lane(wide_data, monkeypatch):
    """Below LANES_MIN_BYTES of X the blocks stay on the calling thread, whatever BLAS allows."""
    from threadpoolctl import threadpool_limits

    from ufsbench.methods.eufs import LANES_MIN_BYTES, _BlockedSteps
    assert wide_data.X.nbytes < LANES_MIN_BYTES
    with threadpool_limits(limits=2, user_api="blas"):
        steps = _BlockedSteps(wide_data.X)
    assert steps.lanes.n_lanes == 1
    steps.close()
