"""Every figure kind drawn through `ufsbench plot` from a small store: what its title, labels,
legend and caption promise is what it draws, and all of it fits on the saved canvas."""

import json

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from test_plots import build_store

from ufsbench import plots
from ufsbench.cli import main

CAPTION_PROTOCOL = "Protocol: K-means on the selected features, 3 runs seeded 0..2, random starts"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("figure_store"))


@pytest.fixture(scope="module")
def frame(store):
    return plots.results_frame(store)


@pytest.fixture
def drawn(store, tmp_path, monkeypatch):
    """Run `ufsbench plot ...` and return {stem: figure} of what it saved (files written too)."""
    figures = {}
    save = plots.save_figure

    def keep(fig, out_dir, stem, dpi=150):
        figures[stem] = fig
        return save(fig, out_dir, stem, dpi)

    monkeypatch.setattr(plots, "save_figure", keep)

    def plot(*args):
        main(["plot", *args, "--results-dir", str(store), "--out", str(tmp_path)])
        return figures
    return plot


def _text(fig):
    return " ".join(fig.get_suptitle().split())


def _fits_on_canvas(fig):
    """Every panel (with its tick labels, titles and legend) and every figure text lies inside
    the saved canvas, no text is smaller than 7 pt, and the figure title overlaps no panel."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    page = fig.bbox
    panels = [ax.get_tightbbox(renderer) for ax in fig.axes]
    panels += [legend.get_window_extent(renderer) for legend in fig.legends]
    texts = [t for t in fig.texts if t.get_visible() and t.get_text().strip()]
    for box in panels + [t.get_window_extent(renderer) for t in texts]:
        assert (box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1 and box.y0 >= page.y0 - 1
                and box.y1 <= page.y1 + 1), f"{box} leaves the canvas {page}"
    sizes = [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_fontsize"))
             if t.get_visible() and getattr(t, "get_text", lambda: "x")().strip()]
    assert min(sizes) >= 7
    title = fig._suptitle
    if title is not None and title.get_text():
        box = title.get_window_extent(renderer)
        for panel in panels:
            assert not box.overlaps(panel), f"the title overlaps a panel {panel}"


def test_counts_title_band_legend_and_caption(drawn, frame):
    fig = drawn("counts", "--metric", "acc")["counts_acc"]
    assert _text(fig) == ("ACC against the number of selected features papers' rule; mean over "
                          "the K-means runs, band = ±1 std")
    panel = next(ax for ax in fig.axes if ax.get_title() == "synthetic")
    assert panel.get_xlabel() == "number of selected features" and panel.get_ylabel() == "ACC (%)"
    # the band the title promises: mean ± std of the cell the line shows, at every count
    band = next(c for c in panel.collections if c.get_gid() == "std:ls")
    line = next(ln for ln in panel.get_lines() if ln.get_label() == "ls")
    points = plots.per_count_values(frame, "acc")
    ls = points[(points.dataset == "synthetic") & (points.method == "ls")]
    vertices = band.get_paths()[0].vertices
    assert vertices[:, 1].max() == pytest.approx(100 * (ls.value + ls.spread).max())
    assert vertices[:, 1].min() == pytest.approx(100 * (ls.value - ls.spread).min())
    assert list(line.get_ydata()) == pytest.approx(list(100 * ls.value))
    # colour-blind-safe colours, a legend entry per series, caption with rule and protocol
    colours = {to_hex(ln.get_color()).upper() for ax in fig.axes for ln in ax.get_lines()
               if ln.get_label() != "allfeatures"}
    assert colours <= set(plots.OKABE_ITO)
    (legend,) = [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert sorted(t.get_text() for t in legend.get_texts()) == ["allfeatures", "ls", "scfs"]
    caption = plots.caption_text(fig)
    assert "papers' rule" in caption and CAPTION_PROTOCOL in caption
    _fits_on_canvas(fig)


@pytest.mark.parametrize("datasets", [["digits"], ["digits", "synthetic", "synthetic_b"]])
def test_counts_legend_clear_of_the_title_with_one_or_several_panels(drawn, datasets):
    fig = drawn("counts", "--metric", "nmi", "--dataset", *datasets)["counts_nmi"]
    _fits_on_canvas(fig)


def test_counts_best5_has_no_band_and_says_what_it_shows(drawn):
    fig = drawn("counts", "--metric", "acc", "--summary", "best5")["counts_acc"]
    assert "best of the first 5 K-means runs" in _text(fig) and "std" not in _text(fig)
    assert not [c for ax in fig.axes for c in ax.collections if str(c.get_gid()).startswith("std:")]


def test_sensitivity_cells_one_decimal_title_and_caption(drawn, frame):
    fig = drawn("sensitivity", "--dataset", "synthetic", "--method", "scfs")[
        "sensitivity_synthetic_scfs_acc"]
    assert _text(fig) == "scfs on synthetic: ACC (%), mean over the K-means runs"
    assert "±" not in _text(fig)
    ax = next(ax for ax in fig.axes if ax.get_title() == "m = 5 selected features")
    assert ax.get_xlabel() == "alpha (grid value)" and ax.get_ylabel() == "beta (grid value)"
    rows = frame[(frame.dataset == "synthetic") & (frame.method == "scfs") & (frame.n_features == 5)]
    expected = sorted(f"{100 * v:.1f}" for v in rows.acc_mean)
    assert sorted(t.get_text() for t in ax.texts) == expected        # one decimal, every cell
    colorbar = next(a for a in fig.axes if a.get_ylabel() == "ACC (%)")
    assert colorbar is not None
    caption = plots.caption_text(fig)
    assert "std over the K-means runs (not shown)" in caption and CAPTION_PROTOCOL in caption
    _fits_on_canvas(fig)


def test_convergence_titles_name_the_parameter_setting(drawn, frame):
    fig = drawn("convergence", "--dataset", "synthetic")["convergence_synthetic"]
    (ax,) = fig.axes
    record = plots.convergence_records(frame[frame.dataset == "synthetic"]).iloc[0]
    params = json.loads(record.params)
    assert ax.get_title() == (f"scfs, m = {record.n_features} (stored setting)\n"
                              f"alpha={params['alpha']:g}, beta={params['beta']:g}")
    assert ax.get_xlabel() == "iteration" and ax.get_ylabel().startswith("objective value")
    assert "Each panel is one fit" in plots.caption_text(fig)
    _fits_on_canvas(fig)


def test_ranks_three_methods_drawn_with_caption(drawn):
    fig = drawn("ranks", "--metric", "acc", "--dataset", "synthetic", "synthetic_b")["ranks_acc"]
    (ax,) = fig.axes
    assert "Friedman χ² = " in ax.get_title()
    assert any(t.get_text() == "mean rank (1 = best)" for t in ax.texts)
    assert CAPTION_PROTOCOL in plots.caption_text(fig)
    _fits_on_canvas(fig)


def test_ranks_with_two_methods_refused_in_one_line(store, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["plot", "ranks", "--results-dir", str(store), "--out", str(tmp_path),
              "--method", "ls", "scfs", "--dataset", "synthetic", "synthetic_b"])
    captured = capsys.readouterr()
    assert exit_.value.code == 2 and captured.err.count("\n") == 1
    assert "needs >= 3 methods (Friedman test)" in captured.err and "--method" in captured.err
    assert captured.out == "" and not list(tmp_path.iterdir())


def test_pixels_title_and_caption(drawn):
    fig = drawn("pixels", "--counts", "20")["pixels_digits"]
    assert _text(fig).startswith("Selected features on digits")
    assert CAPTION_PROTOCOL in plots.caption_text(fig)
    _fits_on_canvas(fig)


def test_admm_axis_labels_and_caption(drawn):
    from ufsbench.methods import available_methods

    if "kmufs" not in available_methods():
        pytest.skip("kmufs not available")
    fig = drawn("admm", "--n-features", "10", "--max-iter", "30")["admm_digits_h10"]
    (ax,) = fig.axes
    assert ax.get_xlabel() == "iteration" and "log scale" in ax.get_ylabel()
    assert "no stored results" in plots.caption_text(fig)
    _fits_on_canvas(fig)


def test_every_standard_figure_has_a_caption(frame):
    for spec in plots.standard_figures(frame):
        fig = spec.build()
        assert plots.caption_text(fig), spec.stem
        assert np.all([t.get_fontsize() >= 7 for t in fig.texts])
