"""The reproduction's files: Markdown and LaTeX reports, the SOGFS figure, cells.csv, overview.md.

:func:`write_outputs` writes one experiment's ``<paper>.md``, ``.tex`` and ``.csv`` (plus the
figure table and its SVG for an experiment with a figure) and rebuilds the all-paper
``cells.csv`` and ``overview.md`` from the per-paper CSVs in the directory. The figure is drawn
on a bare :class:`matplotlib.figure.Figure` (no pyplot, no global matplotlib state) with a fixed
SVG hash salt and no date, so the same table gives the same bytes.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from ufsbench.methods.base import keeps_all_features
from ufsbench.report import tex_symbols
from ufsbench.reproduce.diagnosis import candidate_causes, table_summary
from ufsbench.reproduce.experiments import (
    PAPERS,
    dataset_counts,
    dataset_gap,
    is_reconstructed,
    method_gap,
    row_scorings,
    thin_text,
)
from ufsbench.reproduce.rules import CELL_COLUMNS, PICK_NOTE_PREFIXES, record_runs, row_records, summarise


def _fmt(mean, std, m=None) -> str:
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "—"
    text = f"{mean:.1f}" + ("" if std is None or np.isnan(std) else f"±{std:.1f}")
    return text + ("" if m is None or np.isnan(m) else f" ({int(m)})")


def _method_label(cell, own_labels_rows=frozenset()) -> str:
    """A row's name: "(own labels)" / "(K-means on its features)" for the two scorings of a
    joint method (``own_labels_rows``: the (table, dataset, method) scored by its own labels),
    "(baseline)" for a row beside the paper's with no own-labels scoring."""
    label = cell["method"] + (" (own labels)" if cell["scoring"] == "own_labels" else "")
    if cell["role"] == "beside" and cell["scoring"] == "kmeans":
        joint = (cell["table"], cell["dataset"], cell["method"]) in own_labels_rows
        label += " (K-means on its features)" if joint else " (baseline)"
    return label + (" [reconstructed]" if cell["reconstructed"] else "")


def _own_labels_rows(cells: pd.DataFrame) -> frozenset:
    own = cells[cells["scoring"] == "own_labels"]
    return frozenset(zip(own["table"], own["dataset"], own["method"]))


def _status_text(status: str, reason) -> str:
    """A row's status, with its reason unless the row is "ok" (then only its pick notes)."""
    if status != "ok":
        return f"{status}: {reason}"
    notes = [n for n in str(reason if isinstance(reason, str) else "").split("; ")
             if n.startswith(PICK_NOTE_PREFIXES)]
    return "; ".join(["ok", *notes])


def display_frame(cells: pd.DataFrame) -> pd.DataFrame:
    """Human-readable columns: ours / theirs / difference / honest rules / status."""
    frame = pd.DataFrame({
        "method": cells.apply(_method_label, axis=1, own_labels_rows=_own_labels_rows(cells)),
        "ours (papers' rule)": [_fmt(a, b, c) for a, b, c in cells[
            ["ours_mean", "ours_std", "ours_n_features"]].itertuples(index=False)],
        "theirs": [_fmt(a, b, c) for a, b, c in cells[
            ["published_mean", "published_std", "published_n_features"]].itertuples(index=False)],
        "Δ": ["—" if np.isnan(d) else f"{d:+.1f}" for d in cells["difference"]],
        "label-free": [_fmt(a, b, c) for a, b, c in cells[
            ["label_free_mean", "label_free_std", "label_free_n_features"]].itertuples(index=False)],
        "split": [_fmt(a, b, c) for a, b, c in cells[
            ["split_mean", "split_std", "split_n_features"]].itertuples(index=False)],
        "status": [_status_text(s, r) for s, r in cells[["status", "reason"]]
                   .itertuples(index=False)]})
    frame.loc[cells["published_uncertain"].to_numpy(), "theirs"] += " (uncertain)"
    return frame


def render_markdown(exp: dict, cells: pd.DataFrame, header: dict, thin: int = 1,
                    figure: pd.DataFrame | None = None) -> str:
    from tabulate import tabulate

    lines = [f"# Reproduction: {exp['paper']} — {exp.get('title', '')}", ""]
    lines += [f"- {k}: {v}" for k, v in header.items()] + [""]
    lines += ["## Protocol", "", *protocol_lines(exp), ""]
    summary = table_summary(cells)
    if len(summary):
        lines += ["## Summary per table", "", tabulate(summary.drop(columns=["paper"]),
                                                       headers="keys", tablefmt="github",
                                                       showindex=False), ""]
        lines += [("Optimism = mean gain in points of the papers' rule over the honest rule, "
                   "over the cells where both exist; not_better_than_random = cells whose "
                   "papers'-rule value is not above the random row by more than its std."), ""]
    for (table, metric), part in cells.groupby(["table", "metric"], sort=False):
        lines += [f"## {table} ({metric} %)", ""]
        for ds, block in part.groupby("dataset", sort=False):
            lines += [f"### {ds}", "", tabulate(display_frame(block), headers="keys",
                                                tablefmt="github", showindex=False), ""]
    if figure is not None and len(figure):
        lines += [("## Figure 1 as a table (ACC %, best of 5 K-means runs, best over the grid, "
                   "per feature count)"), "", tabulate(figure, headers="keys", tablefmt="github",
                                                 showindex=False), ""]
    lines += stability_lines(exp)
    lines += large_gap_lines(exp, cells, thin)
    return "\n".join(lines) + "\n"


def committed_stability_path() -> Path:
    """The committed selection-stability table (``ufsbench stability ... out=results/stability``)."""
    from ufsbench.paths import repository_dir

    return repository_dir() / "results" / "stability" / "stability.csv"


def stability_table(exp: dict, stability: pd.DataFrame) -> pd.DataFrame:
    """Phi [95 % CI] of the experiment's methods (rows, in its order) on its data sets
    (columns, published ids), cells as :func:`ufsbench.stability.stability_frame` writes them;
    "—" where the committed table has no estimate."""
    from ufsbench.stability import stability_frame

    methods = [m for m in dict.fromkeys(r["method"] for r in exp["rows"])
               if not keeps_all_features(m)]
    frame = stability_frame(stability.assign(stale=False))   # the committed table is current
    shown = {ds: reg for ds, reg in exp["datasets"].items() if reg in frame.columns}
    table = frame.reindex(index=methods, columns=list(shown.values())).fillna("—")
    table.columns = list(shown)
    return table.rename_axis("method").reset_index()


def stability_lines(exp: dict, path: Path | None = None) -> list[str]:
    """The report's selection-stability section, from the committed stability table: each of
    the experiment's methods at its own label-free default (not the row's grid) on the
    experiment's data sets that table covers; nothing when it covers none."""
    from tabulate import tabulate

    from ufsbench.stability import DEGENERATE_NOTE

    path = path or committed_stability_path()
    if not path.is_file():
        return []
    stability = pd.read_csv(path)
    if "n_features" in stability:
        stability = stability[stability["n_features"] == stability["n_features"].min()]
    table = stability_table(exp, stability)
    if table.shape[1] == 1:
        return []
    first = stability.iloc[0]
    return ["## Selection stability", "",
            (f"Nogueira, Sechidis & Brown's Phi with its 95 % interval (1: the same subset "
             f"every time; 0: no more alike than random subsets) of each method's "
             f"{int(first['n_features'])} selected features over B = {int(first['n_subsamples'])} "
             f"fits on {first['fraction']:.0%} row subsamples (seed {int(first['seed'])}), each "
             "method at its own label-free default setting, not at the rows' grids; from the "
             "committed [stability table](../stability/stability.md), which says how it was made. "
             "— = not computed for this data set."), "",
            tabulate(table, headers="keys", tablefmt="github", showindex=False), "",
            DEGENERATE_NOTE, ""]


def protocol_lines(exp: dict) -> list[str]:
    nmi = {"max": "max(H(y), H(z))", "sqrt": "sqrt(H(y) H(z))",
           "arithmetic": "(H(y) + H(z))/2"}[exp["nmi"]]
    runs = "the best of the first 5" if exp["summary"] == "best5" else "mean±std over the 20"
    own = any("own_labels" in row_scorings(r) for r in exp["rows"])
    starts = {"random": "random initial centres",
              "k-means++": "k-means++ initial centres, NOT our default random ones"}[
        exp.get("kmeans_init", "random")]
    scoring = ("- DGUFS's own row is scored by its own cluster labels (20 seeded fits), as in the "
               "paper; K-means on its features is shown beside it.") if own else \
        "- All rows are K-means on the selected features."
    return [
        (f"- Every evaluation: 20 K-means runs (run i seeded with i, {starts}, one "
         f"init, at most 100 iterations); cells show {runs} runs, in percent; (m) = selected "
         "features."),
        f"- NMI normalised by {nmi} (the paper's).",
        ("- **papers' rule**: best over the parameter grid and the feature counts, chosen with "
         "the labels it is scored on (optimistic by construction)."),
        ("- **label-free**: the row's fixed default parameters at the middle of the data set's "
         "feature counts, the same rule on every data set."),
        "- **split**: parameters and feature count chosen on runs 1-10, reported on runs 11-20.",
        scoring,
        "- Rows marked [reconstructed] are models rebuilt without the paper text or code.",
        *released_lines(exp), *baseline_lines(exp)]


def released_lines(exp: dict) -> list[str]:
    """What the ``released`` rows are: the method at its authors' code's settings."""
    released = [r for r in exp["rows"] if r.get("role") == "released"]
    if not released:
        return []
    names = ", ".join(f"{r['row']} = {r['as_printed']} at preset `{r['preset']}`"
                      for r in released)
    return [(f"- **As released** ({names}): the method with the settings of its authors' "
             "released code (the preset's table is in the method's docstring and on its docs "
             "page), on the same grid and data, compared with the same published cell as the "
             "row as printed. The published numbers presumably came from that code, so the two "
             "Δ columns say how much of a gap fidelity to the code explains."),
            *([f"- {exp['notes']['released']}"] if (exp.get("notes") or {}).get("released")
              else [])]


def baseline_lines(exp: dict) -> list[str]:
    """What the baseline rows (role ``beside``) are and how the chance row is used."""
    beside = [r["row"] for r in exp["rows"] if r.get("role") == "beside"]
    if not beside:
        return []
    return [(f"- Rows marked (baseline) ({', '.join(beside)}) sit beside the paper's: no paper "
             "reports them and they are never compared with a published cell. random = a fresh "
             "uniformly random m-subset for each of the 20 K-means runs (its std covers both "
             "draws); variance = the m features of largest variance. Both go through the same "
             "three rules (the papers' rule picks their best feature count)."),
            ("- **not better than random** (in a row's status): its papers'-rule value is not "
             "above the random row's papers'-rule value by more than the random row's std (same "
             "table and data set; under a best-of-5 summary, the std of the random pick's 20 "
             "runs).")]


def large_gap_lines(exp: dict, cells: pd.DataFrame, thin: int = 1) -> list[str]:
    big = cells[(cells["role"] == "paper") & (cells["difference"].abs() > 5)]
    if not len(big):
        return []
    lines = ["## Large gaps (|Δ| > 5 points) and candidate causes", "",
             ("Candidates come from recorded differences (data versions, transcription, protocol "
              "and model notes); none has been confirmed by an experiment."), ""]
    for _, c in big.iterrows():
        lines.append(f"- {c['table']} {c['metric']} {c['dataset']} / "
                     f"{_method_label(c, _own_labels_rows(cells))}: "
                     f"Δ = {c['difference']:+.1f} — "
                     + "; ".join(candidate_causes(exp, c, thin, cells)))
    return lines + [""]


def render_latex(exp: dict, cells: pd.DataFrame) -> str:
    from tabulate import tabulate

    parts = [f"% Reproduction of {exp['paper']}: ours (papers' rule) vs published; generated by "
             + "ufsbench.reproduce"]
    for (table, metric), part in cells.groupby(["table", "metric"], sort=False):
        frame = display_frame(part).drop(columns=["status"])
        frame.insert(0, "dataset", part["dataset"].to_numpy())
        parts.append(f"% {table} ({metric} %)")
        parts.append(tex_symbols(tabulate(frame, headers="keys", tablefmt="latex",
                                          showindex=False)))
    return "\n".join(parts) + "\n"


def figure_table(exp: dict, df: pd.DataFrame, thin: int = 1, data_dir=None) -> pd.DataFrame:
    """SOGFS Figure 1 as a table: per data set and method, the value at every feature count."""
    rows = []
    for ds, name in exp["datasets"].items():
        if dataset_gap(name, data_dir):
            continue
        counts = dataset_counts(exp, name)
        for row in exp["rows"]:
            if method_gap(row["method"]):
                continue
            recs, _, _, _ = row_records(df, name, row, "kmeans", counts, thin)
            out = {"dataset": ds, "method": row["row"] + (" [reconstructed]" if
                                                          is_reconstructed(row["method"]) else "")}
            for m in counts:
                at = recs if keeps_all_features(row["method"]) else recs[recs["n_features"] == m]
                values = [summarise(record_runs(r, "acc", exp["nmi"]), exp["summary"])[0]
                          for _, r in at.iterrows()]
                out[str(m)] = round(100 * max(values), 1) if values else np.nan
            rows.append(out)
    return pd.DataFrame(rows)


def plot_figure(figure: pd.DataFrame, path: Path) -> Path | None:
    """Figure 1 redrawn (one panel per data set, ACC against the feature count), as SVG in the
    project's figure style (:mod:`ufsbench.figure_style`), byte-stable for the same table."""
    if figure.empty:
        return None
    from ufsbench.figure_style import panel_grid, save_svg, series_styles

    datasets = list(dict.fromkeys(figure["dataset"]))
    fig, axes = panel_grid(len(datasets))
    styles = series_styles(set(figure["method"]))
    for ax, ds in zip(axes, datasets):
        block = figure[figure["dataset"] == ds].dropna(axis=1, how="all")
        counts = [c for c in block.columns if c not in ("dataset", "method")]
        for _, r in block.iterrows():
            colour, marker, dashes = styles[r["method"]]
            ax.plot([int(c) for c in counts], [r[c] for c in counts], color=colour,
                    marker=marker, linestyle=dashes, ms=3, label=r["method"])
        ax.set_title(ds)
        ax.set_xlabel("selected features")
        ax.set_ylabel("ACC (%)")
    axes[0].legend(fontsize=6)
    return save_svg(fig, path)


#: The header line that points a report at the log of reference runs.
REFERENCE_RUNS = "[RUNS.md](RUNS.md) names the run these cells come from and every run before it"


def run_header(command: str, wall: float, thin: int, only_datasets, ran: bool,
               stats: dict | None = None, only_methods=None) -> dict:
    from ufsbench.runner import environment

    header = {"command": f"`{command}`" if command else "(library call)",
              "generated": _dt.datetime.now().isoformat(timespec="seconds"),
              "ufsbench commit": environment().get("git_commit") or "unknown",
              "machine": machine_description(),
              "BLAS": blas_description(),
              "reference runs": REFERENCE_RUNS,
              "wall time of this invocation": f"{wall:.0f} s" + ("" if ran else
                                                                   " (report only, no runs)")}
    if stats:
        header["evaluations"] = (f"{sum(s['records'] for s in stats.values())} new records; "
                                 f"{sum(s['skipped'] for s in stats.values())} of "
                                 f"{sum(s['tasks'] for s in stats.values())} parameter settings "
                                 f"were already in the store (resumed)")
    if thin > 1 or only_datasets or (ran and only_methods):
        header["restricted run"] = ", ".join(filter(None, [
            f"grids thinned to {thin_text(thin)}" if thin > 1 else "",
            f"data sets: {', '.join(only_datasets)}" if only_datasets else "",
            f"only {', '.join(only_methods)} run (the tables show every method in the store)"
            if ran and only_methods else ""]))
    return header


def blas_description() -> str:
    """The BLAS kernels this run used (round-off, and so a round-off-sensitive pick, depends on
    them), with the thread count the fits were given."""
    from ufsbench.tasks import environment

    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    return f"{environment()['blas']}; threads per fit: {threads or 'library default'}"


def machine_description() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def write_outputs(exp: dict, cells: pd.DataFrame, out_dir: Path, header: dict, thin: int = 1,
                  figure: pd.DataFrame | None = None) -> list[Path]:
    """<paper>.md, .tex, .csv (+ SOGFS's figure table and plot) and the all-paper cells.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = exp["name"]
    paths = [out_dir / f"{stem}.md", out_dir / f"{stem}.tex", out_dir / f"{stem}.csv"]
    paths[0].write_text(render_markdown(exp, cells, header, thin, figure))
    paths[1].write_text(render_latex(exp, cells))
    cells.to_csv(paths[2], index=False, float_format="%.2f")
    if figure is not None and len(figure):
        figure.to_csv(out_dir / f"{stem}_figure1.csv", index=False)
        paths.append(out_dir / f"{stem}_figure1.csv")
        svg = plot_figure(figure, out_dir / f"{stem}_figure1.svg")
        paths += [svg] if svg else []
    paths.append(write_cells_csv(out_dir, stem))
    paths.append(write_overview(out_dir))
    return paths


def overview_table(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per paper table: the per-table summary, with the grid coverage of its rows."""
    summary = table_summary(cells)
    if summary.empty:
        return summary
    columns = ["paper", "table", "metric", "published_cells", "compared", "within_1_std",
               "within_2_points", "worse_by_more_than_5", "gaps", "partial_grid",
               "mean_difference", "optimism_vs_label_free", "optimism_vs_split",
               "not_better_than_random"]
    return summary[columns]


def write_overview(out_dir: Path) -> Path:
    """overview.md: every paper's tables in one summary (from cells.csv), linking the reports."""
    cells = pd.read_csv(out_dir / "cells.csv")
    reports = [p for p in PAPERS if (out_dir / f"{p}.md").is_file()]
    lines = ["# Reproduction overview", "",
             "One row per published table, from `cells.csv` (every published cell, ours beside "
             "theirs). Columns as in each report's \"Summary per table\"; `partial_grid` counts "
             "rows whose best setting was chosen from only part of the paper's grid; "
             "`not_better_than_random` counts cells whose papers'-rule value is not above the "
             "random row (a fresh random m-subset per K-means run, the papers' rule over its "
             "feature counts) by more than that row's std.", "",
             "Reports: " + ", ".join(f"[{p}]({p}.md)" for p in reports), ""]
    table = overview_table(cells)
    lines += [table.to_markdown(index=False) if len(table) else "(no published cells)", ""]
    path = out_dir / "overview.md"
    path.write_text("\n".join(lines))
    return path


def write_cells_csv(out_dir: Path, fallback: str = "quick") -> Path:
    """cells.csv: the tidy per-cell table of every paper whose report is in out_dir (the quick
    profile's cells when no paper report is there, so that a quick run yields every file)."""
    names = [p for p in PAPERS if (out_dir / f"{p}.csv").is_file()] or \
        [n for n in [fallback] if (out_dir / f"{n}.csv").is_file()]
    frames = [pd.read_csv(out_dir / f"{n}.csv") for n in names]
    path = out_dir / "cells.csv"
    (pd.concat(frames) if frames else pd.DataFrame(columns=CELL_COLUMNS)).to_csv(
        path, index=False, float_format="%.2f")
    return path
