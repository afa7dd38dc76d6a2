"""make reproduce-tables: rules, comparison, gaps and files (ufsbench.reproduce, the script)."""

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ufsbench import reproduce as rp
from ufsbench.datasets import load_dataset
from ufsbench.errors import UFSBenchError
from ufsbench.records import load_results, one_protocol
from ufsbench.results import ResultStore
from ufsbench.runner import plan_tasks
from ufsbench.testing import requires_data

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "reproduce_tables.py"

# Planted per-run ACC of the ls row on 'synthetic' (20 runs each), chosen so that the three rules
# pick three different cells: the papers' rule the best 20-run mean (binary, 30 features), the
# split rule the best of runs 1-10 (binary, 10 features: 0.95 then 0.45 on runs 11-20), the
# label-free rule the default weight=heat at the middle count (20 features).
PLANTED = {("binary", 10): [0.95] * 10 + [0.45] * 10, ("binary", 30): [0.8] * 20,
           ("heat", 20): [0.6] * 20}
OTHER = [0.5] * 20
ALL_FEATURES = [0.56] * 20


def tiny_experiment(**changes) -> dict:
    exp = {"paper": "T", "title": "tiny", "published": "t", "nmi": "sqrt", "summary": "mean",
           "tables": [{"table": "Table 1", "metric": "acc"}, {"table": "Table 2", "metric": "nmi"}],
           "feature_counts": [10, 20, 30], "datasets": {"syn": "synthetic", "hars": "hars"},
           "rows": [{"row": "allfeatures", "method": "allfeatures"},
                    {"row": "ls", "method": "ls", "grid": {"weight": ["heat", "binary"]},
                     "default": {"weight": "heat"}},
                    {"row": "ldssl", "method": "ldssl"},
                    {"row": "ghost", "method": "no_such_method"}],
           "notes": {"methods": {"ls": "planted note about ls"}}}
    exp.update(changes)
    return rp.normalise_experiment(exp, "t")


def tiny_published() -> pd.DataFrame:
    rows = [("Table 1", "ACC", "syn", "ls", 78.0, 3.0, 30), ("Table 1", "ACC", "syn", "allfeatures",
                                                            50.0, 1.0, np.nan),
            ("Table 1", "ACC", "syn", "ghost", 70.0, 2.0, 50), ("Table 1", "ACC", "hars", "ls",
                                                                 60.0, 1.0, 100),
            ("Table 2", "NMI", "syn", "ls", 69.0, 0.5, 30)]
    df = pd.DataFrame(rows, columns=["table", "metric", "dataset", "method", "mean", "std",
                                     "n_features"])
    return df.assign(paper="T", uncertain=False, note="")


def use_experiments(monkeypatch, load) -> None:
    """Serve ``load(name)`` as the config of experiment ``name`` in every module that loads one
    by name: the pipeline (``reproduce``), ``check_methods`` and the plan (``cost``)."""
    for module in (rp, rp.experiments, rp.cost):
        monkeypatch.setattr(module, "load_experiment", load)


def write_planted_store(exp: dict, results_dir: Path, warned: tuple = (),
                        tied: dict | None = None, kmeans_init: str = "random",
                        shift: float = 0.0) -> pd.DataFrame:
    """Records written under the runner's own keys, with planted per-run scores (plus
    ``shift``); the fits of the (weight, count) pairs in ``warned`` carry a
    DegenerateScoresWarning, and those in ``tied`` that many features tied at their cut."""
    data = load_dataset("synthetic")
    store = ResultStore(results_dir)
    protocol = rp.run_protocol(["kmeans"], kmeans_init)
    for row in exp["rows"][:2]:
        cfg = rp.row_method_config(row)
        for task in plan_tasks(data, cfg, exp["feature_counts"], protocol, 0, str(results_dir)):
            counts = [data.n_features] if row["method"] == "allfeatures" else exp["feature_counts"]
            for m in counts:
                acc = ALL_FEATURES if row["method"] == "allfeatures" else \
                    PLANTED.get((task.params["weight"], m), OTHER)
                acc = np.asarray(acc) + shift
                store.write_record(task.record_key(m, "kmeans"), {
                    "acc": acc, "nmi": {"max": acc - 0.2, "sqrt": acc - 0.1,
                                        "arithmetic": acc - 0.3},
                    "selected": list(range(m)), "fit_time": 0.0,
                    "tied_at_cut": (tied or {}).get((task.params.get("weight"), m), 0),
                    "fit_warnings": [f"DegenerateScoresWarning: all {data.n_features} feature "
                                     "scores are equal (0)"]
                    if (task.params.get("weight"), m) in warned else []})
    return load_results(results_dir)


@pytest.mark.parametrize("planted,note", [
    # the papers' rule picks (binary, 30); label-free (heat, 20) and split (binary, 10) do not
    ({"warned": (("binary", 30),)}, "degenerate fit picked (the papers' rule)"),
    ({"tied": {("heat", 20): 37}}, "tie at the cut (label-free: 37 tied)"),
    # a degenerate pick ties every feature: the tie note would only repeat it
    ({"warned": (("binary", 30),), "tied": {("binary", 30): 60, ("heat", 20): 37}},
     "degenerate fit picked (the papers' rule): every feature scored alike, the selection is "
     "the first m features; tie at the cut (label-free: 37 tied)"),
])
def test_a_pick_the_numbers_do_not_show_is_named_in_the_row(tmp_path, planted, note):
    exp = tiny_experiment()
    first_words = note.split(" (")[0]
    clean = rp.compare(exp, write_planted_store(exp, tmp_path / "a"), published=tiny_published())
    assert not clean["reason"].fillna("").str.contains(first_words).any()
    df = write_planted_store(exp, tmp_path / "b", **planted)
    assert df["degenerate"].sum() == len(planted.get("warned", ()))
    cells = rp.compare(exp, df, published=tiny_published())
    acc = cells[(cells["method"] == "ls") & (cells["dataset"] == "syn")
                & (cells["table"] == "Table 1")].iloc[0]
    assert note in acc["reason"]
    shown = rp.display_frame(cells[cells["method"] == "ls"])["status"]
    assert shown.str.startswith(f"ok; {first_words}").sum() == 2   # syn: ACC and NMI


def test_three_rules_pick_planted_cells_and_compare_with_published(tmp_path):
    exp = tiny_experiment()
    df = write_planted_store(exp, tmp_path / "runs")
    cells = rp.compare(exp, df, published=tiny_published())
    ls = cells[(cells["method"] == "ls") & (cells["dataset"] == "syn")].set_index("table")
    acc = ls.loc["Table 1"]
    assert (acc["ours_mean"], acc["ours_std"], acc["ours_n_features"]) == \
        pytest.approx((80.0, 0.0, 30))
    assert (acc["label_free_mean"], acc["label_free_n_features"]) == pytest.approx((60.0, 20))
    assert (acc["split_mean"], acc["split_n_features"]) == pytest.approx((45.0, 10))
    assert acc["difference"] == pytest.approx(2.0)
    assert json.loads(acc["ours_params"])["weight"] == "binary"
    # NMI in the paper's normalisation (sqrt = acc - 0.1), read from the record, not the stored max.
    assert ls.loc["Table 2"]["ours_mean"] == pytest.approx(70.0)
    summary = rp.table_summary(cells).set_index("table")
    t1 = summary.loc["Table 1"]
    assert (t1["compared"], t1["within_1_std"], t1["within_2_points"],
            t1["better_by_more_than_5"], t1["worse_by_more_than_5"]) == (2, 1, 1, 1, 0)
    assert summary.loc["Table 2", "within_1_std"] == 0 and summary.loc["Table 2",
                                                                       "within_2_points"] == 1


def test_gaps_are_visible_rows_with_reasons(tmp_path):
    exp = tiny_experiment()
    df = write_planted_store(exp, tmp_path / "runs")
    cells = rp.compare(exp, df, published=tiny_published()).set_index(["table", "dataset",
                                                                       "method"])
    ghost = cells.loc[("Table 1", "syn", "ghost")]
    assert ghost["status"] == "gap" and "not implemented" in ghost["reason"]
    assert ghost["published_mean"] == 70.0 and np.isnan(ghost["ours_mean"])
    hars = cells.loc[("Table 1", "hars", "ls")]
    assert hars["status"] == "gap" and "not on this machine" in hars["reason"]
    ldssl = cells.loc[("Table 1", "syn", "ldssl")]
    assert ldssl["status"] == "not computed" and bool(ldssl["reconstructed"])
    # every (table, data set, row) is present: 2 tables x 2 data sets x 4 rows
    assert len(cells) == 16


def test_every_published_cell_of_every_paper_has_a_row():
    empty = pd.DataFrame()
    for paper in rp.PAPERS:
        exp = rp.load_experiment(paper)
        published = rp.load_published(exp["published"])
        cells = rp.compare(exp, empty, published=published)
        ours = set(cells[cells["role"] == "paper"][["table", "dataset", "method"]]
                   .itertuples(index=False, name=None))
        theirs = set(published[["table", "dataset", "method"]].itertuples(index=False, name=None))
        assert theirs <= ours, (paper, sorted(theirs - ours)[:5])
        assert not cells["status"].eq("ok").any()  # nothing computed in an empty store


def test_published_csvs_match_the_shared_transcription(tmp_path):
    source = Path(__file__).resolve().parents[2] / "shared" / "paper-tables" / "results.csv"
    if not source.is_file():
        pytest.skip("shared paper-tables not present")
    fresh = rp.transcribe_published(source, tmp_path)
    for path in fresh:
        assert path.read_text() == (rp.published_dir() / path.name).read_text(), path.name
    total = sum(len(rp.load_published(p)) for p in rp.PAPERS)
    assert total == len(pd.read_csv(source))


def test_ufsol_variants_map_to_one_method_with_fixed_graph():
    exp = rp.load_experiment("ufsol")
    rows = {r["row"]: r for r in exp["rows"]}
    graphs = {name: rp.row_method_config(rows[name])["params"]["graph"] for name in
              ("ufsol_alpha0", "ufsol_similarity", "ufsol_maxmargin", "ufsol")}
    assert graphs == {"ufsol_alpha0": "none", "ufsol_similarity": "similarity",
                      "ufsol_maxmargin": "maxmargin", "ufsol": "triplet"}
    assert all("graph" not in rp.row_method_config(r)["grid"] for r in rows.values()
               if r["method"] == "ufsol")


def test_thinned_grid_keeps_every_other_value_and_the_default():
    assert rp.thin_values([1, 2, 3, 4, 5], 2) == [1, 3, 5]
    assert rp.thin_values([1, 2, 3, 4, 5], 2, keep=4) == [1, 3, 5, 4]
    cfg = rp.row_method_config({"row": "scfs", "method": "scfs"}, thin=2)
    assert cfg["grid"]["alpha"] == [1e-4, 1.0, 1e4] and 1e2 in cfg["grid"]["beta"]


def test_best_of_five_summary_and_split_use_the_right_runs():
    runs = np.array([0.1, 0.2, 0.9, 0.3, 0.4, 0.99, 0.5, 0.5, 0.5, 0.5] + [0.7] * 5 + [0.95] * 5)
    assert rp.summarise(runs, "best5")[0] == 0.9  # run 6 (0.99) is not among the first five
    recs = pd.DataFrame([{"acc_runs": runs.tolist(), "n_features": 10, "params": "{}",
                          "nmi_normalisation": "max", "nmi_runs": runs.tolist(), "path": ""}])
    picks = rp.choose_cells(recs, "acc", "best5", "max", "{}", 10)
    assert picks["split"][0] == 0.7  # best of runs 11-15
    assert picks["paper"][0] == 0.9 and picks["label_free"][0] == 0.9


def test_reports_are_written_with_labels_and_optimism(tmp_path):
    exp = tiny_experiment()
    df = write_planted_store(exp, tmp_path / "runs")
    cells = rp.compare(exp, df, published=tiny_published())
    paths = rp.write_outputs(exp, cells, tmp_path / "out", {"command": "`test`"})
    names = {p.name for p in paths}
    assert {"t.md", "t.tex", "t.csv", "cells.csv"} <= names
    md = (tmp_path / "out" / "t.md").read_text()
    assert "ldssl [reconstructed]" in md and "80.0±0.0 (30)" in md and "78.0±3.0 (30)" in md
    # The .tex in ASCII (pdfLaTeX stops at a Greek letter): symbols as LaTeX commands.
    tex = (tmp_path / "out" / "t.tex").read_text()
    assert tex.isascii() and "80.0$\\pm$0.0 (30)" in tex and "$\\Delta$" in tex
    assert "planted note about ls" not in md  # Δ = +2: no large gap listed for ls
    tidy = pd.read_csv(tmp_path / "out" / "cells.csv")
    spec = ["paper", "table", "metric", "dataset", "method", "published_mean", "published_std",
            "published_n_features", "ours_mean", "ours_std", "ours_n_features", "protocol"]
    assert list(tidy.columns[:len(spec)]) == spec
    summary = rp.table_summary(cells).set_index("table")
    # papers' rule 80 vs label-free 60 on ls, 56 vs 56 on allfeatures: mean gain 10 points
    assert summary.loc["Table 1", "optimism_vs_label_free"] == pytest.approx(10.0)
    overview = (tmp_path / "out" / "overview.md").read_text()
    row = next(line for line in overview.splitlines() if "Table 1" in line)
    values = [v.strip() for v in row.strip("|").split("|")]
    header = next(line for line in overview.splitlines() if "published_cells" in line)
    named = dict(zip([v.strip() for v in header.strip("|").split("|")], values))
    assert named["published_cells"] == str(summary.loc["Table 1", "published_cells"])
    assert float(named["optimism_vs_label_free"]) == pytest.approx(10.0)


def load_script():
    """scripts/reproduce_tables.py as a module (it is a script, not part of the package)."""
    from importlib import util

    spec = util.spec_from_file_location("reproduce_tables", SCRIPT)
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_rejects_unknown_paper_with_one_line(capsys):
    assert load_script().main(["--paper", "nope", "--report-only"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown paper 'nope'" in err[0]
    with pytest.raises(UFSBenchError, match="--datasets|not in the"):
        rp.selected_datasets(rp.load_experiment("dgufs"), ["coil20"])


@requires_data("allaml")
def test_quick_profile_end_to_end(tmp_path, monkeypatch):
    """The quick profile, as CI runs it on every change (about 75 s on 2 cores)."""
    from ufsbench.testing import data_dir

    module = load_script()
    args = ["--profile", "quick", "--results-dir", str(tmp_path / "runs"), "--out-dir",
            str(tmp_path / "out"), "--data-dir", str(data_dir()), "--n-jobs", "2"]
    assert module.main(args) == 0
    cells = pd.read_csv(tmp_path / "out" / "cells.csv")
    assert set(cells[cells["dataset"] == "allaml"]["status"]) == {"ok"}
    assert set(cells[cells["dataset"] == "lung"]["status"]) == {"gap"}
    dg = cells[(cells["method"] == "dgufs") & (cells["dataset"] == "allaml")]
    assert set(dg["scoring"]) == {"own_labels", "kmeans"}
    for ext in ("md", "tex", "csv"):
        assert (tmp_path / "out" / f"quick.{ext}").stat().st_size > 0
    # resumable: a second run finds every evaluation in the store and computes nothing
    records = sorted((tmp_path / "runs").rglob("*.json"))
    assert module.main(args) == 0
    assert sorted((tmp_path / "runs").rglob("*.json")) == records


def test_sogfs_style_figure_table_is_best_of_five_per_feature_count(tmp_path):
    exp = tiny_experiment(tables=[], figure={"id": "Figure 1", "metric": "acc"}, summary="best5",
                          datasets={"syn": "synthetic"})
    df = write_planted_store(exp, tmp_path / "runs")
    fig = rp.figure_table(exp, df).set_index("method")
    # best over the grid at each count: binary@10 = 0.95, heat@20 = 0.6, binary@30 = 0.8
    assert fig.loc["ls", ["10", "20", "30"]].tolist() == [95.0, 60.0, 80.0]
    assert fig.loc["allfeatures", ["10", "20", "30"]].tolist() == [56.0, 56.0, 56.0]
    cells = rp.compare(exp, df, published=tiny_published())
    assert set(cells["table"]) == {"Figure 1"}
    import matplotlib
    salt = matplotlib.rcParams["svg.hashsalt"]
    paths = rp.write_outputs(exp, cells, tmp_path / "out", {}, figure=fig.reset_index())
    assert (tmp_path / "out" / "t_figure1.svg") in paths
    assert "<svg" in (tmp_path / "out" / "t_figure1.svg").read_text()
    assert matplotlib.rcParams["svg.hashsalt"] == salt   # the salt is set only while saving
    again = rp.plot_figure(fig.reset_index(), tmp_path / "again.svg")
    assert again.read_bytes() == (tmp_path / "out" / "t_figure1.svg").read_bytes()


def test_large_gap_lists_recorded_causes_and_an_off_baseline(tmp_path):
    exp = tiny_experiment()
    df = write_planted_store(exp, tmp_path / "runs")
    published = tiny_published()
    published.loc[(published["method"] == "ls") & (published["table"] == "Table 1"), "mean"] = 70.0
    cells = rp.compare(exp, df, published=published)
    ls = cells[(cells["method"] == "ls") & (cells["table"] == "Table 1")
               & (cells["dataset"] == "syn")].iloc[0]
    causes = rp.candidate_causes(exp, ls, thin=2, cells=cells)
    assert any("all-features row" in c and "+6.0" in c for c in causes)
    assert "planted note about ls" in causes
    assert any("every other value" in c for c in causes)  # ls has a 2-setting grid
    md = "\n".join(rp.large_gap_lines(exp, cells))
    assert "syn / ls: Δ = +10.0" in md


def test_plan_estimates_cost_from_measured_records(tmp_path):
    from ufsbench.runner import EvaluationProtocol, run_sweep

    data = load_dataset("synthetic")
    cfg = {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
           "default": {"weight": "heat"}}
    run_sweep(data, plan_tasks(data, cfg, [5, 10], EvaluationProtocol(n_runs=3), 0, tmp_path),
              n_jobs=1)
    cost = rp.measured_cost_per_setting(str(tmp_path))
    records = load_results(tmp_path)
    # Per setting: its one fit (served both counts) plus both counts' K-means.
    per_setting = [g["fit_time"].iloc[0] + g["eval_time"].sum() for _, g in records.groupby("params")]
    assert len(per_setting) == 2 and set(cost) == {("synthetic", "ls")}
    assert cost[("synthetic", "ls")] == pytest.approx(np.mean(per_setting))
    plan = pd.DataFrame({"experiment": ["x", "x"], "dataset": ["synthetic", "other"],
                         "method": ["ls", "ls"], "settings": [10, 4], "done": [2, 0],
                         "s_per_setting": [3600.0, None]})
    plan["core_hours_left"] = (plan["settings"] - plan["done"]) * plan["s_per_setting"] / 3600
    line = rp.plan_totals(plan, cores=2)
    assert "14 settings, 2 done" in line and "8.0 core-hours (4.0 h on 2 cores)" in line
    assert "plus 4 settings" in line


def test_large_gap_causes_cite_the_measured_preprocessing_check(tmp_path):
    check = tmp_path / "allfeatures_check.csv"
    pd.DataFrame([{"paper": "P", "metric": "ACC", "dataset": "d", "published": 60.0, "raw": 52.0,
                   "zscore": 53.0, "minmax": 51.0, "unit_rows": 50.0, "closest": "zscore"},
                  {"paper": "P", "metric": "ACC", "dataset": "e", "published": 60.0, "raw": 52.0,
                   "zscore": 59.5, "minmax": 51.0, "unit_rows": 50.0, "closest": "zscore"}]
                 ).to_csv(check, index=False)
    cell = pd.Series({"paper": "P", "metric": "ACC", "dataset": "d", "method": "allfeatures",
                      "published_mean": 60.0})
    (line,) = rp.preprocessing_check_lines(cell, check)
    assert "50.0-53.0" in line and "closest zscore 53.0 (-7.0 points)" in line
    assert "preprocessing alone does not explain it" in line
    (line,) = rp.preprocessing_check_lines(pd.Series({**cell, "dataset": "e"}), check)
    assert "most likely used zscore" in line
    assert rp.preprocessing_check_lines(pd.Series({**cell, "dataset": "zz"}), check) == []
    assert rp.preprocessing_check_lines(cell, tmp_path / "absent.csv") == []


def test_rows_say_how_many_fits_of_their_method_raised():
    exp = {"rows": [{"row": "ufsol_similarity", "method": "ufsol"}, {"row": "ls", "method": "ls"}]}
    cells = pd.DataFrame({"registry_dataset": ["umist", "umist", "att"],
                          "method": ["ufsol_similarity", "ls", "ufsol_similarity"],
                          "status": ["partial: 7 of 9 settings", "ok", "ok"]})
    failures = pd.DataFrame({"dataset": ["umist", "umist"], "method": ["ufsol", "ufsol"],
                             "params": ["{}", "{\"a\": 1}"],
                             "error": ["LinAlgError: singular", "LinAlgError: singular"]})
    noted = rp.note_failures(exp, cells, failures)
    assert noted["status"][0] == ("partial: 7 of 9 settings; 2 fit(s) of ufsol on umist raised "
                                  "(e.g. LinAlgError: singular)")
    assert noted["status"][1] == "ok" and noted["status"][2] == "ok"
    assert rp.note_failures(exp, cells, failures.iloc[:0]).equals(cells)


def test_thinning_is_described_in_words():
    assert rp.thin_text(2) == "every other value (plus the default)"
    assert rp.thin_text(3) == "every 3rd value (plus the default)"
    assert rp.thin_text(11) == "every 11th value (plus the default)"
    assert rp.thin_text(22) == "every 22nd value (plus the default)"


def test_spread_sample_takes_the_middle_of_equal_slices():
    items = list(range(12))
    assert rp.spread_sample(items, 1) == [6]
    assert rp.spread_sample(items, 2) == [3, 9]
    assert rp.spread_sample(items, 3) == [2, 6, 10]
    assert rp.spread_sample(items[:2], 5) == [0, 1]


def test_probe_runs_k_pending_settings_per_method_and_costs_them(tmp_path, monkeypatch):
    exp = tiny_experiment(feature_counts=[10], rows=[{"row": "ls", "method": "ls",
                                 "grid": {"weight": ["heat", "binary"], "k": [3, 5, 7]},
                                 "default": {"weight": "heat", "k": 5}}])
    use_experiments(monkeypatch, lambda name: exp)
    runs = tmp_path / "runs"
    data = load_dataset("synthetic")
    tasks = rp.experiment_tasks(exp, data, str(runs))
    assert len(tasks) == 6
    # An old record of one setting, timed long ago: the probe must not count it.
    from ufsbench.runner import run_sweep, task_is_done
    run_sweep(data, tasks[:1], n_jobs=1)
    old = time.time() - 3600
    for path in runs.rglob("*.json"):
        os.utime(path, (old, old))

    costs = rp.probe_costs(["t"], str(runs), per_pair=2, n_jobs=1, log=lambda msg: None)
    done = [t for t in tasks if task_is_done(t, data.n_features)]
    assert len(done) == 3  # the old one plus two probed settings
    records = load_results(runs)
    fresh = records[[os.path.getmtime(p) > old + 1 for p in records["path"]]]
    assert fresh["params"].nunique() == 2
    per_setting = [g["fit_time"].iloc[0] + g["eval_time"].sum() for _, g in fresh.groupby("params")]
    assert set(costs) == {("synthetic", "ls")}
    cost = costs[("synthetic", "ls")]
    assert cost["total"] == pytest.approx(np.mean(per_setting))
    assert cost["eval"] == pytest.approx(np.mean([g["eval_time"].sum()
                                                  for _, g in fresh.groupby("params")]))
    # The first probed setting ran alone, before the other: its fit is the cold one.
    first, later = (g["fit_time"].iloc[0] for _, g in
                    fresh.assign(mtime=[os.path.getmtime(p) for p in fresh["path"]])
                    .sort_values("mtime").groupby("params", sort=False))
    assert (cost["fit_first"], cost["fit"]) == (pytest.approx(first), pytest.approx(later))
    plan = rp.plan_summary(["t"], str(runs), costs=costs)
    row = plan[plan["method"] == "ls"].iloc[0]
    assert (row["settings"], row["done"]) == (6, 3)
    # Fitting as the probe timed it, the cold fit once in the grid's six; K-means from every
    # stored record (the old one too).
    s_fit = (first + 5 * later) / 6
    all_evals = [g["eval_time"].sum() for _, g in records.groupby("params")]
    assert len(all_evals) == 3
    assert row["s_fit"] == pytest.approx(s_fit)
    assert row["s_eval"] == pytest.approx(np.mean(all_evals))
    assert row["core_hours_left"] == pytest.approx(3 * (s_fit + np.mean(all_evals)) / 3600)
    assert row["eval_core_hours_left"] == pytest.approx(3 * np.mean(all_evals) / 3600)
    assert row["core_hours_all"] == pytest.approx(6 * (s_fit + np.mean(all_evals)) / 3600)
    assert "every setting from scratch" in rp.plan_totals(plan)
    assert "K-means evaluation" in rp.plan_totals(plan)


def test_plan_costs_a_setting_two_papers_share_once(tmp_path, monkeypatch):
    """The store keys a record by data, method, parameters and protocol, not by paper: a setting
    in two papers' grids runs once, so the plan must not cost it twice."""
    def ls_row(ks):
        return [{"row": "ls", "method": "ls", "grid": {"weight": ["heat"], "k": ks},
                 "default": {"weight": "heat", "k": ks[0]}}]
    exps = {"t": tiny_experiment(feature_counts=[10], rows=ls_row([3, 5, 7])),
            "u": tiny_experiment(feature_counts=[10], rows=ls_row([5, 7, 9]))}
    use_experiments(monkeypatch, lambda name: exps[name])
    costs = {("synthetic", "ls"): {"total": 36.0, "fit": 30.0, "eval": 6.0}}
    plan = rp.plan_summary(["t", "u"], str(tmp_path / "runs"), costs=costs).set_index("experiment")
    assert plan.loc["t", "settings"] == plan.loc["u", "settings"] == 3
    assert (plan.loc["t", "shared"], plan.loc["u", "shared"]) == (0, 2)    # k = 5, 7 again
    assert plan["left"].sum() == 4
    assert plan["core_hours_all"].sum() == pytest.approx(4 * 36 / 3600)
    assert plan["core_hours_left"].sum() == pytest.approx(4 * 36 / 3600)
    line = rp.plan_totals(plan.reset_index(), cores=2)
    assert "6 settings (2 shared between papers, run once), 0 done" in line


def test_probe_requires_plan(capsys):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, str(SCRIPT), "--probe", "1", "--paper", "dgufs"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "add --plan" in out.stderr
    out = subprocess.run([sys.executable, str(SCRIPT), "--plan", "--probe", "-1"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--probe -1 must be at least 1" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("args, message", [
    (["--scheduler", "tcp://h:8786"], "add --launcher dask"),
    (["--plan", "--cores", "0"], "--cores 0 must be at least 1"),
])
def test_launch_options_are_checked(args, message, capsys):
    assert rp_cli(args) == 2
    assert message in capsys.readouterr().err


def rp_cli(args):
    import importlib.util
    spec = importlib.util.spec_from_file_location("reproduce_tables_cli", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(args)


def test_reproduction_on_a_dask_cluster_writes_the_local_records(tmp_path, monkeypatch):
    """`--launcher dask`: the sweeps go to a dask.distributed cluster (here a local one) and
    store exactly the records a local run stores."""
    distributed = pytest.importorskip("dask.distributed")
    import warnings
    exp = tiny_experiment(feature_counts=[10], datasets={"syn": "synthetic"},
                          rows=[{"row": "ls", "method": "ls", "grid": {"weight": ["heat", "binary"]},
                                 "default": {"weight": "heat"}}])
    local = rp.run_experiment(exp, str(tmp_path / "local"), n_jobs=1, log=lambda m: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address=None, processes=False,
                                      protocol="tcp") as cluster:
            remote = rp.run_experiment(exp, str(tmp_path / "dask"), log=lambda m: None,
                                       launch={"backend": "dask",
                                               "scheduler": cluster.scheduler_address})
    assert local["synthetic"]["records"] == remote["synthetic"]["records"] == 2
    def records(store):
        return {json.dumps(r["key"], sort_keys=True): (r["acc"], r["nmi"], r["selected"])
                for r in ResultStore(store).iter_records()}
    assert records(tmp_path / "local") == records(tmp_path / "dask")


def test_methods_option_runs_only_those_methods_and_reports_every_stored_one(tmp_path,
                                                                            monkeypatch):
    """A rerun of one method (e.g. after its revision) leaves the others' sweeps alone, and the
    report still shows every method in the store."""
    exp = tiny_experiment(feature_counts=[10], datasets={"syn": "synthetic"},
                          rows=[{"row": "allfeatures", "method": "allfeatures"},
                                {"row": "ls", "method": "ls", "grid": {"weight": ["heat"]},
                                 "default": {"weight": "heat"}}])
    use_experiments(monkeypatch, lambda name: exp)
    monkeypatch.setattr(rp.rules, "load_published", lambda exp: tiny_published())
    runs, out = tmp_path / "runs", tmp_path / "out"
    rp.reproduce(["t"], str(runs), out, n_jobs=1, only_methods=["allfeatures"],
                 log=lambda msg: None)
    assert set(load_results(runs)["method"]) == {"allfeatures"}
    plan = rp.plan_summary(["t"], str(runs), only_methods=["ls"])
    assert set(plan["method"]) == {"ls"} and plan["done"].sum() == 0
    rp.reproduce(["t"], str(runs), out, n_jobs=1, only_methods=["ls"], log=lambda msg: None)
    assert set(load_results(runs)["method"]) == {"allfeatures", "ls"}
    report = (out / "t.md").read_text()
    assert "only ls run" in report
    cells = pd.read_csv(out / "cells.csv")
    assert {"allfeatures", "ls"} <= set(cells.dropna(subset=["ours_mean"])["method"])
    with pytest.raises(UFSBenchError, match=r"mcfs are not in any of the experiments run \(t\); "
                                            r"their methods: allfeatures, ls"):
        rp.reproduce(["t"], str(runs), out, n_jobs=1, only_methods=["mcfs"], log=lambda m: None)


def test_methods_option_over_several_papers_runs_the_method_where_a_paper_has_it(tmp_path,
                                                                                monkeypatch):
    """`--paper all --methods mcfs`: a paper without MCFS runs nothing (and loads no data set);
    only a method that no named paper has is an error."""
    with_ls = tiny_experiment(feature_counts=[10], datasets={"syn": "synthetic"},
                              rows=[{"row": "ls", "method": "ls", "grid": {"weight": ["heat"]},
                                     "default": {"weight": "heat"}}])
    without = tiny_experiment(feature_counts=[10], datasets={"syn": "synthetic"},
                              rows=[{"row": "allfeatures", "method": "allfeatures"}])
    exps = {"t": with_ls, "u": without}
    use_experiments(monkeypatch, lambda name: exps[name])
    runs = tmp_path / "runs"
    rp.reproduce(["t", "u"], str(runs), tmp_path / "out", n_jobs=1, only_methods=["ls"],
                 log=lambda msg: None)
    assert set(load_results(runs)["method"]) == {"ls"}
    assert rp.run_experiment(without, str(runs), n_jobs=1, only_methods=["ls"]) == {}
    assert set(rp.plan_summary(["t", "u"], str(runs), only_methods=["ls"])["method"]) == {"ls"}
    with pytest.raises(UFSBenchError, match="not in any of the experiments run"):
        rp.plan_summary(["t", "u"], str(runs), only_methods=["udfs"])


def test_kmeans_plus_plus_sensitivity_run_reads_only_its_records(tmp_path):
    """--kmeans-init k-means++: its tasks and its report use k-means++ records only, its
    protocol line says so, and our random-start reports are never read from or written over."""
    exp = tiny_experiment()
    write_planted_store(exp, tmp_path / "runs")
    df = write_planted_store(exp, tmp_path / "runs", kmeans_init="k-means++", shift=0.1)
    plus = {**exp, "kmeans_init": "k-means++"}
    ours, _ = one_protocol(df, rp.report_protocol(exp))
    theirs, note = one_protocol(df, rp.report_protocol(plus))
    assert set(ours["kmeans_init"]) == {"random"} and set(theirs["kmeans_init"]) == {"k-means++"}
    assert "kmeans_init=random" in note
    published = tiny_published()
    best = {init: rp.compare(e, d, published=published).query("method == 'ls' and metric == 'ACC'"
                                                              " and dataset == 'syn'")
            for init, e, d in (("random", exp, ours), ("k-means++", plus, theirs))}
    assert best["random"]["ours_mean"].iloc[0] == pytest.approx(80.0)
    assert best["k-means++"]["ours_mean"].iloc[0] == pytest.approx(90.0)
    assert "k-means++ initial centres, NOT our default" in rp.protocol_lines(plus)[0]
    assert "random initial centres" in rp.protocol_lines(exp)[0]
    tasks = rp.experiment_tasks(plus, load_dataset("synthetic"), str(tmp_path / "runs"))
    assert {t.protocol.kmeans_init for t in tasks} == {"k-means++"}
    with pytest.raises(UFSBenchError, match="sensitivity run: write its reports elsewhere"):
        rp.reproduce(["scfs"], str(tmp_path / "runs"), rp.default_out_dir(), run=False,
                     kmeans_init="k-means++")
    with pytest.raises(UFSBenchError, match="unknown K-means init"):
        rp.reproduce(["scfs"], str(tmp_path / "runs"), tmp_path / "out", run=False,
                     kmeans_init="furthest")
