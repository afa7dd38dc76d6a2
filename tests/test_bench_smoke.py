"""Smoke test of the asv benchmark suite in benchmarks/ (configuration: asv.conf.json).

Not a timing test: the synthetic benchmarks still run against the current API, and the optional
ones skip the way asv expects (NotImplementedError from setup) when their data or tools are
missing.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def suite():
    sys.path.insert(0, str(ROOT))
    try:
        import benchmarks

        yield benchmarks
    finally:
        sys.path.remove(str(ROOT))


def test_fit_benchmark_fits_what_it_says(suite):
    from benchmarks import fits

    bench = fits.Fit()
    bench.setup("ls", "100x200")
    bench.time_fit("ls", "100x200")
    assert bench.X.shape == (100, 200)
    assert bench.selector.get_support().sum() == 50


def test_sweep_writes_every_record_from_an_empty_store(suite):
    """LS's grid (weight: heat, binary; the default is heat) -> 2 settings x 3 counts."""
    from benchmarks import sweep

    bench = sweep.Sweep()
    bench.setup("ls")
    try:
        assert bench.track_records("ls") == 2 * len(sweep.FEATURE_COUNTS)
    finally:
        bench.teardown("ls")
    assert not Path(bench.tmp).exists()


def test_real_data_skips_without_data(suite, monkeypatch):
    from benchmarks import _common, real_data

    monkeypatch.delenv("UFSBENCH_DATA", raising=False)
    _common.real_data.cache_clear()
    with pytest.raises(NotImplementedError, match="UFSBENCH_DATA"):
        real_data.DefaultFit().setup("ls", "jaffe")


def test_authors_code_benchmark_skips_without_checkout(suite, monkeypatch):
    from benchmarks import authors_octave

    monkeypatch.delenv("UFSBENCH_AUTHORS_CODE", raising=False)
    bench = authors_octave.AuthorsOctave()
    times = bench.setup_cache()
    assert set(times) == {"skip"}
    with pytest.raises(NotImplementedError, match="authors' code"):
        bench.setup(times, "ls", "synthetic")


def test_authors_benchmark_times_at_least_three_calls_and_one_second(suite, monkeypatch):
    """Each side's time is its best call of at least REPEATS, and of as many more as fit in
    MIN_TIMED_SECONDS of calls, at most MAX_REPEATS."""
    import time

    from benchmarks import authors_octave

    monkeypatch.setattr(authors_octave, "MIN_TIMED_SECONDS", 0.2)
    monkeypatch.setattr(authors_octave, "MAX_REPEATS", 50)
    best, calls = authors_octave.best_of_calls(lambda: time.sleep(0.1))
    assert calls == 3 and best >= 0.1                      # slow calls: the three only
    best, calls = authors_octave.best_of_calls(lambda: time.sleep(0.02))
    assert 3 <= calls <= 11 and best >= 0.02               # stops after ~0.2 s of calls
    assert authors_octave.best_of_calls(lambda: None)[1] == 50  # at most MAX_REPEATS


def test_skfeature_benchmark_skips_without_skfeature(suite, monkeypatch):
    from benchmarks import skfeature_side_by_side as side_by_side

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "skfeature" else real_find_spec(name, *a))
    with pytest.raises(NotImplementedError, match="skfeature"):
        side_by_side.SideBySide().setup("ls", "ufsbench")


@pytest.mark.skipif(importlib.util.find_spec("asv") is None, reason="asv is not installed")
def test_asv_finds_no_problem_in_the_suite():
    """`asv check`: every benchmark's setup / call / teardown signature fits its parameters."""
    proc = subprocess.run([sys.executable, "-m", "asv", "check", "--python=same"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No problems found" in proc.stdout


def test_authors_benchmark_settings_follow_the_data_as_octave_rounds(suite):
    """SOGFS's projection is Octave's round(d / 2) (halves away from zero, not Python's round)
    and MCFS takes the data's c eigenfunctions, on our side as on the authors'."""
    from benchmarks.authors_octave import our_settings

    assert our_settings("sogfs", 201, 3)["n_components"] == 101
    assert our_settings("sogfs", 676, 10)["n_components"] == 338
    assert our_settings("mcfs", 676, 10)["n_components"] == 10
    assert "n_components" not in our_settings("ls", 676, 10)
