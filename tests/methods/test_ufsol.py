"""UFSOL (Guo, Guo, Kong & He, ICME 2017): graph variants, Algorithm 1 invariants, Theorem 1."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import make_selector
from ufsbench.methods.ufsol import graph_gram, ufsol_laplacian
from ufsbench.numerics.exact_kmeans import within_cluster_sse
from ufsbench.numerics.indicators import indicator_gram, indicator_projection
from ufsbench.numerics.triplet import ordinal_laplacian, triplet_weights
from ufsbench.testing import assert_same_partition, peak_traced_bytes

GRAPHS = ["none", "similarity", "maxmargin", "triplet"]


@pytest.fixture(scope="module")
def planted():
    return make_synthetic(n_samples=150, n_features=40, n_informative=8, n_clusters=3,
                          random_state=0)


@pytest.fixture(scope="module")
def small():
    return make_synthetic(n_samples=60, n_features=30, n_informative=5, n_clusters=3,
                          random_state=1)


def _zscore(X):
    return (X - X.mean(0)) / X.std(0)


# -- the graph term ---------------------------------------------------------------------------
@pytest.mark.parametrize("graph", GRAPHS)
def test_laplacian_symmetric_and_psd_except_maxmargin(graph):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((25, 4)) / 2.0
    n = X.shape[0]
    L = ufsol_laplacian(X, graph, k=5, sigma=1.0)
    np.testing.assert_allclose(L, L.T, atol=0)
    np.testing.assert_allclose(L @ np.ones(n), 0, atol=1e-12)
    eig = np.linalg.eigvalsh(L)
    if graph == "maxmargin":
        # C_ij = -1/n: L = (1/n) 1 1^T - I = -H, negative semi-definite by design (§3.3).
        np.testing.assert_allclose(L, np.full((n, n), 1 / n) - np.eye(n), atol=1e-15)
        assert eig.max() < 1e-12 and eig.min() == pytest.approx(-1.0)
    else:
        assert eig.min() > -1e-10
    if graph == "none":
        assert not L.any()
    if graph == "similarity":
        assert L.any()  # sigma = 1 does not underflow on this scale
    if graph == "triplet":
        np.testing.assert_allclose(L, ordinal_laplacian(triplet_weights(X, k=5)), atol=0)


def test_indicator_gram_is_scaled_indicator_projection():
    labels = np.array([0, 2, 0, 1, 2, 2])
    P = indicator_gram(labels)
    V = np.zeros((3, 6))
    for k in range(3):
        V[k, labels == k] = 1 / np.sqrt(np.sum(labels == k))
    np.testing.assert_allclose(V @ V.T, np.eye(3), atol=1e-15)      # V V^T = I, V >= 0
    np.testing.assert_allclose(P, V.T @ V, atol=1e-15)


def test_theorem_1_semi_nmf_loss_is_kmeans_sse():
    # ||Y^T - U V||_F^2 at U = Y^T V^T equals the K-means within-cluster sum of squares.
    rng = np.random.default_rng(3)
    Y = rng.standard_normal((40, 3))
    km = KMeans(4, n_init=3, random_state=0).fit(Y)
    V = np.zeros((4, 40))
    for k in range(4):
        V[k, km.labels_ == k] = 1 / np.sqrt(np.sum(km.labels_ == k))
    U = Y.T @ V.T
    loss = np.sum((Y.T - U @ V) ** 2)
    assert loss == pytest.approx(within_cluster_sse(Y, km.labels_), rel=1e-10)
    assert loss == pytest.approx(km.inertia_, rel=1e-8)


# -- Algorithm 1 -----------------------------------------------------------------------------
@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize("solver", ["dense", "shift_invert"])
def test_orthogonality_and_monotone_objective(small, graph, solver):
    sel = make_selector("ufsol", n_clusters=3, random_state=0, graph=graph, alpha=1.0, beta=0.1,
                        preprocess="zscore", solver=solver, tol=0, max_iter=12,
                        n_init=2).fit(small.X)
    assert 3 <= sel.n_iter_ == len(sel.orthogonality_history_) == len(sel.objective_history_)
    assert max(sel.orthogonality_history_) < 1e-10                   # W^T W = I every iterate
    h = np.array(sel.objective_history_)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h).max())             # (6) never increases
    np.testing.assert_allclose(sel.W_.T @ sel.W_, np.eye(3), atol=1e-10)


def test_objective_matches_model_5(small):
    # The recorded value is ||W^T X - U V||^2 + beta sum sqrt(||W_i||^2 + eps) + alpha Tr(...),
    # evaluated here independently from W_, labels_ and the preprocessed X.
    alpha, beta, eps = 0.5, 0.2, 1e-8
    sel = make_selector("ufsol", n_clusters=3, random_state=0, graph="triplet", alpha=alpha,
                        beta=beta, eps=eps, preprocess="zscore", n_init=2).fit(small.X)
    X = _zscore(small.X)
    Y = X @ sel.W_
    L = ordinal_laplacian(triplet_weights(X, k=5))
    value = (within_cluster_sse(Y, sel.labels_) + alpha * np.trace(Y.T @ L @ Y)
             + beta * np.sum(np.sqrt(np.sum(sel.W_ ** 2, axis=1) + eps)))
    assert sel.objective_history_[-1] == pytest.approx(value, rel=1e-9)


def test_w_step_is_the_smallest_eigenvectors(small):
    # At convergence, W_ spans the d2 smallest eigenvectors of G = beta/2 R + X^T M X.
    sel = make_selector("ufsol", n_clusters=3, random_state=0, graph="triplet", alpha=1.0,
                        beta=0.05, preprocess="zscore", tol=1e-12, max_iter=200,
                        n_init=2).fit(small.X)
    X = _zscore(small.X)
    M = np.eye(len(X)) + ordinal_laplacian(triplet_weights(X, k=5)) - indicator_gram(sel.labels_)
    R = 1 / np.sqrt(np.sum(sel.W_ ** 2, axis=1) + 1e-8)
    G = 0.025 * np.diag(R) + X.T @ M @ X
    vals = np.linalg.eigvalsh(G)
    assert np.trace(sel.W_.T @ G @ sel.W_) == pytest.approx(vals[:3].sum(), rel=1e-5)


def test_shift_invert_matches_dense_when_d_exceeds_n():
    ds = make_synthetic(n_samples=40, n_features=120, n_informative=5, n_clusters=2,
                        random_state=2)
    fits = [make_selector("ufsol", n_clusters=2, random_state=0, alpha=1.0, beta=1.0,
                          solver=s, max_iter=8, n_init=2).fit(ds.X)
            for s in ("dense", "shift_invert")]
    assert fits[1].solver_ == "shift_invert"
    np.testing.assert_allclose(fits[0].scores_, fits[1].scores_, atol=1e-7)
    np.testing.assert_allclose(fits[0].objective_history_, fits[1].objective_history_,
                               rtol=1e-8)
    assert make_selector("ufsol").fit(ds.X).solver_ == "shift_invert"   # auto, d > 2n


@pytest.mark.parametrize("old, new", [("dense", "dense"), ("shift_invert", "shift_invert"),
                                      ("lanczos", "shift_invert")])
def test_deprecated_eigen_solver_warns_and_runs_solver(old, new):
    ds = make_synthetic(n_samples=30, n_features=70, n_informative=5, n_clusters=2,
                        random_state=2)
    fit = dict(n_clusters=2, random_state=0, max_iter=4, n_init=2)
    with pytest.warns(FutureWarning, match=f"use solver={new!r}"):
        old_fit = make_selector("ufsol", eigen_solver=old, **fit).fit(ds.X)
    new_fit = make_selector("ufsol", solver=new, **fit).fit(ds.X)
    assert old_fit.solver_ == new
    np.testing.assert_array_equal(old_fit.scores_, new_fit.scores_)
    assert old_fit.objective_history_ == new_fit.objective_history_


# -- large n: the d x d form -----------------------------------------------------------------
@pytest.mark.parametrize("graph", GRAPHS)
def test_gram_form_equals_n_by_n_form(graph):
    # X^T (alpha L + I - V^T V) X assembled in d x d form equals the product through the n x n M.
    rng = np.random.default_rng(4)
    X = rng.standard_normal((70, 6))
    labels = rng.integers(0, 3, 70)
    dense = X.T @ (ufsol_laplacian(X, graph, k=5, sigma=None) - indicator_gram(labels)) @ X
    VX = indicator_projection(X, labels)
    np.testing.assert_allclose(graph_gram(X, graph, k=5, sigma=None) - VX.T @ VX, dense,
                               atol=1e-10)
    if graph in ("similarity", "triplet"):
        sparse_L = ufsol_laplacian(X, graph, k=5, sigma=None, sparse=True)
        np.testing.assert_allclose(sparse_L.toarray(), ufsol_laplacian(X, graph, k=5,
                                                                       sigma=None), atol=1e-14)


@pytest.mark.parametrize("graph", GRAPHS)
def test_dense_d_by_d_path_matches_n_by_n_solver(graph):
    # solver="dense" runs the d x d form; "shift_invert" applies the n x n M: same fit (d <= 2n
    # here, where "auto" picks the d x d form).
    fits = [make_selector("ufsol", n_clusters=3, random_state=0, graph=graph, alpha=1.0,
                          beta=0.1, preprocess="unit_norm", solver=s, max_iter=6, n_init=2,
                          tol=0).fit(
                              make_synthetic(n_samples=80, n_features=12, n_informative=4,
                                             n_clusters=3, random_state=5).X)
            for s in ("dense", "shift_invert")]
    # Shift-invert Lanczos meets a residual tolerance of 1e-12, not round-off: the first
    # iterates agree to ~1e-11 (G's 3rd-4th eigengap is then ~all of ||G||). In iterations 2-4
    # that gap falls to ~5e-3 ||G|| and the reweighting 1/sqrt(||w_i||^2 + eps) of near-zero rows
    # carries each W-step's error into the next, so the objectives drift apart by up to ~1.4e-8
    # and the scores by ~5e-8 (across OpenBLAS kernels). A 0.1% error in X^T M X moves all three
    # by ~1e-4.
    history = [np.asarray(f.objective_history_) for f in fits]
    np.testing.assert_allclose(history[0][0], history[1][0], rtol=1e-9)
    np.testing.assert_allclose(history[0], history[1], rtol=1e-7)
    np.testing.assert_allclose(fits[0].scores_, fits[1].scores_, atol=1e-6)
    # The two solvers return W with different column signs (eigenvectors are defined up to
    # sign) and agree otherwise only to their tolerance, so which of the V-step's K-means
    # restarts that find the same partition wins, and hence its numbering, is up to round-off.
    assert_same_partition(fits[0].labels_, fits[1].labels_)


def test_large_n_fit_forms_no_n_by_n_array(monkeypatch):
    # 3000 x 20: one float64 n x n array would be 72 MB; the fit stays far below that and
    # np.eye is never asked for an n x n identity.
    n = 3000
    ds = make_synthetic(n_samples=n, n_features=20, n_informative=4, n_clusters=3,
                        random_state=0)
    real_eye = np.eye

    def guarded_eye(N, *args, **kwargs):
        assert n > N, "an n x n identity was formed"
        return real_eye(N, *args, **kwargs)

    monkeypatch.setattr(np, "eye", guarded_eye)
    sel = make_selector("ufsol", n_clusters=3, random_state=0, graph="triplet", max_iter=3,
                        n_init=1)
    _, peak = peak_traced_bytes(lambda: sel.fit(ds.X))
    assert sel.solver_ == "dense"
    assert peak < 8 * n * n / 2


# -- Theorem 1 / alpha = 0 -------------------------------------------------------------------
def test_alpha_zero_is_graph_none_and_kmeans(small):
    kw = {"n_clusters": 3, "random_state": 4, "beta": 0.1, "preprocess": "zscore", "n_init": 2}
    none = make_selector("ufsol", graph="none", alpha=123.0, **kw).fit(small.X)
    zero = make_selector("ufsol", graph="triplet", alpha=0.0, **kw).fit(small.X)
    assert none.alpha_ == 0.0
    np.testing.assert_array_equal(none.scores_, zero.scores_)
    np.testing.assert_array_equal(none.labels_, zero.labels_)
    # the objective is exactly feature selection + K-means: SSE of the projected data + l2,1
    Y = _zscore(small.X) @ none.W_
    value = within_cluster_sse(Y, none.labels_) + 0.1 * np.sum(
        np.sqrt(np.sum(none.W_ ** 2, axis=1) + 1e-8))
    assert none.objective_history_[-1] == pytest.approx(value, rel=1e-9)
    # and the partition is K-means-optimal on the projected data (no better one by restarts)
    km = KMeans(3, n_init=20, random_state=0).fit(Y)
    assert within_cluster_sse(Y, none.labels_) <= km.inertia_ * (1 + 1e-2)


# -- selection quality, determinism, inputs ---------------------------------------------------
def test_default_triplet_ranks_planted_features_first(planted):
    sel = make_selector("ufsol", n_clusters=3, random_state=0, preprocess="zscore",
                        n_features_to_select=8).fit(planted.X)
    informative = np.zeros(planted.X.shape[1], dtype=bool)
    informative[planted.informative] = True
    assert sel.scores_[informative].min() > sel.scores_[~informative].max()
    np.testing.assert_array_equal(np.flatnonzero(sel.support_), planted.informative)


@pytest.mark.parametrize("graph", GRAPHS)
def test_every_variant_ranks_planted_features_first(planted, graph):
    sel = make_selector("ufsol", n_clusters=3, random_state=0, graph=graph, alpha=1e-2,
                        beta=1e-2, preprocess="zscore", n_init=3).fit(planted.X)
    informative = np.zeros(planted.X.shape[1], dtype=bool)
    informative[planted.informative] = True
    assert sel.scores_[informative].min() > sel.scores_[~informative].max()


def test_determinism(small):
    kw = {"n_clusters": 3, "alpha": 1.0, "beta": 10.0, "preprocess": "zscore", "n_init": 2, "max_iter": 5}
    a = make_selector("ufsol", random_state=7, **kw).fit(small.X)
    b = make_selector("ufsol", random_state=7, **kw).fit(small.X)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    others = [make_selector("ufsol", random_state=s, **kw).fit(small.X).scores_
              for s in (1, 2, 3)]
    assert any(not np.allclose(a.scores_, o) for o in others)       # W0 depends on the state


def test_constant_features_rank_last_and_preprocess_options(small):
    X = small.X.copy()
    X[:, [3, 11]] = 0.0           # constant in every preprocessing
    for pre in ("zscore", "unit_norm", "none"):
        sel = make_selector("ufsol", n_clusters=3, random_state=0, preprocess=pre,
                            n_init=2, max_iter=5).fit(X)
        assert set(sel.ranking_[-2:]) == {3, 11}
        assert np.all(sel.W_[[3, 11]] == 0)


@pytest.mark.parametrize("params,match", [
    ({"graph": "knn"}, "'graph' parameter"), ({"alpha": -1.0}, "'alpha' parameter"),
    ({"beta": np.inf}, "'beta' parameter"), ({"preprocess": "pca"}, "'preprocess' parameter"),
    ({"solver": "arpack"}, "'solver' parameter"), ({"solver": "lanczos"}, "'solver' parameter"),
    ({"eigen_solver": "arpack"}, "'eigen_solver' parameter"),
    ({"n_components": 30}, "n_components=30 must satisfy"), ({"eps": -1.0}, "'eps' parameter"),
    ({"eps": 0.0}, "eps=0 needs zero_row_norm"), ({"zero_row_norm": 0.0}, "'zero_row_norm'"),
    ({"init": "pca"}, "'init' parameter"), ({"triplet_metric": "cosine"}, "'triplet_metric'"),
    ({"v_step": "kmeans"}, "'v_step' parameter"),
    ({"kmeans_init": [[[0, 1, 2]]] * 41}, "needs v_step='litekmeans'"),
    ({"v_step": "litekmeans", "n_init": 1, "max_iter": 2, "kmeans_init": [[[0, 1, 2]]] * 2},
     r"shape \(calls >= max_iter \+ 1"),
    ({"v_step": "litekmeans", "n_init": 1, "max_iter": 1, "kmeans_init": [[[0, 1]]] * 2},
     r"shape \(calls"),
    ({"v_step": "litekmeans", "n_init": 1, "max_iter": 1, "kmeans_init": [[[0, -1, 2]]] * 2},
     "non-negative integer"),
    ({"v_step": "litekmeans", "n_init": 1, "max_iter": 1, "kmeans_init": [[[0, 1, 60]]] * 2},
     "sample index 60, but X has 60 samples"),
    ({"sigma": -1.0}, "'sigma' parameter"), ({"k": 2.7}, "'k' parameter"),
    ({"normalize_c": "yes"}, "'normalize_c' parameter"),
])
def test_bad_parameters(small, params, match):
    with pytest.raises(UFSBenchError, match=match):
        make_selector("ufsol", n_clusters=3, **params).fit(small.X)


def test_raw_triplet_weights_option_indefinite_path():
    # normalize_c=False: the raw Eq. (2) C (neither the paper's nor the authors' code's, which
    # normalises by row); L indefinite, still monotone, and the shift-invert path (Weyl shift)
    # agrees with dense LAPACK.
    ds = make_synthetic(n_samples=40, n_features=100, n_informative=5, n_clusters=2,
                        random_state=3)
    X = _zscore(ds.X)
    assert np.linalg.eigvalsh(ufsol_laplacian(X, "triplet", normalize_c=False)).min() < -1e-8
    fits = [make_selector("ufsol", n_clusters=2, random_state=0, alpha=10.0, beta=0.1,
                          normalize_c=False, solver=s, max_iter=6, n_init=2).fit(ds.X)
            for s in ("dense", "shift_invert")]
    np.testing.assert_allclose(fits[0].scores_, fits[1].scores_, atol=1e-7)
    h = np.array(fits[1].objective_history_)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h).max())
    default = make_selector("ufsol", n_clusters=2, random_state=0, alpha=10.0, beta=0.1,
                            max_iter=6, n_init=2).fit(ds.X)
    assert not np.allclose(default.scores_, fits[0].scores_)


# -- exact fast paths against the plain computation --------------------------------------------
def _reference_fit(sel, X):
    """Reference fit loop written plainly (scikit-learn KMeans in the V-step, sym of every M,
    X W recomputed, eigh_smallest): (scores, labels, objective history)."""
    from sklearn.utils import check_random_state

    from ufsbench.numerics import eigh_smallest, l21_reweight, row_norms, sym
    n, d = X.shape
    sel.n_clusters_ = sel.n_clusters
    d2 = sel._embedding_dim(d)
    rng = check_random_state(sel.random_state)
    X = sel._preprocess(X)
    X = X[:, X.std(axis=0) > 0]                     # the fit's constant-feature filter (a copy)
    sel.alpha_ = 0.0 if sel.graph == "none" else float(sel.alpha)
    solver = sel.solver
    gram = solver == "dense"
    sel._x_norm2 = float(np.linalg.norm(X, 2) ** 2)
    if gram:
        base = X.T @ X
        if sel.alpha_ > 0:
            base += sel.alpha_ * graph_gram(X, sel.graph, k=sel.k, sigma=sel.sigma)
    else:
        base = sel.alpha_ * ufsol_laplacian(X, sel.graph, k=sel.k, sigma=sel.sigma) + np.eye(n)
    W = np.zeros((d, d2))
    W[rng.choice(d, size=d2, replace=False), np.arange(d2)] = 1.0
    labels, history = None, []
    for t in range(sel.max_iter):
        r_diag = l21_reweight(W, eps=sel.eps, factor=1.0)
        Y = X @ W
        seed = int(rng.randint(np.iinfo(np.int32).max))
        cands = [KMeans(d2, init="k-means++", n_init=sel.n_init, random_state=seed).fit(Y).labels_]
        if labels is not None:
            cands.insert(0, labels)
            present = np.unique(labels)
            if len(present) == d2:
                centres = np.vstack([Y[labels == lab].mean(axis=0) for lab in present])
                cands.insert(1, KMeans(d2, init=centres, n_init=1).fit(Y).labels_)
        labels = cands[int(np.argmin([within_cluster_sse(Y, lab) for lab in cands]))]
        if gram:
            VX = indicator_projection(X, labels)
            M = sym(base - VX.T @ VX)
            G = M.copy()
            G[np.diag_indices_from(G)] += 0.5 * sel.beta * r_diag
            W = eigh_smallest(G, d2)[1]
        else:
            M = sym(base - indicator_gram(labels))
            W = sel._w_step(X, M, r_diag, d2, W, solver)
        history.append(sel._objective(X @ W, M, W, gram=gram))
        if t > 0 and abs(history[-2] - history[-1]) < sel.tol * max(abs(history[-2]), 1e-300):
            break
    return row_norms(W), labels, history


@pytest.mark.parametrize("graph,alpha,beta,solver", [
    ("triplet", 1.0, 1.0, "dense"), ("maxmargin", 1e-2, 1e2, "dense"),
    ("similarity", 1e2, 1e-4, "dense"), ("none", 1.0, 1e4, "dense"),
    ("triplet", 1e2, 1.0, "shift_invert"), ("maxmargin", 1.0, 1e-2, "shift_invert")])
def test_fit_equals_reference_computation(graph, alpha, beta, solver):
    # The fast V-step (exact K-means, duplicate candidates skipped) and the loop's saved passes
    # must give the plain loop's fit bit for bit (no round-off changes at all).
    d = 30 if solver == "dense" else 90
    data = make_synthetic(n_samples=40, n_features=d, n_informative=5, n_clusters=3,
                          random_state=2)
    params = dict(n_clusters=3, random_state=5, graph=graph, alpha=alpha, beta=beta,
                  solver=solver, preprocess="zscore", max_iter=12, n_init=4)
    fast = make_selector("ufsol", **params).fit(data.X)
    scores, labels, history = _reference_fit(make_selector("ufsol", **params), data.X)
    np.testing.assert_array_equal(fast.scores_, scores)
    np.testing.assert_array_equal(fast.labels_, labels)
    assert fast.objective_history_ == history


@pytest.mark.parametrize("solver", ["dense", "shift_invert"])
def test_unit_norm_rows_at_beta_far_above_alpha_are_tied_in_the_seeded_order(solver):
    """At beta = 1e6, alpha = 1e-6 W sits on n_components coordinate axes: row norms of 1 up to
    an ulp, whose order compared exactly is round-off's (ORL, binalpha). They are tied, ordered
    by the permutation random_state seeds, and a 1e-15 perturbation of the data keeps the order."""
    ds = make_synthetic(n_samples=40, n_features=120, n_informative=5, n_clusters=3,
                        random_state=1)
    fit = dict(n_clusters=3, beta=1e6, alpha=1e-6, random_state=0, solver=solver)
    reference = make_selector("ufsol", **fit).fit(ds.X)
    tied = np.flatnonzero(np.abs(reference.scores_ - reference.scores_.max()) < 1e-12)
    assert tied.size == 3                                       # n_components = c rows
    assert [reference.tied_at_cut(h) for h in (1, 2, 3)] == [3, 3, 0]
    tie_key = np.random.RandomState(0).permutation(ds.X.shape[1])   # lower key first
    np.testing.assert_array_equal(reference.ranking_[:3], tied[np.argsort(tie_key[tied])])
    rng = np.random.default_rng(1)
    for _ in range(3):
        X = ds.X * (1 + 1e-15 * rng.standard_normal(ds.X.shape))
        other = make_selector("ufsol", **fit).fit(X)
        np.testing.assert_array_equal(other.ranking_[:10], reference.ranking_[:10])


# -- the authors' code's settings (the released preset) ---------------------------------------
def test_class_defaults_are_the_configs_fixed_params():
    from ufsbench.methods.ufsol import UFSOL
    from ufsbench.report import method_config

    fixed = method_config("ufsol")["params"]
    defaults = UFSOL().get_params()
    assert {name: defaults[name] for name in fixed} == fixed


def _litekmeans_data(seed=0, n=90):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    return centres[rng.integers(0, 3, n)] + rng.standard_normal((n, 2))


def test_litekmeans_is_lloyd_from_the_given_starts():
    from ufsbench.numerics.litekmeans import litekmeans

    Y = _litekmeans_data()
    for start in ([0, 1, 2], [5, 40, 77], [10, 11, 12]):
        labels, centres, sum_dist = litekmeans(Y, 3, [start])
        # a Lloyd fixed point: nearest centres and cluster means
        dist = np.linalg.norm(Y[:, None, :] - centres[None], axis=2)
        np.testing.assert_array_equal(labels, dist.argmin(axis=1))
        for j in range(3):
            np.testing.assert_allclose(centres[j], Y[labels == j].mean(axis=0), atol=1e-14)
        assert sum_dist == pytest.approx(dist[np.arange(len(Y)), labels].sum(), rel=1e-12)
        # scikit-learn's Lloyd from the same centres, run to a stable partition
        km = KMeans(3, init=Y[start], n_init=1, tol=0, algorithm="lloyd").fit(Y)
        assert_same_partition(labels, km.labels_)


def test_litekmeans_keeps_the_first_replicate_with_the_smallest_sum_of_distances():
    from ufsbench.numerics.litekmeans import litekmeans

    Y = _litekmeans_data(1)
    starts = [[0, 1, 2], [5, 40, 77], [3, 4, 5], [5, 40, 77]]
    single = [litekmeans(Y, 3, [s]) for s in starts]
    labels, _, sum_dist = litekmeans(Y, 3, starts)
    best = min(range(len(starts)), key=lambda r: (single[r][2], r))
    assert sum_dist == single[best][2]
    np.testing.assert_array_equal(labels, single[best][0])


def test_litekmeans_refills_an_empty_cluster_with_the_farthest_sample():
    from ufsbench.numerics.litekmeans import litekmeans

    Y = np.array([[0.0], [0.1], [0.2], [5.0], [9.0]])
    # two starts at the same sample: cluster 1 is empty after the first assignment and gets
    # the sample farthest from its centre (9.0), then Lloyd goes on
    labels, centres, _ = litekmeans(Y, 3, [[0, 0, 3]])
    assert len(np.unique(labels)) == 3
    np.testing.assert_array_equal(labels, [0, 0, 0, 2, 1])
    np.testing.assert_allclose(centres.ravel(), [0.1, 9.0, 5.0], atol=1e-15)


RELEASED = dict(preprocess="unit_norm", init="axes", triplet_metric="euclidean", eps=0.0,
                zero_row_norm=2.5e-7, v_step="litekmeans", n_init=3, tol=0.0, solver="dense")


def _recorded_starts(n, c, calls, replicates, seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.permutation(n)[:c].tolist() for _ in range(replicates)] for _ in range(calls)]


def test_released_first_iteration_is_the_authors_algorithm(small):
    """One iteration of the authors' UFSwithOL, computed here from its parts: unit-norm samples;
    Euclidean triplet weights; W0 = the first c axes; (U, V) from the better (smaller
    ||Y - centres[labels]||) of the initial and the iteration's litekmeans from the recorded
    starts; R_ii = 1/||W_i|| with 1/zero_row_norm on zero rows; W = the c smallest eigenvectors."""
    from ufsbench.numerics.litekmeans import litekmeans

    alpha, beta, c = 10.0, 1e-3, 3
    starts = _recorded_starts(len(small.X), c, calls=2, replicates=3)
    sel = make_selector("ufsol", n_clusters=c, alpha=alpha, beta=beta, max_iter=1,
                        kmeans_init=starts, **RELEASED).fit(small.X)
    X = small.X / np.linalg.norm(small.X, axis=1, keepdims=True)
    Y0 = X[:, :c]
    candidates = [litekmeans(Y0, c, s)[:2] for s in starts]
    residual = [np.linalg.norm(Y0 - centres[labels]) for labels, centres in candidates]
    labels = candidates[1][0] if residual[1] < residual[0] else candidates[0][0]
    np.testing.assert_array_equal(sel.labels_, labels)
    L = ordinal_laplacian(triplet_weights(X, k=5, metric="euclidean"))
    r = np.full(X.shape[1], 1 / 2.5e-7)
    r[:c] = 1.0
    G = 0.5 * beta * np.diag(r) + X.T @ (np.eye(len(X)) + alpha * L - indicator_gram(labels)) @ X
    np.testing.assert_allclose(sel.W_ @ sel.W_.T, (lambda v: v @ v.T)(np.linalg.eigh(G)[1][:, :c]),
                               atol=1e-8)


def test_released_settings_lock_on_the_initial_axes(small):
    """beta / zero_row_norm = 4e6 on every feature outside W0 keeps W on W0's axes (the authors'
    code at alpha = beta = 1): with init="axes" the top c are features 0..c-1, with
    init="random" the c drawn axes; every other squared row norm is below 1e-6 of the largest
    (the conformance module's test of a case locked on init)."""
    c = 3
    starts = _recorded_starts(len(small.X), c, calls=6, replicates=3)
    for init in ("axes", "random"):
        sel = make_selector("ufsol", n_clusters=c, alpha=1.0, beta=1.0, max_iter=5,
                            random_state=0, kmeans_init=starts, **{**RELEASED, "init": init})
        with pytest.warns(ConvergenceWarning, match="max_iter=5"):
            sel.fit(small.X)
        top = np.sort(sel.ranking_[:c])
        if init == "axes":
            np.testing.assert_array_equal(top, np.arange(c))
        else:
            assert not np.array_equal(top, np.arange(c))
        squared = sel.scores_ ** 2
        assert np.delete(squared, top).max() < 1e-6 * squared.max()
        assert sel.n_iter_ == 5 and not sel.converged_            # tol = 0: every iteration


def test_default_fit_stops_on_its_objective_test(small):
    sel = make_selector("ufsol", n_clusters=3, random_state=0, n_init=2).fit(small.X)
    h = sel.objective_history_
    assert sel.converged_ and sel.n_iter_ == len(h) < sel.max_iter
    assert abs(h[-2] - h[-1]) < sel.tol * abs(h[-2])


def test_litekmeans_v_step_draws_its_starts_from_random_state(small):
    kw = dict(n_clusters=3, alpha=1.0, beta=1e-2, max_iter=3, **RELEASED)
    fits = [make_selector("ufsol", random_state=s, **kw).fit(small.X) for s in (4, 4, 5)]
    np.testing.assert_array_equal(fits[0].scores_, fits[1].scores_)
    assert not np.array_equal(fits[0].labels_, fits[2].labels_)


def test_euclidean_triplet_graph_gram():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((50, 7))
    L = ordinal_laplacian(triplet_weights(X, k=5, metric="euclidean"))
    np.testing.assert_allclose(graph_gram(X, "triplet", k=5, metric="euclidean"), X.T @ L @ X,
                               atol=1e-12)
    assert not np.allclose(graph_gram(X, "triplet", k=5), X.T @ L @ X, atol=1e-6)


def test_conformance_property_of_a_case_locked_on_init():
    from types import SimpleNamespace

    from ufsbench.conformance.ufsol import locked_on_init, weaker_property

    c, d = 3, 12
    locked = np.r_[np.ones(c) + 1e-15, np.full(d - c, 1e-19)]
    case = {"params": {"nClass": c}, "scores": locked.tolist()}
    assert locked_on_init(case)
    assert not locked_on_init({**case, "scores": np.r_[locked[1:], locked[:1]].tolist()})
    assert weaker_property({**case, "scores": np.linspace(1, 0.1, d).tolist()}, {}) == (True, "")

    def fits(norms):
        return {50: SimpleNamespace(scores_=np.asarray(norms))}

    held, how = weaker_property(case, fits(np.sqrt(locked)))
    assert held and "locked on init" in how
    assert not weaker_property(case, fits(np.sqrt(np.r_[locked[:c], 1e-5, locked[c + 1:]])))[0]
    assert not weaker_property(case, fits(np.sqrt(np.roll(locked, 1))))[0]


@pytest.mark.parametrize("graph", ["triplet", "similarity", "none", "maxmargin"])
def test_mostly_zero_data_sparse_products_equal_dense_products(monkeypatch, graph):
    """Counts with ~3 % non-zeros, z-scored: the shift_invert W-step then runs on X's non-zero
    part plus its offset row (and the sparse alpha L + I); same iterates as dense products."""
    from ufsbench.numerics.sparse_gram import SparsePlusOffset

    rng = np.random.default_rng(6)
    X = (rng.poisson(2.0, size=(60, 300)) * (rng.random((60, 300)) < 0.03)).astype(float)
    X[:, :5] += 3.0 * rng.poisson(2.0, size=(60, 5)) * (np.arange(60) < 30)[:, None]
    taken, original = [], SparsePlusOffset.from_median

    def spy(Z):
        out = original(Z)
        taken.append(out is not None)
        return out

    params = dict(n_clusters=2, random_state=0, graph=graph, max_iter=10, tol=0.0, n_init=2)
    monkeypatch.setattr(SparsePlusOffset, "from_median", spy)
    fast = make_selector("ufsol", **params).fit(X)
    monkeypatch.setattr(SparsePlusOffset, "from_median", lambda Z: None)
    dense = make_selector("ufsol", **params).fit(X)
    assert taken == [True] and fast.solver_ == "shift_invert"
    # The first W-steps (R_ii = 1/sqrt(eps) off W0's rows) agree to the eigensolver's accuracy
    # only, ~1e-8 relative here, as dense LAPACK and the dense products do; later ones to 1e-13.
    np.testing.assert_allclose(fast.objective_history_, dense.objective_history_, rtol=1e-7)
    np.testing.assert_allclose(fast.objective_history_[-3:], dense.objective_history_[-3:],
                               rtol=1e-11)
    np.testing.assert_allclose(fast.scores_, dense.scores_, rtol=0,
                               atol=1e-8 * dense.scores_.max())
    assert np.array_equal(fast.labels_, dense.labels_)
    assert np.array_equal(fast.ranking_[:30], dense.ranking_[:30])
