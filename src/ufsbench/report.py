"""Tables from the result store, laid out like the papers': methods as rows, data sets as columns.

Two selection rules, always labelled:

* ``paper`` -- the papers' rule: per method and data set, the best mean over the parameter grid
  and the feature counts. It chooses with the true labels, so it is optimistic by construction.
* ``default`` -- label-free: each method's fixed default parameters (``default`` in its config)
  at one fixed feature count per data set (``report_feature_count`` in the data-set entry, else
  the middle of its feature counts).

Cells read ``mean±std (m)`` in percent; ``summary="best5"`` instead reports the best of the first 5
K-means runs (SOGFS's protocol), which are the same seeded runs as the first 5 of the 20.
"""

from __future__ import annotations

import functools
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from tabulate import tabulate

from ufsbench.errors import UFSBenchError
from ufsbench.methods.base import keeps_all_features
from ufsbench.paths import config_dir

RULES = {
    "paper": "best mean over the parameter grid and feature counts, chosen with the true labels "
             "(optimistic)",
    "label_free": "each method's default parameters at a fixed feature count",
}
RULE_LABELS = {"paper": "papers' rule", "label_free": "label-free rule"}
#: Earlier names of the rules, still accepted (with a FutureWarning).
RULE_ALIASES = {"default": "label_free"}


def canonical_rule(rule: str) -> str:
    """The rule's id (:data:`RULES`); an earlier name (:data:`RULE_ALIASES`) is translated with a
    FutureWarning, an unknown one refused in one line."""
    if rule in RULE_ALIASES:
        warnings.warn(f"rule {rule!r} is now called {RULE_ALIASES[rule]!r}; the old name will "
                      f"stop working in a future release", FutureWarning, stacklevel=3)
        return RULE_ALIASES[rule]
    if rule not in RULES:
        raise UFSBenchError(f"unknown rule {rule!r}; use one of {', '.join(RULES)}")
    return rule
SUMMARIES = {"mean": "mean±std over the K-means runs", "best5": "best of the first 5 K-means runs"}
METRICS = {"acc": "ACC", "nmi": "NMI"}


@functools.cache
def method_config(name: str) -> dict[str, Any]:
    """configs/method/<name>.yaml, read by OmegaConf exactly as Hydra reads it (1e-6 is a float)."""
    from omegaconf import OmegaConf

    from ufsbench.run_config import config_dict

    path = config_dir() / "method" / f"{name}.yaml"
    if not path.is_file():
        return {"name": name}
    return config_dict(OmegaConf.load(path), path)


@functools.cache
def default_params(name: str, preset: str | None = None) -> str:
    """The label-free setting of method ``name`` (its config's fixed params and default), with
    ``preset`` applied when given, as canonical JSON (the records' ``params`` form)."""
    cfg = method_config(name)
    if preset:
        from ufsbench.presets import apply_preset

        cfg = apply_preset({**cfg, "preset": preset})
    setting = dict(cfg.get("params") or {}, **(cfg.get("default") or {}))
    return json.dumps(setting, sort_keys=True, separators=(",", ":"))


def preset_parts(label: str | None) -> tuple[str, list[str]]:
    """(preset name, parameters a run changed) of a record's preset label: "released with
    max_iter=20, k=3" -> ("released", ["max_iter", "k"]); ("", []) for no preset."""
    if not label:
        return "", []
    name, _, changes = str(label).partition(" with ")
    return name, [part.partition("=")[0] for part in changes.split(", ") if "=" in part]


def record_presets(df: pd.DataFrame):
    """The records' preset labels ("" for none), also of a table without that column."""
    return df["preset"] if "preset" in df else [""] * len(df)


def is_default_setting(method: str, params: str, preset: str | None = None,
                       ignore: str | None = None) -> bool:
    """Whether a record's ``params`` (canonical JSON) are its method's label-free setting: the
    config's default, or, for a record made at a preset (its ``preset`` label), the preset's
    default with the values the run changed; ``ignore``: a parameter left out on both sides."""
    name, changed = preset_parts(preset)
    default, given = json.loads(default_params(method, name or None)), json.loads(params)
    default.update({key: given.get(key) for key in changed})
    default.pop(ignore, None)
    given.pop(ignore, None)
    return given == default


@functools.cache
def fixed_feature_count(dataset: str) -> int | None:
    path = config_dir() / "dataset" / f"{dataset}.yaml"
    if not path.is_file():
        return None
    entry = yaml.safe_load(path.read_text())
    if entry.get("report_feature_count"):
        return int(entry["report_feature_count"])
    counts = sorted(entry.get("feature_counts") or [])
    return counts[(len(counts) - 1) // 2] if counts else None


def summarise(df: pd.DataFrame, metric: str, summary: str) -> pd.DataFrame:
    """df with ``value`` (and ``spread``) columns holding the metric under the summary."""
    df = df.copy()
    runs = df[f"{metric}_runs"]
    if summary == "mean":
        df["value"] = df[f"{metric}_mean"]
        df["spread"] = df[f"{metric}_std"]
    elif summary == "best5":
        df["value"] = runs.map(lambda r: float(np.max(r[:5])))
        df["spread"] = np.nan
    else:
        raise UFSBenchError(f"unknown summary {summary!r}; use one of {', '.join(SUMMARIES)}")
    return df


def variant_of(method: str, params: str, preset: str | None = None) -> str:
    """The value of the method's ``variant`` parameter (a config key) and the preset the record
    was made at: rows of their own in tables.

    E.g. UFSOL's ``graph`` (none, similarity, maxmargin, triplet) are four rows of its paper's
    Table 2, each selected over the rest of the grid on its own; the settings of a run at
    ``method.preset=released`` are a row of their own beside those of the method's own grid.
    """
    key = method_config(method).get("variant")
    parts = [str(json.loads(params).get(key, "")) if key else "", preset or ""]
    return ", ".join(part for part in parts if part)


def variants(df: pd.DataFrame) -> list[str]:
    """:func:`variant_of` of every record of a results table."""
    return [variant_of(m, p, r) for m, p, r in zip(df["method"], df["params"], record_presets(df))]


def at_default(df: pd.DataFrame) -> np.ndarray:
    """Which records of a results table are at their method's label-free setting: the default
    parameters (any value of the variant parameter, each variant being a row of its own; a
    preset's default, for a record made at one), at any feature count."""
    return np.array([is_default_setting(m, p, r, ignore=method_config(m).get("variant"))
                     for m, p, r in zip(df["method"], df["params"], record_presets(df))],
                    dtype=bool)


def fixed_counts(df: pd.DataFrame) -> dict:
    """The label-free rule's feature count per data set of ``df``: the registry's (see
    :func:`fixed_feature_count`), else, for a data set with no registry entry (a user's own
    file), the middle of the counts its selections were evaluated at."""
    fixed = {}
    for dataset, part in df.groupby("dataset"):
        count = fixed_feature_count(dataset)
        if count is None:
            counts = sorted(part.loc[~part["method"].map(keeps_all_features),
                                     "n_features"].unique())
            count = int(counts[(len(counts) - 1) // 2]) if counts else None
        fixed[dataset] = count
    return fixed


def select_cells(df: pd.DataFrame, metric: str = "acc", rule: str = "paper",
                 summary: str = "mean") -> pd.DataFrame:
    """One row per (dataset, method, variant, scoring): the cell the rule picks, value and spread."""
    rule = canonical_rule(rule)
    if metric not in METRICS:
        raise UFSBenchError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    if df.empty:
        return df.assign(value=[], spread=[], variant=[])
    df = summarise(df[~df["stale"]], metric, summary)
    df["variant"] = variants(df)
    if rule == "label_free" and not df.empty:
        # the default setting at the data set's fixed count (every count for all-features)
        fixed = fixed_counts(df)
        count_ok = (df["method"].map(keeps_all_features)
                    | (df["n_features"] == df["dataset"].map(fixed)))
        df = df[at_default(df) & count_ok.to_numpy()]
    if df.empty:
        return df
    # Ties (e.g. several grid points with equal scores) go to the smaller feature count.
    df = df.sort_values(["value", "n_features"], ascending=[False, True], kind="stable")
    return df.groupby(["dataset", "method", "variant", "scoring"], sort=False).head(1)


def _row_label(method: str, variant: str, scoring: str, reconstructed: bool) -> str:
    return series_label(method, scoring, variant) + (" [reconstructed]" if reconstructed else "")


def table_frame(cells: pd.DataFrame, style: str = "plain") -> pd.DataFrame:
    """Methods x datasets frame of formatted cells; the best value per column marked for style."""
    if cells.empty:
        return pd.DataFrame()
    datasets = sorted(cells["dataset"].unique())
    if "variant" not in cells:
        cells = cells.assign(variant="")
    keys = sorted({(m, v, s, bool(r)) for m, v, s, r in
                   cells[["method", "variant", "scoring", "reconstructed"]].itertuples(index=False)},
                  key=lambda k: (not keeps_all_features(k[0]), k[0], k[1], k[2]))
    best = cells.groupby("dataset")["value"].max()
    frame = pd.DataFrame(index=[_row_label(*k) for k in keys], columns=datasets, dtype=object)
    for row in cells.itertuples(index=False):
        text = f"{100 * row.value:.1f}"
        if not np.isnan(row.spread):
            text += f"±{100 * row.spread:.1f}"
        if not keeps_all_features(row.method):
            text += f" ({row.n_features})"
        if np.isclose(row.value, best[row.dataset]):
            text = {"markdown": f"**{text}**", "latex": f"\\textbf{{{text}}}",
                    "plain": f"{text} *"}.get(style, text)
        label = _row_label(row.method, row.variant, row.scoring, row.reconstructed)
        frame.loc[label, row.dataset] = text
    return frame.fillna("—")


def caption(metric: str, rule: str, summary: str, nmi_normalisation: str | None = None) -> str:
    text = f"{METRICS[metric]} (%) — {RULE_LABELS[rule]}: {RULES[rule]}; {SUMMARIES[summary]}"
    if metric == "nmi" and nmi_normalisation:
        text += f"; NMI normalised by {nmi_normalisation}(H(y), H(z))" if nmi_normalisation != \
            "arithmetic" else "; NMI normalised by the arithmetic mean of H(y), H(z)"
    if rule == "paper":
        text += "; (m) = selected features"
    return text


#: LaTeX's special characters in text and what typesets each as itself.
TEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}"}


def tex_escape(text) -> str:
    """``text`` with LaTeX's special characters escaped (``prostate_ge`` -> ``prostate\\_ge``)."""
    return "".join(TEX_SPECIALS.get(ch, ch) for ch in str(text))


#: The non-ASCII symbols of the tables and their LaTeX commands: pdfLaTeX stops at a Greek
#: letter ("Unicode character not set up for use with LaTeX"), and the commands need no font
#: with those glyphs under XeLaTeX or LuaLaTeX either.
TEX_SYMBOLS = {"±": r"$\pm$", "Δ": r"$\Delta$", "—": "---", "−": "$-$"}


def tex_symbols(text: str) -> str:
    """``text`` (LaTeX already) with :data:`TEX_SYMBOLS` written as LaTeX commands."""
    for symbol, command in TEX_SYMBOLS.items():
        text = text.replace(symbol, command)
    return text


def latex_tabular(frame: pd.DataFrame) -> str:
    """A tabular of the frame: row and column labels (data set and method names) escaped, the
    cells as they are (numbers, and the ``\\textbf`` of the best), symbols as commands."""
    escaped = frame.rename(index=tex_escape, columns=tex_escape)
    return tex_symbols(tabulate(escaped, headers="keys", tablefmt="latex_raw"))


def render(cells: pd.DataFrame, fmt: str, title: str) -> str:
    """The table as text: ``terminal``, ``markdown``, ``latex`` or ``csv``."""
    if cells.empty:
        return f"{title}\n(no results)\n"
    if fmt == "csv":
        cols = ["dataset", "method", "variant", "scoring", "params", "n_features", "value", "spread",
                "n_runs", "reconstructed"]
        return cells[cols].to_csv(index=False)
    style = {"terminal": "plain", "markdown": "markdown", "latex": "latex"}[fmt]
    frame = table_frame(cells, style)
    if fmt == "latex":
        return f"% {title}\n{latex_tabular(frame)}\n"
    tablefmt = "github" if fmt == "markdown" else "simple"
    body = tabulate(frame, headers="keys", tablefmt=tablefmt)
    note = "" if fmt == "markdown" else "\n* = best in its column"
    return f"{title}\n\n{body}{note}\n" if fmt == "markdown" else f"{title}\n{body}{note}\n"


def side_by_side_frame(df: pd.DataFrame, metric: str, rules, summary: str,
                       style: str = "plain") -> pd.DataFrame:
    """One methods x (data set, rule) frame: each data set's cells under every rule, adjacent."""
    frames = []
    rules = [canonical_rule(r) for r in rules]
    for rule in rules:
        frame = table_frame(select_cells(df, metric, rule, summary), style)
        frames.append(frame.rename(columns=lambda c, r=rule: (c, r)))
    combined = pd.concat(frames, axis=1).fillna("—")
    columns = sorted(combined.columns, key=lambda c: (c[0], list(rules).index(c[1])))
    combined = combined[columns]
    combined.columns = [f"{dataset} ({RULE_LABELS[rule]})" for dataset, rule in columns]
    return combined


def tidy_cells(df: pd.DataFrame, metrics=tuple(METRICS), rules=tuple(RULES),
               summary: str = "mean") -> pd.DataFrame:
    """Every table's cells as one tidy frame: a row per (metric, rule, dataset, method, variant,
    scoring), ``metric`` and ``rule`` first, with ``value``/``spread`` and the record's columns
    (protocol, parameters, feature count); the per-run lists are left out."""
    rules = [canonical_rule(r) for r in rules]
    frames = [select_cells(df, m, r, summary).assign(metric=m, rule=r)
              for m in metrics for r in rules]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    frame = frame.drop(columns=["acc_runs", "nmi_runs", "fit_warnings"], errors="ignore")
    first = [c for c in ("metric", "rule") if c in frame]
    return frame[first + [c for c in frame.columns if c not in first]]


def stale_note(df: pd.DataFrame) -> str:
    """A line on the stale records every table leaves out ("" when there are none)."""
    stale = int(df["stale"].sum()) if "stale" in df else 0
    return (f"{stale} stored record(s) were computed on a data file whose checksum has changed "
            f"since, or by an earlier revision of their method; they are stale and left out of "
            f"every table.\n") if stale else ""


def report_tables(df: pd.DataFrame, metrics=("acc", "nmi"), rules=("paper", "label_free"),
                  summary: str = "mean", fmt: str = "terminal") -> str:
    """Per metric, one table with the selection rules side by side; ``csv``: one tidy CSV of
    every (metric, rule) cell (:func:`tidy_cells`), with nothing but CSV in it."""
    if fmt == "csv":
        return tidy_cells(df, metrics, rules, summary).to_csv(index=False) if not df.empty \
            else ""
    if df.empty:
        return "No results in the store yet: run `ufsbench run` first.\n"
    rules = [canonical_rule(r) for r in rules]
    norm = df["nmi_normalisation"].iloc[0] if "nmi_normalisation" in df else None
    note = _tex_comment if fmt == "latex" else str     # a .tex holds tables and comments only
    parts = [note(line) for line in protocol_lines(df)]
    for metric in metrics:
        if len(rules) == 1:
            for rule in rules:
                cells = select_cells(df, metric, rule, summary)
                heading = caption(metric, rule, summary, norm)
                parts.append(render(cells, fmt, f"## {heading}" if fmt == "markdown" else heading))
            continue
        parts.append(_render_side_by_side(df, metric, rules, summary, fmt, norm))
    if stale_note(df):
        parts.append(note(stale_note(df)))
    return "\n".join(parts)


def _tex_comment(text: str) -> str:
    return "".join(f"% {line}\n" for line in text.splitlines())


def series_label(method: str, scoring: str = "kmeans", variant: str = "") -> str:
    """A method's name in tables and legends: each variant (:func:`variant_of`) and a joint
    method's own-label scoring are series of their own."""
    label = method + (f" ({variant})" if variant else "")
    return label + (" (own labels)" if scoring == "own_labels" else "")


def fit_warning_lines(df: pd.DataFrame) -> list[str]:
    """What the fits behind a table warned of (iteration caps, a capped k, ...), which the
    records keep: one line per method and distinct warning, with how many of its settings
    warned so, and on which data sets. Stale records (left out of every table) are left out."""
    if df.empty or "fit_warnings" not in df:
        return []
    if "stale" in df:
        df = df[~df["stale"]]
    settings = df.drop_duplicates(["dataset", "method", "params", "fit_warnings"])
    lines = []
    for method, rows in settings.groupby("method", sort=True):
        total = rows.drop_duplicates(["dataset", "params"]).shape[0]
        where: dict[str, set] = {}       # warnings alike but for their numbers, together
        texts: dict[str, set] = {}
        for row in rows.itertuples(index=False):
            for warning in row.fit_warnings:
                kind = NUMBER.sub("#", warning)
                where.setdefault(kind, set()).add((row.dataset, row.params))
                texts.setdefault(kind, set()).add(warning)
        for kind in sorted(where):
            datasets = ", ".join(sorted({dataset for dataset, _ in where[kind]}))
            example = min(texts[kind])
            alike = f" (and {len(texts[kind]) - 1} alike)" if len(texts[kind]) > 1 else ""
            lines.append(f"  {method}: {len(where[kind])} of {total} setting(s) ({datasets}): "
                         f"{example}{alike}")
    return (["warnings of the fits behind the table (kept in their records):"] + lines
            if lines else [])


#: A number in a warning's text (1, 0.5, 5.2e-17): warnings differing only there are one kind.
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def failed_setting_lines(failures: pd.DataFrame, shown: pd.DataFrame) -> list[str]:
    """One line per noted failed setting of the (data set, method) pairs a table shows
    (``failures`` from :func:`ufsbench.records.load_failures`): its cells leave those out."""
    if failures.empty or shown.empty:
        return []
    pairs = set(zip(shown["dataset"], shown["method"]))
    here = failures[[pair in pairs for pair in zip(failures["dataset"], failures["method"])]]
    if here.empty:
        return []
    lines = [f"{len(here)} failed setting(s) left out of the table (the next run retries them):"]
    lines += [f"  {r.dataset} / {r.method} {r.params}: {r.error}" for r in here.itertuples()]
    return lines


def protocol_lines(df: pd.DataFrame) -> list[str]:
    """[] when the records follow the default evaluation protocol; else one line naming theirs.
    Records of several protocols are refused: their cells are not comparable
    (``records.one_protocol`` picks one)."""
    from ufsbench.records import PROTOCOL_COLUMNS, PROTOCOL_FLAGS, default_protocol, protocol_text

    if not set(PROTOCOL_COLUMNS) <= set(df.columns):
        return []
    kinds = df[list(PROTOCOL_COLUMNS)].drop_duplicates()
    if len(kinds) > 1:
        listed = "; ".join(protocol_text(row) for _, row in kinds.iterrows())
        raise UFSBenchError(f"the records hold {len(kinds)} evaluation protocols ({listed}); a "
                            f"table shows one: pick it with records.one_protocol (ufsbench "
                            f"report: {', '.join(PROTOCOL_FLAGS.values())})")
    shown = kinds.iloc[0].to_dict()
    default = default_protocol()
    if all(shown[c] == default[c] for c in PROTOCOL_COLUMNS):
        return []
    changed = ", ".join(f"{c}={shown[c]} (default {default[c]})" for c in PROTOCOL_COLUMNS
                        if shown[c] != default[c])
    return [f"Evaluation protocol not the default: {changed}.\n"]


def _render_side_by_side(df, metric, rules, summary, fmt, norm) -> str:
    style = {"terminal": "plain", "markdown": "markdown", "latex": "latex"}[fmt]
    frame = side_by_side_frame(df, metric, rules, summary, style)
    title = f"{METRICS[metric]} (%) — {SUMMARIES[summary]}"
    if metric == "nmi" and norm:
        title += (f"; NMI normalised by {norm}(H(y), H(z))" if norm != "arithmetic"
                  else "; NMI normalised by the arithmetic mean of H(y), H(z)")
    legend = "; ".join(f"{RULE_LABELS[r]} = {RULES[r]}" for r in rules)
    legend += "; (m) = selected features"
    if frame.empty:
        return f"{title}\n(no results)\n"
    if fmt == "latex":
        return f"% {title}\n% {legend}\n{latex_tabular(frame)}\n"
    if fmt == "markdown":
        body = tabulate(frame, headers="keys", tablefmt="github")
        return f"## {title}\n\n{legend}\n\n{body}\n"
    body = tabulate(frame, headers="keys", tablefmt="simple")
    return f"{title}\n{legend}\n{body}\n* = best in its column\n"


REPORT_FILES = {"markdown": "md", "latex": "tex", "csv": "csv"}


def write_reports(df: pd.DataFrame, out_dir: str | Path, summary: str = "mean",
                  stem: str = "results", formats=tuple(REPORT_FILES), metrics=tuple(METRICS),
                  rules=tuple(RULES)) -> list[Path]:
    """The tables in out_dir as ``<stem>.md`` / ``.tex`` / ``.csv``, one file per format asked
    (default: all three); the CSV is the tidy one of :func:`tidy_cells`."""
    unknown = sorted(set(formats) - set(REPORT_FILES))
    if unknown:
        raise UFSBenchError(f"unknown report format(s) {', '.join(unknown)}; use "
                            f"{', '.join(REPORT_FILES)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        text = report_tables(df, metrics=metrics, rules=rules, summary=summary, fmt=fmt)
        path = out / f"{stem}.{REPORT_FILES[fmt]}"
        path.write_text(text)
        written.append(path)
    return written
