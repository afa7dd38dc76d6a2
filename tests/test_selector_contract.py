"""The contract every registered selector keeps (the runner relies on it; it never special-cases)."""

import numpy as np
import pytest

from ufsbench.datasets import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods import available_methods, make_selector, selector_class
from ufsbench.report import method_config
from ufsbench.runner import expand_grid

METHODS = available_methods()
DATA = make_synthetic(n_samples=60, n_features=20, n_informative=4, n_clusters=3, random_state=1)


def fitted(name, **params):
    sel = make_selector(name, n_features_to_select=5, n_clusters=3, random_state=0, **params)
    return sel.fit(DATA.X)


def test_the_papers_methods_and_baselines_are_registered():
    for name in ["allfeatures", "ls", "ufsol", "sogfs", "dgufs", "scfs", "kmufs", "mcfs", "udfs",
                 "ndfs", "rsfs", "rufs", "socfs", "socfs_triplet", "eufs", "spufs", "ldssl",
                 "sf2sog"]:
        assert name in METHODS


@pytest.mark.parametrize("name", METHODS)
def test_the_selector_contract(name, tmp_path, monkeypatch):
    from ufsbench import cache
    from ufsbench.testing import check_selector

    # Toy data stay below the cache's size thresholds: lower them so memory= is exercised.
    monkeypatch.setitem(cache.cached_call.__kwdefaults__, "min_cells", 0)
    monkeypatch.setitem(cache.cached_call.__kwdefaults__, "min_samples", 0)
    selector = make_selector(name, n_features_to_select=5, n_clusters=3, random_state=0)
    check_selector(selector, DATA.X, cache_dir=tmp_path / "cache")


@pytest.mark.parametrize("name", METHODS)
def test_config_matches_the_selector(name):
    cfg = method_config(name)
    assert cfg["name"] == name, f"configs/method/{name}.yaml is missing or misnamed"
    settings = expand_grid(cfg)  # raises on a parameter the selector does not have
    assert settings and all(isinstance(s, dict) for s in settings)
    for setting in settings:  # YAML 1.1 pitfall: 1e6 without a dot can load as the string "1e6"
        for value in setting.values():
            if isinstance(value, str):
                with pytest.raises(ValueError):
                    float(value)


@pytest.mark.parametrize("name", METHODS)
@pytest.mark.parametrize("X, message", [
    (np.where(np.eye(10, 6) == 1, np.nan, 1.0), "NaN or infinity"),
    (np.full((10, 6), np.inf), "NaN or infinity"),
    (np.ones((1, 6)), "at least 2 samples"),
    (np.ones(6), "2-D"),
])
def test_bad_input_is_named(name, X, message):
    with pytest.raises(UFSBenchError, match=message):
        make_selector(name, n_features_to_select=2, n_clusters=2).fit(X)


@pytest.mark.parametrize("name", [m for m in METHODS if selector_class(m).selection_kind != "all"])
def test_bad_counts_are_named(name):
    with pytest.raises(UFSBenchError, match="exceeds the 20 features"):
        make_selector(name, n_features_to_select=21, n_clusters=3).fit(DATA.X)
    with pytest.raises(UFSBenchError, match="exceeds the 60 samples"):
        make_selector(name, n_features_to_select=5, n_clusters=61).fit(DATA.X)
    with pytest.raises(UFSBenchError, match="unknown parameter"):
        make_selector(name, not_a_parameter=1)


def test_a_fit_whose_scores_are_all_equal_says_so():
    import warnings

    from ufsbench.methods.base import DegenerateScoresWarning

    # EUFS with a huge l2,1 weight shrinks V to zero: every score 0, selection = lowest indices.
    with pytest.warns(DegenerateScoresWarning, match="all 20 feature scores are equal"):
        shrunk = fitted("eufs", alpha=1e12)
    assert np.array_equal(shrunk.get_support(indices=True), np.arange(5))
    assert shrunk.tied_at_cut(5) == 20 and shrunk.tied_at_cut(20) == 0   # all 20 tie at any cut
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateScoresWarning)
        fitted("eufs")                                   # a fit that ranks: no warning


def test_reporting_asks_declared_capabilities_not_names():
    from ufsbench.methods.base import declared, keeps_all_features

    assert keeps_all_features("allfeatures") and not keeps_all_features("ls")
    assert not keeps_all_features("a_method_since_removed")
    assert declared("ldssl", "reconstructed") and not declared("ls", "reconstructed")
    assert declared("a_method_since_removed", "reconstructed", False) is False


def test_selector_classes_are_importable_by_name():
    import ufsbench.methods as methods
    from ufsbench.methods import LaplacianScore
    from ufsbench.methods.base import selector_class

    assert LaplacianScore is selector_class("ls")
    for name in methods.available_methods():
        cls = selector_class(name)
        assert getattr(methods, cls.__name__) is cls and cls.__name__ in dir(methods)
    with pytest.raises(AttributeError):
        methods.NoSuchSelector  # noqa: B018


class _Broken:
    """Selectors that break one clause of the contract each (not registered)."""

    @staticmethod
    def make(flaw):
        from ufsbench.methods.base import UFSSelector

        class Flawed(UFSSelector):
            def __init__(self, n_features_to_select=None, n_clusters=2, random_state=None):
                self.n_features_to_select = n_features_to_select
                self.n_clusters = n_clusters
                self.random_state = random_state

            def fit(self, X, y=None):
                if flaw == "uses_labels" and y is not None:
                    X = X[:, ::-1]
                return super().fit(X, y)

            def _fit(self, X):
                rng = np.random.default_rng(None if flaw == "random" else 0)
                self.scores_ = rng.random(X.shape[1]) if flaw == "random" else X.var(axis=0)
                if flaw == "nan":
                    self.scores_[0] = np.nan

        return Flawed(n_features_to_select=5, n_clusters=3, random_state=0)


@pytest.mark.parametrize("flaw, message", [
    ("random", "second fit"), ("uses_labels", "given labels"), ("nan", "not NaN")])
def test_the_contract_check_catches_a_broken_selector(flaw, message):
    from ufsbench.testing import check_selector

    check_selector(_Broken.make(None), DATA.X)  # the sound variant passes
    with pytest.raises(AssertionError, match=message):
        check_selector(_Broken.make(flaw), DATA.X)


@pytest.mark.parametrize("name", METHODS)
def test_parameters_after_the_count_are_keyword_only(name):
    import inspect

    params = list(inspect.signature(selector_class(name).__init__).parameters.values())[1:]
    assert params[0].name == "n_features_to_select"
    assert all(p.kind is p.KEYWORD_ONLY for p in params[1:]), name


@pytest.mark.parametrize("name", METHODS)
def test_single_threaded_blas_methods_fit_on_one_blas_thread(name, monkeypatch):
    """A method declaring ``single_threaded_blas`` runs its _fit with BLAS on one thread under a
    caller's limit of two (its lanes still see the caller's two); the others keep the caller's
    limit. The selection is the one of a fit under a limit of one."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from ufsbench.numerics.lanes import blas_thread_limit

    cls = selector_class(name)
    seen = []
    original = cls._fit

    def watched(self, X):
        seen.append(([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"],
                     blas_thread_limit()))
        return original(self, X)

    monkeypatch.setattr(cls, "_fit", watched)
    with threadpool_limits(limits=2, user_api="blas"):
        caller = blas_thread_limit()
        two = fitted(name)
    inside, lanes = seen[0]
    assert lanes == caller
    if cls.single_threaded_blas:
        assert inside and set(inside) == {1}
        with threadpool_limits(limits=1, user_api="blas"):
            one = fitted(name)
        assert np.array_equal(one.get_support(), two.get_support())
    else:
        assert set(inside) == {caller}


GRAPH_METHODS = [name for name in METHODS if "k" in selector_class(name)._parameter_constraints]


@pytest.mark.parametrize("name", GRAPH_METHODS)
def test_a_neighbour_count_the_data_cannot_have_warns_and_is_capped(name):
    # Every k >= n - 1 gives one graph: a sweep over k shows equal results, and says why.
    import warnings

    data = make_synthetic(n_samples=24, n_features=12, n_clusters=2, random_state=0)
    fits = {}
    for k in (23, 500):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            short = {"max_iter": 3} if "max_iter" in selector_class(name)._parameter_constraints \
                else {}
            sel = make_selector(name, n_features_to_select=4, n_clusters=2, random_state=0, k=k,
                                **short).fit(data.X)
        capped = [str(w.message) for w in caught if "exceeds what 24 samples allow" in str(w.message)]
        assert bool(capped) == (k == 500), (k, capped)
        fits[k] = sel.get_support(indices=True)
    assert np.array_equal(fits[23], fits[500])
