"""Reading a comparison: per-table summaries, candidate causes of large gaps, failed fits.

:func:`table_summary` counts per table how close our cells are to the published ones and how much
the papers' rule gains over the label-free and split rules. :func:`candidate_causes` lists the
recorded differences that may explain a large gap (transcription, reconstruction, the all-features
row, the measured preprocessing check, partial grids, config notes). :func:`note_failures` adds
to a row's status how many fits of its method raised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ufsbench.methods.base import keeps_all_features
from ufsbench.reproduce.experiments import repo_root, thin_text
from ufsbench.reproduce.rules import CHANCE_NOTE


def table_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Per table: how close we are, how much the papers' rule gains over the honest rules, and
    how many of its cells are not better than the random row (:func:`mark_chance_level`)."""
    rows = []
    for (paper, table, metric), part in cells[cells["role"] == "paper"].groupby(
            ["paper", "table", "metric"], sort=False):
        both = part.dropna(subset=["ours_mean", "published_mean"])
        diff = both["difference"].round(6)  # 80.00000000000001 - 78 is "within 2 points"
        rows.append({
            "paper": paper, "table": table, "metric": metric,
            "published_cells": int(part["published_mean"].notna().sum()),
            "compared": len(both),
            "within_1_std": int((diff.abs() <= both["published_std"]).sum()),
            "within_2_points": int((diff.abs() <= 2).sum()),
            "worse_by_more_than_5": int((diff < -5).sum()),
            "better_by_more_than_5": int((diff > 5).sum()),
            "gaps": int((part["status"] == "gap").sum()),
            "not_computed": int((part["status"] == "not computed").sum()),
            "partial_grid": int(part["status"].str.startswith("partial").sum()),
            "mean_difference": round(float(diff.mean()), 2) if len(both) else np.nan,
            "optimism_vs_label_free": _optimism(part, "label_free_mean"),
            "optimism_vs_split": _optimism(part, "split_mean"),
            "not_better_than_random": int(part["reason"].fillna("").str.contains(
                CHANCE_NOTE, regex=False).sum())})
    return pd.DataFrame(rows)


def _optimism(part: pd.DataFrame, column: str) -> float:
    """Mean gain (points) of the papers' rule over an honest rule, over cells where both exist."""
    both = part.dropna(subset=["ours_mean", column])
    return round(float((both["ours_mean"] - both[column]).mean()), 2) if len(both) else np.nan


def candidate_causes(exp: dict, cell: pd.Series, thin: int = 1,
                     cells: pd.DataFrame | None = None) -> list[str]:
    """Recorded differences that may explain a large gap (from the configs, the transcription and
    the all-features row of the same table and data set; listed as candidates, not findings)."""
    notes = exp.get("notes") or {}
    causes = []
    if cell["published_uncertain"]:
        causes.append("the published cell is marked uncertain in the transcription (garbled "
                      "extraction)")
    if cell["reconstructed"]:
        causes.append("our method is reconstructed (no paper text or code to follow exactly)")
    baseline = _baseline_difference(cell, cells)
    if baseline is not None and abs(baseline) > 5 and not keeps_all_features(cell["method"]):
        causes.append(f"the all-features row of this table and data set is off by "
                      f"{baseline:+.1f} too, so the data version or the K-means/metric protocol "
                      f"is a likelier cause than the method")
    if keeps_all_features(cell["method"]):
        causes += preprocessing_check_lines(cell)
    status = str(cell.get("status", ""))
    if status.startswith("partial"):
        causes.append(f"{status.split(':')[1].strip()} of the paper's grid computed (best over "
                      f"fewer settings)")
    for key, kind in ((cell["dataset"], "datasets"), (cell["method"], "methods"),
                      (cell["table"], "tables")):
        if key in (notes.get(kind) or {}):
            causes.append(notes[kind][key])
    if thin > 1 and (cell["n_settings"] or 0) > 1:
        causes.append(f"reduced grid in this run ({thin_text(thin)})")
    if notes.get("paper"):
        causes.append(notes["paper"])
    return causes or ["no recorded difference; not investigated yet"]


def preprocessing_check_path() -> Path:
    """Written by scripts/check_allfeatures.py: K-means on all features per preprocessing."""
    return repo_root() / "results" / "reproduction" / "allfeatures_check.csv"


def preprocessing_check_lines(cell: pd.Series, path: Path | None = None) -> list[str]:
    """The measured all-features check for this cell, if it was run: does any standard
    preprocessing reach the published number?"""
    path = Path(path or preprocessing_check_path())
    if not path.is_file():
        return []
    check = pd.read_csv(path)
    match = check[(check["paper"] == cell["paper"]) & (check["metric"] == cell["metric"])
                  & (check["dataset"] == cell["dataset"])]
    if match.empty or pd.isna(cell["published_mean"]):
        return []
    row = match.iloc[0]
    values = {k: float(row[k]) for k in ("raw", "zscore", "minmax", "unit_rows")}
    best = min(values, key=lambda k: abs(values[k] - cell["published_mean"]))
    gap = values[best] - cell["published_mean"]
    verdict = ("so preprocessing alone does not explain it: the data version (samples, "
               "features) or the paper's K-means protocol is the likelier cause"
               if abs(gap) > 2 else f"so the paper most likely used {best} preprocessing")
    return [f"measured: K-means on all features gives {min(values.values()):.1f}-"
            f"{max(values.values()):.1f} under raw/z-score/min-max/unit-row preprocessing, "
            f"closest {best} {values[best]:.1f} ({gap:+.1f} points), {verdict} "
            f"(allfeatures_check.md)"]


def _baseline_difference(cell: pd.Series, cells: pd.DataFrame | None) -> float | None:
    if cells is None:
        return None
    base = cells[(cells["table"] == cell["table"]) & (cells["dataset"] == cell["dataset"])
                 & cells["method"].map(keeps_all_features) & (cells["role"] == "paper")]
    diff = base["difference"].dropna()
    return float(diff.iloc[0]) if len(diff) else None


def note_failures(exp: dict, cells: pd.DataFrame, failures: pd.DataFrame) -> pd.DataFrame:
    """Say in a row's status how many fits of its method raised on its data set (noted by the
    runner in ``<dataset>/<method>/failed/``), so a partial grid is not mistaken for an
    unfinished run."""
    if failures.empty or cells.empty:
        return cells
    counts = failures.groupby(["dataset", "method"]).size()
    errors = failures.groupby(["dataset", "method"])["error"].first()
    method_of_row = {r["row"]: r["method"] for r in exp["rows"]}
    cells = cells.copy()
    for i, cell in cells.iterrows():
        key = (cell["registry_dataset"], method_of_row.get(cell["method"], cell["method"]))
        if key in counts.index:
            cells.at[i, "status"] = (f"{cell['status']}; {counts[key]} fit(s) of {key[1]} on "
                                     f"{key[0]} raised (e.g. {errors[key][:80]})")
    return cells
