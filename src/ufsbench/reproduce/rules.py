"""Scoring the stored runs and choosing the cells: the three selection rules, per published cell.

:func:`compare` builds the tidy comparison of one experiment (one row per published cell and
scoring, :data:`CELL_COLUMNS`): the published value beside the picks of the papers' rule, the
label-free rule and the split rule (:func:`choose_cells`) among the row's stored records
(:func:`row_records`), or the reason the cell is a gap. :func:`pick_notes` names what a pick's
numbers do not show (a degenerate fit, a tie at the cut).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ufsbench.reproduce.experiments import (
    dataset_counts,
    dataset_gap,
    is_reconstructed,
    load_published,
    method_gap,
    middle_count,
    published_row_id,
    registry_n_features,
    row_method_config,
    row_scorings,
    selected_datasets,
)

#: The columns of a comparison (:func:`compare`): one row per published cell and scoring.
CELL_COLUMNS = ["paper", "table", "metric", "dataset", "method", "published_mean", "published_std",
                "published_n_features", "ours_mean", "ours_std", "ours_n_features", "protocol",
                "scoring", "role", "status", "reason", "reconstructed", "difference",
                "ours_params", "label_free_mean", "label_free_std", "label_free_n_features",
                "split_mean", "split_std", "split_n_features", "published_uncertain",
                "registry_dataset", "n_settings"]


def record_runs(row: pd.Series, metric: str, nmi: str) -> np.ndarray:
    """Per-run scores of one record for a metric (NMI in the paper's normalisation)."""
    if metric == "acc":
        return np.asarray(row["acc_runs"], dtype=float)
    if row["nmi_normalisation"] == nmi:
        return np.asarray(row["nmi_runs"], dtype=float)
    with open(row["path"]) as fh:
        return np.asarray(json.load(fh)["nmi"][nmi], dtype=float)


def summarise(runs: np.ndarray, summary: str) -> tuple[float, float]:
    """(value, spread) of a list of runs: mean±std, or SOGFS's best of the first 5 (no spread)."""
    if summary == "best5":
        return float(np.max(runs[:5])), float("nan")
    return float(np.mean(runs)), float(np.std(runs))


def _best(candidates: list[tuple]) -> tuple | None:
    """The highest value; ties go to the smaller feature count (then the first setting)."""
    if not candidates:
        return None
    return min(candidates, key=lambda c: (-c[0], c[2]))


def choose_cells(records: pd.DataFrame, metric: str, summary: str, nmi: str,
                 default_params: str, fixed_count: int | None) -> dict:
    """The three rules' picks among the records of one (dataset, row, scoring).

    Returns {rule: (value, spread, n_features, params) or None}.
    """
    paper, split, label_free = [], [], []
    for _, rec in records.iterrows():
        runs = record_runs(rec, metric, nmi)
        value, spread = summarise(runs, summary)
        m = int(rec["n_features"])
        paper.append((value, spread, m, rec["params"]))
        half = len(runs) // 2
        if half >= 1:
            chosen_on, _ = summarise(runs[:half], summary)
            test_value, test_spread = summarise(runs[half:], summary)
            split.append((chosen_on, (test_value, test_spread), m, rec["params"]))
        if rec["params"] == default_params and (fixed_count is None or m == fixed_count):
            label_free.append((value, spread, m, rec["params"]))
    pick = _best(split)
    return {"paper": _best(paper), "label_free": _best(label_free),
            "split": None if pick is None else (pick[1][0], pick[1][1], pick[2], pick[3])}


def row_records(df: pd.DataFrame, registry_name: str, row: dict, scoring: str, counts: list[int],
                thin: int = 1) -> tuple[pd.DataFrame, str, int | None, int]:
    """The stored records of one table row on one data set, its default params and fixed count."""
    from ufsbench.methods import selector_class
    from ufsbench.results import canonical
    from ufsbench.runner import expand_grid, feature_counts_for

    cfg = row_method_config(row, thin)
    settings = expand_grid(cfg)
    allowed = {canonical(s) for s in settings}
    default = canonical(dict(cfg["params"], **cfg["default"]))
    kind = selector_class(row["method"]).selection_kind
    if df.empty:
        return df, default, None, len(settings)
    sel = df[(df["dataset"] == registry_name) & (df["method"] == row["method"])
             & (df["scoring"] == scoring) & df["params"].isin(allowed)]
    if kind == "all":
        return sel, default, None, len(settings)
    capped = feature_counts_for(counts, registry_n_features(registry_name), kind)
    return sel[sel["n_features"].isin(capped)], default, middle_count(capped), len(settings)


#: Rule ids and how a status names them.
RULE_LABELS = (("paper", "the papers' rule"), ("label_free", "label-free"), ("split", "split"))


#: Notes on a pick that a row's status shows even when the row is "ok" (their first words).
PICK_NOTE_PREFIXES = ("degenerate", "tie", "not better than random")
#: The note :func:`mark_chance_level` adds to a cell at or below the chance row.
CHANCE_NOTE = "not better than random"


def _pick_records(records: pd.DataFrame, pick) -> pd.DataFrame:
    return records[(records["params"] == pick[3]) & (records["n_features"] == pick[2])]


def pick_notes(records: pd.DataFrame, picks: dict) -> str:
    """What a rule's pick does not show by its numbers, or "": a degenerate fit (every feature
    scored alike, so its "selection" is the first m features), or a count that cuts through
    features the fit scores alike (the tie order, not the model, chose among them)."""
    picked = {label: _pick_records(records, picks[rule]) for rule, label in RULE_LABELS
              if picks.get(rule) is not None}
    notes = []
    degenerate = [label for label, recs in picked.items()
                  if "degenerate" in recs and recs["degenerate"].any()]
    if degenerate:
        notes.append(f"degenerate fit picked ({', '.join(degenerate)}): every feature scored "
                     "alike, the selection is the first m features")
    tied = {label: int(recs["tied_at_cut"].max()) for label, recs in picked.items()
            if label not in degenerate      # there every feature ties: said already
            and "tied_at_cut" in recs and recs["tied_at_cut"].max() > 0}
    if tied:
        notes.append("tie at the cut ({}): the fit scores that many features alike and the "
                     "tie order chose among them".format(
                         ", ".join(f"{label}: {n} tied" for label, n in tied.items())))
    return "; ".join(notes)


def protocol_text(exp: dict, scoring: str) -> str:
    runs = "best of the first 5 runs" if exp["summary"] == "best5" else "mean±std of 20 runs"
    how = "the method's own cluster labels (20 seeded fits)" if scoring == "own_labels" \
        else "K-means on the selected features (20 seeded runs)"
    return f"{how}; {runs}; best over grid x feature counts (chosen with the labels)"


def _cell(paper_row: dict, picks: dict) -> dict:
    out = {}
    for rule, prefix in (("paper", "ours"), ("label_free", "label_free"), ("split", "split")):
        pick = picks.get(rule)
        out[f"{prefix}_mean"] = np.nan if pick is None else 100 * pick[0]
        out[f"{prefix}_std"] = np.nan if pick is None else 100 * pick[1]
        out[f"{prefix}_n_features"] = np.nan if pick is None else pick[2]
    out["ours_params"] = "" if picks.get("paper") is None else picks["paper"][3]
    return {**paper_row, **out}


def table_entries(exp: dict, published: pd.DataFrame) -> list[dict]:
    """One entry per published cell (and per figure cell for SOGFS): table, metric, dataset, row."""
    entries = []
    rows = {r["row"]: r for r in exp["rows"]}
    for t in exp["tables"]:
        metric = t["metric"]
        pub = published[published["table"] == t["table"]]
        for ds in exp["datasets"]:
            for row in rows.values():
                hit = pub[(pub["dataset"] == ds) & (pub["method"] == published_row_id(row))]
                p = hit.iloc[0] if len(hit) else None
                entries.append({"table": t["table"], "metric": metric, "dataset": ds, "row": row,
                                "published": p})
            extras = set(pub[pub["dataset"] == ds]["method"]) - set(rows)
            for extra in sorted(extras) if exp.get("all_published_cells", True) else []:
                p = pub[(pub["dataset"] == ds) & (pub["method"] == extra)].iloc[0]
                entries.append({"table": t["table"], "metric": metric, "dataset": ds,
                                "row": {"row": extra, "method": extra}, "published": p})
    if exp.get("figure"):
        for ds in exp["datasets"]:
            for row in exp["rows"]:
                entries.append({"table": exp["figure"]["id"], "metric": exp["figure"]["metric"],
                                "dataset": ds, "row": row, "published": None})
    return entries


def compare(exp: dict, df: pd.DataFrame, published: pd.DataFrame | None = None, data_dir=None,
            thin: int = 1, only_datasets=None) -> pd.DataFrame:
    """The tidy per-cell comparison of one experiment (CELL_COLUMNS), gaps included."""
    published = load_published(exp["published"]) if published is None else published
    in_run = set(selected_datasets(exp, only_datasets))
    rows = []
    for entry in table_entries(exp, published):
        rows.extend(_entry_rows(exp, df, entry, data_dir, thin, entry["dataset"] in in_run))
    cells = pd.DataFrame(rows, columns=CELL_COLUMNS)
    return cells.astype({"n_settings": "Int64"})


def _entry_rows(exp, df, entry, data_dir, thin, in_run) -> list[dict]:
    row, p = entry["row"], entry["published"]
    registry_name = exp["datasets"][entry["dataset"]]
    base = {"paper": exp["paper"], "table": entry["table"], "metric": entry["metric"].upper(),
            "dataset": entry["dataset"], "method": row["row"], "registry_dataset": registry_name,
            "reconstructed": is_reconstructed(row["method"]),
            "published_mean": np.nan if p is None else p["mean"],
            "published_std": np.nan if p is None else p["std"],
            "published_n_features": np.nan if p is None else p["n_features"],
            "published_uncertain": False if p is None else bool(p["uncertain"])}
    gap = (None if row["row"] in {r["row"] for r in exp["rows"]}
           else f"no row for {row['row']!r} in configs/experiment/{exp['name']}.yaml") \
        or method_gap(row["method"]) or dataset_gap(registry_name, data_dir) \
        or (None if in_run else "data set not selected in this run (--datasets)")
    out = []
    for i, scoring in enumerate(row_scorings(row)):
        role = row.get("role") or ("paper" if i == 0 else "beside")
        cell = dict(base, scoring=scoring, role="beside" if i else role,
                    protocol=protocol_text(exp, scoring))
        if gap:
            out.append(_cell(dict(cell, status="gap", reason=gap), {}))
            continue
        counts = dataset_counts(exp, registry_name)
        recs, default, fixed, n_settings = row_records(df, registry_name, row, scoring, counts,
                                                       thin)
        picks = choose_cells(recs, entry["metric"], exp["summary"], exp["nmi"], default, fixed)
        status, reason = ("ok", "") if picks["paper"] else \
            ("not computed", "no stored records yet: released rows run on request (make "
                             "reproduce-tables METHODS=released)" if row.get("role") == "released"
             else "no stored records yet: run without --report-only")
        done = recs["params"].nunique() if not recs.empty else 0
        if status == "ok" and done < n_settings:  # an interrupted or restricted sweep
            status = f"partial: {done} of {n_settings} settings"
            reason = "the grid is not complete: rerun to finish it"
        if status == "ok" and p is None and not exp.get("figure"):
            reason = "no published cell for this row"
        if status == "ok":
            reason = "; ".join(filter(None, [reason, pick_notes(recs, picks)]))
        out.append(_cell(dict(cell, status=status, reason=reason, n_settings=n_settings), picks))
    for c in out:
        c["difference"] = c["ours_mean"] - c["published_mean"]
    return out


# -- the chance row ------------------------------------------------------------------------------
def chance_row(exp: dict) -> dict | None:
    """The experiment's chance baseline: the first row whose method declares ``draws_per_run``
    (a fresh random subset per K-means run), or None."""
    from ufsbench.methods.base import declared

    return next((r for r in exp["rows"] if declared(r["method"], "draws_per_run", False)), None)


def _chance_spread(exp: dict, chance: dict, cell: pd.Series, df: pd.DataFrame) -> float:
    """The chance row's std (points) at its papers'-rule pick: the cell's own, or, under a
    summary without a spread (SOGFS's best of 5), the std of the pick's 20 runs in ``df``."""
    if np.isfinite(cell["ours_std"]):
        return float(cell["ours_std"])
    if df.empty:
        return float("nan")
    pick = df[(df["dataset"] == cell["registry_dataset"]) & (df["method"] == chance["method"])
              & (df["scoring"] == "kmeans") & (df["params"] == cell["ours_params"])
              & (df["n_features"] == cell["ours_n_features"])]
    if pick.empty:
        return float("nan")
    runs = record_runs(pick.iloc[0], cell["metric"].lower(), exp["nmi"])
    return float(100 * np.std(runs))


def mark_chance_level(exp: dict, cells: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """Name in the reason of every computed cell whose papers'-rule value is not above the
    chance row's by more than the chance row's std (same table and data set): "not better than
    random (ours <= random + its std)". Earlier such notes are replaced, so marking is
    idempotent; cells are unchanged when the experiment has no chance row or it has no value,
    and a (table, data set) whose chance spread ``df`` cannot give keeps the notes it has.
    ``df``: the store's records, for the chance row's spread under a best-of-5 summary."""
    chance = chance_row(exp)
    if chance is None or cells.empty:
        return cells
    cells = cells.copy()
    is_chance = (cells["method"] == chance["row"]) & (cells["scoring"] == "kmeans")
    for _, ref in cells[is_chance & cells["ours_mean"].notna()].iterrows():
        spread = _chance_spread(exp, chance, ref, df)
        if not np.isfinite(spread):
            continue
        here = (cells["table"] == ref["table"]) & (cells["dataset"] == ref["dataset"])
        cells.loc[here, "reason"] = [_without_chance_note(r) for r in cells.loc[here, "reason"]]
        same = here & ~is_chance & cells["ours_mean"].notna()
        below = same & (cells["ours_mean"] <= ref["ours_mean"] + spread)
        cells.loc[below, "reason"] = [
            "; ".join(filter(None, [reason, f"{CHANCE_NOTE} ({ours:.1f} <= random "
                                            f"{ref['ours_mean']:.1f} + its std {spread:.1f})"]))
            for reason, ours in cells.loc[below, ["reason", "ours_mean"]].itertuples(index=False)]
    return cells


def _without_chance_note(reason) -> str:
    if not isinstance(reason, str):
        return ""
    return "; ".join(n for n in reason.split("; ") if not n.startswith(CHANCE_NOTE))
