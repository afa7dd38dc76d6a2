"""The runner fits a subset method that declares ``one_fit_serves_counts`` once per setting.

MCFS is such a method (its LARS path for a count h is a prefix of the path for the largest count);
the records must be the ones per-count refits write (same subsets, same K-means scores).
"""

import json

import pytest

from ufsbench import runner
from ufsbench.datasets import Dataset
from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.methods.mcfs import MCFS
from ufsbench.results import StoreWriteError
from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

PROTOCOL = EvaluationProtocol(n_runs=3)
COUNTS = [5, 10, 20]
CONFIG = {"name": "mcfs", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
          "default": {"weight": "heat"}}


@pytest.fixture(scope="module")
def data():
    # d > n: MCFS runs its implicit-Gram LARS path (the formed-Gram path is checked in its tests).
    s = make_synthetic(n_samples=60, n_features=150, n_informative=6, n_clusters=3,
                       separation=1.0, random_state=0)
    return Dataset(name="syn60", X=s.X, y=s.y, checksum="sha256:syn60")


@pytest.fixture(scope="module")
def refit_records(data, tmp_path_factory):
    """The records of today's per-count refits (the method's declaration switched off)."""
    results_dir = tmp_path_factory.mktemp("refit")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MCFS, "one_fit_serves_counts", False)
        _sweep(data, results_dir)
    return _records(results_dir)


@pytest.fixture
def fits(monkeypatch):
    """(weight, n_features_to_select) of every fit the runner makes."""
    made = []
    real_fit = runner._fit

    def counting_fit(task, X, n_features, random_state):
        made.append((task.params["weight"], n_features))
        return real_fit(task, X, n_features, random_state)

    monkeypatch.setattr(runner, "_fit", counting_fit)
    return made


def _sweep(data, results_dir, counts=COUNTS):
    return run_sweep(data, plan_tasks(data, CONFIG, counts, PROTOCOL, 0, results_dir), n_jobs=1)


def _records(results_dir) -> dict:
    """{(weight, n_features): record} of the K-means records."""
    out = {}
    for path in (results_dir / "syn60" / "mcfs").glob("*.json"):
        record = json.loads(path.read_text())
        out[(record["key"]["params"]["weight"], record["key"]["n_features"])] = record
    return out


def _assert_same_records(one, refit):
    assert one.keys() == refit.keys() and len(one) == 2 * len(COUNTS)
    for key in refit:
        for field in ("selected", "acc", "nmi", "kmeans_seeds"):
            assert one[key][field] == refit[key][field], (key, field)


def test_one_fit_per_setting_writes_the_refits_records(data, tmp_path, fits, refit_records):
    stats = _sweep(data, tmp_path / "one")
    assert stats["records"] == 6
    assert sorted(fits) == [("binary", 20), ("heat", 20)]   # one fit per setting, at max count
    one = _records(tmp_path / "one")
    assert all(r["subset_from_one_fit"] and r["one_fit_n_features"] == 20 for r in one.values())
    assert not any("subset_from_one_fit" in r for r in refit_records.values())
    _assert_same_records(one, refit_records)
    # Not nested truncations of one ranking: the comparison with refits has teeth.
    assert any(not set(one[(w, a)]["selected"]) <= set(one[(w, b)]["selected"])
               for w in ("heat", "binary") for a, b in ((5, 10), (10, 20)))


def test_undeclared_subset_method_still_refits_per_count(data, tmp_path, fits, monkeypatch):
    monkeypatch.setattr(MCFS, "one_fit_serves_counts", False)
    monkeypatch.setattr(MCFS, "_subset_for", lambda self, m: pytest.fail("must not be called"))
    _sweep(data, tmp_path, counts=[5, 10])
    assert sorted(fits) == [("binary", 5), ("binary", 10), ("heat", 5), ("heat", 10)]


def test_rerun_resumes_after_a_crash_with_one_fit_for_what_is_left(data, tmp_path, fits,
                                                                   monkeypatch, refit_records):
    real_result = runner._kmeans_result
    scored = []

    def crash_on_second_count(task, X, y, selected):
        scored.append(len(selected))
        if len(scored) == 2:
            raise StoreWriteError("disk full (simulated)")
        return real_result(task, X, y, selected)

    monkeypatch.setattr(runner, "_kmeans_result", crash_on_second_count)
    with pytest.raises(StoreWriteError):
        _sweep(data, tmp_path / "one")
    first = _records(tmp_path / "one")
    assert len(first) == 1   # the finished record was written at once
    (done_key,) = first

    monkeypatch.setattr(runner, "_kmeans_result", real_result)
    fits.clear()
    stats = _sweep(data, tmp_path / "one")
    assert stats["records"] == 5
    assert sorted(fits) == [("binary", 20), ("heat", 20)]
    assert _records(tmp_path / "one")[done_key] == first[done_key]   # not redone

    # A missing smaller count alone is served by one fit at that count.
    (tmp_path / "one" / "syn60" / "mcfs" / _path_of(tmp_path / "one", ("heat", 10))).unlink()
    fits.clear()
    assert _sweep(data, tmp_path / "one")["records"] == 1
    assert fits == [("heat", 10)]
    fits.clear()
    assert _sweep(data, tmp_path / "one") == {"tasks": 2, "skipped": 2, "records": 0}
    assert fits == []
    _assert_same_records(_records(tmp_path / "one"), refit_records)


def _path_of(results_dir, key) -> str:
    for path in (results_dir / "syn60" / "mcfs").glob("*.json"):
        record = json.loads(path.read_text())
        if (record["key"]["params"]["weight"], record["key"]["n_features"]) == key:
            return path.name
    raise AssertionError(f"no record {key}")
