"""K-means UFS (Sun, Ding & Fan): constraints of the bi-linear ADMM, the closed form of model (11),
known-support recovery, the quadratic ADMM's norm blow-up (paper Fig. 2), determinism."""

import itertools

import numpy as np
import pytest
from _reference_kmufs import reference_kmufs
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.kmufs import _FactoredA, _initial_basis, _leading_right_singular
from ufsbench.numerics.preprocess import zscore
from ufsbench.testing import fit_blas_threads


def _fit(X, h, k, **params):
    return make_selector("kmufs", n_features_to_select=h, n_clusters=k, **params).fit(X)


def _dense_A(X, k):
    """A = P_k Sigma_k^2 P_k^T built independently, from the eigen-decomposition of Xs^T Xs."""
    Xs = zscore(X)
    vals, vecs = np.linalg.eigh(Xs.T @ Xs)
    top = np.argsort(vals)[::-1][:k]
    return (vecs[:, top] * vals[top]) @ vecs[:, top].T


def _lowrank_on_set(n=100, p=40, k=3, size=6, seed=0):
    """Data whose k leading singular directions live on a known feature set (at random places)."""
    rng = np.random.default_rng(seed)
    support = np.sort(rng.choice(p, size=size, replace=False))
    X = 0.3 * rng.standard_normal((n, p))
    X[:, support] += 3.0 * rng.standard_normal((n, k)) @ rng.standard_normal((k, size))
    return X, support


@pytest.fixture(scope="module")
def synthetic():
    return make_synthetic(n_samples=120, n_features=60, n_informative=8, n_clusters=3,
                          random_state=0)


@pytest.fixture(scope="module")
def digits():
    return load_digits().data


@pytest.mark.parametrize("admm", ["bilinear", "vanilla"])
@pytest.mark.parametrize("max_iter", [1, 2, 7, 3000])
def test_constraints_after_any_number_of_iterations(synthetic, admm, max_iter):
    h = 8
    sel = _fit(synthetic.X, h, 3, admm=admm, max_iter=max_iter)
    nonzero = np.linalg.norm(sel.W_, axis=1) > 0
    assert nonzero.sum() == h == sel.support_.sum()                 # exactly h non-zero rows
    np.testing.assert_array_equal(nonzero, sel.support_)            # the support is W's
    np.testing.assert_allclose(sel.U_.T @ sel.U_, np.eye(h), atol=1e-10)    # U^T U = I
    assert sel.n_iter_ == len(sel.objective_history_) == len(sel.v_norm_history_) <= max_iter


def test_bilinear_v_norm_is_sqrt_h_after_every_v_step(synthetic):
    h = 8
    sel = _fit(synthetic.X, h, 3)
    assert sel.converged_ and sel.n_iter_ > 30
    np.testing.assert_allclose(sel.v_norm_history_, np.sqrt(h), rtol=1e-12)
    assert np.linalg.norm(sel.V_) ** 2 == pytest.approx(h, rel=1e-12)


def test_vanilla_v_norm_blows_up_where_bilinear_stays_bounded(synthetic):
    """Paper Fig. 2: the quadratic ADMM's ||V||_F grows by orders of magnitude, the bi-linear
    form's stays at sqrt(h). Observed here: a peak of ~5e4 against sqrt(8) = 2.8."""
    h = 8
    vanilla = _fit(synthetic.X, h, 3, admm="vanilla")
    bilinear = _fit(synthetic.X, h, 3, admm="bilinear")
    assert max(vanilla.v_norm_history_) > 1e3 * np.sqrt(h)
    assert max(bilinear.v_norm_history_) < (1 + 1e-9) * np.sqrt(h)


def test_selects_the_features_carrying_the_leading_singular_directions():
    # Not asserted for admm="vanilla": on this data it swaps one feature of the set for a noise
    # feature (the blown-up V of Eq. (22) dominates its W-steps, as the paper warns).
    X, support = _lowrank_on_set()
    for admm in ("bilinear", "exact"):
        sel = _fit(X, len(support), 3, admm=admm)
        np.testing.assert_array_equal(np.flatnonzero(sel.support_), support, err_msg=admm)


def test_selects_the_truly_separating_planted_features(synthetic):
    # make_synthetic draws the cluster centres' signs at random, so a planted feature whose
    # centres share one sign separates nothing; the model can only be asked for the others.
    X, y = synthetic.X, synthetic.y
    means = np.array([X[y == c].mean(axis=0) for c in np.unique(y)])
    separating = np.flatnonzero(np.ptp(means, axis=0) > 3.0)
    assert set(separating) <= set(synthetic.informative) and len(separating) >= 3
    sel = _fit(X, len(separating), 3)
    np.testing.assert_array_equal(np.flatnonzero(sel.support_), separating)


def test_model_objective_is_the_diagonal_sum_and_exact_is_optimal():
    """For V with exactly h non-zero rows S and V^T V = I, Tr(V^T A V) = sum_{i in S} A_ii, so the
    h largest A_ii solve (11); checked by brute force over all subsets and random rotations."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 9)) @ rng.standard_normal((9, 9))
    k, h = 2, 3
    A = _dense_A(X, k)
    best = min(-np.trace(A[np.ix_(s, s)]) for s in itertools.combinations(range(9), h))
    exact = _fit(X, h, k, admm="exact")
    assert exact.optimal_objective_ == pytest.approx(best, rel=1e-10)
    S = np.flatnonzero(exact.support_)
    assert -np.trace(A[np.ix_(S, S)]) == pytest.approx(best, rel=1e-10)
    V = np.zeros((9, h))
    V[S] = np.linalg.qr(rng.standard_normal((h, h)))[0]
    assert -np.trace(V.T @ A @ V) == pytest.approx(best, rel=1e-10)
    np.testing.assert_allclose(exact.feature_weights_ * X.shape[0], np.diag(A), atol=1e-9)


@pytest.mark.parametrize("admm", ["bilinear", "vanilla"])
def test_objective_history_is_the_support_objective_and_never_beats_the_optimum(synthetic, admm):
    sel = _fit(synthetic.X, 8, 3, admm=admm)
    A = _dense_A(synthetic.X, 3)
    S = np.flatnonzero(sel.support_)
    assert sel.objective_history_[-1] == pytest.approx(-np.trace(A[np.ix_(S, S)]), rel=1e-10)
    assert min(sel.objective_history_) >= sel.optimal_objective_ * (1 + 1e-12)


@pytest.mark.parametrize("admm", ["bilinear", "vanilla"])
def test_factored_A_matches_the_dense_p_by_p_form(synthetic, admm):
    fast = _fit(synthetic.X, 8, 3, admm=admm)
    dense = reference_kmufs(synthetic.X, 8, 3, admm=admm)
    np.testing.assert_array_equal(fast.support_, dense.support_)
    np.testing.assert_allclose(fast.objective_history_, dense.objective_history_, rtol=1e-10)


def _reference_admm(X, h, k, iterations, vanilla=False, mu0=0.1, rho=1.05):
    """Algorithm 1 / Eqs. (12)-(25) written out with the dense A and explicit SVDs."""
    A = _dense_A(X, k)
    Xs = zscore(X)
    vals, vecs = np.linalg.eigh(Xs.T @ Xs)
    V = vecs[:, np.argsort(vals)[::-1][:h]]              # Eq. (32): V = U = W = P_h
    U, W = V.copy(), V.copy()
    Omega, Gamma = np.zeros_like(V), np.zeros_like(V)
    mu = mu0 + (np.linalg.eigvalsh(A)[-1] if vanilla else 0.0)
    for _ in range(iterations):
        B, C = U - Omega / mu, W - Gamma / mu
        if vanilla:
            V = 0.5 * mu * np.linalg.inv(mu * np.eye(len(A)) - A) @ (B + C)
            Pl, _, Qt = np.linalg.svd(V + Omega / mu, full_matrices=False)
        else:
            D = A @ U + mu * B + mu * C
            V = np.sqrt(h) * D / np.linalg.norm(D)
            Pl, _, Qt = np.linalg.svd(A @ V + mu * (V + Omega / mu), full_matrices=False)
        U = Pl @ Qt
        F = V + Gamma / mu
        W = np.zeros_like(F)
        keep = np.argsort(-np.linalg.norm(F, axis=1), kind="stable")[:h]
        W[keep] = F[keep]
        Omega, Gamma, mu = Omega + mu * (V - U), Gamma + mu * (V - W), mu * rho
    return V, U, W


@pytest.mark.parametrize("vanilla", [False, True])
@pytest.mark.parametrize("iterations", [1, 3, 12])
def test_iterates_match_a_dense_reference_of_the_papers_equations(vanilla, iterations):
    # Compared through V V^T etc.: eigenvector signs may differ, and every update is equivariant
    # under V -> V R for a diagonal sign matrix R.
    X, _ = _lowrank_on_set(n=50, p=15, size=5, seed=4)
    h, k = 6, 3
    sel = _fit(X, h, k, admm="vanilla" if vanilla else "bilinear", max_iter=iterations)
    with fit_blas_threads(sel):                       # the reference rounds as the fit does
        reference = _reference_admm(X, h, k, iterations, vanilla)
    for ours, ref in zip((sel.V_, sel.U_, sel.W_), reference):
        np.testing.assert_allclose(ours @ ours.T, ref @ ref.T, rtol=1e-6,
                                   atol=1e-9 * np.abs(ref @ ref.T).max())


def test_operators_agree():
    rng = np.random.default_rng(1)
    P = np.linalg.qr(rng.standard_normal((25, 4)))[0]
    sigma = np.array([5.0, 3.0, 2.0, 0.5])
    Y = rng.standard_normal((25, 6))
    fact, A = _FactoredA(P, sigma), (P * sigma) @ (P * sigma).T       # A = P Sigma^2 P^T
    np.testing.assert_allclose(fact.dot(Y), A @ Y, atol=1e-12)
    mu = sigma[0] ** 2 + 0.1
    np.testing.assert_allclose(fact.shifted_solve(mu, Y), np.linalg.solve(mu * np.eye(25) - A, Y),
                               rtol=1e-9, atol=1e-9)


def _kmeans_objectives(X, subset, k, labels):
    """Model objective (8) and K-means SSE with the full-data partition, on standardised data."""
    Xs = zscore(X)[:, subset]
    A = _dense_A(X, k)
    sse = sum(((Xs[labels == c] - Xs[labels == c].mean(axis=0)) ** 2).sum()
              for c in np.unique(labels))
    return -np.trace(A[np.ix_(subset, subset)]), sse


@pytest.mark.parametrize("data, k, h", [("synthetic", 3, 8), ("digits", 10, 20)])
def test_kmeans_objective_beats_random_and_highest_variance_features(request, data, k, h):
    """On the model objective (8) and on the K-means SSE of the standardised selected features
    under the K-means partition of all features (the G of problem (7), fixed). Not asserted: the
    SSE of a K-means re-run on the subset alone, where random subsets can win (see report)."""
    X = request.getfixturevalue(data)
    X = X.X if hasattr(X, "X") else X
    labels = KMeans(k, n_init=10, random_state=0).fit(zscore(X)).labels_
    chosen = _kmeans_objectives(X, np.flatnonzero(_fit(X, h, k).support_), k, labels)
    rng = np.random.default_rng(0)
    randoms = [_kmeans_objectives(X, rng.choice(X.shape[1], h, replace=False), k, labels)
               for _ in range(10)]
    variance = _kmeans_objectives(X, np.argsort(-X.var(axis=0), kind="stable")[:h], k, labels)
    for i in range(2):
        assert chosen[i] < np.mean([r[i] for r in randoms])
        assert chosen[i] <= variance[i]


def test_deterministic_without_a_seed(digits):
    a = _fit(digits, 15, 10)
    b = _fit(digits, 15, 10, random_state=123)
    np.testing.assert_array_equal(a.support_, b.support_)
    assert a.objective_history_ == b.objective_history_
    np.testing.assert_array_equal(a.W_, b.W_)


def test_invariant_to_feature_shift_and_scale(synthetic):
    X = synthetic.X
    scaled = X * np.linspace(0.01, 100.0, X.shape[1]) + np.arange(X.shape[1])
    np.testing.assert_array_equal(_fit(X, 8, 3).support_, _fit(scaled, 8, 3).support_)


def test_constant_feature_is_never_selected(synthetic):
    X = synthetic.X.copy()
    X[:, synthetic.informative[1]] = 4.0
    sel = _fit(X, 10, 3)
    assert not sel.support_[synthetic.informative[1]]
    assert np.all(np.isfinite(sel.objective_history_))


def test_wide_data_with_h_above_n_completes_the_initial_basis():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 60))
    P = np.linalg.svd(zscore(X), full_matrices=False)[2].T
    V0 = _initial_basis(P, 30)
    np.testing.assert_allclose(V0.T @ V0, np.eye(30), atol=1e-10)
    np.testing.assert_array_equal(V0[:, :20], P)
    sel = _fit(X, 30, 3, max_iter=50)
    assert sel.support_.sum() == 30
    np.testing.assert_allclose(sel.U_.T @ sel.U_, np.eye(30), atol=1e-10)


def test_patience_stops_after_the_set_is_stable(synthetic):
    sel = _fit(synthetic.X, 8, 3, patience=5)
    assert sel.converged_
    full = _fit(synthetic.X, 8, 3, patience=30)
    assert sel.n_iter_ < full.n_iter_
    # the set was unchanged for exactly `patience` iterations (objective of the set as a proxy)
    tail = sel.objective_history_[-6:]
    assert tail == [tail[-1]] * 6 and sel.objective_history_[-7] != tail[-1]
    with pytest.warns(ConvergenceWarning, match="selected set unchanged for patience=30"):
        capped = _fit(synthetic.X, 8, 3, max_iter=10)
    assert not capped.converged_ and capped.n_iter_ == 10


@pytest.mark.parametrize("params", [{"admm": "quadratic"}, {"rho": 0.9},
                                    {"mu0": 0.0}, {"mu0": np.inf}, {"max_iter": 0},
                                    {"patience": 1.5}])
def test_bad_parameters_raise(synthetic, params):
    with pytest.raises(UFSBenchError):
        _fit(synthetic.X, 8, 3, **params)


def test_zscore_standardises_and_zeroes_constant_features():
    X = np.column_stack([np.arange(6.0) * 3 + 2, np.full(6, 7.0), [1.0, -1, 2, 0, 5, 3]])
    Z = zscore(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), [1.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_array_equal(Z[:, 1], 0.0)


# --- the polar factor from the h x h Gram (numerics.linalg.gram_polar) ---------------------------

def _with_condition(p, h, kappa, seed=0):
    rng = np.random.default_rng(seed)
    P = np.linalg.qr(rng.standard_normal((p, h)))[0]
    R = np.linalg.qr(rng.standard_normal((h, h)))[0]
    return 7.0 * (P * np.geomspace(1.0, 1.0 / kappa, h)) @ R.T


@pytest.mark.parametrize("kappa", [1.0, 10.0, 1e3])
def test_gram_polar_matches_the_svd_form_on_well_conditioned_input(kappa):
    from ufsbench.numerics import orthonormal_polar
    from ufsbench.numerics.linalg import gram_polar
    H = _with_condition(300, 20, kappa)
    U = gram_polar(H)
    np.testing.assert_allclose(U, orthonormal_polar(H), atol=1e-13 * kappa ** 2 + 1e-14)
    np.testing.assert_allclose(U.T @ U, np.eye(20), atol=1e-13 * kappa ** 2 + 1e-14)
    # the polar factor maximises Tr(U^T H) over orthonormal U; H = U S' with S' symmetric PSD
    S = U.T @ H
    np.testing.assert_allclose(S, S.T, atol=1e-12 * np.abs(S).max())
    assert np.linalg.eigvalsh(0.5 * (S + S.T)).min() > 0


@pytest.mark.parametrize("kappa", [1e5, 1e9])
def test_gram_polar_falls_back_to_the_svd_when_the_gram_is_ill_conditioned(kappa):
    """kappa(H)^2 > 1 / GRAM_RCOND: the Gram form would lose ~eps kappa^2; the SVD form is used."""
    from ufsbench.numerics import orthonormal_polar
    from ufsbench.numerics.linalg import gram_polar
    H = _with_condition(300, 20, kappa, seed=1)
    np.testing.assert_array_equal(gram_polar(H), orthonormal_polar(H))
    rank_deficient = H[:, :3] @ np.ones((3, 20))
    np.testing.assert_array_equal(gram_polar(rank_deficient), orthonormal_polar(rank_deficient))
    wide = H[:10]
    np.testing.assert_array_equal(gram_polar(wide), orthonormal_polar(wide))
    np.testing.assert_array_equal(gram_polar(np.zeros((30, 4))), orthonormal_polar(np.zeros((30, 4))))


@pytest.mark.parametrize("params", [{}, {"mu0": 1e-3}, {"mu0": 10.0, "rho": 1.1},
                                    {"admm": "vanilla", "max_iter": 300}])
@pytest.mark.parametrize("data, k, h", [("synthetic", 3, 8), ("digits", 10, 20)])
def test_gram_polar_fit_matches_the_svd_fit(request, data, k, h, params):
    """The reference takes every polar factor from a thin SVD (and the dense A); the Gram form
    and the factored A change only round-off, so the ADMM stops at the same iteration with the
    same support and objectives."""
    X = request.getfixturevalue(data)
    X = X.X if hasattr(X, "X") else X
    gram, svd = _fit(X, h, k, **params), reference_kmufs(X, h, k, **params)
    np.testing.assert_array_equal(gram.support_, svd.support_)
    assert gram.n_iter_ == svd.n_iter_ and gram.converged_ == svd.converged_
    np.testing.assert_allclose(gram.objective_history_, svd.objective_history_, rtol=1e-12)
    np.testing.assert_allclose(gram.U_.T @ gram.U_, np.eye(h), atol=1e-10)


@pytest.mark.parametrize("shape, density", [((200, 400), 0.03), ((60, 150), 1.0),
                                            ((300, 220), 1.0)])
def test_leading_singular_subspace_from_the_gram_matches_the_svd(shape, density):
    # Mostly-zero wide data takes the sparse Gram, dense wide data the n x n and tall data the
    # d x d Gram. r groups of 25 equal columns plant r leading directions with a gap
    # sigma_r / sigma_{r+1} > 1.5, so the r-subspace is well defined (its round-off sensitivity
    # ~ eps sigma_1^2 / (sigma_r^2 - sigma_{r+1}^2) << 1e-9).
    rng = np.random.default_rng(0)
    n, d = shape
    r, group = 4, 25
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    for j in range(r):
        X[:, r + j * group: r + (j + 1) * group] = X[:, [j]]
    Xs = zscore(X)
    _, s, Vt = np.linalg.svd(Xs, full_matrices=False)
    assert s[r - 1] > 1.5 * s[r]
    sigma, P = _leading_right_singular(Xs, r)
    np.testing.assert_allclose(sigma, s[:r], rtol=1e-10)
    np.testing.assert_allclose(P.T @ P, np.eye(r), atol=1e-10)
    Q = Vt[:r].T
    assert np.linalg.norm(P - Q @ (Q.T @ P)) < 1e-9


def test_leading_singular_gram_declines_a_rank_deficient_subspace():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 90))     # rank 3
    assert _leading_right_singular(zscore(X), 5) is None
