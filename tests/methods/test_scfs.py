"""Tests of SCFS (Parsa, Zare & Ghatee): G-step safety and monotonicity, W-step forms, selection."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import sparse

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector, method_parameters
from ufsbench.methods.scfs import (
    SCFS,
    negative_part_of_B,
    scfs_objective,
    scfs_start,
    scfs_w_step,
    split_gradient,
)

CONFIG = Path(__file__).resolve().parents[2] / "src" / "ufsbench" / "configs" / "method" / "scfs.yaml"


def zscore(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_samples=90, n_features=60, n_informative=6, n_clusters=3,
                          random_state=3)


def _fit(X, **params):
    params.setdefault("n_clusters", 3)
    params.setdefault("random_state", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_selector("scfs", **params).fit(X)


# -- G stays non-negative and finite; the printed rule does not ------------------------------
@pytest.mark.parametrize("gamma", [1e6, 1e-2, 0.0])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e4, 1e-2), (1e-2, 1e2)])
def test_split_rule_keeps_G_nonnegative_and_finite_on_zscored_data(data, gamma, alpha, beta):
    X = zscore(data.X)
    assert X.min() < 0
    sel = _fit(X, alpha=alpha, beta=beta, gamma=gamma, max_iter=60, tol=0.0)
    assert sel.n_iter_ == 60                                  # no early break on a bad G
    g_min = np.asarray(sel.g_min_history_)
    assert np.all(np.isfinite(g_min)) and np.all(g_min >= 0)
    assert np.all(np.isfinite(sel.G_)) and sel.G_.min() >= 0
    assert np.all(np.isfinite(sel.scores_))


def test_printed_rule_breaks_on_zscored_data_where_split_does_not(data):
    X = zscore(data.X)
    printed = _fit(X, update="printed", gamma=1e-2, max_iter=100, tol=0.0)
    g_min = np.asarray(printed.g_min_history_)
    assert np.any(~np.isfinite(g_min) | (g_min < 0))           # negative or NaN G
    split = _fit(X, update="split", gamma=1e-2, max_iter=100, tol=0.0)
    assert np.all(np.asarray(split.g_min_history_) >= 0)


def test_non_finite_G_stops_with_warning_and_keeps_last_finite_W(data, monkeypatch):
    calls = []

    def g_step(self, X, G, XW, Bneg, ngamma, KG=None):
        calls.append(1)
        return G * (np.nan if len(calls) == 4 else 1.0)

    monkeypatch.setattr(SCFS, "_g_step", g_step)
    with pytest.warns(Warning, match="non-finite"):
        sel = make_selector("scfs", n_clusters=3, random_state=0, update="printed",
                            max_iter=50, tol=0.0).fit(data.X)
    assert sel.n_iter_ == 4 and np.isnan(sel.g_min_history_[-1])
    assert len(sel.objective_history_) == 3
    assert np.all(np.isfinite(sel.W_)) and np.all(np.isfinite(sel.G_))


# -- the derivation of the G-step -----------------------------------------------------------
def test_split_gradient_equals_numerical_gradient_of_objective():
    """grad+ - grad- must be the gradient of (13) in G (checks M, the n*gamma and Eq. (10))."""
    rng = np.random.default_rng(1)
    n, p, c, alpha, gamma = 12, 7, 3, 0.7, 0.3
    X = rng.standard_normal((n, p))
    G = rng.uniform(0.1, 1.0, (n, c))
    W = rng.standard_normal((p, c))
    num, den = split_gradient(X, G, X @ W, negative_part_of_B(X, n * gamma), n * gamma, alpha)
    assert num.min() >= 0 and den.min() >= 0
    analytic = 2 * (den - num)
    h, numeric = 1e-6, np.zeros_like(G)
    for i in range(n):
        for j in range(c):
            E = np.zeros_like(G)
            E[i, j] = h
            numeric[i, j] = (scfs_objective(X, G + E, W, alpha, 1.0, gamma)
                             - scfs_objective(X, G - E, W, alpha, 1.0, gamma)) / (2 * h)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)


def test_split_rule_with_exponent_one_is_eq11_on_nonnegative_terms():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (15, 8))
    G = rng.uniform(0.1, 1, (15, 3))
    XW = rng.uniform(0, 1, (15, 3))                            # X W >= 0: nothing to split
    sel = SCFS(alpha=0.5, update="split", exponent=1.0)
    Bneg = negative_part_of_B(X, 15 * 2.0)
    assert Bneg.nnz == 0
    split = sel._g_step(X, G, XW, Bneg, 15 * 2.0)
    sel.update = "printed"
    np.testing.assert_allclose(split, sel._g_step(X, G, XW, Bneg, 15 * 2.0), rtol=1e-12)


def test_objective_uses_the_n_by_n_matrix_of_ones():
    rng = np.random.default_rng(3)
    n, p, c = 9, 5, 2
    X, G, W = rng.standard_normal((n, p)), rng.uniform(0, 1, (n, c)), rng.standard_normal((p, c))
    ones = np.ones((n, n))
    expected = (np.linalg.norm(X - G @ G.T @ X) ** 2 + 2.0 * np.linalg.norm(X @ W - G) ** 2
                + 3.0 * np.linalg.norm(W, axis=1).sum()
                + 4.0 * np.linalg.norm(G @ G.T @ ones - ones) ** 2)
    assert scfs_objective(X, G, W, 2.0, 3.0, 4.0) == pytest.approx(expected, rel=1e-12)


def test_negative_part_of_B_matches_dense():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((37, 6))
    dense = np.maximum(-(X @ X.T + 0.5), 0)
    got = negative_part_of_B(X, 0.5, block=8)
    assert sparse.issparse(got) and got.nnz > 0
    np.testing.assert_allclose(got.toarray(), dense)


def test_first_iteration_is_algorithm_1_by_hand(data):
    """D0 = I, W1 by Eq. (6) from G0, G1 from (W1, G0) with M = (X X^T + n gamma 1) G0."""
    X, alpha, beta, gamma = zscore(data.X), 0.5, 3.0, 0.7
    n, p = X.shape
    sel = _fit(X, alpha=alpha, beta=beta, gamma=gamma, max_iter=1, random_state=4)
    G0 = scfs_start(X, 3, "kmeans", np.random.RandomState(4))
    W1 = np.linalg.solve(alpha * X.T @ X + beta * np.eye(p), alpha * X.T @ G0)
    num, den = split_gradient(X, G0, X @ W1, negative_part_of_B(X, n * gamma), n * gamma, alpha)
    np.testing.assert_allclose(sel.W_, W1, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(sel.G_, G0 * (num / den) ** 0.25, rtol=1e-12)
    assert sel.objective_history_ == [pytest.approx(
        scfs_objective(X, sel.G_, W1, alpha, beta, gamma), rel=1e-12)]


# -- monotonicity --------------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [1e6, 1e-2, 0.0])
def test_g_step_with_exponent_quarter_never_increases_objective(gamma):
    """The proven part: one split G-step (eta = 1/4) does not increase (13) for fixed W."""
    rng = np.random.default_rng(5)
    n, p, c = 25, 10, 3
    sel = SCFS(alpha=0.8, gamma=gamma, update="split", exponent=0.25)
    for _ in range(20):
        X = rng.standard_normal((n, p))
        W = rng.standard_normal((p, c))
        G = rng.uniform(0.01, 1.5, (n, c))
        Bneg = negative_part_of_B(X, n * gamma)
        G_new = sel._g_step(X, G, X @ W, Bneg, n * gamma)
        before = scfs_objective(X, G, W, 0.8, 1.0, gamma)
        after = scfs_objective(X, G_new, W, 0.8, 1.0, gamma)
        assert after <= before * (1 + 1e-12)


@pytest.mark.parametrize("gamma", [1e6, 1e-2])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (1e2, 1e-2), (1e-2, 1e2), (1e-4, 1e4)])
def test_objective_non_increasing_default_rule(data, gamma, alpha, beta):
    X = zscore(data.X)
    sel = _fit(X, alpha=alpha, beta=beta, gamma=gamma, max_iter=80)
    h = np.asarray(sel.objective_history_)
    assert len(h) >= 2
    # (13) with the exact l2,1 norm may rise by at most beta * p * sqrt(eps) (smoothed D).
    slack = 1e-10 * np.abs(h[:-1]) + beta * X.shape[1] * np.sqrt(sel.eps)
    assert np.all(np.diff(h) <= slack)


def test_exponent_one_is_not_monotone_in_general():
    """Why the default exponent is 1/4: the paper's step size can increase (13)."""
    X = make_synthetic(n_samples=60, n_features=40, n_informative=6, n_clusters=3,
                       random_state=0).X
    h = np.asarray(_fit(X, exponent=1.0, gamma=1.0, max_iter=200).objective_history_)
    assert np.max(np.diff(h)) > 1e-3 * np.abs(h).max()
    h = np.asarray(_fit(X, exponent=0.25, gamma=1.0, max_iter=200).objective_history_)
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1]) + X.shape[1] * 1e-4)


# -- the W-step -----------------------------------------------------------------------------
@pytest.mark.parametrize("n,p", [(20, 50), (40, 15)])
def test_w_step_forms_equal_direct_inverse_of_eq6(n, p):
    rng = np.random.default_rng(6)
    X = rng.standard_normal((n, p))
    G = rng.uniform(0, 1, (n, 3))
    d = rng.uniform(0.05, 20.0, p)
    alpha, beta = 0.7, 2.5
    direct = np.linalg.inv(alpha * X.T @ X + beta * np.diag(d)) @ (alpha * X.T @ G)
    for solver in ("primal", "dual", "auto"):
        np.testing.assert_allclose(scfs_w_step(X, G, d, alpha, beta, solver), direct,
                                   rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n", [40, 90])
def test_w_step_solver_choice_does_not_change_fit(data, n):
    """p = 60 > n = 40, and p < n = 90, where the primal form's X^T G also serves the G-step's
    X (X^T G) (the dual form's G-step forms its own)."""
    X = zscore(data.X)[:n]
    for gamma in (1e6, 1e-2):                 # a small gamma: X (X^T G) dominates the G-step
        a = _fit(X, solver="primal", gamma=gamma, max_iter=15, tol=0.0)
        b = _fit(X, solver="dual", gamma=gamma, max_iter=15, tol=0.0)
        np.testing.assert_allclose(a.scores_, b.scores_, rtol=1e-7, atol=1e-12)
        np.testing.assert_allclose(a.G_, b.G_, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("old, new", [(dict(w_solver="dual"), dict(solver="dual")),
                                      (dict(epsilon=1e-6), dict(eps=1e-6)),
                                      (dict(preprocess=None), dict(preprocess="none"))])
def test_deprecated_names_warn_and_fit_as_the_new_ones(data, old, new):
    X = zscore(data.X)[:40]
    with pytest.warns(FutureWarning, match="deprecated"):
        a = make_selector("scfs", n_clusters=3, random_state=0, max_iter=5, tol=0.0,
                          **old).fit(X)
    b = _fit(X, max_iter=5, tol=0.0, **new)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert a.objective_history_ == b.objective_history_


# -- selection quality, determinism, stopping, init ------------------------------------------
@pytest.mark.parametrize("alpha,beta", [(1.0, 1e2), (1e-2, 1.0), (1e-4, 1e-2)])
def test_planted_features_rank_above_noise(data, alpha, beta):
    sel = _fit(data.X, alpha=alpha, beta=beta)
    informative = np.zeros(data.X.shape[1], dtype=bool)
    informative[data.informative] = True
    assert sel.scores_[informative].min() > sel.scores_[~informative].max()
    assert set(sel.top_features(len(data.informative))) == set(data.informative)


def test_weak_l21_lets_noise_fit_the_offset_of_G(data):
    """Documented limitation: at beta/alpha = 1 (no intercept in Eq. (2)) noise features absorb
    the constant part of G and outrank planted ones; the default beta/alpha = 100 does not."""
    weak = _fit(data.X, alpha=1.0, beta=1.0)
    assert len(set(weak.top_features(6)) & set(data.informative)) < 6
    default = _fit(data.X)
    assert set(default.top_features(6)) == set(data.informative)


def test_shift_preprocess_is_fit_on_min_shifted_data(data):
    shifted = _fit(data.X, preprocess="shift")
    manual = _fit(data.X - data.X.min(axis=0))
    np.testing.assert_allclose(shifted.scores_, manual.scores_, rtol=1e-10)
    informative = np.zeros(data.X.shape[1], dtype=bool)
    informative[data.informative] = True
    # Without an intercept the feature means also carry weight, so only the bulk is asserted.
    assert np.median(shifted.scores_[informative]) > 2 * np.median(shifted.scores_[~informative])


def test_labels_recover_clusters(data):
    from ufsbench.evaluation import clustering_accuracy
    sel = _fit(data.X)
    assert clustering_accuracy(data.y, sel.labels_) > 0.95


@pytest.mark.parametrize("init", ["kmeans", "random"])
def test_deterministic_for_fixed_seed(data, init):
    a = _fit(data.X, init=init, random_state=7)
    b = _fit(data.X, init=init, random_state=7)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.G_, b.G_)
    assert a.objective_history_ == b.objective_history_
    if init == "random":
        c = _fit(data.X, init=init, random_state=8)
        assert not np.array_equal(a.G_, c.G_)


def test_initial_G_is_positive_kmeans_indicator_scaled_to_constraint(data):
    G0 = scfs_start(data.X, 3, "kmeans", np.random.RandomState(0))
    assert G0.min() > 0
    v = G0 @ G0.sum(axis=0)
    assert v.sum() == pytest.approx(v @ v, rel=1e-10)          # optimal scale for G G^T e = e
    from ufsbench.evaluation import clustering_accuracy
    assert clustering_accuracy(data.y, G0.argmax(axis=1)) > 0.95


def test_stopping_rule_and_bookkeeping(data):
    sel = _fit(data.X, tol=1e-5)
    h = sel.objective_history_
    assert sel.converged_ and len(h) == sel.n_iter_ < sel.max_iter
    assert abs(h[-2] - h[-1]) <= 1e-5 * abs(h[-1])
    assert all(abs(h[i - 1] - h[i]) > 1e-5 * abs(h[i]) for i in range(1, len(h) - 1))
    capped = _fit(data.X, tol=0.0, max_iter=3)
    assert capped.n_iter_ == 3 and not capped.converged_


@pytest.mark.parametrize("params", [dict(alpha=0), dict(beta=-1.0), dict(gamma=-1.0),
                                    dict(update="lee"), dict(exponent=0.0), dict(exponent=2),
                                    dict(init="svd"), dict(solver="qr"), dict(max_iter=0),
                                    dict(preprocess="zscore"), dict(eps=0.0),
                                    dict(w_solver="qr"), dict(epsilon=0.0)])
def test_bad_parameters_raise(data, params):
    (name,) = params
    with pytest.raises(UFSBenchError, match=f"'{name}' parameter of SCFS"):
        make_selector("scfs", **params).fit(data.X)


def test_config_matches_paper_grid():
    cfg = yaml.safe_load(CONFIG.read_text())
    assert cfg["name"] == "scfs"
    grid = [1e-4, 1e-2, 1.0, 1e2, 1e4]
    assert cfg["grid"]["alpha"] == grid and cfg["grid"]["beta"] == grid
    assert cfg["params"]["gamma"] == 1e6
    known = set(method_parameters("scfs"))
    assert set(cfg["params"]) | set(cfg["grid"]) | set(cfg["default"]) <= known


# -- the released preset's switches: the fuzzy c-means start, a given G0, X + |min X|, ridge ----
def _reference_case(name):
    from ufsbench.conformance import load_case, reference_dir

    directory = reference_dir()
    path = None if directory is None else directory / f"{name}.json"
    if path is None or not path.is_file():
        pytest.skip(f"reference case {name} not present")
    return load_case(path)


@pytest.mark.parametrize("case_id", ["scfs__jaffe__a1_b1_seed1", "scfs__srbct__a1_b1_seed2"])
def test_cmeans_start_draws_the_authors_u0_and_reaches_their_G0(case_id):
    from ufsbench.conformance import case_data
    from ufsbench.numerics.fuzzy_cmeans import cmeans_start

    case = _reference_case(case_id)
    X = case_data(case)
    X = X + abs(X.min())
    seed = int(case_id[-1])                               # np.random.seed(seed) before scfs()
    G0 = cmeans_start(X, case["params"]["n_clusters"], np.random.RandomState(seed))
    np.testing.assert_allclose(G0, case["init"]["G0_n_by_c"], atol=1e-12)


def test_a_given_G0_is_used_as_it_is_by_the_printed_rule(data):
    X, alpha, beta, gamma = data.X - data.X.min(), 0.5, 3.0, 10.0
    n, p = X.shape
    G0 = np.random.default_rng(0).uniform(0.05, 0.5, (n, 3))
    sel = _fit(X, alpha=alpha, beta=beta, gamma=gamma, update="printed", init=G0, ridge=1e-3,
               max_iter=1)
    W1 = np.linalg.solve(alpha * X.T @ X + beta * np.eye(p) + 1e-3 * np.eye(p),
                         alpha * X.T @ G0)
    M = (X @ X.T + n * gamma) @ G0
    G1 = G0 * (2 * M + alpha * X @ W1) / (M @ G0.T @ G0 + G0 @ G0.T @ M + alpha * G0)
    np.testing.assert_allclose(sel.W_, W1, rtol=1e-8, atol=1e-14)
    np.testing.assert_allclose(sel.G_, G1, rtol=1e-10)
    again = _fit(X, alpha=alpha, beta=beta, gamma=gamma, update="printed", init=G0, ridge=1e-3,
                 max_iter=1, random_state=9)
    np.testing.assert_array_equal(again.scores_, sel.scores_)       # the seed plays no part


@pytest.mark.parametrize("G0", [np.ones((5, 3)), -np.ones((90, 3)), np.full((90, 3), np.nan)])
def test_a_malformed_G0_is_refused(data, G0):
    with pytest.raises(UFSBenchError, match="init"):
        make_selector("scfs", n_clusters=3, init=G0).fit(data.X)


def test_offset_preprocess_adds_the_absolute_minimum_to_every_entry(data):
    X = zscore(data.X)
    offset = _fit(X, preprocess="offset", max_iter=20)
    manual = _fit(X + abs(X.min()), max_iter=20)
    np.testing.assert_array_equal(offset.scores_, manual.scores_)


# -- the W-step forms and the sparse products ---------------------------------------------------
def _w_steps(X, G, d, alpha, beta, ridge, solvers):
    from ufsbench.methods.scfs import WStep, sparse_form
    Xop = sparse_form(X)
    return {s: WStep(X, Xop, s, alpha, beta, ridge)(G, d) for s in solvers}


@pytest.mark.parametrize("density", [1.0, 0.05])                    # dense and CSR products
@pytest.mark.parametrize("ridge", [0.0, 0.3])
def test_w_step_forms_solve_eq6_with_its_ridge(density, ridge):
    rng = np.random.default_rng(6)
    n, p = 30, 80
    X = rng.standard_normal((n, p)) * (rng.random((n, p)) < density)
    G = rng.uniform(0, 1, (n, 3))
    d = rng.uniform(0.05, 20.0, p)
    alpha, beta = 0.7, 2.5
    direct = np.linalg.solve(alpha * X.T @ X + beta * np.diag(d) + ridge * np.eye(p),
                             alpha * X.T @ G)
    for solver, (W, XW) in _w_steps(X, G, d, alpha, beta, ridge,
                                    ["primal", "dual", "cg", "auto"]).items():
        np.testing.assert_allclose(W, direct, rtol=1e-8, atol=1e-11, err_msg=solver)
        np.testing.assert_allclose(XW, X @ direct, rtol=1e-8, atol=1e-11, err_msg=solver)
    np.testing.assert_allclose(scfs_w_step(X, G, d, alpha, beta, "dual", ridge), direct,
                               rtol=1e-8, atol=1e-11)


def test_cg_that_does_not_converge_hands_over_to_cholesky_whose_factor_preconditions_later_steps(
        monkeypatch):
    from ufsbench.methods import scfs

    rng = np.random.default_rng(2)
    X = rng.standard_normal((25, 60)) * 1e3
    G = rng.uniform(0, 1, (25, 2))
    d = rng.uniform(1e-6, 1.0, 60)                       # badly conditioned n x n system
    monkeypatch.setattr(scfs, "CG_MAX_ITER", 1)
    step = scfs.WStep(X, X, "cg", 1.0, 1e-4, 0.0)
    direct = []
    solve = step._direct
    monkeypatch.setattr(step, "_direct", lambda G, inv: direct.append(1) or solve(G, inv))
    W, _ = step(G, d)                                    # the diagonal's CG fails: Cholesky
    np.testing.assert_allclose(W, scfs_w_step(X, G, d, 1.0, 1e-4, "dual"), rtol=1e-7, atol=1e-12)
    assert direct == [1] and step.diagonal_works and step.factor is not None
    for k in (1.001, 1.002):              # it fails warm too: then the factor's PCG, no Cholesky
        W, _ = step(G, k * d)
        np.testing.assert_allclose(W, scfs_w_step(X, G, k * d, 1.0, 1e-4, "dual"), rtol=1e-7,
                                   atol=1e-12)
    assert direct == [1] and not step.diagonal_works
    monkeypatch.setattr(scfs, "CG_FACTOR_MAX_ITER", 0)  # a PCG that fails: a new factor
    step(G, 3 * d)
    assert direct == [1, 1]


def test_sparse_data_fit_equals_the_dense_fit(data, monkeypatch):
    """A mostly-zero X is multiplied as CSR and its W-step solved by CG: the same fit as the
    dense products and the Cholesky dual (round-off), the same number of iterations."""
    from ufsbench.methods import scfs

    rng = np.random.default_rng(3)
    noise = np.abs(rng.standard_normal((40, 200))) * (rng.random((40, 200)) < 0.03)
    X = np.hstack([noise, np.abs(data.X[:40, data.informative])])  # 6 % non-zero, p > n
    assert scfs.sparse.issparse(scfs.sparse_form(X))
    sparse_fit = _fit(X, max_iter=40)
    monkeypatch.setattr(scfs, "SPARSE_DENSITY", 0.0)
    dense_fit = _fit(X, max_iter=40)
    assert sparse_fit.n_iter_ == dense_fit.n_iter_
    np.testing.assert_allclose(sparse_fit.scores_, dense_fit.scores_, rtol=1e-8,
                               atol=1e-10 * dense_fit.scores_.max())
    np.testing.assert_allclose(sparse_fit.objective_history_, dense_fit.objective_history_,
                               rtol=1e-10)


def test_wide_dense_fit_through_X_Xt_equals_the_plain_products(wide_data, monkeypatch):
    """p > n: K G from K = X X^T, (13)'s first term from K G and X W = A Y - Y from the dual's A
    give the fit the plain products X (X^T G), X W and the residual give (round-off)."""
    from ufsbench.methods import scfs

    X = wide_data.X
    K = X @ X.T
    G = np.random.default_rng(0).uniform(0.1, 1, (X.shape[0], 3))
    assert scfs._gram_reconstruction_error(K, G, K @ G) == pytest.approx(
        scfs._reconstruction_error(X, G), rel=1e-12)
    fast = _fit(X, max_iter=60)
    monkeypatch.setattr(scfs, "outer_gram", lambda X, Xop: None)
    monkeypatch.setattr(scfs.WStep, "_dual", lambda self, G, reg: (
        solve := scfs.solve_gram_plus_diag(self.X, G, reg, method="dual"), self.X @ solve))
    plain = _fit(X, max_iter=60)
    assert fast.n_iter_ == plain.n_iter_
    np.testing.assert_allclose(fast.scores_, plain.scores_, rtol=1e-9,
                               atol=1e-12 * plain.scores_.max())
    np.testing.assert_allclose(fast.objective_history_, plain.objective_history_, rtol=1e-11)


def test_empty_negative_part_is_known_without_forming_X_Xt():
    rng = np.random.default_rng(4)
    X = rng.random((30, 8))                                        # X >= 0
    assert negative_part_of_B(X, 0.0).nnz == 0
    Z = rng.standard_normal((30, 8))
    shift = np.einsum("ij,ij->i", Z, Z).max()                      # every |x_i.x_j| <= shift
    got = negative_part_of_B(Z, shift)
    assert got.nnz == 0
    np.testing.assert_array_equal(got.toarray(), np.maximum(-(Z @ Z.T + shift), 0))


def test_a_fit_the_cap_ends_warns_and_a_converged_one_does_not(data):
    from sklearn.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        capped = make_selector("scfs", n_clusters=3, random_state=0, max_iter=3,
                               tol=0.0).fit(data.X)
    assert capped.n_iter_ == 3 and not capped.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        done = make_selector("scfs", n_clusters=3, random_state=0).fit(data.X)
    assert done.converged_ and done.n_iter_ < done.max_iter
