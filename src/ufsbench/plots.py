"""Figures from the result store, redrawn the way the papers draw them (``ufsbench plot ...``).

Every figure is built on a bare :class:`matplotlib.figure.Figure` (Agg for PNG, matplotlib's PDF
backend for PDF), never through pyplot, so importing this module changes no global backend and
leaves no figure open. Each ``*_figure`` function returns the Figure (tests inspect its axes and
lines); :func:`ufsbench.figure_style.save_figure` writes it as PNG and PDF.

* ``counts``       ACC / NMI against the number of selected features: a panel per data set, a line
                   per method (SOGFS Fig. 1, SCFS Figs. 3-4).
* ``sensitivity``  ACC over the two main grid parameters as heatmaps, a panel per feature count
                   (UFSOL Fig. 2, DGUFS Fig. 2, SCFS Fig. 5); one-parameter grids give a single
                   parameter x feature-count heatmap (SOGFS Fig. 2).
* ``convergence``  objective value per iteration from the records' ``objective_history``
                   (UFSOL Fig. 3, SOGFS Fig. 3, SCFS Fig. 6, K-means UFS Fig. 4).
* ``admm``         ||V||_F per iteration of K-means UFS's vanilla against its bi-linear ADMM
                   (K-means UFS Fig. 2), from two fits the plot command makes; no stored results.
* ``pixels``       the selected features painted over sample images (DGUFS Table 4).
* ``ranks``        mean rank of each method across data sets and a critical-difference diagram
                   (Friedman test + Nemenyi post-hoc, Demšar 2006).

Which stored cell a curve shows is the report's selection rule (see ``ufsbench.report``), applied
per feature count: ``paper`` takes the best mean over the parameter grid (chosen with the labels),
``default`` the method's label-free default parameters.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ufsbench.errors import UFSBenchError

# Re-exported: the plot command and the HTML page take these from here as well.
from ufsbench.figure_style import (  # the one module importing matplotlib (see its docstring)  # noqa: F401
    DEFAULT_OUT,
    MAX_COLUMNS,
    OKABE_ITO,
    Figure,
    MaxNLocator,
    caption_text,
    figure_png_base64,
    format_value,
    panel_grid,
    protocol_caption,
    rule_caption,
    safe_stem,
    save_figure,
    series_styles,
    set_caption,
    set_suptitle,
    sorted_values,
)
from ufsbench.methods.base import keeps_all_features
from ufsbench.records import asked_protocol, load_results, named_rows
from ufsbench.report import (
    METRICS,
    RULE_LABELS,
    SUMMARIES,
    at_default,
    canonical_rule,
    fixed_feature_count,
    is_default_setting,
    method_config,
    series_label,
    summarise,
    variants,
)
from ufsbench.results import ResultStore
from ufsbench.stats import RankTest, cliques, rank_methods


# -- reading the store ---------------------------------------------------------------------
def results_frame(results_dir=None, datasets=None, methods=None,
                  protocol: dict | None = None) -> pd.DataFrame:
    """The store's up-to-date records (stale ones dropped), optionally restricted, of one
    evaluation protocol (``protocol`` fixes some of its fields; see ``records.one_protocol``);
    never empty.

    Raises a UFSBenchError naming the store and the way to fill it when nothing is left, so that
    every plot command fails the same clear way on a missing or empty store.
    """
    df = load_results(results_dir)
    where = ResultStore(results_dir).root
    if df.empty:
        raise UFSBenchError(f"no results in {where}; run `ufsbench run ...` first or point "
                            f"--results-dir at a result store")
    df = named_rows(df[~df["stale"]], where, datasets, methods)
    if df.empty:
        raise UFSBenchError(f"every record in {where} is stale (its data file changed); rerun "
                            f"`ufsbench run ...` to recompute them")
    df, left_out = asked_protocol(df, protocol, where)  # one protocol per figure, as per table
    if left_out:
        print(f"note: {left_out}", file=sys.stderr)
    return df.reset_index(drop=True)


def with_record_fields(df: pd.DataFrame, *fields: str) -> pd.DataFrame:
    """df plus one column per requested record field (e.g. objective_history, selected).

    The tidy frame of ``load_results`` leaves out the bulky per-record lists; they are read here
    from each row's JSON record (the ``path`` column), absent fields as None.
    """
    out = df.copy()
    values: dict[str, list[Any]] = {name: [] for name in fields}
    for path in out["path"]:
        record = ResultStore.read(Path(path)) or {}
        for name in fields:
            values[name].append(record.get(name))
    for name in fields:
        out[name] = values[name]
    return out


# -- shared helpers ------------------------------------------------------------------------
def _check_choice(value: str, allowed, what: str) -> None:
    if value not in allowed:
        raise UFSBenchError(f"unknown {what} {value!r}; use one of {', '.join(allowed)}")


def per_count_values(df: pd.DataFrame, metric: str = "acc", rule: str = "paper",
                     summary: str = "mean") -> pd.DataFrame:
    """One row per (dataset, method, variant, scoring, n_features) with ``value``: the rule's
    cell there, and ``series``, its name in legends (a variant or a preset is a series of its
    own, as it is a row of the report's tables).

    ``paper``: the best value over the parameter grid at that feature count; ``label_free``: the
    method's default parameters. Ties go to the first stored setting (stable sort).
    """
    _check_choice(metric, METRICS, "metric")
    rule = canonical_rule(rule)
    values = summarise(df, metric, summary)
    values = values.assign(variant=variants(values))
    values = values.assign(series=[series_label(m, s, v) for m, s, v in zip(
        values["method"], values["scoring"], values["variant"])])
    if rule == "label_free":
        values = values[at_default(values)]
    keys = ["dataset", "method", "variant", "scoring", "n_features"]
    values = values.sort_values("value", ascending=False, kind="stable")
    return values.groupby(keys, sort=True).head(1).sort_values(keys).reset_index(drop=True)


# -- ACC / NMI against the feature count -----------------------------------------------------
def counts_figure(df: pd.DataFrame, metric: str = "acc", rule: str = "paper",
                  summary: str = "mean") -> Figure:
    """A panel per data set, a line per method: the metric against the number of features.

    All Features (one count, d) is a dashed horizontal reference line, as in the papers.
    """
    points = per_count_values(df, metric, rule, summary)
    if points.empty:
        raise UFSBenchError(f"no stored cell matches the {rule!r} rule; run the methods' "
                            f"default settings or use --rule paper")
    datasets = sorted(points["dataset"].unique())
    reference = points["method"].map(keeps_all_features)
    labels = set(points["series"][~reference])
    styles = series_styles(labels)
    banded = summary == "mean" and points["spread"].notna().any()
    fig, axes = panel_grid(len(datasets), size=(4.0, 3.3))
    for ax, dataset in zip(axes, datasets):
        here = points[points["dataset"] == dataset]
        for (method, label), line in here.groupby(["method", "series"], sort=True):
            if keeps_all_features(method):
                ax.axhline(100 * line["value"].iloc[0], color="0.45", linestyle=(0, (6, 3)),
                           linewidth=1.2, label=label)
            else:
                colour, marker, dashes = styles[label]
                ax.plot(line["n_features"], 100 * line["value"], marker=marker, markersize=4,
                        color=colour, linestyle=dashes, label=label)
                if banded:
                    mean, std = 100 * line["value"], 100 * line["spread"].fillna(0.0)
                    ax.fill_between(line["n_features"], mean - std, mean + std, color=colour,
                                    alpha=0.15, linewidth=0, gid=f"std:{label}")
        ax.set_xticks(sorted(here.loc[~here["method"].map(keeps_all_features),
                                      "n_features"].unique()))
        ax.set_title(dataset)
        ax.set_xlabel("number of selected features")
        ax.set_ylabel(f"{METRICS[metric]} (%)")
        ax.grid(alpha=0.3)
    handles: dict[str, Any] = {}  # legend label -> its first artist
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    # On the first row's last panel, outside it: the layout makes room for it, below the title.
    top_right = axes[min(len(axes), MAX_COLUMNS) - 1]
    top_right.legend(list(handles.values()), list(handles.keys()), loc="upper left",
                     bbox_to_anchor=(1.03, 1.0), borderaxespad=0, fontsize="small",
                     frameon=False)
    shown = ("mean over the K-means runs, band = ±1 std" if banded
             else SUMMARIES[summary])
    set_suptitle(fig, f"{METRICS[metric]} against the number of selected features\n"
                    f"{RULE_LABELS[rule]}; {shown}")
    set_caption(fig, rule_caption(rule) + " All Features: dashed grey line.",
                protocol_caption(df))
    return fig


# -- parameter sensitivity -------------------------------------------------------------------
def grid_parameters(df: pd.DataFrame, method: str) -> list[str]:
    """The parameters that vary among df's records of a method, in its config's grid order."""
    varying = [c[len("param_"):] for c in df.columns if c.startswith("param_")
               and len(sorted_values(df[c])) > 1]
    order = list((method_config(method).get("grid") or {}).keys())
    return sorted(varying, key=lambda p: (order.index(p) if p in order else len(order), p))


def sensitivity_figure(df: pd.DataFrame, dataset: str, method: str, metric: str = "acc",
                       summary: str = "mean", params=None, counts=None,
                       scoring: str = "kmeans") -> Figure:
    """Heatmaps of the metric over a method's two main grid parameters, a panel per feature count.

    With a one-parameter grid: a single heatmap of that parameter against the feature count.
    Further grid parameters (e.g. DGUFS's m_update) are maximised over, as the title says.
    """
    _check_choice(metric, METRICS, "metric")
    sub = df[(df["dataset"] == dataset) & (df["method"] == method) & (df["scoring"] == scoring)]
    if sub.empty:
        raise UFSBenchError(f"no {scoring} results for {method} on {dataset}; run `ufsbench run "
                            f"method={method} dataset={dataset}` first")
    sub = summarise(sub, metric, summary)
    varying = grid_parameters(sub, method)
    chosen = list(params) if params else varying[:2]
    unknown = [p for p in chosen if p not in varying]
    if unknown or not chosen:
        over = ", ".join(unknown) or "any parameter"
        raise UFSBenchError(f"{method} on {dataset} has no stored grid over {over}; its varying "
                            f"parameters are: {', '.join(varying) or 'none'}")
    others = [p for p in varying if p not in chosen]
    counts = sorted(counts or sub["n_features"].unique())
    vmin, vmax = 100 * sub["value"].min(), 100 * sub["value"].max()
    if len(chosen) == 1:
        fig, axes = panel_grid(1, size=(5.4, 4.2))
        image = _heatmap(axes[0], sub, f"param_{chosen[0]}", "n_features", vmin, vmax)
        axes[0].set_xlabel(f"{chosen[0]} (grid value)")
        axes[0].set_ylabel("number of selected features")
    else:
        fig, axes = panel_grid(len(counts), ncols=3, size=(4.0, 3.6))
        for ax, m in zip(axes, counts):
            image = _heatmap(ax, sub[sub["n_features"] == m], f"param_{chosen[0]}",
                             f"param_{chosen[1]}", vmin, vmax)
            ax.set_title(f"m = {m} selected features", fontsize="medium")
            ax.set_xlabel(f"{chosen[0]} (grid value)")
            ax.set_ylabel(f"{chosen[1]} (grid value)")
    fig.colorbar(image, ax=axes, label=f"{METRICS[metric]} (%)", shrink=0.8)
    note = f"; best over {', '.join(others)}" if others else ""
    shown = "mean over the K-means runs" if summary == "mean" else SUMMARIES[summary]
    set_suptitle(fig, f"{method} on {dataset}: {METRICS[metric]} (%), {shown}{note}")
    spread = ""
    if summary == "mean" and sub["spread"].notna().any():
        std = 100 * sub["spread"].dropna()
        spread = (f"Cells show the mean; its std over the K-means runs (not shown) is "
                  f"{std.median():.1f} points in the median cell, at most {std.max():.1f}.")
    set_caption(fig, spread, protocol_caption(sub))
    return fig


def _heatmap(ax, cells: pd.DataFrame, x: str, y: str, vmin: float, vmax: float):
    """The best value per (x, y) cell as an annotated image; absent combinations stay blank."""
    xs, ys = sorted_values(cells[x]), sorted_values(cells[y])
    grid = np.full((len(ys), len(xs)), np.nan)
    best = cells.groupby([cells[y].map(repr), cells[x].map(repr)])["value"].max()
    for i, yv in enumerate(ys):
        for j, xv in enumerate(xs):
            grid[i, j] = 100 * best.get((repr(yv), repr(xv)), np.nan)
    image = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap="viridis",
                      vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(xs)), [format_value(v) for v in xs], rotation=45, fontsize="small")
    ax.set_yticks(range(len(ys)), [format_value(v) for v in ys], fontsize="small")
    if grid.size <= 100:
        middle = (vmin + vmax) / 2
        size = 8 if grid.size <= 36 else 7
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                ax.text(j, i, f"{value:.1f}", ha="center", va="center", fontsize=size,
                        color="black" if value > middle else "white")
    return image


# -- convergence -----------------------------------------------------------------------------
def convergence_records(df: pd.DataFrame) -> pd.DataFrame:
    """One record per (dataset, method) with a non-empty objective history.

    Preference: the default parameters at the data set's fixed report count, then the default
    parameters at any count, then the first stored setting -- so the curve is label-free.
    """
    rows = with_record_fields(df[df["scoring"] == "kmeans"], "objective_history")
    rows = rows[[bool(h) for h in rows["objective_history"]]]
    if rows.empty:
        raise UFSBenchError("no stored record has an objective history; iterative methods "
                            "(e.g. sogfs, scfs, dgufs, kmufs) record one: run one of them first")
    rows = rows.assign(
        _not_default=~at_default(rows),
        _not_fixed=[n != fixed_feature_count(d) for n, d in zip(rows["n_features"], rows["dataset"])])
    rows = rows.sort_values(["_not_default", "_not_fixed", "params", "n_features"], kind="stable")
    return rows.groupby(["dataset", "method"], sort=True).head(1).sort_values(
        ["dataset", "method"]).reset_index(drop=True)


def convergence_figure(df: pd.DataFrame, dataset: str) -> Figure:
    """A panel per method: the objective value per iteration of one fit on one data set."""
    rows = convergence_records(df[df["dataset"] == dataset])
    fig, axes = panel_grid(len(rows), ncols=3, size=(4.0, 3.2))
    for ax, row in zip(axes, rows.itertuples(index=False)):
        history = np.asarray(row.objective_history, dtype=float)
        ax.plot(np.arange(1, len(history) + 1), history, marker="o", markersize=2,
                color=OKABE_ITO[4])
        finite = history[np.isfinite(history)]
        log = bool(finite.size and finite.min() > 0 and finite.max() > 1e3 * finite.min())
        if log:
            ax.set_yscale("log")
        else:
            ax.ticklabel_format(axis="y", useOffset=False)  # values as they are, no "+4.6e3"
        at = is_default_setting(row.method, row.params, getattr(row, "preset", ""),
                                ignore=method_config(row.method).get("variant"))
        which = "default" if at else "stored"
        ax.set_title(f"{row.method}, m = {row.n_features} ({which} setting)\n"
                     f"{setting_text(row.method, row.params)}", fontsize="small")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("iteration")
        ax.set_ylabel("objective value (no unit)" + (", log scale" if log else ""))
        ax.grid(alpha=0.3)
    set_suptitle(fig, f"Convergence on {dataset}: objective value per iteration of one fit")
    set_caption(fig, "Each panel is one fit: the method's label-free default setting at the data "
                     "set's report feature count where stored (else the first stored setting). "
                     "The objective is the method's own (its docstring), in its own scale.")
    return fig


def setting_text(method: str, params: str) -> str:
    """A stored setting as ``name=value`` for its grid parameters (all parameters when the
    method has no grid in its config)."""
    import json

    values = json.loads(params)
    grid = list((method_config(method).get("grid") or {}).keys())
    shown = {k: values[k] for k in grid if k in values} or values
    return ", ".join(f"{k}={format_value(v)}" for k, v in shown.items()) or "no parameters"


def admm_figure(histories: dict[str, np.ndarray], m: int, dataset: str,
                max_iter: int) -> Figure:
    """||V||_F per iteration of K-means UFS's vanilla and bi-linear ADMM (K-means UFS Fig. 2),
    from the fits' ``v_norm_history_`` ({"vanilla": ..., "bilinear": ...}) at h = m features.
    The bi-linear V-step keeps ||V||_F = sqrt(h) by construction; the vanilla one does not."""
    fig, (ax,) = panel_grid(1, size=(5.5, 3.8))
    for (admm, style), colour in zip((("vanilla", "-"), ("bilinear", "--")), OKABE_ITO[4:]):
        norms = histories[admm]
        ax.plot(np.arange(1, len(norms) + 1), norms, linestyle=style, color=colour,
                label=f"{admm} ADMM")
    ax.axhline(math.sqrt(m), color="0.5", linewidth=0.8, linestyle=":")
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel(r"$\|V\|_F$ (no unit, log scale)")
    ax.legend()
    ax.set_title(f"K-means UFS on {dataset}, h = {m} (dotted: $\\sqrt{{h}}$)", fontsize="medium")
    set_caption(fig, f"Both ADMM variants fitted with random_state=0 and at most {max_iter} "
                     f"iterations; no K-means evaluation, no stored results.")
    return fig


# -- selected pixels -------------------------------------------------------------------------
#: The ``order`` of a registry entry's ``image:`` (any case): how numpy's reshape reads a row of
#: X as pixels, C row by row, F column by column.
_IMAGE_ORDERS: dict[str, Literal["C", "F", "A"]] = {"C": "C", "F": "F", "A": "A"}


def image_layout(dataset: str) -> tuple[tuple[int, int], Literal["C", "F", "A"]]:
    """(shape, order) of a data set's images from its registry entry, or a clear error."""
    from ufsbench.datasets import dataset_entry

    image = dataset_entry(dataset).get("image")
    if not image:
        raise UFSBenchError(f"{dataset} is not an image data set (no image: entry in its "
                            f"registry file); pixel plots need one, e.g. coil20, orl, umist, usps")
    given = str(image.get("order", "C"))
    order = _IMAGE_ORDERS.get(given.upper())
    if order is None:
        raise UFSBenchError(f"{dataset}: image order {given!r} must be C (row by row) or F "
                            f"(column by column)")
    return (int(image["shape"][0]), int(image["shape"][1])), order


def selected_sets(df: pd.DataFrame, dataset: str, methods=None, counts=None,
                  rule: str = "paper") -> pd.DataFrame:
    """The ``selected`` indices of the rule's record per (method, feature count) on a data set."""
    sub = df[(df["dataset"] == dataset) & ~df["method"].map(keeps_all_features)
             & (df["scoring"] == "kmeans")]
    if methods:
        sub = sub[sub["method"].isin(methods)]
    if counts:
        sub = sub[sub["n_features"].isin(counts)]
    if sub.empty:
        raise UFSBenchError(f"no stored selections on {dataset} for the requested methods and "
                            f"feature counts; run a selector on {dataset} first")
    best = per_count_values(sub, "acc", rule)
    return with_record_fields(best, "selected")


def pixels_figure(df: pd.DataFrame, dataset: str, methods=None, counts=None, samples=None,
                  n_samples: int = 2, rule: str = "paper", data_dir=None,
                  download: bool = True) -> Figure:
    """Selected pixels (red) over sample images: a row per (method, sample), a column per count.

    Samples default to the first image of each of the first ``n_samples`` classes.
    """
    from ufsbench.datasets import load_dataset

    shape, order = image_layout(dataset)
    chosen = selected_sets(df, dataset, methods, counts, rule)
    data = load_dataset(dataset, data_dir=data_dir, download=download)
    if samples is None:
        samples = [int(np.flatnonzero(data.y == c)[0]) for c in np.unique(data.y)[:n_samples]]
    bad = [s for s in samples if not 0 <= s < data.n_samples]
    if bad:
        raise UFSBenchError(f"sample index(es) {bad} out of range: {dataset} has "
                            f"{data.n_samples} samples")
    col_counts = sorted(chosen["n_features"].unique())
    row_methods = sorted(chosen["series"].unique())
    nrows, ncols = len(row_methods) * len(samples), len(col_counts)
    # room for the two-line title and the caption even with a single image
    fig = Figure(figsize=(max(4.8, 1.5 * ncols + 1.2), 1.5 * nrows * shape[0] / shape[1] + 1.9),
                 layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for i, (method, sample) in enumerate((m, s) for m in row_methods for s in samples):
        for j, m in enumerate(col_counts):
            ax = axes[i, j]
            ax.set_xticks([])
            ax.set_yticks([])
            hit = chosen[(chosen["series"] == method) & (chosen["n_features"] == m)]
            ax.imshow(data.X[sample].reshape(shape, order=order), cmap="gray")
            if not hit.empty:
                ax.imshow(_pixel_overlay(hit["selected"].iloc[0], data.n_features, shape, order))
            else:
                ax.text(0.5, 0.5, "not stored", ha="center", va="center", fontsize="small",
                        color="white", transform=ax.transAxes)
            if i == 0:
                ax.set_title(f"m = {m}", fontsize="small")
            if j == 0:
                ax.set_ylabel(f"{method}\n#{sample}", fontsize="small")
    set_suptitle(fig, f"Selected features on {dataset}\n(orange; {RULE_LABELS[rule]} per count)")
    set_caption(fig, f"Rows: method and sample index; columns: m selected features (pixels). "
                     f"{rule_caption(rule)} Picked by ACC.", protocol_caption(chosen))
    return fig


def _pixel_overlay(selected, n_features: int, shape: tuple[int, int],
                   order: Literal["C", "F", "A"]) -> np.ndarray:
    """An RGBA image: opaque red at the selected pixels, transparent elsewhere."""
    mask = np.zeros(n_features, dtype=bool)
    mask[np.asarray(selected, dtype=int)] = True
    rgba = np.zeros((*shape, 4))
    rgba[mask.reshape(shape, order=order)] = (0.902, 0.624, 0.0, 0.9)  # Okabe-Ito orange
    return rgba


# -- the critical-difference diagram ----------------------------------------------------------
def cd_figure(test: RankTest, title: str = "", caption: str = "") -> Figure:
    """Demšar's critical-difference diagram: a rank axis (1 = best, left), each method pointing
    at its mean rank, the CD as a scale bar, and thick bars joining methods not significantly
    different (Nemenyi). Every method's pointer is a line with gid ``method:<label>``.

    Needs >= 3 methods (the Friedman test's minimum); with fewer a UFSBenchError says so."""
    k, means = test.n_methods, test.mean_ranks
    if k < 3 or test.statistic is None:
        raise UFSBenchError(f"a critical-difference diagram needs >= 3 methods (Friedman test); "
                            f"{k} have results on {test.n_datasets} common data sets "
                            f"({', '.join(means.index)}): add methods with --method or run more")
    half = math.ceil(k / 2)
    fig = Figure(figsize=(7.5, 1.6 + 0.28 * half + 0.18 * len(cliques(means, test.cd))),
                 layout="constrained")
    ax = fig.subplots()
    ax.set_axis_off()
    ax.hlines(0, 1, k, color="black", linewidth=1)
    for r in range(1, k + 1):
        ax.vlines(r, 0, 0.12, color="black", linewidth=1)
        ax.text(r, 0.2, str(r), ha="center", va="bottom", fontsize="small")
    ax.text(1 + (k - 1) / 2, 0.5, "mean rank (1 = best)", ha="center", va="bottom",
            fontsize="small", gid="axis-label")
    ax.hlines(0.75, 1, 1 + test.cd, color="black", linewidth=1.5)
    ax.vlines([1, 1 + test.cd], 0.68, 0.82, color="black", linewidth=1.5)
    ax.text(1 + test.cd / 2, 0.88, f"CD = {test.cd:.2f}", ha="center", va="bottom",
            fontsize="small")
    for i, (label, rank) in enumerate(means.items()):
        left = i < half
        depth = -0.45 - 0.3 * (i if left else k - 1 - i)
        end = 0.6 if left else k + 0.4
        line, = ax.plot([rank, rank, end], [0, depth, depth], color="black", linewidth=0.8)
        line.set_gid(f"method:{label}")
        ax.text(end + (-0.05 if left else 0.05), depth, f"{label} ({rank:.2f})",
                ha="right" if left else "left", va="center", fontsize="small")
    for n, (a, b) in enumerate(cliques(means, test.cd)):
        y = -0.2 - 0.12 * n
        ax.hlines(y, means.iloc[a] - 0.03, means.iloc[b] + 0.03, color="black", linewidth=3)
    ax.set_xlim(-1.5, k + 2.5)
    ax.set_ylim(-0.5 - 0.3 * half, 1.3)
    friedman = f"Friedman χ² = {test.statistic:.2f}, p = {test.pvalue:.3g}"
    ax.set_title(f"{title}{' — ' if title else ''}mean ranks over {test.n_datasets} data sets; "
                 f"{friedman}; Nemenyi α = {test.alpha:g}", fontsize="medium")
    set_caption(fig, "Thick bars join methods whose mean ranks differ by less than the critical "
                     "difference (CD, Nemenyi).", caption)
    return fig


def ranks_caption(df: pd.DataFrame, rule: str) -> str:
    """The caption of a critical-difference diagram: the cells ranked and their protocol."""
    return f"{rule_caption(rule)} {protocol_caption(df)}"


# -- every figure a store supports ------------------------------------------------------------
@dataclass
class FigureSpec:
    """One figure of the standard set: where it belongs, its caption, file stem and builder."""

    section: str    # counts, ranks, convergence, sensitivity, pixels
    title: str
    stem: str
    build: Callable[..., Figure]  # () -> Figure; raises UFSBenchError when the results cannot support it


def standard_figures(df: pd.DataFrame, summary: str = "mean", download: bool = False,
                     pixel_samples: int = 1) -> list[FigureSpec]:
    """The figures worth drawing from a results frame, in reading order, built lazily.

    Shared by the HTML page and :func:`write_figures` (figures next to a report). Pixel plots
    use only image data already on disk unless ``download``.
    """
    df = df[~df["stale"]]
    specs = [FigureSpec("counts", f"{METRICS[m]} against the number of selected features",
                        f"counts_{m}", lambda m=m: counts_figure(df, m, "paper", summary))
             for m in METRICS]
    specs += [FigureSpec("ranks", f"{METRICS[m]}: critical-difference diagram (papers' rule)",
                         f"ranks_{m}", lambda m=m: cd_figure(rank_methods(df, m, "paper", summary),
                                                             METRICS[m], ranks_caption(df, "paper")))
              for m in METRICS]
    try:
        iterative = sorted(convergence_records(df)["dataset"].unique())
    except UFSBenchError:
        iterative = []
    specs += [FigureSpec("convergence", f"Objective per iteration on {d}", f"convergence_{safe_stem(d)}",
                         lambda d=d: convergence_figure(df, d)) for d in iterative]
    specs += [FigureSpec("sensitivity", f"ACC of {m} on {d} over its grid",
                         f"sensitivity_{safe_stem(d)}_{safe_stem(m)}_acc",
                         lambda d=d, m=m: sensitivity_figure(df, d, m, "acc", summary))
              for (d, m), sub in df.groupby(["dataset", "method"], sort=True)
              if grid_parameters(sub, m)]
    specs += [FigureSpec("pixels", f"Selected features on {d}", f"pixels_{safe_stem(d)}",
                         lambda d=d: pixels_figure(df, d, n_samples=pixel_samples,
                                                   download=download))
              for d in sorted(df["dataset"].unique()) if is_image_dataset(d)]
    return specs


def write_figures(df: pd.DataFrame, out_dir, summary: str = "mean") -> list[Path]:
    """Write every standard figure the results support (PNG + PDF) into out_dir, e.g. next to a
    reproduction report; figures the results cannot support are skipped silently."""
    written = []
    for spec in standard_figures(df, summary):
        try:
            fig = spec.build()
        except UFSBenchError:
            continue
        written += save_figure(fig, out_dir, spec.stem)
    return written


def is_image_dataset(dataset: str) -> bool:
    """Whether the registry gives the data set an image layout (pixel plots are possible)."""
    from ufsbench.datasets import dataset_entry

    try:
        return bool(dataset_entry(dataset).get("image"))
    except UFSBenchError:
        return False
