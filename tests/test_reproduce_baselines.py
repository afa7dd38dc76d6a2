"""The random and variance rows of the paper reports: beside every table, never compared with a
published cell, and the "not better than random" mark; laying them into committed reports."""

import numpy as np
import pandas as pd
import pytest
from test_reproduce import tiny_experiment, tiny_published, write_planted_store

from ufsbench import reproduce as rp
from ufsbench.datasets import load_dataset
from ufsbench.records import load_results
from ufsbench.reproduce import baseline_rows
from ufsbench.results import ResultStore
from ufsbench.runner import plan_tasks

BASELINES = [{"row": "random", "method": "random", "role": "beside"},
             {"row": "variance", "method": "variance", "role": "beside"}]


def with_baselines(**changes) -> dict:
    exp = tiny_experiment(**changes)
    return {**exp, "rows": exp["rows"] + BASELINES}


def write_baseline_records(exp: dict, results_dir, runs_of) -> pd.DataFrame:
    """Records of the random and variance rows with the per-run ACC ``runs_of(method, m)``."""
    data = load_dataset("synthetic")
    store = ResultStore(results_dir)
    protocol = rp.run_protocol(["kmeans"])
    for row in BASELINES:
        for task in plan_tasks(data, rp.row_method_config(row), exp["feature_counts"], protocol,
                               0, str(results_dir)):
            for m in exp["feature_counts"]:
                acc = np.asarray(runs_of(row["method"], m), dtype=float)
                store.write_record(task.record_key(m, "kmeans"), {
                    "acc": acc, "nmi": {"max": acc - 0.2, "sqrt": acc - 0.1,
                                        "arithmetic": acc - 0.3},
                    "selected": list(range(m)), "fit_time": 0.0})
    return load_results(results_dir)


def noisy_random(method, m):
    """random: 80±10 at 30 features (runs alternate 0.7, 0.9), lower elsewhere; variance: 0.5."""
    if method == "variance":
        return [0.5] * 20
    return [0.7, 0.9] * 10 if m == 30 else [0.4] * 20


def test_every_paper_has_both_baselines_beside_and_never_compared():
    empty = pd.DataFrame()
    for paper in (*rp.PAPERS, "quick"):
        exp = rp.load_experiment(paper)
        assert [r["row"] for r in exp["rows"] if r.get("role") == "beside"] == \
            ["random", "variance"], paper
        assert rp.chance_row(exp)["method"] == "random"
        cells = rp.compare(exp, empty)
        base = cells[cells["method"].isin(["random", "variance"])]
        tables = cells[["table", "dataset"]].drop_duplicates()
        assert len(base) == 2 * len(tables) and set(base["role"]) == {"beside"}
        assert base["published_mean"].isna().all()


def test_cells_not_above_the_random_row_by_its_std_are_marked_and_counted(tmp_path):
    exp = with_baselines()
    write_planted_store(exp, tmp_path)
    df = write_baseline_records(exp, tmp_path, noisy_random)
    cells = rp.mark_chance_level(exp, rp.compare(exp, df, published=tiny_published()), df)
    syn = cells[(cells["dataset"] == "syn") & (cells["table"] == "Table 1")].set_index("method")
    assert syn.loc["random", "ours_mean"] == pytest.approx(80.0)
    assert syn.loc["random", "ours_std"] == pytest.approx(10.0)
    # ls: 80.0 (papers' rule) is not above 80 + 10; all features (56) neither; variance is
    # marked too, but only rows of the paper are counted
    for row in ("ls", "allfeatures", "variance"):
        assert rp.CHANCE_NOTE in syn.loc[row, "reason"], row
    assert "80.0 <= random 80.0 + its std 10.0" in syn.loc["ls", "reason"]
    assert rp.CHANCE_NOTE not in syn.loc["random", "reason"]
    summary = rp.table_summary(cells).set_index("table")
    assert summary.loc["Table 1", "not_better_than_random"] == 2
    assert summary.loc["Table 1", "published_cells"] == 4       # the baselines add none
    shown = rp.display_frame(cells[(cells["dataset"] == "syn") & (cells["table"] == "Table 1")]
                             ).set_index("method")
    assert shown.loc["ls", "status"].startswith("ok; not better than random")
    assert "random (baseline)" in shown.index and "variance (baseline)" in shown.index
    again = rp.mark_chance_level(exp, cells, df)                  # idempotent
    assert again["reason"].tolist() == cells["reason"].tolist()


def test_cells_clearly_above_random_are_not_marked(tmp_path):
    exp = with_baselines()
    write_planted_store(exp, tmp_path)
    df = write_baseline_records(exp, tmp_path, lambda method, m: [0.45] * 20)
    cells = rp.mark_chance_level(exp, rp.compare(exp, df, published=tiny_published()), df)
    ls = cells[(cells["method"] == "ls") & (cells["dataset"] == "syn")]
    assert not ls["reason"].str.contains(rp.CHANCE_NOTE).any()
    allfeatures = cells[(cells["method"] == "allfeatures") & (cells["dataset"] == "syn")]
    assert not allfeatures["reason"].str.contains(rp.CHANCE_NOTE).any()  # 56 > 45 + 0


def test_best_of_five_takes_the_random_picks_spread_from_its_runs(tmp_path):
    exp = with_baselines(summary="best5")
    write_planted_store(exp, tmp_path)
    # random: best of its first 5 runs is 0.8 at every count, its 20 runs' std 0.1
    df = write_baseline_records(exp, tmp_path, lambda method, m: [0.6, 0.8] * 10)
    cells = rp.mark_chance_level(exp, rp.compare(exp, df, published=tiny_published()), df)
    syn = cells[(cells["dataset"] == "syn") & (cells["table"] == "Table 1")].set_index("method")
    assert np.isnan(syn.loc["random", "ours_std"])
    assert rp.CHANCE_NOTE not in syn.loc["ls", "reason"]         # best of 5: 95 > 80 + 10
    assert "56.0 <= random 80.0 + its std 10.0" in syn.loc["allfeatures", "reason"]


def test_notes_stay_where_the_chance_spread_is_unknown(tmp_path):
    exp = with_baselines(summary="best5")
    write_planted_store(exp, tmp_path)
    df = write_baseline_records(exp, tmp_path, lambda method, m: [0.6, 0.8] * 10)
    cells = rp.mark_chance_level(exp, rp.compare(exp, df, published=tiny_published()), df)
    marked = cells["reason"].str.contains(rp.CHANCE_NOTE)
    assert marked.any()
    # without the random row's records its best-of-5 spread is unknown: notes are kept as
    # they are rather than dropped
    again = rp.mark_chance_level(exp, cells, df[df["method"] != "random"])
    assert again["reason"].tolist() == cells["reason"].tolist()


def test_rows_are_laid_into_committed_reports_keeping_their_numbers(tmp_path, monkeypatch):
    exp = with_baselines()
    monkeypatch.setattr(baseline_rows, "load_experiment", lambda name: exp)
    monkeypatch.setattr(baseline_rows, "load_published", lambda name: tiny_published())
    df = write_planted_store(exp, tmp_path / "full")
    committed = rp.compare(exp, df, published=tiny_published())     # no baseline records yet
    boundary = (committed["method"] == "ls") & (committed["table"] == "Table 1") & \
        (committed["dataset"] == "syn")
    committed.loc[boundary, "ours_std"] = 3.9467   # written as 3.95, shown as 3.9
    out = tmp_path / "reports"
    rp.write_outputs(exp, committed, out, {"command": "`reference run`"})
    before = (out / "t.md").read_text()
    before_cells = pd.read_csv(out / "t.csv")
    assert "80.0±3.9 (30)" in before and "random (baseline)" in before
    write_baseline_records(exp, tmp_path / "baselines", noisy_random)
    baseline_rows.add_rows(["t"], tmp_path / "baselines", out, command="test", log=lambda m: 0)
    after = (out / "t.md").read_text()
    assert "80.0±3.9 (30)" in after                                  # not 4.0
    assert "- command: `reference run`" in after and "- rows added since: random, variance" in after
    assert "80.0±10.0 (30)" in after                                 # the random row's cell
    cells = pd.read_csv(out / "t.csv")
    numbers = ["ours_mean", "ours_std", "label_free_mean", "split_mean", "difference"]
    kept, old = (frame[~frame["method"].isin(["random", "variance"])].reset_index(drop=True)
                 for frame in (cells, before_cells))
    assert kept[numbers].equals(old[numbers])                        # to the last digit
    assert list(cells["method"][:6]) == ["allfeatures", "ls", "ldssl", "ghost", "random",
                                         "variance"]                  # the experiment's order
    baseline_rows.add_rows(["t"], tmp_path / "baselines", out, command="test", log=lambda m: 0)
    def strip(text):
        return [line for line in text.splitlines() if "rows added since" not in line]
    assert strip((out / "t.md").read_text()) == strip(after)         # idempotent
