"""Tests of MCFS (Cai, Zhang & He, KDD 2010): embedding, cardinality, planted features."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.mcfs import (
    CardinalityCoefficients,
    best_step,
    coefficients_for,
    sparse_spectral_coefficients,
    spectral_lars_paths,
)
from ufsbench.numerics import knn_graph
from ufsbench.numerics.lars import SparseLarsPath
from ufsbench.numerics.linalg import eigh_largest
from ufsbench.numerics.spectral import generalized_spectral_embedding
from ufsbench.testing import requires_data


@pytest.fixture(scope="module")
def data():
    # separation 2: the kNN graph has two components, so the trivial eigenvalue 0 is double and
    # the deflation of the constant vector is exercised; the other eigenvalues are distinct.
    return make_synthetic(n_samples=90, n_features=60, n_informative=6, n_clusters=3,
                          separation=2.0, random_state=0)


@pytest.fixture(scope="module")
def fitted(data):
    return make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(data.X)


def test_embedding_is_generalised_eigenbasis(data):
    S = knn_graph(data.X, k=5, weight="heat", sigma=None)
    D = np.diag(S.sum(axis=1))
    Y, lam = generalized_spectral_embedding(S, 3)
    assert np.allclose(Y.T @ D @ Y, np.eye(3), atol=1e-10)          # Y^T D Y = I
    assert np.allclose(Y.T @ D @ np.ones(len(Y)), 0.0, atol=1e-10)  # trivial vector dropped
    assert np.allclose((D - S) @ Y, D @ Y * lam, atol=1e-10)         # L Y = D Y Lambda
    assert np.all(lam > -1e-10) and np.all(np.diff(lam) >= -1e-12)


def test_exact_cardinality_and_nonnegative_scores(fitted, data):
    assert np.all(fitted.cardinality_ == 6)
    assert np.all(np.count_nonzero(fitted.coef_, axis=0) == 6)
    assert np.allclose(np.linalg.norm(fitted.coef_, axis=0), 1.0)
    assert np.all(fitted.scores_ >= 0)
    assert np.array_equal(fitted.scores_, np.abs(fitted.coef_).max(axis=1))
    assert fitted.support_.sum() == 6


def test_cardinality_above_n_samples_reachable_with_ridge():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 50))
    Y = rng.standard_normal((20, 2))
    A, reached = sparse_spectral_coefficients(X, Y, cardinality=30, ridge=1e-3)
    assert np.all(reached == 30)
    assert np.all(np.count_nonzero(A, axis=0) == 30)


def test_feature_equal_to_eigenvector_has_top_score():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 25))
    Y = rng.standard_normal((40, 2))
    X[:, 7] = -3.0 * Y[:, 0]           # negative multiple: the score must use |coef|
    A, _ = sparse_spectral_coefficients(X, Y, cardinality=5)
    scores = np.abs(A).max(axis=1)
    assert np.argmax(scores) == 7
    assert A[7, 0] < 0


def test_planted_features_selected(fitted, data):
    # The 2 cluster eigenvectors regress on the planted features only; with K = c = 3 the third
    # (within-cluster) eigenvector adds noise features, so the planted ones fill the top 10.
    sel = make_selector("mcfs", n_clusters=3, n_features_to_select=6, n_components=2)
    assert set(np.flatnonzero(sel.fit(data.X).support_)) == set(data.informative)
    sel = make_selector("mcfs", n_clusters=3, n_features_to_select=10).fit(data.X)
    assert set(data.informative) <= set(np.flatnonzero(sel.support_))


def test_deterministic_and_feature_permutation_equivariant():
    # A connected graph with distinct eigenvalues (the embedding is then unique up to sign).
    X = make_synthetic(n_samples=90, n_features=40, n_informative=6, n_clusters=3,
                       separation=1.5, random_state=0).X
    a = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(X)
    b = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(X)
    assert np.array_equal(a.scores_, b.scores_)
    assert np.min(np.diff(a.eigenvalues_)) > 1e-3
    perm = np.random.default_rng(3).permutation(X.shape[1])
    c = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(X[:, perm])
    assert np.allclose(c.scores_, a.scores_[perm], atol=1e-8)


def test_refit_per_count_is_subset_kind(data):
    sel = make_selector("mcfs", n_clusters=3, n_features_to_select=10).fit(data.X)
    assert sel.selection_kind == "subset" and sel.one_fit_serves_counts
    assert np.array_equal(sel.top_features(10), np.flatnonzero(sel.support_))
    for bad in (11, 60, 0):
        with pytest.raises(UFSBenchError, match="n_features_to_select=10"):
            sel.top_features(bad)


def _reference_support(X, Y, h, ridge=1e-3):
    """MCFS stage 2 + Eq. 5 written independently: scikit-learn's whole lasso path on the formed
    Gram (no cardinality stop, no scaling), its first step with h non-zeros (Cai's stop)."""
    n, d = X.shape
    gram = X.T @ X
    gram[np.diag_indices(d)] += ridge
    coefs = np.zeros((d, Y.shape[1]))
    for j in range(Y.shape[1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            _, _, path = lars_path_gram(X.T @ Y[:, j], gram, n_samples=n, method="lasso",
                                        max_iter=8 * d)
        a = path[:, np.flatnonzero(np.count_nonzero(path, axis=0) == h)[0]]
        coefs[:, j] = a / np.linalg.norm(a)
    scores = np.abs(coefs).max(axis=1)
    return np.sort(np.lexsort((np.arange(d), -scores))[:h])


@pytest.mark.parametrize("weight", ["heat", "binary"])
@pytest.mark.parametrize("n, d", [(40, 120), (60, 30)])   # implicit-Gram path; formed Gram
def test_one_fit_serves_every_smaller_count_exactly(weight, n, d):
    # fit(H).top_features(h) is the subset a refit with n_features_to_select = h selects, bit
    # for bit (same coefficients too), for h below, at and between the steps of the path.
    X = make_synthetic(n_samples=n, n_features=d, n_informative=6, n_clusters=3,
                       separation=1.0, random_state=d).X
    H = 24
    one = make_selector("mcfs", n_clusters=3, n_features_to_select=H, weight=weight).fit(X)
    for h in (1, 3, 7, 12, 19, H):
        refit = make_selector("mcfs", n_clusters=3, n_features_to_select=h, weight=weight).fit(X)
        assert np.array_equal(one.top_features(h), np.flatnonzero(refit.support_))
        coef, reached = coefficients_for(one._path_steps, h)
        assert np.array_equal(coef, refit.coef_) and np.array_equal(reached, refit.cardinality_)
        if d <= n:   # the formed-Gram path: the same arithmetic as the reference
            assert np.array_equal(refit.top_features(h),
                                  _reference_support(X, refit.embedding_, h))


@pytest.mark.parametrize("solver", ["implicit", "gram"])
def test_shorter_path_is_a_bitwise_prefix(solver):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 70))
    Y = rng.standard_normal((30, 2))
    long = spectral_lars_paths(X, Y, 40, solver=solver)
    for h in (2, 9, 25):
        for short, full in zip(spectral_lars_paths(X, Y, h, solver=solver), long):
            # the short path ends at its first step with h non-zeros
            assert short.nnz()[-1] == h and np.all(short.nnz()[:-1] < h)
            for s in range(len(short)):
                assert np.array_equal(short.coef(s), full.coef(s))


def test_implicit_and_gram_select_the_same_subsets_for_every_count():
    # The runner's one fit at H = 30 on the implicit path against the formed-Gram reference.
    X = make_synthetic(n_samples=40, n_features=150, n_informative=6, n_clusters=3,
                       separation=1.0, random_state=7).X
    one = make_selector("mcfs", n_clusters=3, n_features_to_select=30).fit(X)
    for h in (5, 10, 20, 30):
        assert np.array_equal(one.top_features(h), _reference_support(X, one.embedding_, h))


def test_bad_parameters(data):
    with pytest.raises(UFSBenchError, match="n_components"):
        make_selector("mcfs", n_components=500).fit(data.X)
    with pytest.raises(UFSBenchError, match="'ridge' parameter"):
        make_selector("mcfs", ridge=-1.0).fit(data.X)


@pytest.mark.parametrize("n, d, K, h", [(40, 150, 3, 10), (30, 200, 2, 45), (60, 25, 3, 8)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_implicit_lars_equals_gram_form(n, d, K, h, seed):
    # The implicit-Gram LARS (used for d > n) against scikit-learn on the formed d x d Gram (the
    # form MCFS uses for d <= n): same supports, coefficients to round-off,
    # same selection; d > n with h < n and h > n (the ridge lets the path pass n), and d < n.
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, K))
    A_gram, r_gram = sparse_spectral_coefficients(X, Y, cardinality=h, solver="gram")
    A_impl, r_impl = sparse_spectral_coefficients(X, Y, cardinality=h, solver="implicit")
    assert np.array_equal(r_gram, r_impl)
    assert np.array_equal(A_gram != 0, A_impl != 0)
    assert np.max(np.abs(A_gram - A_impl)) < 1e-8
    top = [np.sort(np.argsort(-np.abs(A).max(axis=1), kind="stable")[:h]) for A in (A_gram, A_impl)]
    assert np.array_equal(*top)


def test_selector_same_selection_with_either_solver(monkeypatch):
    # d > n: the selector takes the implicit path ("auto"); forcing the Gram form changes nothing.
    X = make_synthetic(n_samples=40, n_features=300, n_informative=6, n_clusters=3,
                       separation=2.0, random_state=1).X
    fast = make_selector("mcfs", n_clusters=3, n_features_to_select=12).fit(X)
    import ufsbench.methods.mcfs as mcfs_module

    defaults = list(mcfs_module.sparse_spectral_coefficients.__defaults__)
    defaults[-1] = "gram"
    monkeypatch.setattr(mcfs_module.sparse_spectral_coefficients, "__defaults__", tuple(defaults))
    slow = make_selector("mcfs", n_clusters=3, n_features_to_select=12).fit(X)
    assert np.array_equal(fast.support_, slow.support_)
    assert np.max(np.abs(fast.coef_ - slow.coef_)) < 1e-8


def test_unknown_solver():
    with pytest.raises(ValueError, match="solver"):
        sparse_spectral_coefficients(np.eye(3), np.ones((3, 1)), 1, solver="dense")


def test_sparse_embedding_equals_dense_embedding(data):
    # Large n: sparse graph + Lanczos (implicit deflation) gives the dense eigenvectors.
    from ufsbench.numerics.graphs import sparse_knn_graph

    S = knn_graph(data.X, k=5, weight="heat", sigma=None)
    Y, lam = generalized_spectral_embedding(S, 3)
    Ys, lams = generalized_spectral_embedding(
        sparse_knn_graph(data.X, k=5, weight="heat", sigma=None, large=True), 3)
    np.testing.assert_allclose(lams, lam, atol=1e-9)
    np.testing.assert_allclose(Ys, Y, atol=1e-7)


def test_large_n_path_selects_the_same_features(data, monkeypatch):
    from ufsbench.numerics import graphs

    dense = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(data.X)
    monkeypatch.setattr(graphs, "SPARSE_MIN_SAMPLES", 2)
    large = make_selector("mcfs", n_clusters=3, n_features_to_select=6).fit(data.X)
    assert np.array_equal(dense.support_, large.support_)
    np.testing.assert_allclose(large.scores_, dense.scores_, atol=1e-7)


def test_best_step_is_the_first_arrival_at_the_count():
    # Cai's lars.m run for h stops at its first step with h variables: later returns to h (after
    # drops) and anything beyond that first arrival must not matter.
    nnz = np.r_[np.arange(30), np.full(10, 3), 1, np.arange(2, 20)]
    assert best_step(nnz, 1) == 1
    assert best_step(nnz, 3) == 3                    # not the plateau of 3 at steps 30-39
    assert best_step(nnz, 25) == 25
    assert best_step(nnz[:4], 3) == best_step(nnz, 3)
    # a path that ends below h: the last step with its largest count
    assert best_step(np.array([0, 1, 2, 3, 2, 3, 2]), 5) == 5
    # a count skipped (two variables at once): the last step below it before the jump
    assert best_step(np.array([0, 1, 2, 4, 3, 4, 5]), 3) == 2


@pytest.mark.parametrize("solver", ["implicit", "gram"])
def test_path_stops_at_the_first_arrival_even_after_many_drops(solver):
    # A response no sparse model fits (noise on correlated columns) makes the lasso drop
    # variables often, so the count arrives after more than 2h + 20 steps: the gram solver
    # must extend its run (doubling) and still stop exactly at the first arrival.
    rng = np.random.default_rng(11)
    n, d = (40, 120) if solver == "implicit" else (200, 60)
    base = rng.standard_normal((n, 8))
    X = base @ rng.standard_normal((8, d)) + 0.05 * rng.standard_normal((n, d))
    y = rng.standard_normal(n)
    full = spectral_lars_paths(X, y[:, None], 10 ** 6, solver=solver)[0]   # no stop reached
    nnz = full.nnz()
    late = [h for h in range(1, nnz.max() + 1)
            if np.any(nnz == h) and np.flatnonzero(nnz >= h)[0] > 2 * h + 20]
    assert late, "the data must make some count arrive late"
    for h in late[:3] + [int(nnz.max() // 2)]:
        first = int(np.flatnonzero(nnz >= h)[0])
        (short,) = spectral_lars_paths(X, y[:, None], h, solver=solver)
        assert len(short) == first + 1
        for step in range(len(short)):
            assert np.array_equal(short.coef(step), full.coef(step))


def test_counts_above_the_reachable_cardinality_without_ridge():
    # ridge = 0, d > n: the path never passes n non-zeros, so h > n takes "the last step with the
    # largest cardinality below h" -- among the h-fit's own steps, which the one fit must respect.
    X = make_synthetic(n_samples=24, n_features=90, n_informative=6, n_clusters=3,
                       separation=1.0, random_state=3).X
    one = make_selector("mcfs", n_clusters=3, n_features_to_select=40, ridge=0.0).fit(X)
    for h in (10, 23, 30, 40):
        refit = make_selector("mcfs", n_clusters=3, n_features_to_select=h, ridge=0.0).fit(X)
        assert np.array_equal(one.top_features(h), np.flatnonzero(refit.support_))
        assert np.array_equal(coefficients_for(one._path_steps, h)[0], refit.coef_)


@pytest.mark.parametrize("solver", ["implicit", "gram"])
def test_scaled_path_reaches_the_count_with_the_same_steps(solver):
    # Small-scale data: the unscaled path hits scikit-learn's absolute alpha <= float32 eps stop
    # long before h non-zeros (as unscaled MCFS paths on lymphoma or pix10p do). The power-of-two scale of y
    # must leave every step before that stop bitwise the same (times s) and reach h.
    from ufsbench.methods.mcfs import path_scale
    from ufsbench.numerics.lars import SparseLarsPath, lasso_lars_ridge_path

    rng = np.random.default_rng(5)
    X = 3e-6 * rng.standard_normal((30, 120))        # d > n: the implicit-Gram path
    y = rng.standard_normal(30)
    if solver == "gram":                              # d <= n: scikit-learn's lars_path_gram
        X, y = 3e-6 * rng.standard_normal((150, 40)), rng.standard_normal(150)
    n, d = X.shape
    h = 110 if solver == "implicit" else 35
    xy = X.T @ y
    s = path_scale(xy, n)
    assert s > 1 and np.log2(s) == int(np.log2(s))
    max_iter = 4 * h + 20        # an unscaled path stopped by alpha long before h non-zeros
    if solver == "implicit":
        plain = lasso_lars_ridge_path(X, xy, 1e-3, n_samples=n, max_iter=max_iter)
    else:
        gram = X.T @ X + 1e-3 * np.eye(d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            alphas, _, dense = lars_path_gram(xy, gram, n_samples=n, method="lasso",
                                              max_iter=max_iter)
        plain = SparseLarsPath.from_dense(alphas, dense)
    (scaled,) = spectral_lars_paths(X, y[:, None], h, solver=solver)
    assert plain.nnz().max() < h <= scaled.nnz().max()          # unscaled stops short of h
    for step in range(len(plain)):
        assert np.array_equal(scaled.coef(step), s * plain.coef(step))


@requires_data("lymphoma")
def test_mcfs_reaches_every_count_on_lymphoma():
    from ufsbench.datasets import load_dataset
    from ufsbench.testing import data_dir

    data = load_dataset("lymphoma", data_dir=data_dir(), download=False)
    fit = make_selector("mcfs", n_clusters=data.n_classes, n_features_to_select=300).fit(data.X)
    assert np.all(fit.cardinality_ == 300)        # unscaled: 127-194 per eigenvector
    assert np.all(fit.scores_[fit.support_] > 0)  # no count filled with zero scores


def test_a_drop_remainder_is_not_a_non_zero():
    # Step 3 adds c and drops b in the same step: b's coefficient is zero in exact arithmetic
    # but round-off may leave ~1e-17 of the largest, depending on the BLAS kernel. The count
    # must be Cai's ``vars`` (2 after step 3), so h = 3 is first reached at step 4, whatever
    # the remainder; counting it (as ``np.count_nonzero`` did) would stop at step 3.
    for remainder in (0.0, 1e-17, -3e-18):
        path = SparseLarsPath(
            n_features=5, alphas=np.linspace(5.0, 1.0, 5),
            active=[np.array([], dtype=int), np.array([0]), np.array([0, 1]),
                    np.array([0, 1, 2]), np.array([0, 2, 3])],
            coefs=[np.zeros(0), np.array([1.0]), np.array([1.5, 0.4]),
                   np.array([2.0, remainder, 0.5]), np.array([2.2, 0.7, 0.1])])
        assert list(path.nnz()) == [0, 1, 2, 2, 3]
        a, reached = CardinalityCoefficients(path, 3).coef(3)
        assert reached == 3 and np.array_equal(np.flatnonzero(a), [0, 2, 3])


@pytest.fixture(scope="module")
def four_components():
    # Well separated clusters: the k = 5 graph has 4 components, so lambda = 0 is triple after
    # the trivial vector is deflated, and the eigensolver's basis of it is decided by round-off.
    return make_synthetic(n_samples=80, n_features=40, n_informative=8, n_clusters=4,
                          separation=12.0, random_state=3)


def _rotate_null_space(monkeypatch, angle_seed):
    from scipy.stats import ortho_group

    from ufsbench.numerics import spectral

    def rotated(A, k):
        mu, U = eigh_largest(A, k)
        null = np.flatnonzero(np.abs(mu - mu[0]) < 1e-8)
        U = U.copy()
        U[:, null] = U[:, null] @ ortho_group.rvs(null.size, random_state=angle_seed)
        return mu, U

    monkeypatch.setattr(spectral, "eigh_largest", rotated)


def test_selection_does_not_depend_on_the_eigensolvers_basis(four_components, monkeypatch):
    X = four_components.X
    S = knn_graph(X, k=5, weight="heat", sigma=None)
    _, lam = generalized_spectral_embedding(S, 4)
    assert np.sum(lam < 1e-10) == 3                      # the null space is what is exercised
    reference = make_selector("mcfs", n_clusters=4, n_features_to_select=12).fit(X)
    for seed in (1, 2):
        _rotate_null_space(monkeypatch, seed)
        other = make_selector("mcfs", n_clusters=4, n_features_to_select=12).fit(X)
        np.testing.assert_allclose(other.embedding_, reference.embedding_, atol=1e-10)
        assert np.array_equal(other.support_, reference.support_)


def test_sparse_and_dense_embeddings_agree_on_a_multiple_eigenvalue(four_components):
    from ufsbench.numerics.graphs import sparse_knn_graph

    X = four_components.X
    Y, _ = generalized_spectral_embedding(knn_graph(X, k=5, weight="heat", sigma=None), 4)
    Ys, _ = generalized_spectral_embedding(
        sparse_knn_graph(X, k=5, weight="heat", sigma=None, large=True), 4)
    np.testing.assert_allclose(Ys, Y, atol=1e-7)


def test_warns_when_the_null_space_is_cut(four_components):
    S = knn_graph(four_components.X, k=5, weight="binary", sigma=None)
    with pytest.warns(RuntimeWarning, match="4 connected components"):
        generalized_spectral_embedding(S, 2)


def test_deprecated_n_eigenvectors_warns_and_sets_n_components(data):
    new = make_selector("mcfs", n_clusters=3, n_features_to_select=6, n_components=2).fit(data.X)
    with pytest.warns(FutureWarning, match="n_eigenvectors is deprecated.*use n_components"):
        old = make_selector("mcfs", n_clusters=3, n_features_to_select=6,
                            n_eigenvectors=2).fit(data.X)
    assert old.embedding_.shape[1] == 2
    assert np.array_equal(old.support_, new.support_)


def _dropping_data(n, d, seed=11):
    # Correlated columns: the lasso drops variables often, so counts recur along the path.
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((n, 8))
    return base @ rng.standard_normal((8, d)) + 0.05 * rng.standard_normal((n, d))


def _reference_sr_support(X, Y, h, P, ridge=1e-3):
    """Cai's SR.m asked for counts up to P, written independently on scikit-learn's whole lasso
    path (formed Gram): the path up to its first step with P non-zeros; for h, the last step
    during which h variables were active (the step's non-zeros and those it dropped)."""
    n, d = X.shape
    gram = X.T @ X
    gram[np.diag_indices(d)] += ridge
    coefs = np.zeros((d, Y.shape[1]))
    for j in range(Y.shape[1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            _, _, path = lars_path_gram(X.T @ Y[:, j], gram, n_samples=n, method="lasso",
                                        max_iter=8 * d)
        nonzero = np.abs(path) > 1e-12 * np.abs(path).max(axis=0, initial=1e-300)
        stop = np.flatnonzero(nonzero.sum(axis=0) >= P)[0]
        active = [nonzero[:, 0].sum()] + [np.sum(nonzero[:, s] | nonzero[:, s - 1])
                                          for s in range(1, stop + 1)]
        a = path[:, np.flatnonzero(np.array(active) == h)[-1]]
        coefs[:, j] = a / np.linalg.norm(a)
    scores = np.abs(coefs).max(axis=1)
    return np.sort(np.lexsort((np.arange(d), -scores))[:h])


@pytest.mark.parametrize("n, d", [(80, 40), (40, 120)])     # formed Gram; implicit Gram
def test_path_cardinality_takes_the_last_step_with_h_active_as_cais_sr(n, d):
    """MCFS_p asked for counts up to P: one path to P per eigenvector; count h takes the last
    step with h active variables, which after drops differs from the first arrival at h."""
    X = _dropping_data(n, d)
    P = 24
    one = make_selector("mcfs", n_clusters=3, n_features_to_select=P,
                        path_cardinality=P).fit(X)
    moved = 0
    for h in (4, 8, 10, 14, 20, P):
        refit = make_selector("mcfs", n_clusters=3, n_features_to_select=h,
                              path_cardinality=P).fit(X)
        assert np.array_equal(np.flatnonzero(refit.support_),
                              _reference_sr_support(X, refit.embedding_, h, P))
        assert np.array_equal(one.top_features(h), np.flatnonzero(refit.support_))
        per_count = make_selector("mcfs", n_clusters=3, n_features_to_select=h).fit(X)
        moved += not np.array_equal(per_count.support_, refit.support_)
    assert moved >= 2                     # the data make the two rules select differently


def test_path_cardinality_at_the_count_is_the_default_bit_for_bit():
    X = _dropping_data(40, 120, seed=3)
    for h in (7, 16):
        default = make_selector("mcfs", n_clusters=3, n_features_to_select=h).fit(X)
        same = make_selector("mcfs", n_clusters=3, n_features_to_select=h,
                             path_cardinality=h).fit(X)
        assert np.array_equal(default.coef_, same.coef_)
        assert np.array_equal(default.support_, same.support_)


def test_active_during_steps_counts_a_drop_steps_dropped_variable():
    from ufsbench.methods.mcfs import active_during_steps, last_step_with_active, step_supports

    # supports: {} {0} {0,1} {0,1,2} {0,2}+1 at ~0 (a drop) {0,2} {0,2,3}
    active = [[], [0], [0, 1], [0, 1, 2], [0, 1, 2], [0, 2], [0, 2, 3]]
    coefs = [[], [1.0], [1.0, 0.5], [1.0, 0.5, 0.2], [1.0, 1e-18, 0.3], [1.1, 0.4],
             [1.2, 0.5, 0.1]]
    path = SparseLarsPath(4, np.zeros(7), [np.array(a, dtype=int) for a in active],
                          [np.array(c) for c in coefs])
    counts = active_during_steps(path)
    assert counts.tolist() == [0, 1, 2, 3, 3, 2, 3]
    assert last_step_with_active(counts, path.nnz(), 3) == 6
    assert last_step_with_active(counts, path.nnz(), 2) == 5
    assert best_step(path.nnz(), 3) == 3              # the first arrival, the default's step
    supports = step_supports(path)
    assert [len(s) for s in supports] == path.nnz().tolist() == [0, 1, 2, 3, 2, 2, 3]
    assert np.array_equal(active_during_steps(path, supports), counts)


def test_step_supports_apply_the_roundoff_rule_step_by_step():
    """The supports of all steps, found at once, are each step's features whose |coefficient|
    exceeds ROUNDOFF_ZERO of that step's largest (empty and all-zero steps included)."""
    from ufsbench.methods.mcfs import step_supports
    from ufsbench.numerics.lars import ROUNDOFF_ZERO

    rng = np.random.default_rng(3)
    for _ in range(300):
        active, coefs = [], []
        for _ in range(int(rng.integers(1, 12))):
            size = int(rng.integers(0, 6))
            coef = rng.standard_normal(size)
            if size and rng.random() < 0.5:
                coef[rng.integers(size)] = 1e-17 * np.abs(coef).max()   # a drop remainder
            if rng.random() < 0.1:
                coef[:] = 0.0
            active.append(rng.choice(50, size=size, replace=False))
            coefs.append(coef)
        path = SparseLarsPath(50, np.zeros(len(coefs)), active, coefs)
        expected = [a[np.abs(c) > ROUNDOFF_ZERO * np.abs(c).max()] if c.size else a
                    for a, c in zip(active, coefs)]
        got = step_supports(path)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
        assert [len(g) for g in got] == path.nnz().tolist()


def test_mean_distance_width_is_cais_constructw_width(data):
    from scipy.spatial.distance import cdist

    t = cdist(data.X, data.X).mean()
    cai = make_selector("mcfs", n_clusters=3, n_features_to_select=6,
                        sigma="mean_distance").fit(data.X)
    given = make_selector("mcfs", n_clusters=3, n_features_to_select=6,
                          sigma=2 * t * t).fit(data.X)
    np.testing.assert_allclose(cai.embedding_, given.embedding_, rtol=1e-8, atol=1e-12)
    assert np.array_equal(cai.support_, given.support_)


def test_released_preset_and_path_cardinality_validation(data):
    from ufsbench.methods.base import InvalidSelectorParameterError

    sel = make_selector("mcfs", preset="released")
    assert (sel.sigma, sel.k, sel.ridge, sel.path_cardinality) == ("mean_distance", 5, 1e-3, None)
    with pytest.raises(InvalidSelectorParameterError, match="path_cardinality=5"):
        make_selector("mcfs", n_features_to_select=6, path_cardinality=5).fit(data.X)
    with pytest.raises(UFSBenchError, match="path_cardinality=30"):     # the default h = 50
        make_selector("mcfs", n_clusters=3, path_cardinality=30).fit(data.X)
