"""Selection stability: Nogueira et al.'s estimator, its interval, the subsample runner and
``ufsbench stability``."""

import json
import subprocess
import sys

import numpy as np
import pytest

from ufsbench.datasets import load_dataset
from ufsbench.errors import UFSBenchError
from ufsbench.stability import (
    fit_path,
    format_phi,
    load_stability,
    mean_jaccard,
    run_stability,
    selection_matrix,
    stability_estimate,
    stability_interval,
    stability_variance,
    subsample_rows,
)

# Three subsets of d = 4 features, by hand: p = (1, 2/3, 1/3, 0), kbar = 2, so
# s_f^2 = 3/2 p (1 - p) = (0, 1/3, 1/3, 0), Phi = 1 - (1/6) / (1/2 * 1/2) = 1/3. Each subset's
# phi_i = 4 (mean_f Z_if p_f - 1/4 + 1/12) = (1, 1, 2/3), so the variance is
# 4/9 * ((1/9)^2 + (1/9)^2 + (2/9)^2) = 8/243. Jaccard: (1 + 1/3 + 1/3) / 3 = 5/9.
HAND = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0]])


def test_estimator_matches_a_hand_computed_case():
    assert stability_estimate(HAND) == pytest.approx(1 / 3)
    assert stability_variance(HAND) == pytest.approx(8 / 243)
    assert mean_jaccard(HAND) == pytest.approx(5 / 9)
    phi, low, high = stability_interval(HAND)
    assert (high - phi) == pytest.approx(1.959964 * np.sqrt(8 / 243), rel=1e-6)


def test_identical_subsets_are_perfectly_stable():
    Z = selection_matrix([[3, 7, 9]] * 6, 20)
    assert stability_estimate(Z) == pytest.approx(1.0)
    assert stability_interval(Z) == pytest.approx((1.0, 1.0, 1.0))
    assert mean_jaccard(Z) == 1.0


def test_independent_random_subsets_score_about_zero():
    # B = 20 subsets of k = 50 out of d = 1000: the estimate's sd is ~0.0025 here (simulated),
    # so 0.02 is 8 sd; Jaccard stays near k / (2d - k) = 0.026 (it is not chance-corrected).
    rng = np.random.default_rng(0)
    Z = selection_matrix([rng.choice(1000, 50, replace=False) for _ in range(20)], 1000)
    assert abs(stability_estimate(Z)) < 0.02
    assert mean_jaccard(Z) == pytest.approx(50 / 1950, abs=0.01)


def _partly_stable(B, seed=0):
    """Subsets of 20 of 100 features: a fixed core of 10 plus 10 drawn at random."""
    rng = np.random.default_rng(seed)
    return selection_matrix([np.r_[np.arange(10), 10 + rng.choice(90, 10, replace=False)]
                             for _ in range(B)], 100)


def test_interval_contains_the_estimate_and_shrinks_with_more_subsets():
    widths = []
    for B in (10, 40, 160):
        phi, low, high = stability_interval(_partly_stable(B))
        assert low < phi < high
        widths.append(high - low)
    assert widths[0] > widths[1] > widths[2]


@pytest.mark.parametrize("Z, message", [
    (np.ones((3, 5)), "undefined"),            # every subset holds every feature
    (np.zeros((3, 5)), "undefined"),
    (np.ones((1, 5)), "M >= 2"),
    (np.full((2, 3), 2), "binary"),
])
def test_undefined_inputs_are_refused(Z, message):
    with pytest.raises(UFSBenchError, match=message):
        stability_estimate(Z)


def test_subsamples_are_seeded_per_index_and_do_not_depend_on_b():
    a, b = subsample_rows(100, 0.9, 0, 3), subsample_rows(100, 0.9, 0, 3)
    assert np.array_equal(a, b) and len(a) == 90 and len(np.unique(a)) == 90
    assert not np.array_equal(a, subsample_rows(100, 0.9, 0, 4))
    assert not np.array_equal(a, subsample_rows(100, 0.9, 1, 3))


@pytest.fixture(scope="module")
def synthetic():
    return load_dataset("synthetic")


def _selections(store, data, method, B):
    from ufsbench.stability import _units

    units = _units(data, method, {}, [10], B, 0.9, 0)
    return [json.loads(fit_path(store, u.key).read_text())["selected"]["10"] for u in units]


def test_random_baseline_draws_differ_per_subsample_and_repeat_exactly(tmp_path, synthetic):
    first = run_stability(synthetic, "random", {}, [10], 6, results_dir=tmp_path / "a")[0]
    again = run_stability(synthetic, "random", {}, [10], 6, results_dir=tmp_path / "b")[0]
    draws = _selections(tmp_path / "a", synthetic, "random", 6)
    assert len({tuple(d) for d in draws}) == 6               # seed + b: a fresh draw each
    assert draws == _selections(tmp_path / "b", synthetic, "random", 6)
    assert first["phi"] == again["phi"] and first["phi"] < 0.2
    variance = run_stability(synthetic, "variance", {}, [10], 6, results_dir=tmp_path / "a")[0]
    assert variance["phi"] == pytest.approx(1.0)             # the 10 planted features each time


def test_finished_fits_are_not_redone_and_a_larger_b_reuses_them(tmp_path, synthetic,
                                                                 monkeypatch):
    import ufsbench.stability as st

    run_stability(synthetic, "ls", {"k": 5}, [5, 10], 4, results_dir=tmp_path)
    calls = []
    real = st._fit_unit
    monkeypatch.setattr(st, "_fit_unit", lambda *a, **k: calls.append(a[4].index) or
                        real(*a, **k))
    units = st._units(synthetic, "ls", {"k": 5}, [5, 10], 4, 0.9, 0)
    fit_path(tmp_path, units[2].key).write_text("{truncated")   # a fit killed mid-write
    records = run_stability(synthetic, "ls", {"k": 5}, [5, 10], 6, results_dir=tmp_path)
    assert sorted(calls) == [2, 4, 5]                 # ranking: one fit serves both counts
    assert [r["n_features"] for r in records] == [5, 10] and records[0]["fits"] == 6
    frame = load_stability(tmp_path)
    assert set(frame["n_subsamples"]) == {4, 6} and not frame["stale"].any()
    assert run_stability(synthetic, "ls", {"k": 5}, [20], 6, results_dir=tmp_path,
                         compute=False) == []        # nothing stored for m = 20: nothing fitted


def ufsbench(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ufsbench.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_cli_prints_the_table_and_writes_it(tmp_path):
    out = ufsbench("stability", "method=variance,random", "dataset=synthetic",
                   "feature_counts=[10]", "subsamples=4", "n_jobs=1",
                   f"results_dir={tmp_path / 'store'}", f"out={tmp_path / 'out'}")
    assert out.returncode == 0, out.stderr
    assert "Phi [95% CI]" in out.stdout and "cost: 8 subsample fits" in out.stdout
    assert "1.00 [1.00, 1.00]" in out.stdout                    # variance on planted data
    text = (tmp_path / "out" / "stability.md").read_text()
    assert "## m = 10 selected features (B = 4" in text and "Cells not finished\n\nnone" in text
    assert (tmp_path / "out" / "stability.csv").read_text().count("\n") == 3


@pytest.mark.parametrize("args, message", [
    (["subsamples=1"], "subsamples=1 must be an integer >= 2"),
    (["fraction=1.5"], "fraction=1.5 must be a number in (0, 1]"),
    (["method=allfeatures"], "allfeatures keeps every feature"),
    (["feature_counts=[500]"], "feature_counts [500] exceed the 100 features"),
    (["method=nosuch"], "unknown method 'nosuch'"),
    (["method=ls,mcfs", "method.params.k=3"], "apply to one method"),
])
def test_cli_refuses_bad_input_in_one_line(tmp_path, capsys, args, message):
    from ufsbench.cli import main

    given = {a.partition("=")[0]: a for a in ["method=ls", "dataset=synthetic", *args]}
    with pytest.raises(SystemExit) as exit_:
        main(["stability", *given.values(), f"results_dir={tmp_path / 'store'}"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("ufsbench: error: ") and message in lines[0]
    assert not (tmp_path / "store").exists()


def test_cli_refusal_through_the_command(tmp_path):
    out = ufsbench("stability", "method=ls", "dataset=synthetic", "subsamples=x")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and out.stdout == ""


def test_html_page_shows_stability_and_planted_sections(tmp_path, synthetic):
    store = tmp_path / "store"
    from ufsbench.html import write_html
    from ufsbench.planted import run_planted
    from ufsbench.records import load_results
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    cfg = {"name": "ls", "params": {"k": 5}, "grid": {}, "default": {}}
    run_sweep(synthetic, plan_tasks(synthetic, cfg, [10], EvaluationProtocol(n_runs=2), 0,
                                    store), n_jobs=1)
    df = load_results(store)
    bare = write_html(df, tmp_path / "bare.html").read_text()
    assert "No stability records" in bare and "No planted-feature results" in bare
    run_stability(synthetic, "ls", {"k": 5}, [10], 4, results_dir=store)
    run_stability(synthetic, "ls", {"k": 5}, [10], 4, results_dir=tmp_path / "elsewhere")
    run_planted(["ls"], ["high_variance"], [0], results_dir=store,
                design={"n_samples": 60, "n_features": 30, "n_informative": 3})
    page = write_html(df, tmp_path / "page.html").read_text()
    assert "<h3>m = 10 selected features, B = 4 subsamples of 90 % of the rows, seed 0</h3>" \
        in page
    record = load_stability(store).iloc[0]
    assert format_phi(record.phi, record.ci_low, record.ci_high) in page
    assert 'alt="Planted features found' in page and "Precision@m — default setting" in page


def test_degenerate_fits_are_counted_and_marked(tmp_path):
    from ufsbench.datasets import Dataset
    from ufsbench.stability import DEGENERATE_MARK, stability_frame

    rng = np.random.default_rng(0)
    column = rng.standard_normal(40)
    same = Dataset(name="same", X=np.tile(column[:, None], (1, 8)), y=np.arange(40) % 2,
                   checksum="same-columns")          # every feature has the same variance
    record = run_stability(same, "variance", {}, [3], 4, results_dir=tmp_path)[0]
    assert record["phi"] == pytest.approx(1.0) and record["degenerate_fits"] == 4
    frame = stability_frame(load_stability(tmp_path))
    assert frame.loc["variance", "same"].endswith(DEGENERATE_MARK)


def test_cli_cost_counts_a_fit_that_serves_every_count_once(tmp_path):
    # variance ranks once per subsample: 4 fits serve both counts, listed in both records.
    out = ufsbench("stability", "method=variance", "dataset=synthetic", "feature_counts=[5,10]",
                   "subsamples=4", "n_jobs=1", f"results_dir={tmp_path / 'store'}")
    assert out.returncode == 0, out.stderr
    assert "cost: 4 subsample fits" in out.stdout
    assert "2 of 2 feature count(s) finished, 4 subsample fits (B = 4)" in out.stderr


def test_fitting_cost_adds_per_count_refits_and_shares_one_fit_per_subsample():
    from ufsbench.cli.stability import fitting_cost

    def row(method, m, kind, fits, seconds):
        return {"dataset": "d", "method": method, "params": "{}", "n_features": m,
                "selection_kind": kind, "fits": fits, "fit_time": seconds}

    rows = [row("ls", m, "one fit per subsample", 5, 2.0) for m in (10, 20, 30)]
    rows += [row("kmufs", m, "per-count refit", 5, 3.0) for m in (10, 20)]
    assert fitting_cost(rows) == (5 + 10, 2.0 + 6.0)


def test_interval_stays_within_the_values_phi_can_take():
    # 19 of 20 subsets the same: the normal approximation's upper end is 1.04.
    from scipy.stats import norm

    from ufsbench.stability import (
        phi_range,
        selection_matrix,
        stability_estimate,
        stability_interval,
        stability_variance,
    )

    Z = selection_matrix([[0, 1, 2]] * 19 + [[0, 1, 3]], 8)
    phi = stability_estimate(Z)
    assert phi + norm.ppf(0.975) * np.sqrt(stability_variance(Z)) > 1.0
    estimate, low, high = stability_interval(Z)
    assert estimate == phi and high == 1.0 and 0.8 < low < phi
    assert phi_range(20, -0.5, 1.2) == (-1 / 19, 1.0)       # the floor of Phi for M = 20
