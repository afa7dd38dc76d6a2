"""The disk cache of per-data-set intermediates (ufsbench.cache)."""

import numpy as np
import pytest

from ufsbench import cache
from ufsbench.errors import UFSBenchError
from ufsbench.methods import make_selector
from ufsbench.numerics import knn_graph

CALLS: list[tuple] = []


def counted_gram(X, scale=1.0):
    """A module-level function whose executions are counted (cache hits do not execute it)."""
    CALLS.append((X.shape, scale))
    return scale * (X @ X.T)


def other_gram(X, scale=1.0):
    return 2.0 * scale * (X @ X.T)


def cached(func, X, **kwargs):
    """``cached_call`` at the location ``ufsbench run`` uses ($UFSBENCH_CACHE, set per test)."""
    return cache.cached_call(cache.default_location(), func, X, **kwargs)


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(30, 20))


@pytest.fixture(autouse=True)
def _fresh(tmp_path, monkeypatch):
    CALLS.clear()
    monkeypatch.setenv("UFSBENCH_CACHE", str(tmp_path / "compute"))


def test_second_call_is_a_hit_with_the_same_result(X, tmp_path):
    first = cached(counted_gram, X, min_cells=0, scale=3.0)
    second = cached(counted_gram, X, min_cells=0, scale=3.0)
    assert len(CALLS) == 1
    np.testing.assert_array_equal(first, 3.0 * (X @ X.T))
    np.testing.assert_array_equal(second, first)
    assert any((tmp_path / "compute").rglob("output.pkl"))


def test_equal_data_in_another_array_shares_the_entry(X):
    cached(counted_gram, X, min_cells=0)
    cached(counted_gram, X.copy(), min_cells=0)
    assert len(CALLS) == 1


def test_changed_data_or_parameters_recompute(X):
    cached(counted_gram, X, min_cells=0, scale=1.0)
    cached(counted_gram, X, min_cells=0, scale=2.0)
    X2 = X.copy()
    X2[0, 0] += 1e-12
    out = cached(counted_gram, X2, min_cells=0, scale=1.0)
    assert len(CALLS) == 3
    np.testing.assert_array_equal(out, X2 @ X2.T)


def test_functions_with_equal_arguments_do_not_collide(X):
    a = cached(counted_gram, X, min_cells=0)
    b = cached(other_gram, X, min_cells=0)
    np.testing.assert_allclose(b, 2.0 * a)


def test_checksum_sees_shape_and_dtype():
    z = np.zeros(12)
    keys = {cache.array_checksum(z), cache.array_checksum(z.reshape(3, 4)),
            cache.array_checksum(z.reshape(4, 3)), cache.array_checksum(z.astype(np.float32))}
    assert len(keys) == 4


def test_checksum_sees_the_memory_order_and_the_data_in_any_order():
    """Column-major data is hashed in its own order (no copy) with the order in the key: a Gram
    product's round-off depends on the layout, so C and F data must not share an entry; equal
    data in equal layouts share one; any changed entry changes the key in either layout."""
    X = np.random.default_rng(3).normal(size=(7, 5))
    F = np.asfortranarray(X)
    assert cache.array_checksum(F) != cache.array_checksum(X)
    assert cache.array_checksum(F) == cache.array_checksum(np.asfortranarray(X.copy()))
    assert cache.array_checksum(F) != cache.array_checksum(np.ascontiguousarray(X.T))  # same bytes
    for layout in (np.ascontiguousarray, np.asfortranarray):
        base = cache.array_checksum(layout(X))
        for i, j in [(0, 0), (6, 4), (3, 1)]:
            Y = layout(X.copy())
            Y[i, j] = np.nextafter(Y[i, j], np.inf)
            assert cache.array_checksum(Y) != base
    view = X[::2, ::2]                       # neither layout: hashed as a row-major copy
    assert cache.array_checksum(view) == cache.array_checksum(np.ascontiguousarray(view))
    vector = np.arange(5.0)                  # both layouts at once: one key
    assert cache.array_checksum(vector) == cache.array_checksum(np.asfortranarray(vector))


def test_code_fingerprint_changes_with_the_code():
    assert cache._code_fingerprint(counted_gram) != cache._code_fingerprint(other_gram)
    assert cache._code_fingerprint(counted_gram) == cache._code_fingerprint(counted_gram)


@pytest.mark.parametrize("value", ["off", "0", "none"])
def test_disabled_cache_always_computes_and_writes_nothing(X, tmp_path, monkeypatch, value):
    monkeypatch.setenv("UFSBENCH_CACHE", value)
    assert cache.cache_dir() is None
    cached(counted_gram, X, min_cells=0)
    cached(counted_gram, X, min_cells=0)
    assert len(CALLS) == 2


def test_small_inputs_bypass_the_disk(X, tmp_path):
    cached(counted_gram, X, min_cells=X.size + 1)
    cached(counted_gram, X, min_cells=X.size + 1)
    assert len(CALLS) == 2
    assert not (tmp_path / "compute").exists()


def test_few_samples_bypass_the_disk(X, tmp_path):
    cached(counted_gram, X, min_cells=0, min_samples=len(X) + 1)
    cached(counted_gram, X, min_cells=0, min_samples=len(X) + 1)
    assert len(CALLS) == 2
    assert not (tmp_path / "compute").exists()
    cached(counted_gram, X, min_cells=0, min_samples=len(X))
    cached(counted_gram, X, min_cells=0, min_samples=len(X))
    assert len(CALLS) == 3


def test_cheap_graph_builders_are_cached_from_their_sample_threshold(tmp_path):
    """kNN graphs (one Gram product) go to the disk only from CHEAP_BUILDERS' n on; other
    functions from min_cells on; the result is the same either way."""
    from ufsbench.numerics.graphs import sparse_knn_graph

    threshold = cache.min_samples_for(sparse_knn_graph)
    assert threshold == cache.min_samples_for(knn_graph) > 0
    assert cache.min_samples_for(counted_gram) == 0
    rng = np.random.default_rng(4)
    for n, stored in [(threshold - 1, False), (threshold, True)]:
        Xn = rng.normal(size=(n, 8))
        before = len(_entries(tmp_path / "compute"))
        first = cached(sparse_knn_graph, Xn, min_cells=0, k=3, weight="heat")
        again = cached(sparse_knn_graph, Xn, min_cells=0, k=3, weight="heat")
        assert (len(_entries(tmp_path / "compute")) > before) == stored
        direct = sparse_knn_graph(Xn, k=3, weight="heat")
        for S in (first, again):
            np.testing.assert_array_equal(S.toarray(), direct.toarray())


def test_layouts_get_their_own_entries_and_their_own_results(tmp_path):
    """The same values in C and F order: two entries, each equal to its own direct result."""
    X = np.random.default_rng(5).normal(size=(40, 30))
    F = np.asfortranarray(X)
    for data in (X, F, X, F):
        np.testing.assert_array_equal(cached(counted_gram, data, min_cells=0),
                                      counted_gram(data))
    assert len(_entries(tmp_path / "compute")) == 2


def test_default_location_is_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("UFSBENCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "ufsbench" / "compute"


def test_not_a_function_is_refused(X):
    with pytest.raises(UFSBenchError, match="needs a function"):
        cached("knn_graph", X)


def test_thin_svd_is_cached_and_exact(X):
    U, s, Vt = cache.thin_svd(X, cache.default_location(), min_cells=0)
    U2, s2, Vt2 = cache.thin_svd(X, cache.default_location(), min_cells=0)
    assert U.shape == (30, 20) and Vt.shape == (20, 20)
    np.testing.assert_allclose((U * s) @ Vt, X, atol=1e-12)
    np.testing.assert_array_equal(s2, s)


def test_clear_cache_forgets_entries(X):
    cached(counted_gram, X, min_cells=0)
    cache.clear_cache()
    cached(counted_gram, X, min_cells=0)
    assert len(CALLS) == 2


def test_laplacian_score_reads_its_graph_from_the_cache(tmp_path, monkeypatch):
    """LS on data above the size threshold: same scores cached or not, and the graph is stored."""
    X = np.random.default_rng(1).normal(size=(60, cache.DEFAULT_MIN_CELLS // 60 + 1))
    direct = make_selector("ls", n_clusters=3).fit(X).scores_   # memory=None: nothing stored
    assert not list(tmp_path.rglob("output.pkl"))
    memory = str(tmp_path / "compute")
    first = make_selector("ls", n_clusters=3, memory=memory).fit(X).scores_
    entries = list((tmp_path / "compute").rglob("output.pkl"))
    second = make_selector("ls", n_clusters=3, memory=memory).fit(X).scores_
    assert len(entries) == 1
    assert len(list((tmp_path / "compute").rglob("output.pkl"))) == 1
    np.testing.assert_array_equal(first, direct)
    np.testing.assert_array_equal(second, direct)
    np.testing.assert_allclose(cached(knn_graph, X, k=5, weight="heat", sigma=None),
                               knn_graph(X, k=5, weight="heat", sigma=None))


# -- every graph-based selector reads its data-only graph from the cache ------------------------

import sys  # noqa: E402

from ufsbench.numerics import graphs  # noqa: E402

#: One small setting per method family (kNN heat/binary graphs, local discriminant / local
#: learning Laplacians, triplet / similarity Laplacians, adaptive-neighbour initial graphs).
GRAPH_METHODS = {
    "ndfs": dict(max_iter=3), "mcfs": {}, "dgufs": dict(max_iter=3), "eufs": dict(max_iter=3),
    "rsfs": dict(max_iter=3), "spufs": dict(max_iter=3), "rufs": dict(max_iter=3),
    "rufs-knn": dict(max_iter=3, graph="knn"), "udfs": dict(max_iter=3),
    "socfs_triplet": dict(max_iter=2, inner_iter=2), "ufsol": dict(max_iter=3),
    "ufsol-similarity": dict(max_iter=3, graph="similarity"), "ldssl": dict(max_iter=3),
    "sogfs": dict(max_iter=2, inner_iter=2), "sf2sog": dict(max_iter=2),
}


def _fit_output(case: str, X, memory=None):
    method = case.split("-")[0]
    selector = make_selector(method, n_features_to_select=5, n_clusters=3, random_state=0,
                             memory=memory, **GRAPH_METHODS[case]).fit(X)
    scores = getattr(selector, "scores_", None)
    return np.asarray(scores if scores is not None else selector.support_)


@pytest.fixture
def graph_data():
    return np.abs(np.random.default_rng(2).normal(size=(40, 25)))


@pytest.fixture
def cache_everything(monkeypatch):
    """Lower the size threshold to 0 so that toy data go through the disk cache."""
    monkeypatch.setitem(cache.cached_call.__kwdefaults__, "min_cells", 0)
    monkeypatch.setitem(cache.cached_call.__kwdefaults__, "min_samples", 0)


def _entries(root):
    return sorted(str(p) for p in root.rglob("output.pkl"))


@pytest.mark.parametrize("case", sorted(GRAPH_METHODS))
def test_graph_methods_give_identical_results_cache_off_cold_and_warm(
        case, graph_data, tmp_path, monkeypatch, cache_everything):
    direct = _fit_output(case, graph_data)
    assert not _entries(tmp_path)                            # memory=None caches nothing
    memory = str(tmp_path / "compute")
    cold = _fit_output(case, graph_data, memory)
    stored = _entries(tmp_path / "compute")
    warm = _fit_output(case, graph_data, memory)
    assert stored, f"{case} stored nothing in the cache"
    assert _entries(tmp_path / "compute") == stored          # the warm fit only reads
    np.testing.assert_array_equal(cold, direct)
    np.testing.assert_array_equal(warm, direct)


def _counting(func, calls: list):
    def counted(X, **params):
        calls.append(params)
        return func(X, **params)
    return counted


@pytest.mark.parametrize("case, module, builder", [
    ("udfs", "ufsbench.methods.udfs", "local_discriminant_matrix"),
    ("dgufs", "ufsbench.methods.dgufs", "knn_graph"),
    ("rufs", "ufsbench.methods.rufs", "local_learning_matrix"),
    ("socfs_triplet", "ufsbench.methods.socfs", "sparse_triplet_weights"),
    ("ufsol", "ufsbench.methods.ufsol", "graph_gram"),
    ("sogfs", "ufsbench.methods.sogfs", "initial_graph"),
])
def test_warm_fit_does_not_build_the_graph_again(case, module, builder, graph_data, tmp_path,
                                                 monkeypatch, cache_everything):
    calls: list = []
    monkeypatch.setattr(f"{module}.{builder}",
                        _counting(getattr(sys.modules[module], builder), calls))
    memory = str(tmp_path / "compute")
    first = _fit_output(case, graph_data, memory)
    assert len(calls) == 1
    second = _fit_output(case, graph_data, memory)
    assert len(calls) == 1
    np.testing.assert_array_equal(second, first)
    np.testing.assert_array_equal(_fit_output(case, graph_data), first)   # memory=None
    assert len(calls) >= 2      # computed again (UDFS: once more inside its cached first step)


def test_grid_parameters_outside_the_graph_reuse_one_entry(graph_data, tmp_path, cache_everything):
    """A gamma sweep of UDFS builds its Laplacian (and first step) once; a new lam (part of L)
    builds new ones."""
    memory = str(tmp_path / "compute")
    make_selector("udfs", n_clusters=3, gamma=1e-2, max_iter=2, memory=memory).fit(graph_data)
    per_setting = len(_entries(tmp_path / "compute"))
    for gamma in (1.0, 1e2):
        make_selector("udfs", n_clusters=3, gamma=gamma, max_iter=2,
                      memory=memory).fit(graph_data)
    assert len(_entries(tmp_path / "compute")) == per_setting >= 1
    make_selector("udfs", n_clusters=3, lam=10.0, max_iter=2, memory=memory).fit(graph_data)
    assert len(_entries(tmp_path / "compute")) == 2 * per_setting


def test_key_covers_the_callees_of_the_cached_function(monkeypatch):
    """sparse_knn_graph's neighbour search lives in nearest_neighbors: replacing it must change
    the key (the function's own bytecode is unchanged)."""
    before = cache._closure_fingerprint(graphs.sparse_knn_graph)
    monkeypatch.setattr(graphs, "nearest_neighbors", graphs.knn_indices)
    assert cache._closure_fingerprint(graphs.sparse_knn_graph) != before


def test_key_follows_module_attribute_calls_and_declared_callees(monkeypatch):
    from ufsbench.methods import ufsol
    assert graphs.sparse_knn_graph in cache._callees(ufsol.ufsol_laplacian)
    assert graphs.knn_indices not in cache._callees(ufsol.ufsol_laplacian)
    monkeypatch.setattr(ufsol, "__cache_callees__", (graphs.knn_indices,), raising=False)
    assert graphs.knn_indices in cache._callees(ufsol.ufsol_laplacian)


def _compiled(source: str):
    """A fresh function object (new code objects at new addresses) from ``source``."""
    scope = {"__name__": "cache_test_module"}
    exec(compile(source, "<cache-test>", "exec"), scope)
    return scope["f"]


def test_key_of_nested_code_is_stable_and_sees_its_body():
    """Nested code objects (comprehensions) must not put memory addresses into the key (a later
    sweep or another worker would never hit), but their bodies must count."""
    source = "def f(X):\n    return [x * 2 for x in X]\n"
    assert cache._closure_fingerprint(_compiled(source)) == \
        cache._closure_fingerprint(_compiled(source))
    assert cache._closure_fingerprint(_compiled(source)) != \
        cache._closure_fingerprint(_compiled(source.replace("x * 2", "x * 3")))


def test_numerics_import_nothing_from_the_cache():
    import pathlib

    import ufsbench.numerics

    root = pathlib.Path(ufsbench.numerics.__file__).parent
    users = [p.name for p in root.glob("*.py") if "ufsbench.cache" in p.read_text()]
    assert users == []


def test_runner_gives_selectors_the_runs_cache_and_bounds_it(tmp_path, monkeypatch):
    from ufsbench.datasets import make_synthetic
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    monkeypatch.setitem(cache.cached_call.__kwdefaults__, "min_cells", 0)
    monkeypatch.setitem(cache.cached_call.__kwdefaults__, "min_samples", 0)
    monkeypatch.setenv("UFSBENCH_CACHE_LIMIT", "1")       # one byte: everything is trimmed
    data = make_synthetic(n_samples=40, n_features=12, n_informative=3, n_clusters=3,
                          random_state=0)
    seen = []
    real_fit = type(make_selector("ls"))._fit

    def spy(self, X):
        seen.append(self.memory)
        return real_fit(self, X)

    monkeypatch.setattr(type(make_selector("ls")), "_fit", spy)
    cfg = {"name": "ls", "params": {}, "grid": {}, "default": {}}
    tasks = plan_tasks(data, cfg, [5], EvaluationProtocol(n_runs=2), 0, tmp_path / "store")
    run_sweep(data, tasks, n_jobs=1)
    assert seen == [str(tmp_path / "compute")]
    assert cache.cache_info()["entries"] == 0              # trimmed to the limit after the sweep


def test_cache_command_shows_and_clears(tmp_path, X):
    import subprocess
    import sys

    cached(counted_gram, X, min_cells=0)
    env = {**__import__("os").environ, "UFSBENCH_CACHE": str(tmp_path / "compute")}
    run = [sys.executable, "-m", "ufsbench.cli", "cache"]
    info = subprocess.run([*run, "info"], capture_output=True, text=True, env=env, timeout=120)
    assert info.returncode == 0 and "entries:  1" in info.stdout, info.stderr
    clear = subprocess.run([*run, "clear"], capture_output=True, text=True, env=env, timeout=120)
    assert clear.returncode == 0 and "cleared 1 entries" in clear.stdout
    assert cache.cache_info()["entries"] == 0
