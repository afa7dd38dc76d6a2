"""Ctrl-C in `ufsbench regress --smoke-all`: the checks that finished are reported, marked partial."""

import signal
import subprocess
import sys
import textwrap

import pytest

from ufsbench.regress import SmokeInterrupted, cli_main, run_smoke

# Every check after the first sleeps (interruptibly) long enough to be interrupted in: where
# the interrupt lands does not depend on how fast this machine fits.
SLOW_AFTER_FIRST = textwrap.dedent("""
    import signal
    import sys
    import time

    import ufsbench.regress as regress
    from ufsbench.cli import main

    # A shell that starts the tests in the background (cmd &) passes SIGINT on ignored, and
    # Python then raises no KeyboardInterrupt: give the child the handler a terminal gives.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    real, calls = regress.smoke_one, []

    def smoke_one(*args, **kwargs):
        if calls:
            time.sleep(120)
        calls.append(1)
        return real(*args, **kwargs)

    regress.smoke_one = smoke_one
    main(sys.argv[1:])
""")


def test_ctrl_c_writes_a_partial_report_and_exits_130(tmp_path):
    script, report = tmp_path / "slow_smoke.py", tmp_path / "smoke" / "smoke-all.md"
    script.write_text(SLOW_AFTER_FIRST)
    # ls: 2 grid extremes x counts {5, 40}; allfeatures: 2 x all features. 6 checks.
    proc = subprocess.Popen([sys.executable, str(script), "regress", "--smoke-all", "--datasets",
                             "synthetic", "--methods", "ls", "allfeatures", "--report",
                             str(report)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()  # the first check's progress line: it finished
        assert first.startswith("  [1/6 ") and "synthetic" in first, first
        assert first.rstrip().endswith("ok"), first
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines == [f"ufsbench: smoke-all interrupted after 1 of 6 checks; partial report in "
                     f"{report}"], stderr
    assert stdout == ""  # no outcome table claiming a finished run
    text = report.read_text()
    assert text.startswith("# ufsbench smoke-all: INTERRUPTED, partial report")
    assert "1 of 6 checks finished (1 ok); the other 5 did not run" in text
    rows = [line for line in text.splitlines() if line.startswith("| synthetic")]
    assert len(rows) == 1 and "| ls " in rows[0] and "| ok " in rows[0]
    assert sorted(p.name for p in report.parent.iterdir()) == ["smoke-all.md"]


def test_interrupted_run_smoke_carries_the_finished_rows(monkeypatch):
    import ufsbench.regress as regress

    real, calls = regress.smoke_one, []

    def interrupt_third(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(regress, "smoke_one", interrupt_third)
    with pytest.raises(KeyboardInterrupt) as caught:  # still a KeyboardInterrupt to callers
        run_smoke(["synthetic"], ["ls", "allfeatures"], progress=False)
    assert isinstance(caught.value, SmokeInterrupted) and caught.value.total == 6
    assert list(caught.value.results["status"]) == ["ok", "ok"]


def test_a_finished_smoke_all_report_is_not_marked_partial(tmp_path):
    report = tmp_path / "smoke-all.md"
    cli_main(["--smoke-all", "--datasets", "synthetic", "--methods", "allfeatures", "--quiet",
              "--report", str(report)])
    text = report.read_text()
    assert text.startswith("# ufsbench smoke-all\n") and "INTERRUPTED" not in text
    assert text.count("| synthetic") == 2


def test_smoke_progress_estimates_the_time_left_from_the_finished_checks(monkeypatch):
    from ufsbench import regress

    monkeypatch.setattr(regress.time, "perf_counter", lambda: 130.0)
    # 3 of 12 checks in 30 s -> 90 s for the other 9
    assert regress._overall(3, 12, started=100.0) == "[3/12 0:00:30 elapsed, ~0:01:30 left]"


def test_parallel_smoke_all_gives_the_sequential_rows_in_order():
    methods = ["ls", "variance", "allfeatures"]
    one = run_smoke(["synthetic"], methods, progress=False)
    two = run_smoke(["synthetic"], methods, progress=False, n_jobs=2)
    # ls and variance: two grid extremes x two feature counts; allfeatures: two extremes
    assert len(one) == 4 + 4 + 2
    assert two.drop(columns="seconds").equals(one.drop(columns="seconds"))
    assert (two["status"] == "ok").all()
