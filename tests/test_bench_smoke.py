"""Smoke test of the benchmark scripts: run_all.py's tiny profile for one method, in-process.

Not a timing test: it only makes sure the scripts still run against the current API and produce
a report with every section's table filled in.
"""

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def run_all():
    sys.path.insert(0, str(BENCH))
    try:
        import run_all as module
        yield module
    finally:
        sys.path.remove(str(BENCH))


def test_tiny_profile_runs_for_one_method(run_all, tmp_path, capsys):
    out = tmp_path / "report.md"
    run_all.main(["--profile", "tiny", "--methods", "ls", "--sections", "fit", "scaling",
                  "--out", str(out)])
    report = out.read_text()
    assert "- profile: `tiny`" in report and "- machine: " in report and "- date: " in report
    fit_rows = [line for line in report.splitlines() if line.startswith("| synthetic 40x120 | ls |")]
    assert len(fit_rows) == 1
    seconds = float(fit_rows[0].split("|")[3])
    assert seconds > 0
    scaling_rows = [line for line in report.splitlines() if line.startswith("| ls | ")]
    assert [r.split("|")[3].strip() for r in scaling_rows] == ["100 200", "60 120"]


def test_helpers_measure_what_they_say(run_all):
    import common
    import numpy as np

    assert common.jaccard([1, 2, 3], [2, 3, 4]) == pytest.approx(0.5)
    assert common.fitted_exponent([100, 200, 400], [0.1, 0.4, 1.6]) == pytest.approx(2.0)
    big = common.measure(lambda: np.ones((1000, 1000)))
    assert big.peak_mb >= 7.5 and big.seconds is not None
    slow = common.measure(lambda: [sum(range(10_000)) for _ in range(10 ** 6)], budget=0.2)
    assert slow.seconds is None and slow.time_text() == "> 0"


def test_unknown_profile_is_named(run_all):
    from ufsbench.errors import UFSBenchError

    with pytest.raises(UFSBenchError, match="unknown profile 'huge'"):
        run_all.run("huge")


def test_skfeature_section_skips_or_compares(run_all, monkeypatch, capsys):
    """Without scikit-feature the section says so instead of failing."""
    monkeypatch.setattr(run_all.bench_skfeature, "skfeature_available", lambda: False)
    text = run_all.skfeature_section(run_all.PROFILES["tiny"], ["ls"])
    assert "skipped: scikit-feature is not installed" in text
    assert "not installed" in capsys.readouterr().out


def _bench_module(name, monkeypatch):
    """A benchmark script as a module, with benchmarks/ on sys.path for its own imports."""
    monkeypatch.syspath_prepend(str(BENCH))
    return __import__(name)


def test_ls_bound_table_adds_up(tmp_path, monkeypatch):
    """bench_ls.py --bound: the 5x budget is scikit-feature's time / 5 and the bound is the Gram
    product plus one read of X, both from the rows of the same table."""
    pytest.importorskip("skfeature")
    monkeypatch.setenv("UFSBENCH_CACHE", str(tmp_path))
    text = _bench_module("bench_ls", monkeypatch).bound("synthetic:40x120", 3)
    ms = {row.split("|")[1].strip(): float(row.split("|")[2]) for row in text.splitlines()
          if row.startswith("| ") and not row.startswith("| step")}
    assert ms["5x budget (scikit-feature fit / 5)"] == pytest.approx(
        ms["scikit-feature fit (construct_W + lap_score)"] / 5, abs=0.01)
    assert ms["bound: Gram product + one read of X"] == pytest.approx(
        ms["Gram product X X^T (syrk, X as loaded)"] + ms["one read of X (X.sum())"], abs=0.02)


def test_mcfs_bound_counts_both_sides_steps(tmp_path, monkeypatch):
    """bench_mcfs.py --sections bound: our lasso steps and scikit-feature's LAR steps are counted
    (each LAR fit adds at most h steps per eigenvector), and the bound exceeds the speed-up."""
    pytest.importorskip("skfeature")
    monkeypatch.setenv("UFSBENCH_CACHE", str(tmp_path))
    bench_mcfs = _bench_module("bench_mcfs", monkeypatch)
    row = dict(zip(bench_mcfs.BOUND_HEADER, bench_mcfs.bound_row("synthetic:40x120", "binary", 1)))
    c, counts = row["c"], [min(m, 120) for m in [50, 100, 150, 200, 250, 300]]
    assert row["ours: steps"] >= c * 1
    assert 0 < row["scikit-feature: LAR steps"] <= c * sum(counts)
    # Our sweep does every product and more, so the products-alone bound exceeds the speed-up.
    assert float(row["ours: products alone s"]) < float(row["ours: sweep s (one fit)"])
    assert float(row["bound: speed-up with products alone"]) > float(row["speed-up now"])
