"""A one-file HTML summary of the result store (``ufsbench report --html FILE``).

The page holds the report's tables (both selection rules, ACC and NMI), the selection stability
of its methods on its data sets and the planted-feature suite's precision (when the store holds
them: ``ufsbench stability``, ``ufsbench planted``), and the figures of ``ufsbench.plots``
embedded as base64 PNG, with inline CSS and no script: it opens from disk in
any browser, with no server and nothing fetched. A figure that cannot be drawn from the stored
results (no iterative method, one data set only, image data not on disk, ...) is replaced by a
one-line note saying why, so the page is always written.
"""

from __future__ import annotations

import datetime as _dt
import re
from html import escape
from pathlib import Path

import pandas as pd

from ufsbench import figure_style, plots, stats
from ufsbench.errors import UFSBenchError
from ufsbench.report import (
    METRICS,
    RULES,
    SUMMARIES,
    caption,
    protocol_lines,
    select_cells,
    table_frame,
)

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption, .note { color: #555; font-size: .9em; } .scroll { overflow-x: auto; }
"""


def _table_html(frame: pd.DataFrame) -> str:
    """A table frame as HTML; the report's markdown bold (best per column) becomes <strong>."""
    text = frame.to_html(escape=True, border=0, na_rep="—")
    return '<div class="scroll">' + re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text) + \
        "</div>"


def _figure_html(title: str, build) -> str:
    """The figure build() returns, embedded as PNG; a note instead when it cannot be drawn."""
    try:
        fig = build()
    except UFSBenchError as exc:
        return f'<p class="note">{escape(title)}: not drawn — {escape(str(exc))}</p>'
    data = figure_style.figure_png_base64(fig)
    return (f'<figure><img alt="{escape(title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{escape(title)}</figcaption></figure>")


def _tables_section(df: pd.DataFrame, summary: str) -> list[str]:
    norm = df["nmi_normalisation"].iloc[0] if "nmi_normalisation" in df else None
    parts = ["<h2>Tables</h2>"]
    for metric in METRICS:
        for rule in RULES:
            cells = select_cells(df, metric, rule, summary)
            parts.append(f"<h3>{escape(caption(metric, rule, summary, norm))}</h3>")
            parts.append(_table_html(table_frame(cells, "markdown")) if not cells.empty
                         else '<p class="note">(no results under this rule)</p>')
    return parts


SECTIONS = {"counts": "Against the number of selected features",
            "ranks": "Across data sets: mean ranks (Friedman + Nemenyi)",
            "convergence": "Convergence", "sensitivity": "Parameter sensitivity",
            "pixels": "Selected pixels"}
EMPTY = {"counts": "(nothing to draw)",
         "convergence": "No stored record has an objective history; iterative methods (e.g. "
                        "sogfs, scfs, dgufs, kmufs) record one.",
         "sensitivity": "No stored method has a parameter grid with more than one value.",
         "pixels": "No image data set (coil20, orl, umist, usps, digits, ...) in these results."}


def _ranks_section(df: pd.DataFrame, summary: str) -> list[str]:
    """Per metric: the critical-difference diagram and the rank table, or why there are none."""
    parts = []
    for metric in METRICS:
        try:
            test = stats.rank_methods(df, metric, "paper", summary)
        except UFSBenchError as exc:
            parts.append(f'<p class="note">{METRICS[metric]} ranks: {escape(str(exc))}</p>')
            continue
        parts.append(_figure_html(f"{METRICS[metric]}: critical-difference diagram (papers' "
                                  f"rule)", lambda t=test, m=metric: plots.cd_figure(
                                      t, METRICS[m], plots.ranks_caption(df, "paper"))))
        parts.append(_table_html(stats.rank_table(test).map(lambda r: f"{r:.2f}")))  # 2 decimals
        if test.dropped:
            parts.append(f'<p class="note">Left out (a method has no result there): '
                         f'{escape(", ".join(test.dropped))}</p>')
    return parts


def _figures_section(df: pd.DataFrame, summary: str) -> list[str]:
    """Every standard figure by section; sensitivity heatmaps folded away (there can be many)."""
    specs = plots.standard_figures(df, summary)
    parts = []
    for section, heading in SECTIONS.items():
        parts.append(f"<h2>{heading}</h2>")
        if section == "ranks":
            parts += _ranks_section(df, summary)
            continue
        here = [s for s in specs if s.section == section]
        for spec in here:
            figure = _figure_html(spec.title, spec.build)
            parts.append(f"<details><summary>{escape(spec.title)}</summary>{figure}</details>"
                         if section == "sensitivity" else figure)
        if not here:
            parts.append(f'<p class="note">{escape(EMPTY[section])}</p>')
    return parts


def store_root(df: pd.DataFrame) -> Path | None:
    """The result store the records of ``df`` were read from (records live at
    ``<store>/<dataset>/<method>/<id>.json``), or None when they name no file."""
    paths = [Path(p) for p in df.get("path", pd.Series(dtype=str)).dropna() if p]
    roots = {p.parents[2] for p in paths if len(p.parents) > 2}
    return roots.pop() if len(roots) == 1 else None


def _stability_section(df: pd.DataFrame, stability: pd.DataFrame | None) -> list[str]:
    """Stability of the page's methods on its data sets: one Phi [95 % CI] table per design
    (feature count, B, fraction, seed); a note saying how to compute them when there are none."""
    from ufsbench.stability import DEGENERATE_NOTE, stability_frame

    parts = ["<h2>Selection stability</h2>"]
    if stability is not None and len(stability):
        stability = stability[stability["dataset"].isin(df["dataset"])
                              & stability["method"].isin(df["method"]) & ~stability["stale"]]
    if stability is None or stability.empty:
        return parts + ['<p class="note">No stability records for these data sets and methods: '
                        '<code>ufsbench stability method=... dataset=...</code> fits each method '
                        'on B subsamples of the rows (B fits per method and data set).</p>']
    parts.append('<p class="note">Nogueira, Sechidis &amp; Brown\'s stability estimator Phi '
                 '(JMLR 2018) with its 95 % confidence interval, over the selections of B fits on '
                 'subsamples of the rows at the default setting: 1 = the same features every '
                 'time, 0 = no more alike than random subsets. Cost: B fits per cell.</p>')
    designs = ["n_features", "n_subsamples", "fraction", "seed"]
    for (m, b, fraction, seed), part in stability.groupby(designs):
        parts.append(f"<h3>m = {m} selected features, B = {b} subsamples of "
                     f"{100 * fraction:g} % of the rows, seed {seed}</h3>")
        parts.append(_table_html(stability_frame(part)))
        if part["degenerate_fits"].fillna(0).any():
            parts.append(f'<p class="note">{escape(DEGENERATE_NOTE)}.</p>')
    return parts


def _planted_section(planted: pd.DataFrame | None) -> list[str]:
    """The planted-feature suite's precision@m (tables and heatmap), or how to compute it."""
    from ufsbench.planted import REGIMES, RULE_LABELS, heatmap, planted_table, precision_frame

    parts = ["<h2>Planted features</h2>"]
    table = planted_table(planted) if planted is not None and len(planted) else None
    if planted is None or table is None or table.empty:
        return parts + ['<p class="note">No planted-feature results in this store: '
                        '<code>ufsbench planted</code> runs the suite.</p>']
    regimes = "; ".join(f"{name}: {text}" for name, text in REGIMES.items())
    parts.append(f'<p class="note">Precision@m (m = number of planted signals) on seeded '
                 f'synthetic data, mean over seeds {sorted(set(planted["seed"]))}. Regimes: '
                 f'{escape(regimes)}. The best grid point is chosen with the ground truth: '
                 f'optimistic. A measurement, not a pass/fail test.</p>')
    parts.append(_figure_html("Planted features found: precision@m per method and regime",
                              lambda: heatmap(table)))
    for rule, label in RULE_LABELS.items():
        frame = precision_frame(table, rule).map(lambda v: "—" if pd.isna(v) else f"{v:.2f}")
        parts += [f"<h3>Precision@m — {escape(label)}</h3>", _table_html(frame)]
    return parts


def write_html(df: pd.DataFrame, path, summary: str = "mean",
               failed: list[str] | None = None, left_out: str = "",
               stability: pd.DataFrame | None = None,
               planted: pd.DataFrame | None = None) -> Path:
    """Write the static summary page of a results frame (``load_results()``) to path;
    ``failed``: lines naming the failed settings the tables leave out
    (:func:`ufsbench.report.failed_setting_lines`), shown under the header; ``left_out``: the
    note of :func:`ufsbench.records.one_protocol` on records of other evaluation protocols;
    ``stability`` (:func:`ufsbench.stability.load_stability`) and ``planted``
    (:func:`ufsbench.planted.load_planted`): by default read from the store the records of
    ``df`` come from."""
    if summary not in SUMMARIES:
        raise UFSBenchError(f"unknown summary {summary!r}; use one of {', '.join(SUMMARIES)}")
    if df.empty:
        raise UFSBenchError("no results to summarise; run `ufsbench run` first (or check the "
                            "--dataset/--method filters)")
    stale = int(df["stale"].sum())
    df = df[~df["stale"]]
    if df.empty:
        raise UFSBenchError("every selected record is stale (its data file changed, or its method "
                            "was revised since); rerun `ufsbench run ...` to recompute them")
    when = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    header = [
        "<h1>ufsbench results</h1>",
        f'<p class="note">{len(df)} records on {df["dataset"].nunique()} data set(s) '
        f'({escape(", ".join(sorted(df["dataset"].unique())))}) for {df["method"].nunique()} '
        f'method(s); {SUMMARIES[summary]}; K-means runs per evaluation: '
        f'{escape(", ".join(str(n) for n in sorted(df["n_runs"].unique())))}; written {when}.'
        + (f" {stale} stale record(s) left out." if stale else "") + "</p>",
        *(f'<p class="note">{escape(line.strip())}</p>' for line in protocol_lines(df)),
    ]
    if left_out:
        header.append(f'<p class="note left-out">Not in these tables and figures: '
                      f'{escape(left_out)}. The report options --seed, --n-runs, --kmeans-init, '
                      f'--kmeans-max-iter and --nmi pick another protocol.</p>')
    if failed:
        items = "".join(f"<li>{escape(line.strip())}</li>" for line in failed[1:])
        header.append(f'<p class="note">{escape(failed[0])}</p><ul class="failed">{items}</ul>')
    root = store_root(df)
    if stability is None and root is not None:
        from ufsbench.stability import load_stability

        stability = load_stability(root)
    if planted is None and root is not None:
        from ufsbench.planted import load_planted

        planted = load_planted(root)
    body = header + _tables_section(df, summary) + _stability_section(df, stability) + \
        _planted_section(planted) + _figures_section(df, summary)
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>ufsbench results</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UFSBenchError(f"cannot write {out} ({exc.strerror or exc}); choose a writable "
                            f"path for --html") from None
    return out
