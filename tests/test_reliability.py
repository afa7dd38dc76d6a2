"""Faults a long sweep meets: concurrent runs, stale locks, corrupted records, stale data, failing
writes, merging stores, and the dask launcher. The SIGKILL test is in test_runner.py."""

import errno
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ufsbench.datasets import Dataset, load_dataset
from ufsbench.errors import UFSBenchError
from ufsbench.records import load_results
from ufsbench.report import report_tables, select_cells
from ufsbench.results import CorruptRecordWarning, ResultStore, StoreWriteError, TaskLock, merge_stores
from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

PROTOCOL = EvaluationProtocol(n_runs=2)
LS = {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
      "default": {"weight": "heat"}}


def _sweep(data, directory, counts=(5, 10), cfg=LS, **kwargs):
    return run_sweep(data, plan_tasks(data, cfg, list(counts), PROTOCOL, 0, directory), n_jobs=1,
                     **kwargs)


def _record_texts(directory):
    return {p.name: p.read_text() for p in directory.glob("*/*/*.json")}


# -- task locks --------------------------------------------------------------------------------
def test_lock_is_exclusive_until_released(tmp_path):
    first, second = TaskLock(tmp_path / "t.lock"), TaskLock(tmp_path / "t.lock")
    assert first.acquire() and not second.acquire()
    info = json.loads((tmp_path / "t.lock").read_text())
    assert info["pid"] == os.getpid() and info["host"] == socket.gethostname()
    first.release()
    assert not (tmp_path / "t.lock").exists() and second.acquire()
    second.release()


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("owner, age, stale", [
    ("dead pid here", 0, True),          # killed on this host: stale at once
    ("live pid here", 10_000, True),     # alive but no heartbeat for ages (pid reuse, hang)
    ("live pid here", 0, False),
    ("other host", 0, False),            # cannot see its pid: trust a fresh heartbeat
    ("other host", 10_000, True),
    ("empty file", 0, False),            # owner is between creating and filling the file
    ("empty file", 60, True),
])
def test_stale_lock_detection_by_pid_host_and_age(tmp_path, owner, age, stale):
    path = tmp_path / "t.lock"
    info = {"dead pid here": {"pid": _dead_pid(), "host": socket.gethostname()},
            "live pid here": {"pid": os.getpid(), "host": socket.gethostname()},
            "other host": {"pid": 1, "host": "elsewhere.invalid"}}.get(owner)
    path.write_text(json.dumps(info) if info else "")
    past = time.time() - age
    os.utime(path, (past, past))
    lock = TaskLock(path, stale_after=600)
    assert lock.is_stale() == stale
    assert lock.acquire() == stale  # a stale lock is broken and taken over, a live one is not
    lock.release()


def test_heartbeat_keeps_a_long_task_lock_fresh(tmp_path):
    lock = TaskLock(tmp_path / "t.lock", stale_after=0.5, heartbeat=0.05)
    assert lock.acquire()
    try:
        time.sleep(0.8)
        other = TaskLock(tmp_path / "t.lock", stale_after=0.5)
        # Same host and live pid: only the age could make it stale, and the heartbeat renews it.
        assert not other.is_stale() and not other.acquire()
    finally:
        lock.release()


def test_sweep_waits_for_a_task_claimed_elsewhere_and_never_recomputes_it(tmp_path, monkeypatch):
    """A task locked by another live process is waited for; when that process writes its records
    and releases the lock, this sweep finds them and computes nothing for it."""
    from ufsbench import runner

    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    (task,) = plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path)
    holder = ResultStore(tmp_path).task_lock(task.lock_key())
    assert holder.acquire()
    polls = []

    def other_process_finishes():
        polls.append(1)
        if len(polls) == 3:
            runner.run_task(task, data.X, data.y)  # the "other process" writes the record
            holder.release()

    monkeypatch.setattr(runner, "_pause", other_process_finishes)
    computed = []
    real_fit = runner._fit
    monkeypatch.setattr(runner, "_fit", lambda *a: computed.append(1) or real_fit(*a))
    stats = run_sweep(data, plan_tasks(data, cfg, [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    assert len(polls) == 3 and stats["records"] == 0
    assert len(computed) == 1  # only the "other process" fitted
    assert len(_record_texts(tmp_path)) == 1


def test_sweep_takes_over_a_task_whose_owner_died(tmp_path):
    data = load_dataset("synthetic")
    tasks = plan_tasks(data, LS, [5], PROTOCOL, 0, tmp_path)
    path = ResultStore(tmp_path).lock_path(tasks[0].lock_key())
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname()}))
    stats = run_sweep(data, tasks, n_jobs=1)
    assert stats["records"] == 2 and not list(path.parent.iterdir())  # no lock left behind


SWEEP = [sys.executable, "-m", "ufsbench.cli", "run", "dataset=synthetic", "method=ls",
         "+method.grid.k=[3,4,5]", "baselines=[]", "n_jobs=1", "evaluation.n_runs=2",
         "feature_counts=[5,10]"]


def test_two_concurrent_runs_on_one_store_share_the_work(tmp_path):
    """Two `ufsbench run` processes at once: every record once, sound, and computed once."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen(SWEEP + [f"results_dir={tmp_path}"], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    new = [int(re.search(r"(\d+) new record", err).group(1)) for _, err in outputs]
    records = _record_texts(tmp_path)
    assert len(records) == 3 * 2 * 2  # k x weight x counts
    assert sum(new) == len(records)  # no record was computed by both processes
    assert ResultStore(tmp_path).corrupt_records() == []
    assert not list(tmp_path.glob("*/*/locks/*.lock")) and not list(tmp_path.rglob("*.partial"))
    # Both print the complete table: the one that waited saw the other's records.
    assert all(out.count("ls") >= 2 for out, _ in outputs)


# -- corrupted records ---------------------------------------------------------------------------
CORRUPTIONS = {
    "truncated": lambda text: text[: len(text) // 2],
    "empty": lambda text: "",
    "edited score": lambda text: json.dumps({**json.loads(text), "acc": [
        0.5 * a + 0.01 for a in json.loads(text)["acc"]]}, indent=1, sort_keys=True),
    "no scores": lambda text: json.dumps({k: v for k, v in json.loads(text).items()
                                          if k not in ("acc", "integrity")}),
}


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_corrupted_record_is_named_and_recomputed(tmp_path, kind):
    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    _sweep(data, tmp_path, counts=[5], cfg=cfg)
    (path,) = tmp_path.glob("synthetic/ls/*.json")
    good = path.read_text()
    path.write_text(CORRUPTIONS[kind](good))
    assert path.read_text() != good
    store = ResultStore(tmp_path)
    assert [p for p, _ in store.corrupt_records()] == [path]
    with pytest.warns(CorruptRecordWarning, match=f"recomputing corrupted record .*{path.name}"):
        stats = _sweep(data, tmp_path, counts=[5], cfg=cfg)
    fresh, expected = json.loads(path.read_text()), json.loads(good)
    assert stats["records"] == 1
    assert [fresh[k] for k in ("key", "acc", "nmi", "selected")] == \
        [expected[k] for k in ("key", "acc", "nmi", "selected")]


def test_misfiled_record_does_not_pose_as_another(tmp_path):
    data = load_dataset("synthetic")
    _sweep(data, tmp_path, counts=[5])
    first, second = sorted(tmp_path.glob("synthetic/ls/*.json"))
    second.write_text(first.read_text())  # a sound record under the wrong name
    problems = dict(ResultStore(tmp_path).corrupt_records())
    assert problems == {second: "its name does not match its key"}


# -- stale data --------------------------------------------------------------------------------
def test_results_on_changed_data_are_stale_and_never_mixed(tmp_path, monkeypatch):
    old = load_dataset("synthetic")
    _sweep(old, tmp_path, counts=[5])
    changed = Dataset("synthetic", old.X[:, ::-1].copy(), old.y, checksum="sha256:changed")
    monkeypatch.setattr("ufsbench.datasets.registry.current_checksum",
                        lambda name: "sha256:changed")
    df = load_results(tmp_path)
    assert df["stale"].all()
    _sweep(changed, tmp_path, counts=[5])  # the new data is computed, not served from the old
    df = load_results(tmp_path)
    assert len(df) == 4 and df["stale"].sum() == 2
    assert set(df.loc[~df["stale"], "data_checksum"]) == {"sha256:changed"}
    text = report_tables(df, metrics=["acc"], rules=["paper"])
    assert "2 stored record(s) were computed on a data file whose checksum has changed" in text
    (cell,) = select_cells(df, "acc", "paper")["value"]
    assert cell == df.loc[~df["stale"], "acc_mean"].max()


# -- failing writes ------------------------------------------------------------------------------
def _fail_after(n, monkeypatch, err):
    """Make every write after the first n fail with OSError(err) at os.fsync (disk full)."""
    from ufsbench import results

    calls = {"n": 0}
    real = os.fsync

    def fsync(fd):
        calls["n"] += 1
        if calls["n"] > n:
            raise OSError(err, os.strerror(err))
        return real(fd)

    monkeypatch.setattr(results.os, "fsync", fsync)


def test_disk_full_mid_sweep_keeps_finished_records_and_names_the_problem(tmp_path, monkeypatch):
    data = load_dataset("synthetic")
    _sweep(data, tmp_path, counts=[5])
    before = _record_texts(tmp_path)
    # One evaluation = its subset scores and its record, each file + directory sync; then the
    # disk fills.
    _fail_after(4, monkeypatch, errno.ENOSPC)
    with pytest.raises(StoreWriteError, match=r"No space left on device.*records written before "
                                              r"are kept.*free disk space"):
        _sweep(data, tmp_path, counts=[5, 10, 20])
    after = _record_texts(tmp_path)
    assert len(after) == len(before) + 1
    assert all(after[name] == text for name, text in before.items())
    assert not list(tmp_path.rglob("*.partial")) and not list(tmp_path.rglob("*.lock"))
    monkeypatch.undo()
    assert _sweep(data, tmp_path, counts=[5, 10, 20])["records"] == 6 - len(after)


def test_read_only_results_dir_fails_with_exit_code_2(tmp_path, monkeypatch, capsys):
    import tempfile

    from ufsbench.cli import main

    store = tmp_path / "store"
    main(["run", "dataset=synthetic", "method=ls", "baselines=[]", "n_jobs=1",
          "evaluation.n_runs=2", "feature_counts=[5]", f"results_dir={store}"])
    before = _record_texts(store)

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "dataset=synthetic", "method=ls", "baselines=[]", "n_jobs=1",
              "evaluation.n_runs=2", "feature_counts=[10]", f"results_dir={store}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("ufsbench: error: cannot write results to ")
    assert "Read-only file system" in err[-1] and "writable results_dir" in err[-1]
    assert _record_texts(store) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_real_read_only_directory(tmp_path):
    data = load_dataset("synthetic")
    _sweep(data, tmp_path, counts=[5])
    for d in [tmp_path, *tmp_path.rglob("*")]:
        if d.is_dir():
            d.chmod(0o555)
    try:
        with pytest.raises(StoreWriteError, match="cannot write results"):
            _sweep(data, tmp_path, counts=[5, 10])
    finally:
        for d in [tmp_path, *tmp_path.rglob("*")]:
            if d.is_dir():
                d.chmod(0o755)


# -- merging stores ------------------------------------------------------------------------------
def test_stores_of_two_machines_merge_without_conflicts(tmp_path):
    data = load_dataset("synthetic")
    _sweep(data, tmp_path / "a", counts=[5, 10])
    _sweep(data, tmp_path / "b", counts=[10, 20])  # overlaps a on count 10
    _sweep(data, tmp_path / "both", counts=[5, 10, 20])
    (tmp_path / "b" / "synthetic" / "ls" / "junk.json").write_text("{")
    merged = tmp_path / "merged"
    assert merge_stores(tmp_path / "a", merged) == {"copied": 4, "present": 0, "corrupt": 0,
                                                    "conflicts": 0}
    with pytest.warns(CorruptRecordWarning, match="junk.json"):
        counts = merge_stores(tmp_path / "b", merged)
    assert counts == {"copied": 2, "present": 2, "corrupt": 1, "conflicts": 0}
    assert set(_record_texts(merged)) == set(_record_texts(tmp_path / "both"))
    a, b = (load_results(d).sort_values(["params", "n_features"]) for d in (merged,
                                                                            tmp_path / "both"))
    assert a["acc_runs"].tolist() == b["acc_runs"].tolist()


def test_merge_from_a_missing_store_is_named(tmp_path):
    with pytest.raises(UFSBenchError, match="no result store at"):
        merge_stores(tmp_path / "nowhere", tmp_path / "target")


# -- dask launcher -------------------------------------------------------------------------------
def test_unknown_launcher_is_named(tmp_path):
    data = load_dataset("synthetic")
    with pytest.raises(UFSBenchError, match="unknown launcher 'slurmx'"):
        _sweep(data, tmp_path, backend="slurmx")


def test_dask_launcher_on_a_local_cluster_gives_the_local_records(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    data = load_dataset("synthetic")
    _sweep(data, tmp_path / "local")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address=None, processes=False,
                                      protocol="tcp") as cluster:
            stats = _sweep(data, tmp_path / "dask", backend="dask",
                           scheduler=cluster.scheduler_address)
    assert stats["records"] == 4
    local, remote = _record_texts(tmp_path / "local"), _record_texts(tmp_path / "dask")
    assert set(local) == set(remote)
    for name in local:
        a, b = json.loads(local[name]), json.loads(remote[name])
        assert (a["acc"], a["nmi"], a["selected"]) == (b["acc"], b["nmi"], b["selected"])
    assert np.isfinite(load_results(tmp_path / "dask")["acc_mean"]).all()


def test_unreachable_scheduler_is_named(tmp_path, monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr("ufsbench.runner.DASK_CONNECT_TIMEOUT", "2s")
    data = load_dataset("synthetic")
    with pytest.raises(UFSBenchError, match="cannot reach the dask scheduler"):
        run_sweep(data, plan_tasks(data, LS, [5], PROTOCOL, 0, tmp_path), backend="dask",
                  scheduler="tcp://127.0.0.1:1")


# -- nightly regression and smoke-all ------------------------------------------------------------
REGRESS_METHODS = ["allfeatures", "ls"]


@pytest.fixture(scope="module")
def regression_run(tmp_path_factory):
    from ufsbench.regress import run_regression

    return run_regression(REGRESS_METHODS, tmp_path_factory.mktemp("regress"), progress=False)


def test_regression_subset_is_every_method_on_two_data_sets(regression_run):
    df = regression_run
    assert set(df["dataset"]) == {"synthetic", "digits_regress"}
    assert set(df["method"]) == set(REGRESS_METHODS) and (df["error"] == "").all()
    ls = df[df["method"] == "ls"]
    assert sorted(ls["n_features"]) == [5, 10, 20, 30]
    assert all(len(s.split()) == m for s, m in zip(ls["selected"], ls["n_features"]))


def test_regress_cli_update_then_check_then_regression(tmp_path, capsys, monkeypatch,
                                                        regression_run):
    from ufsbench import regress

    ref = tmp_path / "reference"
    regress.cli_main(["--update", "--reference", str(ref), "--methods", "ls", "--quiet"])
    assert json.loads((ref / "meta.json").read_text())["methods"] == ["ls"]
    # The checks reuse the fixture's run (same code path, already computed) to stay fast.
    monkeypatch.setattr(regress, "run_regression", lambda methods, *a, **k:
                        regression_run[regression_run["method"].isin(methods)])
    regress.cli_main(["--reference", str(ref), "--methods", "ls", "--quiet",
                      "--report", str(tmp_path / "r.md")])  # returns: no SystemExit
    assert "4 of 4 rows match" in capsys.readouterr().out
    assert "| ok" in (tmp_path / "r.md").read_text()
    csv = ref / "regression.csv"
    csv.write_text(csv.read_text().replace(",0.", ",0.9", 1))  # one ACC far off
    with pytest.raises(SystemExit) as exit_info:
        regress.cli_main(["--reference", str(ref), "--methods", "ls", "--quiet"])
    assert exit_info.value.code == 1
    out = capsys.readouterr().out
    assert "ACC moved" in out and "acc_ref" in out and "1 regression(s)" in out


def test_update_of_some_methods_keeps_the_others_rows(tmp_path, monkeypatch, regression_run):
    from ufsbench import regress

    monkeypatch.setattr(regress, "run_regression", lambda methods, *a, **k:
                        regression_run[regression_run["method"].isin(methods)])
    ref = tmp_path / "reference"
    regress.cli_main(["--update", "--reference", str(ref), "--quiet"])
    before = regress.read_reference(ref)
    other = sorted(set(before["method"]) - {"ls"})[0]
    changed = regression_run.assign(acc_mean=regression_run["acc_mean"] + 0.5)
    monkeypatch.setattr(regress, "run_regression", lambda methods, *a, **k:
                        changed[changed["method"].isin(methods)])
    regress.cli_main(["--update", "--reference", str(ref), "--methods", "ls", "--quiet"])
    after = regress.read_reference(ref)
    assert len(after) == len(before) and set(after["method"]) == set(before["method"])
    moved = (after["acc_mean"] - before["acc_mean"]).round(6)
    assert (moved[after["method"] == "ls"] == 0.5).all()
    assert (moved[after["method"] == other] == 0.0).all()
    assert json.loads((ref / "meta.json").read_text())["methods"] == sorted(set(before["method"]))


@pytest.mark.parametrize("change, status", [
    (lambda ref: ref.assign(acc_mean=ref["acc_mean"] + 0.005), None),
    (lambda ref: ref.assign(acc_mean=ref["acc_mean"] - 0.05), "ACC moved"),
    (lambda ref: ref.assign(nmi_mean=ref["nmi_mean"] + 0.02), "NMI moved"),
    (lambda ref: ref.assign(selected=ref["selected"].str.replace(r"^\d+", "99", regex=True)),
     "selection changed"),
])
def test_regression_comparison_flags_changes(regression_run, change, status):
    from ufsbench.regress import compare, is_regression

    current = regression_run
    reference = change(current.drop(columns=["error"]))
    result = compare(current, reference, tol=0.01)
    flagged = result[result["status"].map(is_regression)]
    if status is None:
        assert flagged.empty
    else:
        assert len(flagged) == len(result) and flagged["status"].str.contains(status).all()


def test_missing_failed_and_new_rows(regression_run):
    from ufsbench.regress import compare, is_regression

    current = regression_run
    ref = current.drop(columns=["error"])
    ref_extra = pd.concat([ref, ref[ref["method"] == "ls"].assign(method="gone")])
    result = compare(current, ref_extra)
    assert set(result.loc[result["method"] == "gone", "status"]) == {"missing"}
    result = compare(current, ref[ref["method"] != "ls"])
    assert set(result.loc[result["method"] == "ls", "status"]) == {"new"}
    assert not result["status"].map(is_regression).any()  # a new method is not a regression
    on_synthetic = (current["method"] == "ls") & (current["dataset"] == "synthetic")
    broken = pd.concat([current[~on_synthetic],
                        pd.DataFrame([{"dataset": "synthetic", "method": "ls", "n_features": -1,
                                       "scoring": "kmeans", "error": "error: boom"}])])
    result = compare(broken, ref)
    ls = result[result["method"] == "ls"]
    assert sorted(ls["status"]) == ["error: boom", "failed", "failed", "ok", "ok"]
    assert result["status"].map(is_regression).sum() == 3


def test_regress_without_reference_names_the_fix(tmp_path):
    from ufsbench.regress import cli_main

    with pytest.raises(UFSBenchError, match="ufsbench regress --update"):
        cli_main(["--reference", str(tmp_path / "none"), "--methods", "ls", "--quiet"])


# -- workers of a killed sweep -------------------------------------------------------------------
def _process(pid):
    """(state, parent pid, start time) of a process from /proc, None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces
    return fields[0], int(fields[1]), int(fields[19])


def _children(pid):
    """{child pid: its start time} of the processes whose parent is pid."""
    children = {}
    for entry in os.listdir("/proc"):
        info = _process(entry) if entry.isdigit() else None
        if info is not None and info[1] == pid:
            children[int(entry)] = info[2]
    return children


def _running(processes):
    """The processes of {pid: start time} still running (a zombie or a reused pid is gone)."""
    return [pid for pid, start in processes.items()
            if (info := _process(pid)) is not None and info[0] not in "ZX" and info[2] == start]


def _cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
    except OSError:
        return ""


@pytest.mark.skipif(not os.path.isdir("/proc") or (os.cpu_count() or 1) < 2,
                    reason="needs /proc and two cores (one core runs the tasks in-process)")
def test_workers_of_a_killed_sweep_stop_within_seconds(tmp_path):
    """kill -9 of `ufsbench run` while its joblib workers compute: the workers exit within
    seconds instead of computing their queued tasks for minutes, and leave no live-looking claim."""
    results = tmp_path / "results"
    # A million K-means runs per task: no task can finish while the test runs.
    cmd = [sys.executable, "-m", "ufsbench.cli", "run", "dataset=synthetic", "method=ls",
           "+method.grid.k=[3,4,5,6]", "baselines=[]", "n_jobs=2", "progress=false",
           "evaluation.n_runs=1000000", "feature_counts=[5]", f"results_dir={results}"]
    with open(tmp_path / "stderr.txt", "w") as err:
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
    children = {}
    try:
        deadline = time.time() + 30
        while time.time() < deadline and proc.poll() is None:
            children = _children(proc.pid)
            workers = [p for p in children if "loky" in _cmdline(p) and "popen" in _cmdline(p)]
            if len(workers) == 2 and results.exists() and any(results.rglob("*.lock")):
                break  # a worker computes a task; the other has one or gets one now
            time.sleep(0.05)
        else:
            pytest.fail(f"the sweep did not start two workers: "
                        f"{(tmp_path / 'stderr.txt').read_text()[-2000:]}")
        children = _children(proc.pid)  # the workers and loky's resource trackers
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = time.time()
        while _running(children) and time.time() - killed < 10:
            time.sleep(0.1)
        assert not _running(children), [_cmdline(p) for p in _running(children)]
        # The workers removed their claims: another host need not wait for them to go stale.
        assert not list(results.rglob("*.lock"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _running(children):  # this test's own processes, left by a failure
            os.kill(pid, signal.SIGKILL)
