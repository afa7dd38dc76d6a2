"""Figures from a small stored result set: files written, panels and series as expected."""

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from ufsbench import plots, stats
from ufsbench.cli import _plot as _plot_cli
from ufsbench.datasets import Dataset, load_dataset, make_synthetic
from ufsbench.errors import UFSBenchError
from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

PROTOCOL = EvaluationProtocol(n_runs=3)
METHODS = {
    "allfeatures": {"name": "allfeatures", "params": {}, "grid": {}, "default": {}},
    "ls": {"name": "ls", "params": {"k": 5}, "grid": {"weight": ["heat", "binary"]},
           "default": {"weight": "heat"}},
    "scfs": {"name": "scfs", "params": {"max_iter": 5},
             "grid": {"alpha": [0.01, 1.0], "beta": [1.0, 100.0]},
             "default": {"alpha": 1.0, "beta": 1.0}},
}


def _small_sets():
    """Two small synthetic sets and the first 300 digits (an image set): a fast fixture."""
    first = make_synthetic(n_samples=90, n_features=30, random_state=0)
    second = make_synthetic(n_samples=90, n_features=30, random_state=1)
    second.name = "synthetic_b"
    digits = load_dataset("digits")
    digits = Dataset("digits", digits.X[:300], digits.y[:300], checksum="test:first300")
    return first, second, digits


def build_store(root):
    """Two synthetic sets x (allfeatures, ls, scfs) and digits x (allfeatures, ls): 43 records."""
    first, second, digits = _small_sets()
    for data in (first, second):
        for cfg in METHODS.values():
            run_sweep(data, plan_tasks(data, cfg, [5, 10, 20], PROTOCOL, 0, root), n_jobs=1)
    for name in ("allfeatures", "ls"):
        run_sweep(digits, plan_tasks(digits, METHODS[name], [10, 20], PROTOCOL, 0, root),
                  n_jobs=1)
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("store"))


@pytest.fixture(scope="module")
def frame(store):
    return plots.results_frame(store)


def _series(ax):
    return [line.get_label() for line in ax.get_lines()]


def test_counts_one_panel_per_dataset_one_line_per_method(frame):
    fig = plots.counts_figure(frame, "acc")
    assert [ax.get_title() for ax in fig.axes] == ["digits", "synthetic", "synthetic_b"]
    assert sorted(_series(fig.axes[1])) == ["allfeatures", "ls", "scfs"]
    assert sorted(_series(fig.axes[0])) == ["allfeatures", "ls"]
    ls_line = next(line for line in fig.axes[1].get_lines() if line.get_label() == "ls")
    assert list(ls_line.get_xdata()) == [5, 10, 20]
    # The papers' rule per count: the best ls setting at m = 5 in percent.
    rows = frame[(frame.dataset == "synthetic") & (frame.method == "ls") & (frame.n_features == 5)]
    assert ls_line.get_ydata()[0] == pytest.approx(100 * rows.acc_mean.max())


def test_counts_default_rule_uses_default_parameters(frame):
    points = plots.per_count_values(frame, "nmi", rule="label_free")
    ls = points[(points.method == "ls") & (points.dataset == "synthetic")]
    assert set(ls["params"]) == {'{"k":5,"weight":"heat"}'} and len(ls) == 3
    assert "scfs" not in set(points.method)  # scfs has no stored default setting here


def test_sensitivity_two_parameter_grid_has_a_panel_per_count(frame):
    fig = plots.sensitivity_figure(frame, "synthetic", "scfs")
    heatmaps = [ax for ax in fig.axes if ax.get_images()]
    assert [ax.get_title() for ax in heatmaps] == [f"m = {m} selected features" for m in (5, 10, 20)]
    grid = heatmaps[0].get_images()[0].get_array()
    assert grid.shape == (2, 2)  # beta x alpha
    assert [t.get_text() for t in heatmaps[0].get_xticklabels()] == ["0.01", "1"]
    rows = frame[(frame.dataset == "synthetic") & (frame.method == "scfs") & (frame.n_features == 5)
                 & (frame.param_alpha == 0.01) & (frame.param_beta == 100.0)]
    assert grid[1, 0] == pytest.approx(100 * rows.acc_mean.iloc[0])


def test_sensitivity_one_parameter_grid_is_parameter_by_count(frame):
    fig = plots.sensitivity_figure(frame, "synthetic", "ls")
    (ax,) = [ax for ax in fig.axes if ax.get_images()]
    assert ax.get_images()[0].get_array().shape == (3, 2)  # counts x weight


def test_sensitivity_without_grid_or_results_is_an_error(frame):
    with pytest.raises(UFSBenchError, match="no stored grid.*varying parameters are: none"):
        plots.sensitivity_figure(frame, "synthetic", "allfeatures")
    with pytest.raises(UFSBenchError, match="no kmeans results for sogfs on synthetic"):
        plots.sensitivity_figure(frame, "synthetic", "sogfs")


def test_convergence_panel_per_iterative_method(frame):
    fig = plots.convergence_figure(frame, "synthetic")
    assert len(fig.axes) == 1 and fig.axes[0].get_title().startswith("scfs")
    (line,) = fig.axes[0].get_lines()
    history = plots.convergence_records(frame[frame.dataset == "synthetic"]).objective_history[0]
    assert list(line.get_ydata()) == pytest.approx(history) and len(history) >= 2


def test_convergence_without_histories_is_an_error(frame):
    with pytest.raises(UFSBenchError, match="no stored record has an objective history"):
        plots.convergence_figure(frame, "digits")


def test_admm_plot_has_vanilla_and_bilinear_series():
    from ufsbench.cli.plot import _admm_histories

    fig = plots.admm_figure(*_admm_histories("digits", n_features=10, max_iter=40), "digits", 40)
    labels = _series(fig.axes[0])
    assert labels[:2] == ["vanilla ADMM", "bilinear ADMM"]
    bilinear = fig.axes[0].get_lines()[1].get_ydata()
    assert np.allclose(bilinear, math.sqrt(10))  # ||V||_F = sqrt(h) by construction


def test_pixels_paint_the_selected_features(frame):
    fig = plots.pixels_figure(frame, "digits", samples=[0, 5])
    assert len(fig.axes) == 2 * 2  # (ls x 2 samples) rows x 2 counts
    ax = fig.axes[1]  # first sample, m = 20
    base, overlay = ax.get_images()
    assert base.get_array().shape == (8, 8)
    painted = np.flatnonzero(np.asarray(overlay.get_array())[..., 3].ravel(order="C") > 0)
    selected = plots.selected_sets(frame, "digits", counts=[20])["selected"].iloc[0]
    assert sorted(painted) == sorted(selected)  # digits images are row-major (order C)


def test_pixel_overlay_honours_column_major_order():
    rgba = plots._pixel_overlay([1], 6, (2, 3), "F")
    assert rgba[1, 0, 3] > 0 and rgba[:, :, 3].sum() == rgba[1, 0, 3]


def test_pixels_on_a_non_image_dataset_is_an_error(frame):
    with pytest.raises(UFSBenchError, match="synthetic is not an image data set"):
        plots.pixels_figure(frame, "synthetic")


def test_ranks_cd_diagram_has_a_pointer_per_method(frame):
    test = stats.rank_methods(frame, "acc")
    assert test.n_datasets == 2 and test.dropped == ["digits"]  # digits lacks scfs
    assert set(test.mean_ranks.index) == {"allfeatures", "ls", "scfs"}
    fig = plots.cd_figure(test)
    gids = sorted(line.get_gid() for line in fig.axes[0].get_lines() if line.get_gid())
    assert gids == ["method:allfeatures", "method:ls", "method:scfs"]
    assert test.cd == pytest.approx(stats.nemenyi_cd(3, 2))


def test_nemenyi_cd_matches_demsar_table():
    # Demšar (2006), Table 5: q_0.05 = 1.960 (k=2), 2.343 (k=3), 2.569 (k=4), 3.164 (k=10);
    # his example: 4 methods on 14 data sets gives CD = 1.25.
    for k, q in ((2, 1.960), (3, 2.343), (4, 2.569), (10, 3.164)):
        assert stats.nemenyi_cd(k, 6) == pytest.approx(q * math.sqrt(k * (k + 1) / 36), abs=1e-3)
    assert stats.nemenyi_cd(4, 14) == pytest.approx(1.25, abs=0.005)


def _cells(values):
    """A results frame whose select_cells gives these (dataset -> method -> acc) values."""
    rows = []
    for dataset, by_method in values.items():
        for method, acc in by_method.items():
            rows.append({"dataset": dataset, "method": method, "params": "{}", "n_features": 10,
                         "scoring": "kmeans", "acc_mean": acc, "acc_std": 0.0, "acc_runs": [acc],
                         "stale": False, "reconstructed": False})
    return pd.DataFrame(rows)


def test_rank_methods_friedman_statistic_by_hand():
    values = {"d1": {"a": 0.9, "b": 0.8, "c": 0.7}, "d2": {"a": 0.85, "b": 0.6, "c": 0.7},
              "d3": {"a": 0.95, "b": 0.9, "c": 0.5}, "d4": {"a": 0.7, "b": 0.75, "c": 0.6}}
    test = stats.rank_methods(_cells(values), "acc")
    ranks = np.array([[1, 2, 3], [1, 3, 2], [1, 2, 3], [2, 1, 3]])
    assert test.ranks.to_numpy() == pytest.approx(ranks)
    n, k = ranks.shape
    r = ranks.mean(axis=0)
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4)  # Demšar Eq. (1)
    assert test.statistic == pytest.approx(chi2)
    assert list(test.mean_ranks.index) == ["a", "b", "c"]


def test_cliques_join_methods_closer_than_cd():
    means = pd.Series([1.0, 1.5, 2.6, 3.0], index=list("abcd"))
    assert stats.cliques(means, 1.0) == [(0, 1), (2, 3)]
    assert stats.cliques(means, 2.5) == [(0, 3)]


def test_ranks_need_two_common_datasets(frame):
    with pytest.raises(UFSBenchError, match="at least 2 methods with results on at least 2"):
        stats.rank_methods(frame[frame.dataset == "synthetic"], "acc")


def test_missing_results_are_a_clear_error(tmp_path):
    with pytest.raises(UFSBenchError, match=f"no results in {tmp_path}.*ufsbench run"):
        plots.results_frame(tmp_path)


def test_unknown_dataset_filter_names_what_is_stored(tmp_path):
    data = make_synthetic(n_samples=30, n_features=20)
    run_sweep(data, plan_tasks(data, METHODS["allfeatures"], [5], PROTOCOL, 0, tmp_path), n_jobs=1)
    with pytest.raises(UFSBenchError, match="no results for dataset coil20.*stored: synthetic"):
        plots.results_frame(tmp_path, datasets=["coil20"])


def test_a_store_of_two_protocols_is_plotted_by_the_one_asked_for(tmp_path, capsys):
    # Neither protocol is the default (20 runs): the figures need the choice a table takes.
    data = make_synthetic(n_samples=30, n_features=20)
    for runs in (2, 3):
        run_sweep(data, plan_tasks(data, METHODS["ls"], [5, 10], EvaluationProtocol(n_runs=runs),
                                   0, tmp_path), n_jobs=1)
    with pytest.raises(UFSBenchError, match="2 evaluation protocols.*pick one with --n-runs"):
        plots.results_frame(tmp_path)
    frame = plots.results_frame(tmp_path, protocol={"n_runs": 3})
    assert set(frame["n_runs"]) == {3} and len(frame) == 4
    with pytest.raises(UFSBenchError, match="no record in .* has the evaluation protocol asked"):
        plots.results_frame(tmp_path, protocol={"n_runs": 7})
    _plot_cli(["counts", "--results-dir", str(tmp_path), "--n-runs", "3",
               "--out", str(tmp_path / "figures")])
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == [
        "counts_acc.pdf", "counts_acc.png", "counts_nmi.pdf", "counts_nmi.png"]


@pytest.mark.parametrize("kind, options, stems", [
    ("counts", ["--metric", "acc", "nmi"], ["counts_acc", "counts_nmi"]),
    ("sensitivity", ["--dataset", "synthetic"], ["sensitivity_synthetic_ls_acc",
                                                 "sensitivity_synthetic_scfs_acc"]),
    ("convergence", [], ["convergence_synthetic", "convergence_synthetic_b"]),
    ("pixels", ["--counts", "20"], ["pixels_digits"]),
    ("ranks", ["--metric", "acc"], ["ranks_acc"]),
])
def test_cli_writes_png_and_pdf(store, tmp_path, kind, options, stems):
    out = tmp_path / "figs"
    _plot_cli([kind, "--results-dir", str(store), "--out", str(out), *options])
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(f"{s}.{ext}" for s in stems for ext in ("png", "pdf"))
    for path in out.iterdir():
        assert path.stat().st_size > 1000
    png = (out / f"{stems[0]}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("kind", ["counts", "sensitivity", "convergence", "pixels", "ranks"])
def test_cli_on_empty_store_errors(tmp_path, kind):
    with pytest.raises(UFSBenchError, match="no results in"):
        _plot_cli([kind, "--results-dir", str(tmp_path / "none"), "--out", str(tmp_path)])


def test_counts_best5_summary_plots_the_best_run(frame):
    fig = plots.counts_figure(frame, "nmi", summary="best5")
    assert isinstance(fig, Figure) and "best of the first 5" in fig.get_suptitle()
    ls_line = next(line for line in fig.axes[0].get_lines() if line.get_label() == "ls")
    rows = frame[(frame.dataset == "digits") & (frame.method == "ls") & (frame.n_features == 10)]
    assert ls_line.get_ydata()[0] == pytest.approx(100 * max(max(r[:5]) for r in rows.nmi_runs))


def test_write_figures_writes_what_the_results_support(frame, tmp_path):
    paths = plots.write_figures(frame[frame.dataset == "digits"], tmp_path)
    stems = sorted({p.stem for p in paths})
    # No ranks (one data set) and no convergence (ls records no objective): skipped, not errors.
    assert stems == ["counts_acc", "counts_nmi", "pixels_digits", "sensitivity_digits_ls_acc"]
    assert all(p.is_file() for p in paths) and len(paths) == 2 * len(stems)


def test_figures_read_one_evaluation_protocol(tmp_path, capsys):
    """A store with random and k-means++ records: the figures' frame keeps the default starts
    and says what it left out (a curve must not take the better of two protocols per point)."""
    first, _, _ = _small_sets()
    for init in ("random", "k-means++"):
        protocol = EvaluationProtocol(n_runs=3, kmeans_init=init)
        run_sweep(first, plan_tasks(first, METHODS["ls"], [5, 10], protocol, 0, tmp_path),
                  n_jobs=1)
    frame = plots.results_frame(tmp_path)
    assert set(frame["kmeans_init"]) == {"random"} and len(frame) == 4
    assert "4 record(s) of other evaluation protocols left out" in capsys.readouterr().err


@pytest.mark.parametrize("order,expected", [("C", "C"), ("f", "F"), ("A", "A")])
def test_image_layout_reads_the_registry_order(monkeypatch, order, expected):
    import ufsbench.datasets as datasets

    monkeypatch.setattr(datasets, "dataset_entry",
                        lambda name: {"image": {"shape": [32, 32], "order": order}})
    assert plots.image_layout("faces") == ((32, 32), expected)


def test_image_layout_refuses_an_unknown_order_in_one_line(monkeypatch):
    import ufsbench.datasets as datasets

    monkeypatch.setattr(datasets, "dataset_entry",
                        lambda name: {"image": {"shape": [32, 32], "order": "rows"}})
    with pytest.raises(UFSBenchError, match="image order 'rows' must be C") as info:
        plots.image_layout("faces")
    assert "\n" not in str(info.value)
