"""Released rows of the paper reports: a method at a named preset (its authors' code's settings),
run on the same grid and compared with the published cell of the row as printed."""

import numpy as np
import pandas as pd
import pytest
from test_reproduce import tiny_experiment, tiny_published, write_planted_store

from ufsbench import reproduce as rp
from ufsbench.datasets import load_dataset
from ufsbench.errors import UFSBenchError
from ufsbench.presets import preset_params
from ufsbench.records import load_results
from ufsbench.reproduce import baseline_rows
from ufsbench.results import ResultStore
from ufsbench.runner import expand_grid, plan_tasks

LS_RELEASED = {"row": "ls_released", "method": "ls", "role": "released", "as_printed": "ls",
               "preset": "released"}


def with_released(**row_changes) -> dict:
    exp = tiny_experiment()
    return rp.normalise_experiment({**exp, "rows": exp["rows"] + [{**LS_RELEASED,
                                                                   **row_changes}]}, "t")


def write_released_records(exp: dict, results_dir, acc: float) -> pd.DataFrame:
    """Records of the released row: every run scores ``acc``."""
    data = load_dataset("synthetic")
    store = ResultStore(results_dir)
    row = next(r for r in exp["rows"] if r["row"] == "ls_released")
    protocol = rp.run_protocol(["kmeans"])
    for task in plan_tasks(data, rp.row_method_config(row), exp["feature_counts"], protocol, 0,
                           str(results_dir)):
        assert task.preset == "released"
        for m in exp["feature_counts"]:
            runs = np.full(20, acc)
            store.write_record(task.record_key(m, "kmeans"), {
                "acc": runs, "nmi": {"max": runs, "sqrt": runs, "arithmetic": runs},
                "selected": list(range(m)), "fit_time": 0.0})
    return load_results(results_dir)


@pytest.mark.parametrize("change,message", [
    ({"preset": None}, "no preset"),
    ({"preset": "no_such_preset"}, "has no preset 'no_such_preset'"),
    ({"as_printed": None}, "needs as_printed"),
    ({"as_printed": "allfeatures"}, "needs as_printed"),   # a row of another method
])
def test_a_released_row_names_its_preset_and_its_printed_row(change, message):
    with pytest.raises(UFSBenchError, match=message):
        with_released(**change)


def test_the_released_row_runs_the_preset_on_the_printed_grid():
    exp = with_released()
    row = next(r for r in exp["rows"] if r["row"] == "ls_released")
    settings = expand_grid(rp.row_method_config(row))
    preset = preset_params("ls", "released")
    # the preset fixes weight, so the printed row's weight axis collapses to one setting
    assert len(settings) == 1
    assert all(settings[0][k] == v for k, v in preset.items())
    printed = expand_grid(rp.row_method_config(exp["rows"][1]))
    assert {str(s) for s in printed}.isdisjoint({str(s) for s in settings})


def test_the_four_proposed_methods_have_released_rows_that_run_when_named():
    for paper in ("ufsol", "sogfs", "dgufs", "scfs"):
        exp = rp.load_experiment(paper)
        released = [r for r in exp["rows"] if r.get("role") == "released"]
        assert [r["as_printed"] for r in released] == [paper], paper
        assert rp.selected_methods(exp, [f"{paper}_released"])["rows"] == released
        assert rp.selected_methods(exp, ["released"])["rows"] == released
        assert released[0] not in rp.selected_methods(exp)["rows"]          # the default run
        assert released[0] not in rp.selected_methods(exp, [paper])["rows"]  # its method
        assert len(rp.selected_methods(exp)["rows"]) == len(exp["rows"]) - 1
    rp.check_methods(["ufsol"], ["released", "ufsol_released", "ufsol"])   # all known names


def test_a_released_row_not_run_says_how_to_run_it():
    exp = with_released()
    cells = rp.compare(exp, pd.DataFrame(), published=tiny_published())
    reason = cells[cells["method"] == "ls_released"]["reason"].iloc[0]
    assert "METHODS=released" in reason


def test_released_cells_are_compared_with_the_printed_rows_published_cell(tmp_path):
    exp = with_released()
    df = write_planted_store(exp, tmp_path)
    df = write_released_records(exp, tmp_path, 0.9)
    cells = rp.compare(exp, df, published=tiny_published())
    syn = cells[(cells["dataset"] == "syn") & (cells["table"] == "Table 1")].set_index("method")
    assert syn.loc["ls_released", "role"] == "released"
    assert syn.loc["ls_released", "published_mean"] == syn.loc["ls", "published_mean"] == 78.0
    assert syn.loc["ls_released", "ours_mean"] == pytest.approx(90.0)
    assert syn.loc["ls_released", "difference"] == pytest.approx(12.0)
    assert syn.loc["ls_released", "label_free_mean"] == pytest.approx(90.0)  # preset's default
    assert syn.loc["ls", "ours_mean"] != pytest.approx(90.0)     # the printed row's own records
    # the per-table summary counts the printed rows only
    summary = rp.table_summary(cells).set_index("table")
    assert summary.loc["Table 1", "published_cells"] == 4
    text = rp.render_markdown(exp, cells, {})
    assert "ls_released = ls at preset `released`" in text
    noted = {**exp, "notes": {**exp["notes"], "released": "Released LS is not run on HARS."}}
    assert "- Released LS is not run on HARS." in rp.render_markdown(noted, cells, {})


def test_a_released_row_is_laid_in_without_touching_the_printed_row(tmp_path, monkeypatch):
    exp = with_released()
    monkeypatch.setattr(baseline_rows, "load_experiment", lambda name: exp)
    monkeypatch.setattr(baseline_rows, "load_published", lambda name: tiny_published())
    df = write_planted_store(exp, tmp_path / "full")
    out = tmp_path / "reports"
    rp.write_outputs(exp, rp.compare(exp, df, published=tiny_published()), out,
                     {"command": "`reference run`", "rows added since": "earlier rows"})
    before = pd.read_csv(out / "t.csv")
    write_released_records(exp, tmp_path / "released", 0.9)
    baseline_rows.add_rows(["t"], tmp_path / "released", out, methods=(), command="test",
                           log=lambda m: 0, row_ids=("ls_released",))
    after = pd.read_csv(out / "t.csv")
    numbers = ["ours_mean", "ours_std", "label_free_mean", "split_mean", "difference"]
    kept, old = (frame[frame["method"] != "ls_released"].reset_index(drop=True)
                 for frame in (after, before))
    assert kept[numbers].equals(old[numbers])
    new = after[(after["method"] == "ls_released") & (after["table"] == "Table 1")
                & (after["dataset"] == "syn")]
    assert new["ours_mean"].tolist() == [pytest.approx(90.0)]
    text = (out / "t.md").read_text()
    assert "- rows added since: earlier rows" in text
    assert "- rows added since (2): ls_released: " in text
    assert "thread(s) per fit" in text                     # the BLAS kernels of the new rows
    assert "- reference runs: [RUNS.md](RUNS.md)" in text


def test_laying_in_an_unknown_row_is_refused_in_one_line(tmp_path, capsys):
    code = baseline_rows.main(["--results-dir", str(tmp_path), "--paper", "ufsol", "--out-dir",
                               str(tmp_path / "out"), "--rows", "ufsol_relased"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "ufsol_relased" in err and "ufsol_released" in err
    assert not (tmp_path / "out").exists()
