"""The chance and variance baselines: what every method's cell is compared with."""

import numpy as np

from ufsbench.datasets import Dataset, make_synthetic
from ufsbench.methods import make_selector
from ufsbench.results import ResultStore
from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

DATA = make_synthetic(n_samples=60, n_features=30, n_informative=4, n_clusters=3,
                      random_state=0)


def test_variance_keeps_the_largest_variances():
    # Column j is z scaled by a factor: its variance is factor^2 var(z), the order is known.
    z = np.random.default_rng(0).normal(size=50)
    X = np.outer(z, [3.0, 1.0, 8.0, 2.0, 7.0, 5.0, 4.0, 6.0])
    sel = make_selector("variance", n_features_to_select=3).fit(X)
    assert list(sel.get_support(indices=True)) == [2, 4, 7]
    np.testing.assert_allclose(sel.scores_, X.var(axis=0))


def test_random_subset_is_uniform_and_seeded():
    a = make_selector("random", n_features_to_select=5, random_state=3).fit(DATA.X)
    b = make_selector("random", n_features_to_select=5, random_state=3).fit(DATA.X)
    np.testing.assert_array_equal(a.support_, b.support_)
    # Uniform: over many seeds every feature is drawn about m/d of the time.
    counts = sum(make_selector("random", n_features_to_select=5, random_state=s).fit(DATA.X)
                 .support_.astype(int) for s in range(600))
    expected = 600 * 5 / 30
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))


def _random_record(results_dir, n_runs=6, seed=0):
    data = Dataset(name="syn", X=DATA.X, y=DATA.y, checksum="sha256:syn")
    cfg = {"name": "random", "params": {}, "grid": {}, "default": {}}
    tasks = plan_tasks(data, cfg, [5], EvaluationProtocol(n_runs=n_runs), seed, results_dir)
    run_sweep(data, tasks, n_jobs=1)
    (record,) = list(ResultStore(results_dir).iter_records())
    return record


def test_the_runner_draws_a_fresh_subset_per_kmeans_run(tmp_path):
    record = _random_record(tmp_path / "a")
    draws = [tuple(s) for s in record["selected_per_run"]]
    assert len(draws) == 6 and len(set(draws)) == 6          # a new subset for every run
    assert record["kmeans_seeds"] == list(range(6)) and len(record["acc"]) == 6
    for seed, draw in enumerate(draws):                      # draw i is the fit with seed i
        fit = make_selector("random", n_features_to_select=5, n_clusters=3, random_state=seed)
        assert tuple(fit.fit(DATA.X).get_support(indices=True)) == draw
    again = _random_record(tmp_path / "b")                   # reproducible for the seed
    assert again["acc"] == record["acc"] and again["selected_per_run"] == record["selected_per_run"]
    other = _random_record(tmp_path / "c", seed=100)
    assert other["selected_per_run"] != record["selected_per_run"]
