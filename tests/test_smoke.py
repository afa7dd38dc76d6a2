"""`ufsbench regress --smoke-all`: the plan, the checks, the iteration budget, parallel workers,
and Ctrl-C (the fits that finished are reported, marked partial; no worker is left running)."""

import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from ufsbench import smoke
from ufsbench.regress import cli_main
from ufsbench.smoke import (
    SmokeInterrupted,
    grid_extremes,
    run_smoke,
    smoke_fits,
    within_budget,
    within_samples,
)
from ufsbench.testing import interrupt, reaped


def test_grid_extremes_take_each_list_at_its_ends():
    cfg = {"name": "x", "params": {"k": 5}, "grid": {"gamma": [10, 0.1, 1], "w": ["b", "a"]}}
    assert grid_extremes(cfg) == {"low": {"k": 5, "gamma": 0.1, "w": "b"},
                                  "high": {"k": 5, "gamma": 10, "w": "a"}}


def test_one_fit_serves_both_counts_where_the_selector_allows_it():
    fits = smoke_fits(["synthetic"], ["ls", "dgufs", "allfeatures"], max_iter=0)
    by_method = {m: [f.counts for f in fits if f.method == m] for m in ("ls", "dgufs",
                                                                        "allfeatures")}
    assert by_method["ls"] == [(5, 40), (5, 40)]                   # ranking: one fit per extreme
    assert by_method["dgufs"] == [(5,), (40,), (5,), (40,)]         # exact subset: one per count
    assert by_method["allfeatures"] == [(100,), (100,)]


def test_the_most_expensive_data_set_runs_first():
    fits = smoke_fits(["synthetic", "digits"], ["ls"])
    # digits 1797 x 64 costs n d max(n, d) = 2.1e8, synthetic 300 x 100 9e6
    assert [f.dataset for f in fits] == ["digits", "digits", "synthetic", "synthetic"]


def test_the_iteration_budget_lowers_max_iter_and_min_iter_only():
    assert within_budget("sogfs", {"gamma": 1.0, "max_iter": 50}, 2) == {"gamma": 1.0,
                                                                         "max_iter": 2}
    assert within_budget("sogfs", {"max_iter": 50, "min_iter": 5}, 2) == {"max_iter": 2,
                                                                          "min_iter": 2}
    assert within_budget("sogfs", {"max_iter": 1}, 2) == {"max_iter": 1}
    assert within_budget("sogfs", {}, 2)["max_iter"] == 2           # from the class default
    assert within_budget("sogfs", {"max_iter": 50}, 0) == {"max_iter": 50}
    assert within_budget("ls", {"k": 5}, 2) == {"k": 5}             # no iterations to cap


def test_larger_data_sets_are_cut_to_a_seeded_subsample():
    from ufsbench.datasets import load_dataset

    digits = load_dataset("digits")                                  # 1797 samples
    cut = within_samples(digits, 500)
    again = within_samples(digits, 500)
    assert cut.X.shape == (500, 64) and np.array_equal(cut.X, again.X)
    rows = [np.flatnonzero((row == digits.X).all(axis=1)) for row in cut.X[:20]]
    assert all(len(r) >= 1 for r in rows)                            # rows of the data set
    assert "smoke_subsample=500" in cut.checksum
    assert within_samples(digits, 0) is digits and within_samples(digits, 2000) is digits
    # the cost that orders the fits is the cut data set's
    fits = smoke_fits(["digits", "synthetic"], ["ls"], max_samples=200)
    assert [f.dataset for f in fits][:2] == ["synthetic", "synthetic"]


def test_smoke_rows_report_the_capped_setting_that_ran():
    df = run_smoke(["synthetic"], ["sogfs"], progress=False, max_iter=2)
    assert (df["status"] == "ok").all() and len(df) == 2
    assert (df["warnings"] == "").all()             # a capped fit's ConvergenceWarning: expected
    assert df["setting"].str.contains('"max_iter": 2').all()
    assert list(df["n_features"]) == ["5, 40", "5, 40"]


def test_a_nan_score_fails_the_check(monkeypatch):
    import ufsbench.methods.ls as ls_module

    real = ls_module.LaplacianScore._fit

    def nan_scores(self, X):
        real(self, X)
        self.scores_ = np.full(X.shape[1], np.nan)

    monkeypatch.setattr(ls_module.LaplacianScore, "_fit", nan_scores)
    df = run_smoke(["synthetic"], ["ls"], progress=False)
    assert df["status"].str.contains("NaN score").all()
    # the fit's warnings are reported in its row, by kind
    assert (df["warnings"] == "DegenerateScoresWarning").all()


def test_a_selection_of_the_wrong_size_fails_the_check(monkeypatch):
    import ufsbench.methods.ls as ls_module

    real = ls_module.LaplacianScore.top_features
    monkeypatch.setattr(ls_module.LaplacianScore, "top_features",
                        lambda self, m: real(self, m)[:-1] if m == 40 else real(self, m))
    df = run_smoke(["synthetic"], ["ls"], progress=False)
    assert list(df["status"]) == ["m=40: selected 39 features, expected 40"] * 2


def test_parallel_smoke_all_gives_the_sequential_rows_in_plan_order():
    methods = ["ls", "variance", "allfeatures", "dgufs"]
    one = run_smoke(["synthetic"], methods, progress=False)
    two = run_smoke(["synthetic"], methods, progress=False, n_jobs=2)
    assert len(one) == 2 + 2 + 2 + 4
    assert two.drop(columns="seconds").equals(one.drop(columns="seconds"))
    assert (two["status"] == "ok").all()


@pytest.mark.parametrize("option", [["--max-iter", "-1"], ["--n-jobs", "0"],
                                    ["--max-samples", "-5"]])
def test_bad_smoke_options_are_refused_in_one_line(option, capsys):
    from ufsbench.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["regress", "--smoke-all", "--datasets", "synthetic", "--methods", "ls", *option])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option[0] in err


# -- Ctrl-C ----------------------------------------------------------------------------------
# Every fit after the first sleeps (interruptibly) long enough to be interrupted in: where the
# interrupt lands does not depend on how fast this machine fits.
SLOW_AFTER_FIRST = textwrap.dedent("""
    import signal
    import sys
    import time

    import ufsbench.smoke as smoke
    from ufsbench.cli import main

    # A shell that starts the tests in the background (cmd &) passes SIGINT on ignored, and
    # Python then raises no KeyboardInterrupt: give the child the handler a terminal gives.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    real, calls = smoke.check_fit, []

    def check_fit(*args, **kwargs):
        if calls:
            time.sleep(120)
        calls.append(1)
        return real(*args, **kwargs)

    smoke.check_fit = check_fit
    main(sys.argv[1:])
""")


def test_ctrl_c_writes_a_partial_report_and_exits_130(tmp_path):
    script, report = tmp_path / "slow_smoke.py", tmp_path / "smoke" / "smoke-all.md"
    script.write_text(SLOW_AFTER_FIRST)
    # ls and variance: one fit per grid extreme (both counts); allfeatures: 2. 6 fits.
    proc = subprocess.Popen([sys.executable, str(script), "regress", "--smoke-all", "--datasets",
                             "synthetic", "--methods", "ls", "variance", "allfeatures",
                             "--report", str(report)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        header = proc.stderr.readline()
        assert header.startswith("smoke-all: 6 fits on 1 data set(s)"), header
        first = proc.stderr.readline()  # the first fit's progress line: it finished
        assert first.startswith("  [1/6 ") and "synthetic" in first, first
        assert first.rstrip().endswith("ok"), first
        stdout, stderr = interrupt(proc)
    assert proc.returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines == [f"ufsbench: smoke-all interrupted after 1 of 6 fits; partial report in "
                     f"{report}"], stderr
    assert stdout == ""  # no outcome table claiming a finished run
    text = report.read_text()
    assert text.startswith("# ufsbench smoke-all: INTERRUPTED, partial report")
    assert "1 of 6 fits finished (1 ok); the other 5 did not finish" in text
    rows = [line for line in text.splitlines() if line.startswith("| synthetic")]
    assert len(rows) == 1 and "| ls " in rows[0] and "| ok " in rows[0]
    assert sorted(p.name for p in report.parent.iterdir()) == ["smoke-all.md"]


def test_interrupted_run_smoke_carries_the_finished_rows(monkeypatch):
    import ufsbench.smoke as smoke

    real, calls = smoke.check_fit, []

    def interrupt_third(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(smoke, "check_fit", interrupt_third)
    with pytest.raises(KeyboardInterrupt) as caught:  # still a KeyboardInterrupt to callers
        run_smoke(["synthetic"], ["ls", "allfeatures"], progress=False)
    assert isinstance(caught.value, SmokeInterrupted) and caught.value.total == 4
    assert list(caught.value.results["status"]) == ["ok", "ok"]


def test_a_finished_smoke_all_report_is_not_marked_partial(tmp_path):
    report = tmp_path / "smoke-all.md"
    cli_main(["--smoke-all", "--datasets", "synthetic", "--methods", "allfeatures", "--quiet",
              "--report", str(report)])
    text = report.read_text()
    assert text.startswith("# ufsbench smoke-all\n") and "INTERRUPTED" not in text
    assert "at most 2 outer iterations" in text and "subsample of 2000" in text
    assert text.count("| synthetic") == 2


def test_smoke_progress_estimates_the_time_left_from_the_cost_still_to_run(monkeypatch):
    from ufsbench import smoke

    monkeypatch.setattr(smoke.time, "perf_counter", lambda: 130.0)
    # a quarter of the estimated cost in 30 s -> 90 s for the rest
    assert smoke._overall(3, 12, 0.25, started=100.0) == "[3/12 0:00:30 elapsed, ~0:01:30 left]"


# Parallel workers: each fit records its worker's pid, then sleeps. The worker function lives in
# an importable module, because spawned workers import what they run.
SLOW_WORKER = textwrap.dedent("""
    import os
    import time
    from pathlib import Path

    def slow_fit(task):
        Path(__file__).with_name(f"started-{os.getpid()}").touch()
        time.sleep(300)
""")

PARALLEL_SCRIPT = textwrap.dedent("""
    import signal
    import sys

    import slow_worker
    import ufsbench.smoke as smoke
    from ufsbench.cli import main

    if __name__ == "__main__":        # spawned workers import this module as well
        signal.signal(signal.SIGINT, signal.default_int_handler)
        smoke._fit_in_worker = slow_worker.slow_fit
        main(sys.argv[1:])
""")


def _processes_with(token: str) -> list[int]:
    """Pids of the processes whose environment holds ``token`` (the command and its workers)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and token.encode() in Path(f"/proc/{entry}/environ").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


def _wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
@pytest.mark.parametrize("when", ["in the fits", "while the workers start"])
def test_ctrl_c_terminates_parallel_workers_and_leaves_none(tmp_path, when):
    (tmp_path / "slow_worker.py").write_text(SLOW_WORKER)
    (tmp_path / "smoke_parallel.py").write_text(PARALLEL_SCRIPT)
    token = f"UFSBENCH_SMOKE_TEST={uuid.uuid4().hex}"
    env = dict(os.environ, UFSBENCH_SMOKE_TEST=token.split("=")[1])
    report = tmp_path / "smoke-all.md"
    proc = subprocess.Popen([sys.executable, "smoke_parallel.py", "regress", "--smoke-all",
                             "--n-jobs", "2", "--datasets", "synthetic", "--methods", "ls",
                             "--report", str(report)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        assert proc.stderr.readline().startswith("smoke-all: 2 fits")
        if when == "in the fits":
            assert _wait_until(lambda: len(list(tmp_path.glob("started-*"))) == 2, 120), \
                "the two workers did not start their fits"
            assert len(_processes_with(token)) >= 3        # the command and its two workers
        _, stderr = interrupt(proc)
    assert proc.returncode == 130, stderr
    assert "interrupted after 0 of 2 fits" in stderr
    assert "0 of 2 fits finished" in report.read_text()
    _wait_until(lambda: not _processes_with(token), 10)
    assert _processes_with(token) == [], "processes still running after the command exited"


def test_a_refusal_of_the_data_is_reported_and_does_not_fail_the_run(capsys):
    # digits has 3 all-zero pixel columns, which DGUFS refuses before computing
    df = run_smoke(["digits"], ["dgufs"], progress=False)
    assert df["status"].str.startswith("refused: DGUFS: X has 3 all-zero feature(s)").all()
    cli_main(["--smoke-all", "--datasets", "digits", "--methods", "dgufs", "--quiet"])
    assert "0 of 4 fits ok, 4 refused their data before computing" in capsys.readouterr().out


def test_a_failing_fit_fails_the_run(monkeypatch, capsys):
    import ufsbench.smoke as smoke

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(smoke, "check_fit", broken)
    with pytest.raises(SystemExit) as stop:
        cli_main(["--smoke-all", "--datasets", "synthetic", "--methods", "ls", "--quiet"])
    assert stop.value.code == 1
    out = capsys.readouterr().out
    assert "RuntimeError: boom" in out and "0 of 2 fits ok, 0 refused" in out and "2 failed" in out


def test_the_previous_run_orders_the_fits_and_scales_the_rest(tmp_path):
    rows = tmp_path / "smoke-all.csv"
    rows.write_text("dataset,method,grid,setting,n_features,seconds,status,warnings\n"
                    "synthetic,ls,low,{},\"5, 40\",1.0,ok,\n"
                    "synthetic,variance,high,{},\"5, 40\",9.0,ok,\n")
    previous = smoke.previous_seconds(rows)
    assert previous == {("synthetic", "ls", "low", "5, 40"): 1.0,
                        ("synthetic", "variance", "high", "5, 40"): 9.0}
    fits = smoke_fits(["synthetic"], ["ls", "variance"], previous=previous)
    # the known fits carry their seconds, the others their size cost at the known fits' rate
    assert (fits[0].method, fits[0].grid, fits[0].cost) == ("variance", "high", 9.0)
    assert {f.cost for f in fits[1:]} == {1.0, 5.0}
    assert smoke.previous_seconds(tmp_path / "none.csv") == {}


def test_a_finished_run_writes_its_rows_beside_the_report(tmp_path):
    report = tmp_path / "smoke-all.md"
    cli_main(["--smoke-all", "--datasets", "synthetic", "--methods", "ls", "--quiet",
              "--report", str(report)])
    assert len(smoke.previous_seconds(report.with_suffix(".csv"))) == 2


def test_the_header_gives_the_time_the_previous_run_expects(tmp_path, capsys):
    report = tmp_path / "smoke-all.md"
    report.with_suffix(".csv").write_text(
        "dataset,method,grid,setting,n_features,seconds,status,warnings\n"
        "synthetic,ls,low,{},\"5, 40\",100.0,ok,\nsynthetic,ls,high,{},\"5, 40\",20.0,ok,\n")
    cli_main(["--smoke-all", "--datasets", "synthetic", "--methods", "ls", "--n-jobs", "1",
              "--report", str(report)])
    header = capsys.readouterr().err.splitlines()[0]
    assert header.endswith("1 worker(s); about 0:02:00 by the previous run's times"), header


def test_a_worker_runs_every_blas_library_on_one_thread():
    # scipy loads its own OpenBLAS on first use, after threadpoolctl's call in the worker's
    # set-up: without the environment variables its eigh ran on every core in each worker.
    code = textwrap.dedent("""
        import json
        from ufsbench import smoke
        smoke._start_worker(None, 0)
        import numpy as np
        import scipy.linalg
        scipy.linalg.eigh(np.eye(3))
        from threadpoolctl import threadpool_info
        print(json.dumps([(i["internal_api"], i["num_threads"]) for i in threadpool_info()]))
    """)
    env = {k: v for k, v in os.environ.items() if k not in smoke.ONE_THREAD_ENV}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    import json

    pools = json.loads(out)
    assert pools and all(threads == 1 for _, threads in pools), pools


@pytest.mark.parametrize("smoke_all", [True, False])
def test_a_report_path_that_cannot_be_written_is_refused_before_any_fit(
        tmp_path, capsys, monkeypatch, smoke_all):
    from ufsbench import regress
    from ufsbench.cli import main

    def no_fit(*_args, **_kwargs):
        raise AssertionError("a fit ran before the report path was checked")

    monkeypatch.setattr(smoke, "check_fit", no_fit)
    monkeypatch.setattr(regress, "run_regression", no_fit)
    blocker = tmp_path / "a_file"
    blocker.write_text("")                       # a file where the directory would go
    args = ["--smoke-all", "--datasets", "synthetic", "--methods", "ls"] if smoke_all else []
    with pytest.raises(SystemExit) as stopped:
        main(["regress", *args, "--report", str(blocker / "r.md")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"ufsbench: error: cannot write the report to {blocker / 'r.md'} (")
    assert err.endswith("); choose a writable --report path") and "\n" not in err


def test_a_first_run_orders_and_times_its_fits_by_the_reference_run():
    reference = smoke.reference_seconds()
    assert reference, "the package carries the reference run's seconds"
    fits = smoke_fits(["jaffe", "pix10p"], ["ls", "sogfs"], previous=reference)
    keys = [smoke.fit_key(f.dataset, f.method, f.grid, f.counts) for f in fits]
    assert all(key in reference for key in keys)
    assert [f.cost for f in fits] == [reference[key] for key in keys]
    # SOGFS on pix10p (a 10000 x 10000 eigendecomposition) outweighs LS on it by far; the size
    # of the data alone weighs both alike
    assert (fits[0].dataset, fits[0].method) == ("pix10p", "sogfs")
    ls_pix10p = next(f.cost for f in fits if (f.dataset, f.method) == ("pix10p", "ls"))
    assert fits[0].cost > 100 * ls_pix10p
    # another budget runs other fits: no reference
    assert smoke.reference_seconds(max_iter=5) == {} == smoke.reference_seconds(max_samples=0)


def test_the_reference_run_names_only_fits_of_the_current_plan():
    reference = smoke.reference_seconds()
    datasets = sorted({key[0] for key in reference})
    methods = sorted({key[1] for key in reference})
    plan = {smoke.fit_key(f.dataset, f.method, f.grid, f.counts)
            for f in smoke_fits(datasets, methods)}
    assert set(reference) <= plan, sorted(set(reference) - plan)[:5]
    assert len(reference) >= 0.9 * len(plan)


def test_the_header_gives_an_estimate_only_where_some_fit_has_a_time(capsys):
    # times of other fits only: the plan's costs stay size units, which are not seconds
    run_smoke(["synthetic"], ["ls"], n_jobs=1, previous={("jaffe", "ls", "low", "50"): 7.0})
    header = capsys.readouterr().err.splitlines()[0]
    assert header.endswith("1 worker(s)"), header


def test_fits_timed_at_zero_seconds_count_by_number_in_the_time_left(capsys):
    # a fast machine's previous run rounds every fit of a small plan to 0.0 s
    keys = {smoke.fit_key("synthetic", "ls", grid, "5, 40"): 0.0 for grid in ("low", "high")}
    rows = run_smoke(["synthetic"], ["ls"], n_jobs=1, previous=keys)
    assert list(rows["status"]) == ["ok", "ok"]
    progress = capsys.readouterr().err.splitlines()[1:]
    assert [line.split()[0] for line in progress] == ["[1/2", "[2/2"]
