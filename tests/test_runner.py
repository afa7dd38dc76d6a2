import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from ufsbench import runner
from ufsbench.datasets import Dataset, load_dataset
from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.methods.mcfs import MCFS
from ufsbench.records import load_results
from ufsbench.report import method_config
from ufsbench.results import ResultStore, StoreWriteError
from ufsbench.runner import (
    EvaluationProtocol,
    expand_grid,
    feature_counts_for,
    plan_tasks,
    resolve_n_jobs,
    run_sweep,
)

PROTOCOL = EvaluationProtocol(n_runs=3)


def test_expand_grid_is_the_cartesian_product_plus_default():
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
           "default": {"weight": "heat"}}
    assert expand_grid(cfg) == [{"k": 5, "weight": "heat"}, {"k": 5, "weight": "binary"}]
    cfg["grid"] = {"k": [3, 4]}
    assert expand_grid(cfg) == [{"k": 3}, {"k": 4}, {"k": 5, "weight": "heat"}]


def test_expand_grid_rejects_unknown_parameter():
    with pytest.raises(UFSBenchError, match="unknown parameter.*alpha.*'ls'"):
        expand_grid({"name": "ls", "grid": {"alpha": [1]}})


def test_feature_counts_capped_at_d():
    assert feature_counts_for([50, 100, 150], 120, "ranking") == [50, 100, 120]
    assert feature_counts_for([50, 100], 64, "all") == [64]


def test_n_jobs_times_threads_within_cores():
    cores = os.cpu_count()
    for n_jobs in (-1, 1, 2, 64):
        workers, threads = resolve_n_jobs(n_jobs, n_tasks=10)
        assert workers * threads <= max(cores, 1) and workers >= 1 and threads >= 1
    # A record must not depend on how many tasks were pending: one task gets no more threads.
    assert resolve_n_jobs(-1, n_tasks=1)[1] == resolve_n_jobs(-1, n_tasks=10)[1] == 1


def test_sweep_writes_one_record_per_count_and_resumes(tmp_path):
    data = load_dataset("synthetic")
    tasks = plan_tasks(data, method_config("ls"), [5, 10], PROTOCOL, 0, tmp_path)
    stats = run_sweep(data, tasks, n_jobs=1)
    assert stats["records"] == 4  # 2 settings x 2 counts
    df = load_results(tmp_path)
    assert len(df) == 4 and set(df["n_features"]) == {5, 10}
    assert all(len(r) == 3 for r in df["acc_runs"])
    again = run_sweep(data, plan_tasks(data, method_config("ls"), [5, 10], PROTOCOL, 0, tmp_path))
    assert again == {"tasks": 2, "skipped": 2, "records": 0}


def test_ranking_method_is_fitted_once_for_every_count(tmp_path):
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    run_sweep(data, plan_tasks(data, cfg, [5, 10, 20], PROTOCOL, 0, tmp_path), n_jobs=1)
    records = [json.loads(p.read_text()) for p in (tmp_path / "synthetic" / "ls").glob("*.json")]
    assert len(records) == 3
    # Nested selections from one ranking: the top 5 are inside the top 10, inside the top 20.
    by_m = {r["key"]["n_features"]: set(r["selected"]) for r in records}
    assert by_m[5] < by_m[10] < by_m[20]
    assert len({r["fit_time"] for r in records}) == 1  # one fit served all counts
    for r in records:
        assert r["env"]["numpy"] == np.__version__ and r["key"]["data_checksum"]
        # round-off-sensitive results depend on the BLAS kernel and threads: both are recorded
        assert "blas" in r["env"] and r["env"]["blas_threads"] >= 1


def test_corrupted_record_is_recomputed(tmp_path):
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    (path,) = (tmp_path / "synthetic" / "ls").glob("*.json")
    good = json.loads(path.read_text())
    path.write_text(path.read_text()[:40])  # truncated by a crash of some other tool
    with pytest.warns(UserWarning, match=str(path.name)):
        assert load_results(tmp_path).empty
    stats = run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert stats["records"] == 1 and json.loads(path.read_text())["acc"] == good["acc"]


def test_records_are_deterministic_across_runs(tmp_path):
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    for d in ("a", "b"):
        run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path / d), n_jobs=1)
    a, b = load_results(tmp_path / "a"), load_results(tmp_path / "b")
    assert a["acc_runs"].tolist() == b["acc_runs"].tolist()


def test_stale_records_are_flagged(tmp_path, monkeypatch):
    import ufsbench.records as records

    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert not load_results(tmp_path)["stale"].any()
    monkeypatch.setattr("ufsbench.datasets.registry.current_checksum", lambda name: "sha256:new")
    assert load_results(tmp_path)["stale"].all()
    assert records  # the module under test


def test_records_of_an_earlier_method_revision_are_stale_and_recomputed(tmp_path, monkeypatch):
    from ufsbench.methods.ls import LaplacianScore
    from ufsbench.report import report_tables

    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    tasks = plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path)
    # revision 0 leaves the keys as they always were (stores made before revisions stay valid)
    assert "revision" not in tasks[0].record_key(5, "kmeans")
    assert "revision" not in tasks[0].fit_key()
    run_sweep(data, tasks, n_jobs=1)
    monkeypatch.setattr(LaplacianScore, "revision", 1)
    df = load_results(tmp_path)
    assert df["stale"].all() and (df["revision"] == 0).all()
    assert "earlier revision" in report_tables(df, fmt="markdown")
    revised = plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path)
    assert revised[0].record_key(5, "kmeans")["revision"] == 1
    assert run_sweep(data, revised, n_jobs=1)["records"] == 1       # not served the old one
    df = load_results(tmp_path)
    assert sorted(df["revision"]) == [0, 1] and df.loc[df["revision"] == 1, "stale"].eq(False).all()


def test_unwritable_results_dir_gives_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = ResultStore(blocker / "sub")
    with pytest.raises(UFSBenchError, match="cannot write results.*writable results_dir"):
        store.write_record({"dataset": "d", "method": "m"}, {"acc": [1.0]})


SWEEP = [sys.executable, "-m", "ufsbench.cli", "run", "dataset=synthetic", "method=ls",
         "+method.grid.k=[3,4,5,6,7,8,9,10,11,12]", "baselines=[]", "n_jobs=1",
         "evaluation.n_runs=20",
         "feature_counts=[5,10,15,20,25,30]"]  # 120 records: enough to outlast three kills


def _records(directory):
    """Finished records (a kill may leave a half-written ``.partial`` file, never a record)."""
    return {p.name: (p.stat().st_mtime_ns, p.read_text())
            for p in directory.glob("synthetic/ls/*.json")}


def test_sigkill_mid_sweep_keeps_finished_records_and_rerun_completes(tmp_path):
    interrupted, reference = tmp_path / "interrupted", tmp_path / "reference"
    rng = np.random.default_rng(14)
    for _ in range(3):  # killed three times in a row, at random moments after some progress
        proc = subprocess.Popen(SWEEP + [f"results_dir={interrupted}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Progress is bounded in records, not seconds: a fast machine writes this sweep's
        # 120 records in well under a second, so a timed pause could let it finish.
        target = len(_records(interrupted)) + int(rng.integers(1, 8))
        deadline = time.time() + 120
        while len(_records(interrupted)) < target and time.time() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.01))  # mid-fit, mid-write or while holding a task lock
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = _records(interrupted)
    assert 0 < len(before) < 10 * 2 * 6  # k values x weights x counts: really interrupted
    assert not ResultStore(interrupted).corrupt_records()
    # The killed runs' task locks name a dead pid on this host: the rerun takes them over.
    subprocess.run(SWEEP + [f"results_dir={interrupted}"], check=True, capture_output=True)
    after = _records(interrupted)
    assert not list(interrupted.rglob("*.lock")) and not list(interrupted.rglob("*.partial"))
    for name, (mtime, text) in before.items():  # finished records were not computed again
        assert after[name] == (mtime, text)
    subprocess.run(SWEEP + [f"results_dir={reference}"], check=True, capture_output=True)
    expected = _records(reference)
    assert set(after) == set(expected)
    for name in expected:
        a, b = json.loads(after[name][1]), json.loads(expected[name][1])
        assert a["acc"] == b["acc"] and a["selected"] == b["selected"]


def test_sigterm_mid_sweep_ends_like_ctrl_c_and_keeps_finished_records(tmp_path):
    # A batch system's time limit sends SIGTERM: one line on stderr, exit 128 + 15, the
    # finished records kept and no lock or half-written file left for the rerun to clear.
    store = tmp_path / "store"
    proc = subprocess.Popen(SWEEP + [f"results_dir={store}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while len(_records(store)) < 3 and time.time() < deadline:
        time.sleep(0.002)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert [line for line in stderr.splitlines() if line.strip()] == [
        "ufsbench: terminated; every finished result is kept in the store; run the same "
        "command again to resume"]
    before = _records(store)
    assert 3 <= len(before) < 10 * 2 * 6
    assert not list(store.rglob("*.lock")) and not list(store.rglob("*.partial"))
    subprocess.run(SWEEP + [f"results_dir={store}"], check=True, capture_output=True)
    after = _records(store)
    assert len(after) == 10 * 2 * 6
    assert all(after[name] == record for name, record in before.items())


def test_method_config_scorings_extend_the_protocol(tmp_path):
    base = EvaluationProtocol(n_runs=2)
    assert base.with_scoring(None).scoring == ("kmeans",)
    both = base.with_scoring(["own_labels", "kmeans"])
    assert both.scoring == ("kmeans", "own_labels") and both.as_key() == base.as_key()
    # A subset method with labels_ gets one record per scoring and count.
    data = load_dataset("synthetic")
    cfg = {"name": "dgufs", "params": {"beta": 0.5, "alpha": 1000.0}, "grid": {}, "default": {}}
    run_sweep(data, plan_tasks(data, cfg, [10], both, 0, tmp_path), n_jobs=1)
    df = load_results(tmp_path)
    assert sorted(df["scoring"]) == ["kmeans", "own_labels"]
    assert all(len(r) == 2 for r in df["acc_runs"])


def test_fit_warnings_are_recorded_not_printed(tmp_path, recwarn):
    import warnings as _warnings

    from ufsbench.methods.ls import LaplacianScore

    original = LaplacianScore._fit

    def noisy_fit(self, X):
        _warnings.warn("inner K-means found fewer clusters", UserWarning, stacklevel=2)
        original(self, X)

    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    LaplacianScore._fit = noisy_fit
    try:
        run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    finally:
        LaplacianScore._fit = original
    (path,) = (tmp_path / "synthetic" / "ls").glob("*.json")
    assert json.loads(path.read_text())["fit_warnings"] == [
        "UserWarning: inner K-means found fewer clusters"]
    assert not [w for w in recwarn if "fewer clusters" in str(w.message)]


def test_records_say_how_many_features_tie_at_their_cut(tmp_path):
    import warnings as _warnings

    data = load_dataset("synthetic")
    cfg = {"name": "eufs", "params": {"alpha": 1e12}, "grid": {}, "default": {}}  # all scores 0
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        run_sweep(data, plan_tasks(data, cfg, [5, data.n_features], PROTOCOL, 0, tmp_path),
                  n_jobs=1)
    df = load_results(tmp_path).set_index("n_features")
    assert df.loc[5, "tied_at_cut"] == data.n_features and df.loc[data.n_features,
                                                                    "tied_at_cut"] == 0


def test_identical_subsets_are_clustered_once_and_scored_identically(tmp_path):
    data = load_dataset("synthetic")
    d = data.X.shape[1]
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
           "default": {"weight": "heat"}}
    # At m = d both settings select every feature: one clustering serves both records.
    run_sweep(data, plan_tasks(data, cfg, [5, d], PROTOCOL, 0, tmp_path), n_jobs=1)
    records = [json.loads(p.read_text()) for p in (tmp_path / "synthetic" / "ls").glob("*.json")]
    full = [r for r in records if r["key"]["n_features"] == d]
    assert len(full) == 2 and sorted(r["eval_cached"] for r in full) == [False, True]
    assert full[0]["acc"] == full[1]["acc"] and full[0]["nmi"] == full[1]["nmi"]
    # The cache is exact: a fresh store without it gives the same scores.
    fresh = tmp_path / "fresh"
    run_sweep(data, plan_tasks(data, cfg, [d], PROTOCOL, 0, fresh), n_jobs=1)
    (again,) = [json.loads(p.read_text()) for p in (fresh / "synthetic" / "ls").glob("*.json")
                if json.loads(p.read_text())["key"]["params"]["weight"] == "binary"]
    assert again["acc"] == full[0]["acc"]
    # Different subsets are never confused: the m = 5 subsets differ from m = d, so are scored anew.
    small = [r for r in records if r["key"]["n_features"] == 5]
    assert all(set(r["selected"]) != set(range(d)) for r in small)
    assert any(not r["eval_cached"] for r in small)


def test_corrupted_subset_scores_are_recomputed(tmp_path):
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    (cache_file,) = (tmp_path / "synthetic" / "_subset_scores").glob("*/*.json")
    (record_file,) = (tmp_path / "synthetic" / "ls").glob("*.json")
    good = json.loads(record_file.read_text())["acc"]
    cache_file.write_text(cache_file.read_text().replace("0.", "0.9", 1))  # tampered
    record_file.unlink()
    run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    record = json.loads(record_file.read_text())
    assert record["acc"] == good and record["eval_cached"] is False
    assert len(load_results(tmp_path)) == 1  # cache files are not read as records


def _blob_dataset():
    """Four equal, well-separated blobs: DGUFS's L has a 4-fold top eigenvalue there (up to
    round-off), so the eigensolver's start picks the basis its labels come from."""

    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 10)
    X = 0.3 * rng.standard_normal((40, 30))
    X[:, :2] += 10.0 * rng.standard_normal((4, 2))[y]
    return Dataset(name="blobs4", X=X, y=y, checksum="sha256:blobs4")


def _own_label_records(tmp_path, monkeypatch, reuse: bool) -> tuple[dict, int, list]:
    """The own_labels record of one DGUFS task, how many fits the runner made for it, and the
    start vectors of the labelling eigensolver's calls, in order."""
    import ufsbench.methods.dgufs as dgufs_module
    from ufsbench.methods.dgufs import DGUFS
    from ufsbench.testing import record_calls

    monkeypatch.setattr(DGUFS, "random_state_only_in_labels", reuse)
    eigsh_calls = record_calls(monkeypatch, dgufs_module, "seeded_eigsh")
    fits = []
    real_fit = runner._fit

    def counting_fit(*args, **kwargs):
        fits.append(args[-1])
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(runner, "_fit", counting_fit)
    data = _blob_dataset()
    cfg = {"name": "dgufs", "params": {"beta": 0.5, "alpha": 10.0}, "grid": {}, "default": {}}
    protocol = EvaluationProtocol(n_runs=8, scoring=("kmeans", "own_labels"))
    run_sweep(data, plan_tasks(data, cfg, [5], protocol, 0, tmp_path), n_jobs=1)
    (record,) = [r for r in (json.loads(p.read_text())
                             for p in (tmp_path / "blobs4" / "dgufs").glob("*.json"))
                 if r["key"]["scoring"] == "own_labels"]
    return record, len(fits), [kwargs["v0"] for _, kwargs in eigsh_calls]


def test_own_labels_redrawn_from_one_fit_equal_refits(tmp_path, monkeypatch):
    refit, refit_fits, refit_starts = _own_label_records(tmp_path / "refit", monkeypatch,
                                                         reuse=False)
    reused, reused_fits, reused_starts = _own_label_records(tmp_path / "reuse", monkeypatch,
                                                            reuse=True)
    assert (refit_fits, reused_fits) == (8, 1)  # the K-means record's fit serves every seed
    assert refit["labels_from_one_fit"] is False and reused["labels_from_one_fit"] is True
    # Whether the eight starts give different labels is decided by round-off in L's multiple
    # eigenvalue (on some BLAS kernels all give the same), so the comparison gets its teeth
    # from the starts: eight different ones, redrawn in the refits' order.
    assert len(refit_starts) == len(reused_starts) == 8
    assert len({v.tobytes() for v in refit_starts}) == 8
    for refit_start, reused_start in zip(refit_starts, reused_starts):
        assert np.array_equal(refit_start, reused_start)
    for field_name in ("acc", "nmi", "fit_seeds", "selected", "n_iter", "objective_history"):
        assert reused[field_name] == refit[field_name], field_name


def test_a_setting_whose_fit_raises_is_noted_and_the_sweep_goes_on(tmp_path, monkeypatch):
    from ufsbench.methods.ls import LaplacianScore
    from ufsbench.runner import FitFailedWarning

    real_fit = LaplacianScore._fit

    def fit_failing_on_binary(self, X):
        if self.weight == "binary":
            raise np.linalg.LinAlgError("A singular matrix detected")
        return real_fit(self, X)

    monkeypatch.setattr(LaplacianScore, "_fit", fit_failing_on_binary)
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
           "default": {"weight": "heat"}}
    with pytest.warns(FitFailedWarning, match="ls failed on synthetic.*binary.*LinAlgError"):
        stats = run_sweep(data, plan_tasks(data, cfg, [5, 10], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert stats["records"] == 2 and stats["failed"] == 1  # the heat setting is complete
    (note,) = (tmp_path / "synthetic" / "ls" / "failed").glob("*.json")
    failure = json.loads(note.read_text())
    assert failure["key"]["params"]["weight"] == "binary" and "singular" in failure["error"]
    assert len(load_results(tmp_path)) == 2  # notes are not records
    # A rerun retries the failed setting (and names it again), unless asked to skip it.
    with pytest.warns(FitFailedWarning):
        again = run_sweep(data, plan_tasks(data, cfg, [5, 10], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert again["skipped"] == 1 and again["failed"] == 1
    assert again["failures"] == [({"k": 5, "weight": "binary"},
                                  "LinAlgError: A singular matrix detected")]
    skipped = run_sweep(data, plan_tasks(data, cfg, [5, 10], PROTOCOL, 0, tmp_path), n_jobs=1,
                        skip_failed=True)
    assert skipped["skipped"] == 2 and "failed" not in skipped
    monkeypatch.setattr(LaplacianScore, "_fit", real_fit)
    retry = run_sweep(data, plan_tasks(data, cfg, [5, 10], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert retry["records"] == 2 and "failed" not in retry
    assert not note.exists()  # the setting ran through: its note is gone


def test_an_error_of_the_environment_is_not_noted_as_the_settings(tmp_path, monkeypatch):
    from ufsbench.methods.ls import LaplacianScore
    from ufsbench.runner import FitFailedWarning

    def out_of_memory(self, X):
        raise MemoryError("cannot allocate")

    monkeypatch.setattr(LaplacianScore, "_fit", out_of_memory)
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    with pytest.warns(FitFailedWarning, match="not noted: an error of the environment"):
        stats = run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert stats["failed"] == 1 and stats["failures"][0][1] == "MemoryError: cannot allocate"
    assert not list(tmp_path.rglob("failed/*.json"))


def test_dead_partials_of_subset_scores_and_failure_notes_are_cleaned(tmp_path):
    import socket

    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    (scores_dir,) = (tmp_path / "synthetic" / "_subset_scores").glob("*")
    failed_dir = tmp_path / "synthetic" / "ls" / "failed"
    failed_dir.mkdir()
    dead = f".{socket.gethostname()}.999999999.x.partial"  # a pid that cannot be alive
    for directory in (scores_dir, failed_dir):
        (directory / dead).write_text("{")
    run_sweep(data, plan_tasks(data, cfg, [5, 10], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert not list(tmp_path.rglob("*.partial"))


# -- a subset method declaring one_fit_serves_counts is fitted once per setting ----------------
# MCFS is such a method (its LARS path for a count h is a prefix of the path for the largest
# count); the records must be the ones per-count refits write (same subsets, same K-means
# scores).
MCFS_COUNTS = [5, 10, 20]
MCFS_CONFIG = {"name": "mcfs", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
               "default": {"weight": "heat"}}


@pytest.fixture(scope="module")
def mcfs_data():
    # d > n: MCFS runs its implicit-Gram LARS path (the formed-Gram path is checked in its tests).
    s = make_synthetic(n_samples=60, n_features=150, n_informative=6, n_clusters=3,
                       separation=1.0, random_state=0)
    return Dataset(name="syn60", X=s.X, y=s.y, checksum="sha256:syn60")


@pytest.fixture(scope="module")
def refit_records(mcfs_data, tmp_path_factory):
    """The records of today's per-count refits (the method's declaration switched off)."""
    results_dir = tmp_path_factory.mktemp("refit")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MCFS, "one_fit_serves_counts", False)
        _mcfs_sweep(mcfs_data, results_dir)
    return _mcfs_records(results_dir)


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


def _mcfs_sweep(mcfs_data, results_dir, counts=MCFS_COUNTS):
    tasks = plan_tasks(mcfs_data, MCFS_CONFIG, counts, PROTOCOL, 0, results_dir)
    return run_sweep(mcfs_data, tasks, n_jobs=1)


def _mcfs_records(results_dir) -> dict:
    """{(weight, n_features): record} of the K-means records."""
    out = {}
    for path in (results_dir / "syn60" / "mcfs").glob("*.json"):
        record = json.loads(path.read_text())
        out[(record["key"]["params"]["weight"], record["key"]["n_features"])] = record
    return out


def _assert_same_records(one, refit):
    assert one.keys() == refit.keys() and len(one) == 2 * len(MCFS_COUNTS)
    for key in refit:
        for field in ("selected", "acc", "nmi", "kmeans_seeds"):
            assert one[key][field] == refit[key][field], (key, field)


def test_one_fit_per_setting_writes_the_refits_records(mcfs_data, tmp_path, fits,
                                                      refit_records):
    stats = _mcfs_sweep(mcfs_data, tmp_path / "one")
    assert stats["records"] == 6
    assert sorted(fits) == [("binary", 20), ("heat", 20)]   # one fit per setting, at max count
    one = _mcfs_records(tmp_path / "one")
    assert all(r["subset_from_one_fit"] and r["one_fit_n_features"] == 20 for r in one.values())
    assert not any("subset_from_one_fit" in r for r in refit_records.values())
    _assert_same_records(one, refit_records)
    # Not nested truncations of one ranking: the comparison with refits has teeth.
    assert any(not set(one[(w, a)]["selected"]) <= set(one[(w, b)]["selected"])
               for w in ("heat", "binary") for a, b in ((5, 10), (10, 20)))


def test_undeclared_subset_method_still_refits_per_count(mcfs_data, tmp_path, fits, monkeypatch):
    monkeypatch.setattr(MCFS, "one_fit_serves_counts", False)
    monkeypatch.setattr(MCFS, "_subset_for", lambda self, m: pytest.fail("must not be called"))
    _mcfs_sweep(mcfs_data, tmp_path, counts=[5, 10])
    assert sorted(fits) == [("binary", 5), ("binary", 10), ("heat", 5), ("heat", 10)]


def test_rerun_resumes_after_a_crash_with_one_fit_for_what_is_left(mcfs_data, tmp_path, fits,
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
        _mcfs_sweep(mcfs_data, tmp_path / "one")
    first = _mcfs_records(tmp_path / "one")
    assert len(first) == 1   # the finished record was written at once
    (done_key,) = first

    monkeypatch.setattr(runner, "_kmeans_result", real_result)
    fits.clear()
    stats = _mcfs_sweep(mcfs_data, tmp_path / "one")
    assert stats["records"] == 5
    assert sorted(fits) == [("binary", 20), ("heat", 20)]
    assert _mcfs_records(tmp_path / "one")[done_key] == first[done_key]   # not redone

    # A missing smaller count alone is served by one fit at that count.
    (tmp_path / "one" / "syn60" / "mcfs" / _path_of(tmp_path / "one", ("heat", 10))).unlink()
    fits.clear()
    assert _mcfs_sweep(mcfs_data, tmp_path / "one")["records"] == 1
    assert fits == [("heat", 10)]
    fits.clear()
    assert _mcfs_sweep(mcfs_data, tmp_path / "one") == {"tasks": 2, "skipped": 2, "records": 0}
    assert fits == []
    _assert_same_records(_mcfs_records(tmp_path / "one"), refit_records)


def _path_of(results_dir, key) -> str:
    for path in (results_dir / "syn60" / "mcfs").glob("*.json"):
        record = json.loads(path.read_text())
        if (record["key"]["params"]["weight"], record["key"]["n_features"]) == key:
            return path.name
    raise AssertionError(f"no record {key}")


def _is_private_copy(X: np.ndarray) -> bool:
    return bool(X.flags.writeable) and not isinstance(X, np.memmap)


def test_worker_pool_pickles_large_arrays_instead_of_mapping_them(tmp_path, monkeypatch):
    # joblib maps arrays above 1 MB into a temp folder by default; a process-group signal
    # could leave a map registered (a leak warning at exit), kill -9 left the folder behind.
    from joblib import delayed

    from ufsbench.runner import worker_pool

    monkeypatch.setenv("JOBLIB_TEMP_FOLDER", str(tmp_path))
    X = np.zeros((400, 1000))                                   # 3.2 MB
    private = list(worker_pool(2)(delayed(_is_private_copy)(X) for _ in range(4)))
    assert private == [True] * 4
    assert not any(tmp_path.iterdir())


def test_log_progress_prints_a_line_per_interval_with_the_time_left(capsys):
    from ufsbench.runner import LogProgress

    now = [0.0]
    log = LogProgress(10, "coil20/rufs", interval=60.0, clock=lambda: now[0])
    for t in (30.0, 61.0, 90.0, 125.0, 600.0):                 # five settings finish
        now[0] = t
        log.update()
    lines = capsys.readouterr().err.splitlines()
    # At 61 s (2 done: 30.5 s each, 8 left) and at 125 s (4 done); never twice within 60 s.
    assert lines == ["coil20/rufs: 2 of 10 settings done, 0:01:01 elapsed, ~0:04:04 left",
                     "coil20/rufs: 4 of 10 settings done, 0:02:05 elapsed, ~0:03:08 left",
                     "coil20/rufs: 5 of 10 settings done, 0:10:00 elapsed, ~0:10:00 left"]
    now[0] = 2000.0
    for _ in range(4):
        log.update()                           # one line, then none within the interval
    assert capsys.readouterr().err.splitlines() == [
        "coil20/rufs: 6 of 10 settings done, 0:33:20 elapsed, ~0:22:13 left"]
    now[0] = 3000.0
    log.update()                                               # the last one says nothing
    assert log.done == 10 and capsys.readouterr().err == ""


def test_sweep_logs_progress_lines_when_stderr_is_not_a_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "PROGRESS_LOG_SECONDS", 0.0)   # a line for every setting
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {}, "grid": {"k": [3, 5, 7]}, "default": {}}
    tasks = plan_tasks(data, cfg, [5], EvaluationProtocol(n_runs=2), 0, tmp_path)
    run_sweep(data, tasks, n_jobs=1)
    lines = capsys.readouterr().err.splitlines()
    n = len(tasks)
    assert n >= 3 and [line.split(",")[0] for line in lines] == [
        f"synthetic/ls: {i} of {n} settings done" for i in range(1, n)]


def test_declared_fit_costs_grow_with_the_dense_factorisations():
    from ufsbench.methods.dgufs import DGUFS
    from ufsbench.methods.ls import LaplacianScore
    from ufsbench.methods.sogfs import SOGFS

    wide, wider = SOGFS.expected_fit_cost(100, 5000, {}), SOGFS.expected_fit_cost(100, 10000, {})
    assert 7.9 < wider.seconds / wide.seconds <= 8.0                # a d x d eigensolve: d^3
    assert "10000 x 10000 eigendecomposition" in wider.dominated_by
    usps = SOGFS.expected_fit_cost(9298, 256, {})
    assert "9298 x 9298 graph" in usps.dominated_by
    assert 79.5 / 3 < usps.seconds < 79.5 * 3              # 79.5 s measured (one BLAS thread)
    assert 42.9 / 3 < SOGFS.expected_fit_cost(6000, 256, {}).seconds < 42.9 * 3
    local = SOGFS.expected_fit_cost(9298, 256, {"neighbours": "local"})  # dense n x n steps
    assert local.seconds > 2 * usps.seconds
    assert SOGFS.expected_fit_cost(213, 676, {}).seconds < 1.0       # jaffe: 0.26 s measured
    assert SOGFS.expected_fit_cost(100, 10000, {"solver": "lanczos"}) is None   # not modelled
    assert DGUFS.expected_fit_cost(4000, 50, {}).seconds == pytest.approx(288.0)
    assert DGUFS.expected_fit_cost(4000, 50, {"max_iter": 5}).seconds == pytest.approx(28.8)
    assert LaplacianScore.expected_fit_cost(10**5, 10**5, {}) is None


def test_sf2sog_declares_its_dense_graph_steps():
    from ufsbench.methods.sf2sog import SF2SOG

    usps, big = SF2SOG.expected_fit_cost(9298, 256, {}), SF2SOG.expected_fit_cost(10000, 1000, {})
    assert 49 / 3 < usps.seconds < 49 * 3                   # 49 s measured (one BLAS thread)
    assert 96 / 3 < big.seconds < 96 * 3                    # 96 s measured, 4.6 GB peak
    assert 0.5 * 4.6e9 < big.memory_bytes < 2 * 4.6e9
    assert "10000 x 10000 graph and Cholesky" in big.dominated_by
    wide = SF2SOG.expected_fit_cost(3000, 5000, {})          # d > n: the factored solver
    assert "eigendecomposition" in wide.dominated_by
    dense = SF2SOG.expected_fit_cost(3000, 5000, {"solver": "dense"})   # M is d x d
    assert dense.seconds > 1.5 * wide.seconds and "Cholesky" in dense.dominated_by
    assert SF2SOG.expected_fit_cost(213, 676, {}).seconds < 1.0     # jaffe: 0.04 s measured


def test_cost_note_announces_long_sweeps_only():
    from ufsbench.runner import cost_note

    assert cost_note("ls", "big", 10**5, 10**4, [({}, 1)]) is None          # no cost model
    assert cost_note("dgufs", "small", 500, 50, [({}, 6)]) is None          # seconds in all
    note = cost_note("dgufs", "usps", 9298, 256, [({"alpha": 1.0}, 6), ({"alpha": 10.0}, 6)],
                     workers=2)
    assert note.startswith("note: dgufs on usps (9298 x 256): about 1:00:17 a fit on one core")
    assert "12 fit(s) to run, about 6:01:44 in all on 2 worker(s)" in note and "\n" not in note


def test_ufsol_declares_its_w_step_and_reads_mostly_zero_data_cheaper():
    from ufsbench.methods.ufsol import UFSOL

    def seconds(n, d, share=1.0, **params):
        return UFSOL.expected_fit_cost(n, d, params, share).seconds

    assert 10.4 / 3 < seconds(9298, 256) < 10.4 * 3            # USPS, dense W-step: 10.4 s
    assert 5.1 / 3 < seconds(1440, 1024) < 5.1 * 3             # coil20: 5.1 s
    assert 13.9 / 3 < seconds(1993, 4862, 0.014) < 13.9 * 3    # basehock, 1.4 % non-zero
    assert seconds(1993, 4862, 0.014) < seconds(1993, 4862) / 3     # read through non-zeros
    assert 5.3 * 40 / 3 < seconds(3000, 6200) < 5.3 * 40 * 3   # 5.3 s an iteration
    assert seconds(3000, 6200, max_iter=4) == pytest.approx(seconds(3000, 6200) / 10)
    assert "LU" in UFSOL.expected_fit_cost(3000, 6200, {}).dominated_by
    assert "6200 x 6200" in UFSOL.expected_fit_cost(3000, 6200, {"solver": "dense"}).dominated_by


def test_eufs_declares_its_admm_passes():
    from ufsbench.methods.eufs import EUFS

    measured = {(213, 676): 0.39, (1440, 1024): 6.2, (9298, 256): 8.3, (1993, 4862): 20.6,
                (10000, 1000): 31.1, (187, 20000): 7.6}
    for (n, d), seconds in measured.items():
        assert seconds / 3 < EUFS.expected_fit_cost(n, d, {}).seconds < seconds * 3, (n, d)
    assert EUFS.expected_fit_cost(10000, 1000, {"max_iter": 30}).seconds < 10


def test_rufs_declares_its_regressions():
    from ufsbench.methods.rufs import RUFS

    measured = {(213, 676): 0.15, (1440, 1024): 3.2, (9298, 256): 7.1, (1993, 4862): 9.0,
                (10000, 1000): 19.1, (187, 20000): 1.7}
    for (n, d), seconds in measured.items():
        assert seconds / 3 < RUFS.expected_fit_cost(n, d, {}).seconds < seconds * 3, (n, d)
    assert "1000 x 1000 regression system" in RUFS.expected_fit_cost(10000, 1000, {}).dominated_by
    assert "187 x 187" in RUFS.expected_fit_cost(187, 20000, {}).dominated_by
    assert RUFS.expected_fit_cost(100, 100, {"solver": "lbfgs"}) is None


def test_kmeans_ufs_declares_its_admm_by_feature_count():
    from ufsbench.methods.kmufs import KMeansUFS

    measured = {(100, 10000, 50): 4.4, (100, 10000, 100): 11.5, (100, 10000, 300): 65.3,
                (187, 20000, 100): 23.9, (3000, 2000, 300): 16.9, (9298, 256, 100): 0.75}
    for (n, d, h), seconds in measured.items():
        cost = KMeansUFS.expected_fit_cost(n, d, {"n_features_to_select": h})
        assert seconds / 3 < cost.seconds < seconds * 3, (n, d, h)
    assert KMeansUFS.expected_fit_cost(100, 10000, {}).seconds == pytest.approx(
        KMeansUFS.expected_fit_cost(100, 10000, {"n_features_to_select": 50}).seconds)


def test_subset_sweeps_pass_each_feature_count_to_the_cost_model(tmp_path):
    from ufsbench.runner import _fits_of

    data = load_dataset("synthetic")
    cfg = {"name": "kmufs", "params": {}, "grid": {"mu0": [0.1, 1.0]}, "default": {}}
    tasks = plan_tasks(data, cfg, [5, 10, 500], EvaluationProtocol(n_runs=2), 0, tmp_path)
    fits = _fits_of(tasks, data.n_features)
    assert sorted(p["n_features_to_select"] for p, _ in fits) == sorted([5, 10, 100] * len(tasks))
    assert all(k == 1 for _, k in fits)


def test_sweep_gives_the_cost_model_the_data_share_of_non_zeros(tmp_path, monkeypatch):
    import dataclasses

    from ufsbench.methods.dgufs import DGUFS
    from ufsbench.runner import nonzero_fraction
    from ufsbench.testing import record_calls

    X = np.zeros((4, 5))
    X[0, :2] = 1.0
    assert nonzero_fraction(X) == pytest.approx(0.1)
    assert nonzero_fraction(np.zeros((0, 3))) == 1.0
    data = load_dataset("synthetic")
    X = data.X.copy()
    X[::2, ::2] = X[1::2, 1::2] = 0.0                      # half the entries zero, no column
    data = dataclasses.replace(data, X=X, checksum="half-zero")
    calls = record_calls(monkeypatch, DGUFS, "expected_fit_cost")
    cfg = {"name": "dgufs", "params": {"max_iter": 2}, "grid": {}, "default": {}}
    tasks = plan_tasks(data, cfg, [5], EvaluationProtocol(n_runs=2), 0, tmp_path)
    run_sweep(data, tasks, n_jobs=1, progress=False)
    assert calls and all(args[-1] == pytest.approx(0.5) for args, _ in calls)


def test_cost_note_names_the_memory_of_the_largest_fit_not_the_longest(monkeypatch):
    import ufsbench.runner as runner
    from ufsbench.methods.base import FitCost
    from ufsbench.methods.dgufs import DGUFS

    def cost(cls, n, d, params, nonzero_fraction=1.0):
        if params["k"] == 1:
            return FitCost(100.0, 1 * 2.0**30, "long and small")
        return FitCost(10.0, 3 * 2.0**30, "short and large")
    monkeypatch.setattr(DGUFS, "expected_fit_cost", classmethod(cost))
    monkeypatch.setattr(runner, "physical_memory_bytes", lambda: 4 * 2.0**30)
    note = runner.cost_note("dgufs", "d", 10, 5, [({"k": 1}, 1), ({"k": 2}, 1)], workers=2)
    assert "(long and small; up to ~3.0 GiB)" in note
    assert note.endswith("2 such fits at once need more than this machine's 4 GiB of memory: "
                         "run with n_jobs=1")


def test_cost_note_warns_when_the_fits_need_more_memory_than_the_machine(monkeypatch):
    import ufsbench.runner as runner

    fits = [({"alpha": 1.0}, 6)]                   # DGUFS on USPS: ~5.2 GiB a fit (8 n^2 floats)
    monkeypatch.setattr(runner, "physical_memory_bytes", lambda: 64 * 2.0**30)
    assert "WARNING" not in runner.cost_note("dgufs", "usps", 9298, 256, fits, workers=2)
    monkeypatch.setattr(runner, "physical_memory_bytes", lambda: 8 * 2.0**30)
    note = runner.cost_note("dgufs", "usps", 9298, 256, fits, workers=2)
    assert note.endswith("; WARNING: 2 such fits at once need more than this machine's 8 GiB of "
                         "memory: run with n_jobs=1")
    assert "WARNING" not in runner.cost_note("dgufs", "usps", 9298, 256, fits, workers=1)
    monkeypatch.setattr(runner, "physical_memory_bytes", lambda: 4 * 2.0**30)
    assert runner.cost_note("dgufs", "usps", 9298, 256, fits, workers=1).endswith(
        "; WARNING: one fit needs more than this machine's 4 GiB of memory: use fewer samples "
        "or another method")
    monkeypatch.setattr(runner, "physical_memory_bytes", lambda: None)   # unknown: no warning
    assert "WARNING" not in runner.cost_note("dgufs", "usps", 9298, 256, fits, workers=2)


def test_sweep_prints_the_cost_note_before_its_fits(tmp_path, monkeypatch, capsys):
    # A subset method refitted per count: settings x counts fits; progress=False: no note.
    monkeypatch.setattr(runner, "COST_NOTE_SECONDS", 0.0)
    data = load_dataset("synthetic")
    cfg = {"name": "dgufs", "params": {"max_iter": 2}, "grid": {"alpha": [10.0, 100.0]},
           "default": {}}
    tasks = plan_tasks(data, cfg, [5, 10], EvaluationProtocol(n_runs=2), 0, tmp_path)
    run_sweep(data, tasks, n_jobs=1, progress=False)
    assert "note:" not in capsys.readouterr().err
    tasks = plan_tasks(data, cfg, [5, 10], EvaluationProtocol(n_runs=2), 0, tmp_path / "again")
    run_sweep(data, tasks, n_jobs=1)
    err = capsys.readouterr().err
    assert err.startswith("note: dgufs on synthetic (300 x 100): about 0:00:00 a fit")
    assert f"{2 * len(tasks)} fit(s) to run" in err
