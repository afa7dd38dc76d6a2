"""The planted-feature suite: its data are what they say, its scores and its command."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import f_oneway

from ufsbench.errors import UFSBenchError
from ufsbench.planted import (
    REGIMES,
    make_planted,
    n_planted,
    planted_table,
    precision_at_m,
    precision_frame,
    run_planted,
)

SMALL = {"n_samples": 90, "n_features": 40, "n_informative": 4, "wide_samples": 30,
         "wide_features": 300}


def _anova_p(data):
    """Per feature: the p-value of a one-way ANOVA of the feature across the true clusters."""
    return f_oneway(*(data.X[data.y == c] for c in np.unique(data.y))).pvalue


@pytest.mark.parametrize("regime", list(REGIMES))
def test_informative_features_separate_the_clusters_and_noise_does_not(regime):
    data = make_planted(regime, seed=1)
    p = _anova_p(data)
    noise = np.setdiff1d(np.arange(data.X.shape[1]), data.informative)
    strongest = data.informative if regime != "unequal_separation" else data.informative[:1]
    assert (p[strongest] < 1e-6).all()
    # noise is independent of the labels: its p-values are uniform (about 5 % below 0.05)
    assert np.mean(p[noise] < 0.05) < 0.12
    assert data.y.min() == 0 and np.ptp(np.bincount(data.y)) <= 1


def test_regimes_differ_as_documented():
    raw, z = make_planted("high_variance", 2), make_planted("zscored", 2)
    assert np.array_equal(raw.informative, z.informative)
    variance = raw.X.var(axis=0)
    assert variance[raw.informative].min() > np.delete(variance, raw.informative).max()
    assert np.allclose(z.X.var(axis=0), 1) and np.allclose(z.X.mean(axis=0), 0)
    wide = make_planted("wide", 2)
    assert wide.X.shape == (100, 5000) and len(wide.informative) == 10
    unequal = make_planted("unequal_separation", 2)
    F = f_oneway(*(unequal.X[unequal.y == c][:, unequal.informative] for c in range(3)))[0]
    assert F[0] > F[-1]                                   # strongest first, weakest last


def test_redundant_copies_are_interchangeable_columns_of_one_signal():
    data = make_planted("redundant", 0)
    groups = data.meta["groups"]
    assert n_planted(data) == len(groups) == 10 and all(len(g) == 4 for g in groups)
    assert sorted(np.concatenate(groups).tolist()) == data.informative.tolist()
    within = np.corrcoef(data.X[:, groups[0]].T)[np.triu_indices(4, 1)]
    across = np.corrcoef(data.X[:, groups[0][0]], data.X[:, groups[1][0]])[0, 1]
    assert within.min() > 0.85 and abs(across) < within.min()


def test_precision_counts_a_signal_once_and_data_repeat_by_seed():
    assert precision_at_m([1, 2, 3, 4], [2, 4, 9]) == 0.5
    assert precision_at_m([1, 2, 3, 4], [1, 2, 3, 4], groups=[[1, 2], [3], [4], [7]]) == 0.75
    a, b = make_planted("redundant", 5), make_planted("redundant", 5)
    assert np.array_equal(a.X, b.X) and a.checksum == b.checksum
    assert a.checksum != make_planted("redundant", 6).checksum
    with pytest.raises(UFSBenchError, match="unknown regime"):
        make_planted("easy")


def test_suite_reports_default_and_best_grid_and_resumes(tmp_path, monkeypatch):
    import ufsbench.planted as pl

    fits = run_planted(["variance", "random", "ls"], ["high_variance", "zscored"], [0, 1],
                       thin=1, results_dir=tmp_path, design=SMALL)
    table = planted_table(fits, [0, 1])
    default = precision_frame(table, "default")
    assert default.loc["variance", "high_variance"] == 1.0     # informative = high variance
    assert default.loc["variance", "zscored"] < 1.0            # ties: the lowest indices
    best = table[(table["rule"] == "best") & (table["method"] == "ls")]
    assert (best["n_settings"] == 2).all()                     # heat and binary weights
    assert (best["precision_mean"].to_numpy() >=
            table[(table["rule"] == "default") & (table["method"] == "ls")]
            ["precision_mean"].to_numpy()).all()
    monkeypatch.setattr(pl, "_fit_one", lambda *a: pytest.fail("refitted a stored fit"))
    again = run_planted(["variance", "random", "ls"], ["high_variance", "zscored"], [0, 1],
                        thin=1, results_dir=tmp_path, design=SMALL)
    assert again.drop(columns="fit_time").equals(fits.drop(columns="fit_time"))


def test_a_cell_missing_seeds_falls_back_to_the_seeds_it_has_and_says_so():
    from ufsbench.planted import markdown_report

    rows = [("wide", seed, "sogfs", "{}", True, p, 1.0, None)
            for seed, p in [(0, 0.5)]]                          # one of three seeds finished
    rows += [("wide", seed, "ls", "{}", True, 0.1 * seed, 1.0, None) for seed in range(3)]
    rows += [("wide", 1, "ls", '{"k": 3}', False, 0.9, 1.0, None)]  # not on every seed
    fits = pd.DataFrame(rows, columns=["regime", "seed", "method", "params", "is_default",
                                       "precision", "fit_time", "error"])
    table = planted_table(fits, [0, 1, 2]).set_index(["method", "rule"])
    assert table.loc[("sogfs", "default"), "n_seeds"] == 1
    assert table.loc[("sogfs", "default"), "precision_mean"] == 0.5
    assert table.loc[("ls", "default"), "n_seeds"] == 3
    assert table.loc[("ls", "best"), "precision_mean"] == pytest.approx(0.1)  # all seeds only
    text = markdown_report(table.reset_index(), fits, "test", [0, 1, 2], 1, [])
    assert "0.50 (1 of 3 seeds)" in text and "0.10 (" not in text


def test_command_writes_table_and_heatmap_and_refuses_bad_input(tmp_path, capsys):
    from ufsbench.cli import main

    out = subprocess.run([sys.executable, "-m", "ufsbench.cli", "planted", "methods=variance",
                          "regimes=zscored", "seeds=1", f"out={tmp_path / 'out'}",
                          f"results_dir={tmp_path / 'store'}"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "precision@m, default setting" in out.stdout
    for name in ("planted.md", "planted.csv", "planted_fits.csv", "planted_heatmap.png"):
        assert (tmp_path / "out" / name).is_file()
    for args, message in ((["seeds=0"], "seeds='0' must be an integer >= 1"),
                          (["regimes=easy"], "unknown regime(s) easy"),
                          (["methods=allfeatures"], "unknown method(s) allfeatures"),
                          (["--fast"], "unknown argument '--fast'")):
        with pytest.raises(SystemExit) as exit_:
            main(["planted", *args, f"results_dir={tmp_path / 'bad'}"])
        lines = capsys.readouterr().err.strip().splitlines()
        assert exit_.value.code == 2 and len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "bad").exists()
