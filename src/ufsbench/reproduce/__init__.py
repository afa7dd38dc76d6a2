"""Re-create the five papers' result tables with our numbers beside theirs (``make reproduce-tables``).

Per paper, ``configs/experiment/<paper>.yaml`` says which data sets, which table rows (a method id
plus fixed parameters, e.g. UFSOL's four ``graph`` variants), which grids and how the paper scored
(mean of 20 K-means runs, SOGFS's best of 5, DGUFS's own labels). The sweeps go through the normal
runner (``plan_tasks`` / ``run_sweep``) into the normal result store, so they run in parallel, are
resumable and are shared between papers (one evaluation protocol for all: 20 seeded K-means runs;
the per-paper NMI normalisation and best-of-5 summary are read from the stored runs).

Three selection rules are reported for every published cell, because the papers' rule picks
parameters and feature count with the labels it is scored on:

* ``paper``: best summary over the grid x feature counts on all runs (the papers' protocol);
* ``label_free``: the row's fixed default parameters at one fixed feature count (the middle of the
  data set's counts), the same rule for every data set;
* ``split``: choose on the first half of the K-means runs (1-10), report the second half (11-20),
  which costs nothing extra because each record stores its per-run scores.

A method we lack or a data set not on the machine stays a visible row with its reason.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ufsbench.errors import DataError, UFSBenchError
from ufsbench.methods.base import keeps_all_features
from ufsbench.paths import config_dir, repository_dir

PAPERS = ("ufsol", "sogfs", "dgufs", "scfs", "kmufs")
PROFILES = ("full", "quick")
CELL_COLUMNS = ["paper", "table", "metric", "dataset", "method", "published_mean", "published_std",
                "published_n_features", "ours_mean", "ours_std", "ours_n_features", "protocol",
                "scoring", "role", "status", "reason", "reconstructed", "difference",
                "ours_params", "label_free_mean", "label_free_std", "label_free_n_features",
                "split_mean", "split_std", "split_n_features", "published_uncertain",
                "registry_dataset", "n_settings"]


# -- files -----------------------------------------------------------------------------------
def repo_root() -> Path:
    return repository_dir()


def published_dir() -> Path:
    return repo_root() / "results" / "published"


def experiment_path(name: str) -> Path:
    return config_dir() / "experiment" / f"{name}.yaml"


def transcribe_published(source: str | os.PathLike, out_dir: str | os.PathLike | None = None
                         ) -> list[Path]:
    """Split the shared transcription (paper-tables/results.csv) into one CSV per paper.

    Values are copied as text (nothing rounded); two provenance columns name the source file with
    its sha256 and the line of each cell, so every published number can be traced back.
    """
    source = Path(source)
    if not source.is_file():
        raise UFSBenchError(f"published tables {source} not found; pass the path of "
                            f"paper-tables/results.csv")
    sha = hashlib.sha256(source.read_bytes()).hexdigest()
    df = pd.read_csv(source, dtype=str, keep_default_na=False)
    df["source"] = f"paper-tables/results.csv sha256:{sha}"
    df["source_line"] = np.arange(len(df)) + 2  # header is line 1
    out = Path(out_dir) if out_dir else published_dir()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for paper, part in df.groupby("paper", sort=True):
        path = out / f"{paper.lower()}.csv"
        part.to_csv(path, index=False)
        written.append(path)
    return written


def load_published(paper: str, directory: str | os.PathLike | None = None) -> pd.DataFrame:
    """The published cells of one paper (empty frame for SOGFS, whose results are a figure)."""
    path = Path(directory or published_dir()) / f"{paper.lower()}.csv"
    if not path.is_file():
        return pd.DataFrame(columns=["paper", "table", "metric", "dataset", "method", "mean",
                                     "std", "n_features", "uncertain", "note"])
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in ("mean", "std", "n_features"):
        df[col] = pd.to_numeric(df[col], errors="coerce")
    df["uncertain"] = df["uncertain"].eq("1")
    return df


# -- experiment configs ----------------------------------------------------------------------
def load_experiment(name: str) -> dict:
    """An experiment config (``configs/experiment/<name>.yaml``), checked for the keys we use."""
    path = experiment_path(name)
    if not path.is_file():
        raise UFSBenchError(f"unknown paper {name!r}; use one of {', '.join(PAPERS)}, all or quick")
    return normalise_experiment(yaml.safe_load(path.read_text()) or {}, name, str(path))


def normalise_experiment(exp: dict, name: str, where: str = "experiment") -> dict:
    """Check an experiment dict's required keys and fill the optional ones with their defaults."""
    missing = [k for k in ("paper", "datasets", "rows") if k not in exp]
    if missing:
        raise UFSBenchError(f"{where} lacks {', '.join(missing)}; see configs/experiment/ufsol.yaml")
    for row in exp["rows"]:
        if "row" not in row or "method" not in row:
            raise UFSBenchError(f"{where}: every entry of rows needs 'row' (the published method "
                                f"id) and 'method' (ours); got {row}")
    exp = dict(exp)
    exp.setdefault("name", name)
    exp.setdefault("tables", [])
    exp.setdefault("summary", "mean")
    exp.setdefault("nmi", "max")
    exp.setdefault("kmeans_init", "random")   # ours for every paper; --kmeans-init varies it
    exp.setdefault("published", exp["paper"].lower())
    exp.setdefault("notes", {})
    return exp


def thin_values(values: list, step: int, keep=None) -> list:
    """Every ``step``-th grid value (always keeping ``keep``, the default): a reduced grid."""
    kept = list(values)[::step]
    if keep is not None and keep in values and keep not in kept:
        kept.append(keep)
    return kept


def thin_text(thin: int) -> str:
    if thin == 2:
        return "every other value (plus the default)"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(thin % 10 if thin % 100 not in (11, 12, 13) else 0, "th")
    return f"every {thin}{suffix} value (plus the default)"


def row_method_config(row: dict, thin: int = 1) -> dict:
    """The method config of one table row: the method's own config overridden by the row.

    Parameters the row fixes are removed from the grid (a row is one variant); ``thin`` > 1 keeps
    every ``thin``-th grid value (plus the default) for reduced runs.
    """
    from ufsbench.report import method_config

    base = method_config(row["method"])
    params = dict(base.get("params") or {}, **(row.get("params") or {}))
    grid = dict(row["grid"]) if "grid" in row else dict(base.get("grid") or {})
    grid = {k: v for k, v in grid.items() if k not in (row.get("params") or {})}
    default = dict(base.get("default") or {}, **(row.get("default") or {}))
    default = {k: v for k, v in default.items() if k not in (row.get("params") or {})}
    if thin > 1:
        grid = {k: thin_values(v, thin, default.get(k)) for k, v in grid.items()}
    return {"name": row["method"], "params": params, "grid": grid, "default": default}


def row_scorings(row: dict) -> list[str]:
    """The row's scorings; the first is the paper's (DGUFS: its own labels)."""
    return list(row.get("scoring") or ["kmeans"])


def dataset_counts(exp: dict, registry_name: str) -> list[int]:
    from ufsbench.datasets import dataset_entry

    counts = exp.get("feature_counts") or dataset_entry(registry_name).get("feature_counts")
    return [int(m) for m in counts or [50, 100, 150, 200, 250, 300]]


def middle_count(counts: list[int]) -> int:
    """The label-free rule's fixed feature count: the middle of the counts (lower middle)."""
    counts = sorted(counts)
    return counts[(len(counts) - 1) // 2]


# -- availability ----------------------------------------------------------------------------
def method_gap(method: str) -> str | None:
    from ufsbench.methods import available_methods

    if method not in available_methods():
        return f"method {method!r} is not implemented in ufsbench (not registered)"
    return None


def is_reconstructed(method: str) -> bool:
    from ufsbench.methods.base import declared

    return bool(declared(method, "reconstructed", False))


def dataset_gap(registry_name: str, data_dir=None) -> str | None:
    from ufsbench.datasets import dataset_status

    try:
        status = dataset_status(registry_name, data_dir)
    except DataError as exc:
        return str(exc)
    if not status["present"]:
        return f"data set {registry_name!r} is not on this machine (see `ufsbench datasets`)"
    if not status["verified"]:
        return f"data set {registry_name!r}: {status['detail']}"
    return None


# -- running ---------------------------------------------------------------------------------
def run_protocol(scoring, kmeans_init: str = "random"):
    """One evaluation protocol for all papers, so that records are shared between them (the
    K-means starts can be varied for a sensitivity run: ``--kmeans-init``)."""
    from ufsbench.runner import EvaluationProtocol

    return EvaluationProtocol(n_runs=20, kmeans_init=kmeans_init, kmeans_max_iter=100,
                              nmi="max", scoring=tuple(scoring))


def default_out_dir() -> Path:
    """Where ``make reproduce-tables`` writes the reports of our protocol (committed)."""
    return repo_root() / "results" / "reproduction"


def report_protocol(exp: dict, seed: int = 0) -> dict:
    """:func:`run_protocol` as the protocol columns of ``load_results``: what a report reads."""
    protocol = run_protocol(("kmeans",), exp.get("kmeans_init", "random"))
    return {"seed": seed, "n_runs": protocol.n_runs, "kmeans_init": protocol.kmeans_init,
            "kmeans_max_iter": protocol.kmeans_max_iter, "nmi_normalisation": protocol.nmi}


def experiment_tasks(exp: dict, dataset, results_dir: str, seed: int = 0, thin: int = 1) -> list:
    """Every runner task of one data set of an experiment, without duplicates."""
    from ufsbench.results import canonical
    from ufsbench.runner import plan_tasks

    counts = dataset_counts(exp, dataset.name)
    tasks, seen = [], set()
    for row in exp["rows"]:
        if method_gap(row["method"]):
            continue
        cfg = row_method_config(row, thin)
        protocol = run_protocol(row_scorings(row), exp.get("kmeans_init", "random"))
        for task in plan_tasks(dataset, cfg, counts, protocol, seed, results_dir):
            key = canonical([task.method, task.params, sorted(protocol.scoring)])
            if key not in seen:
                seen.add(key)
                tasks.append(task)
    return tasks


def selected_datasets(exp: dict, only=None) -> dict:
    """Published data-set id -> registry name, restricted to ``only`` (published or registry ids)."""
    pairs = dict(exp["datasets"])
    if only:
        unknown = [d for d in only if d not in pairs and d not in pairs.values()]
        if unknown:
            raise UFSBenchError(f"data set(s) {', '.join(unknown)} are not in the {exp['paper']} "
                                f"experiment; its data sets: {', '.join(pairs)}")
        pairs = {k: v for k, v in pairs.items() if k in only or v in only}
    return pairs


def selected_methods(exp: dict, only=None) -> dict:
    """The experiment with its rows restricted to the methods ``only`` (registry ids, e.g.
    ``mcfs``): what a rerun of one method runs (no rows when the experiment has none of them).
    Unchanged when ``only`` is empty; :func:`check_methods` validates the names."""
    if not only:
        return exp
    return {**exp, "rows": [row for row in exp["rows"] if row["method"] in only]}


def check_methods(names: list[str], only=None) -> None:
    """Every method of ``only`` must be in at least one of the named experiments (``--paper all
    --methods mcfs`` runs MCFS where a paper has it), else one message naming their methods."""
    if not only:
        return
    known = sorted({row["method"] for name in names for row in load_experiment(name)["rows"]})
    unknown = [m for m in only if m not in known]
    if unknown:
        raise UFSBenchError(f"method(s) {', '.join(unknown)} are not in any of the experiments "
                            f"run ({', '.join(names)}); their methods: {', '.join(known)}")


def run_experiment(exp: dict, results_dir: str, n_jobs: int = -1, data_dir=None, seed: int = 0,
                   thin: int = 1, only_datasets=None, log=print, launch: dict | None = None,
                   only_methods=None) -> dict:
    """Run every pending sweep of an experiment (of its ``only_methods`` if given); returns
    per-data-set runner statistics.

    ``launch`` holds the runner's ``backend`` and ``scheduler`` (e.g. ``{"backend": "dask",
    "scheduler": "tcp://host:8786"}``: the sweeps go to a dask cluster); default this machine."""
    from ufsbench.datasets import load_dataset
    from ufsbench.runner import run_sweep

    exp = selected_methods(exp, only_methods)
    stats = {}
    if not exp["rows"]:          # none of only_methods in this experiment: no data set to load
        return stats
    for published_id, name in selected_datasets(exp, only_datasets).items():
        if dataset_gap(name, data_dir):
            log(f"{exp['paper']}: {published_id}: skipped (data set not present)")
            continue
        dataset = load_dataset(name, data_dir=data_dir, download=False)
        tasks = experiment_tasks(exp, dataset, results_dir, seed, thin)
        start = time.perf_counter()
        stats[name] = run_sweep(dataset, tasks, n_jobs=n_jobs, **(launch or {}))
        stats[name]["seconds"] = round(time.perf_counter() - start, 1)
        log(f"{exp['paper']}: {name}: {stats[name]['tasks']} settings, {stats[name]['skipped']} "
            f"already stored, {stats[name]['records']} new records, "
            f"{stats[name].get('failed', 0)} failed settings, {stats[name]['seconds']} s")
    return stats


# -- scoring the stored runs -----------------------------------------------------------------
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
#: Notes on a pick that a row's status shows even when the row is "ok" (their first word).
PICK_NOTE_PREFIXES = ("degenerate", "tie")


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


def registry_n_features(registry_name: str) -> int:
    """d of a registered data set (feature counts are capped at it, as the runner does)."""
    from ufsbench.datasets import dataset_entry

    return int(dataset_entry(registry_name).get("n_features") or 10**9)


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
            for row_id, row in rows.items():
                hit = pub[(pub["dataset"] == ds) & (pub["method"] == row_id)]
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
        cell = dict(base, scoring=scoring, role="paper" if i == 0 else "beside",
                    protocol=protocol_text(exp, scoring))
        if gap:
            out.append(_cell(dict(cell, status="gap", reason=gap), {}))
            continue
        counts = dataset_counts(exp, registry_name)
        recs, default, fixed, n_settings = row_records(df, registry_name, row, scoring, counts,
                                                       thin)
        picks = choose_cells(recs, entry["metric"], exp["summary"], exp["nmi"], default, fixed)
        status, reason = ("ok", "") if picks["paper"] else \
            ("not computed", "no stored records yet: run without --report-only")
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


# -- summaries -------------------------------------------------------------------------------
def table_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Per table: how close we are, and how much the papers' rule gains over the honest rules."""
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
            "optimism_vs_split": _optimism(part, "split_mean")})
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


# -- rendering -------------------------------------------------------------------------------
def _fmt(mean, std, m=None) -> str:
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "—"
    text = f"{mean:.1f}" + ("" if std is None or np.isnan(std) else f"±{std:.1f}")
    return text + ("" if m is None or np.isnan(m) else f" ({int(m)})")


def _method_label(cell) -> str:
    label = cell["method"] + (" (own labels)" if cell["scoring"] == "own_labels" else "")
    if cell["role"] == "beside" and cell["scoring"] == "kmeans":
        label += " (K-means on its features)"
    return label + (" [reconstructed]" if cell["reconstructed"] else "")


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
        "method": cells.apply(_method_label, axis=1),
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
                   "over the cells where both exist."), ""]
    for (table, metric), part in cells.groupby(["table", "metric"], sort=False):
        lines += [f"## {table} ({metric} %)", ""]
        for ds, block in part.groupby("dataset", sort=False):
            lines += [f"### {ds}", "", tabulate(display_frame(block), headers="keys",
                                                tablefmt="github", showindex=False), ""]
    if figure is not None and len(figure):
        lines += [("## Figure 1 as a table (ACC %, best of 5 K-means runs, best over the grid, "
                   "per feature count)"), "", tabulate(figure, headers="keys", tablefmt="github",
                                                 showindex=False), ""]
    lines += large_gap_lines(exp, cells, thin)
    return "\n".join(lines) + "\n"


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
        "- Rows marked [reconstructed] are models rebuilt without the paper text or code."]


def large_gap_lines(exp: dict, cells: pd.DataFrame, thin: int = 1) -> list[str]:
    big = cells[(cells["role"] == "paper") & (cells["difference"].abs() > 5)]
    if not len(big):
        return []
    lines = ["## Large gaps (|Δ| > 5 points) and candidate causes", "",
             ("Candidates come from recorded differences (data versions, transcription, protocol "
              "and model notes); none has been confirmed by an experiment."), ""]
    for _, c in big.iterrows():
        lines.append(f"- {c['table']} {c['metric']} {c['dataset']} / {_method_label(c)}: "
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
        parts.append(tabulate(frame, headers="keys", tablefmt="latex", showindex=False))
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
    """Figure 1 redrawn (one panel per data set, ACC against the feature count), as SVG."""
    if figure.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(figure["dataset"]))
    cols = min(4, len(datasets))
    rows = (len(datasets) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, ds in zip(axes.flat, datasets):
        block = figure[figure["dataset"] == ds].dropna(axis=1, how="all")
        counts = [c for c in block.columns if c not in ("dataset", "method")]
        for _, r in block.iterrows():
            ax.plot([int(c) for c in counts], [r[c] for c in counts], marker="o", ms=3,
                    label=r["method"])
        ax.set_title(ds)
        ax.set_xlabel("selected features")
        ax.set_ylabel("ACC (%)")
    for ax in list(axes.flat)[len(datasets):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    matplotlib.rcParams["svg.hashsalt"] = "ufsbench"  # deterministic SVG ids
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


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
               "mean_difference", "optimism_vs_label_free", "optimism_vs_split"]
    return summary[columns]


def write_overview(out_dir: Path) -> Path:
    """overview.md: every paper's tables in one summary (from cells.csv), linking the reports."""
    cells = pd.read_csv(out_dir / "cells.csv")
    reports = [p for p in PAPERS if (out_dir / f"{p}.md").is_file()]
    lines = ["# Reproduction overview", "",
             "One row per published table, from `cells.csv` (every published cell, ours beside "
             "theirs). Columns as in each report's \"Summary per table\"; `partial_grid` counts "
             "rows whose best setting was chosen from only part of the paper's grid.", "",
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


# -- the whole pipeline ----------------------------------------------------------------------
def reproduce(names: list[str], results_dir: str, out_dir: str | os.PathLike, n_jobs: int = -1,
              data_dir=None, thin: int = 1, only_datasets=None, run: bool = True,
              command: str = "", log=print, launch: dict | None = None,
              only_methods=None, kmeans_init: str = "random") -> list[Path]:
    """Run (unless ``run`` is false) and report each named experiment; returns files written.
    ``launch``: where the sweeps run (:func:`run_experiment`); ``only_methods``: run only these
    methods' sweeps (the reports still cover every method in the store); ``kmeans_init``: the
    evaluation's K-means starts ("k-means++" for a sensitivity run: its reports must go to
    another directory than the committed ones, and say so in their protocol)."""
    from ufsbench.evaluation import KMEANS_INITS
    from ufsbench.results import load_failures, load_results, one_protocol

    if kmeans_init not in KMEANS_INITS:
        raise UFSBenchError(f"unknown K-means init {kmeans_init!r}; use one of "
                            f"{', '.join(KMEANS_INITS)}")
    if kmeans_init != "random" and Path(out_dir).resolve() == default_out_dir().resolve():
        raise UFSBenchError(f"--kmeans-init {kmeans_init} is a sensitivity run: write its "
                            f"reports elsewhere than {default_out_dir()} (the reports of our "
                            f"protocol), e.g. --out-dir results/reproduction/kmeans++")
    if run:
        check_methods(names, only_methods)
    written = []
    for name in names:
        exp = {**load_experiment(name), "kmeans_init": kmeans_init}
        start = time.perf_counter()
        stats = run_experiment(exp, results_dir, n_jobs, data_dir, thin=thin,
                               only_datasets=only_datasets, log=log, launch=launch,
                               only_methods=only_methods) if run else {}
        wall = time.perf_counter() - start
        df = load_results(results_dir)
        if len(df):  # the records of run_protocol only (a store may hold others: one_protocol)
            df, _ = one_protocol(df[~df["stale"]], report_protocol(exp))
        cells = note_failures(exp, compare(exp, df, data_dir=data_dir, thin=thin,
                                           only_datasets=only_datasets),
                              load_failures(results_dir))
        figure = figure_table(exp, df, thin, data_dir) if exp.get("figure") and len(df) else None
        header = run_header(command, wall, thin, only_datasets, run, stats, only_methods)
        written += write_outputs(exp, cells, Path(out_dir), header, thin, figure)
        log(f"{exp['paper']}: wrote {Path(out_dir) / exp['name']}.md ({wall:.0f} s)")
    return written


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


def run_header(command: str, wall: float, thin: int, only_datasets, ran: bool,
               stats: dict | None = None, only_methods=None) -> dict:
    from ufsbench.runner import environment

    header = {"command": f"`{command}`" if command else "(library call)",
              "generated": _dt.datetime.now().isoformat(timespec="seconds"),
              "ufsbench commit": environment().get("git_commit") or "unknown",
              "machine": machine_description(),
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


def experiment_names(paper: str, profile: str) -> list[str]:
    if profile not in PROFILES:
        raise UFSBenchError(f"unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
    if profile == "quick" or paper == "quick":
        return ["quick"]
    if paper == "all":
        return list(PAPERS)
    if paper not in PAPERS:
        raise UFSBenchError(f"unknown paper {paper!r}; use one of {', '.join(PAPERS)}, all or quick")
    return [paper]


def plan_summary(names: list[str], results_dir: str, data_dir=None, thin: int = 1,
                 only_datasets=None, costs: dict | None = None,
                 only_methods=None) -> pd.DataFrame:
    """Settings per (experiment, data set, method), how many are already finished, and the cost
    of the rest: ``costs`` (e.g. from :func:`probe_costs`) where given, else the store's
    measured cost per setting."""
    from ufsbench.runner import task_is_done

    check_methods(names, only_methods)
    rows, counted = [], set()
    for name, dataset, tasks in present_experiment_tasks(names, results_dir, data_dir, thin,
                                                         only_datasets, only_methods):
        for task in tasks:
            # A setting two papers share (same data, method, parameters, protocol) runs once.
            key = json.dumps(task.lock_key(), sort_keys=True, default=str)
            rows.append({"experiment": name, "dataset": dataset.name, "method": task.method,
                         "done": task_is_done(task, dataset.n_features),
                         "shared": key in counted})
            counted.add(key)
    df = pd.DataFrame(rows, columns=["experiment", "dataset", "method", "done", "shared"])
    df["left"] = ~df["done"] & ~df["shared"]
    plan = df.groupby(["experiment", "dataset", "method"]).agg(
        settings=("done", "size"), done=("done", "sum"), shared=("shared", "sum"),
        left=("left", "sum")).reset_index()
    stored, fresh = measured_cost_parts(results_dir), costs or {}
    pairs = list(zip(plan["dataset"], plan["method"]))
    # Fitting is timed by the code that ran it: a probe of the code now wins over older records.
    # K-means is the protocol's, the same for any code: every stored record times it, and many
    # records carry the subset cache's hit rate, which a few probed settings cannot.
    plan["s_fit"] = [(fresh.get(p) or stored.get(p) or {}).get("fit") for p in pairs]
    plan["s_eval"] = [(stored.get(p) or fresh.get(p) or {}).get("eval") for p in pairs]
    plan["s_per_setting"] = plan["s_fit"] + plan["s_eval"]
    plan["core_hours_left"] = plan["left"] * plan["s_per_setting"] / 3600
    plan["eval_core_hours_left"] = plan["left"] * plan["s_eval"] / 3600
    plan["core_hours_all"] = (plan["settings"] - plan["shared"]) * plan["s_per_setting"] / 3600
    return plan


def plan_totals(plan: pd.DataFrame, cores: int | None = None) -> str:
    """One line: settings, done, and the measured estimate of what is left (core-hours and wall
    hours on this machine's cores); settings with no measurement yet are counted separately."""
    cores = cores or os.cpu_count() or 1
    left = plan["left"] if "left" in plan else plan["settings"] - plan["done"]
    unmeasured = int(left[plan["s_per_setting"].isna()].sum())
    hours = float(plan["core_hours_left"].fillna(0).sum())
    evaluation = ""
    if "eval_core_hours_left" in plan:
        evaluation = (f" (K-means evaluation "
                      f"{float(plan['eval_core_hours_left'].fillna(0).sum()):.1f} of them)")
    whole = ""
    if "core_hours_all" in plan:
        every = float(plan["core_hours_all"].fillna(0).sum())
        whole = f"; every setting from scratch: about {every:.1f} core-hours ({every / cores:.1f} h)"
    shared = int(plan["shared"].sum()) if "shared" in plan else 0
    shared_text = f" ({shared} shared between papers, run once)" if shared else ""
    return (f"total: {int(plan['settings'].sum())} settings{shared_text}, "
            f"{int(plan['done'].sum())} done; "
            f"left: about {hours:.1f} core-hours{evaluation} ({hours / cores:.1f} h on {cores} "
            f"cores) for the measured ones" + (f", plus {unmeasured} settings of (data set, "
                                               f"method) pairs not yet measured"
                                               if unmeasured else "") + whole)


def measured_cost_per_setting(results_dir: str, written_after: float | None = None
                              ) -> dict[tuple[str, str], float]:
    """Mean measured core-seconds of one parameter setting per (data set, method), from the
    store: its fit(s) plus its K-means evaluations at every feature count (see
    :func:`measured_cost_parts`)."""
    return {pair: parts["total"] for pair, parts in
            measured_cost_parts(results_dir, written_after).items()}


def measured_cost_parts(results_dir: str, written_after: float | None = None
                        ) -> dict[tuple[str, str], dict[str, float]]:
    """Per (data set, method): the mean core-seconds of one parameter setting ("total") and the
    means of its two parts, fitting ("fit") and K-means evaluation ("eval"). Means, not medians:
    the estimates are multiplied into totals, and K-means time is a mixture of cache hits (0 s)
    and full runs.

    A ranking method's one fit serves all counts (its records repeat that fit time), and so
    does a subset method's that declares ``one_fit_serves_counts``; other subset methods are
    refitted per count. Records older than the subset cache carry no K-means time and count as
    fit time only, so those estimates are low. ``written_after`` (a time.time() value) keeps
    only records written since then, i.e. measured with the code running now.
    """
    from ufsbench.methods import selector_class
    from ufsbench.results import load_results

    df = load_results(results_dir)
    if df.empty:
        return {}
    df = df[df["scoring"] == "kmeans"]
    if written_after is not None:
        df = df[[os.path.getmtime(p) >= written_after for p in df["path"]]]
    eval_time = pd.to_numeric(df.get("eval_time"), errors="coerce").fillna(0.0)
    df = df.assign(eval_time=eval_time, fit_time=pd.to_numeric(df["fit_time"], errors="coerce"))
    costs = {}
    for (dataset, method), group in df.groupby(["dataset", "method"]):
        cls = selector_class(method)
        refit_per_count = (cls.selection_kind == "subset"
                           and not getattr(cls, "one_fit_serves_counts", False))
        fits = np.array([g["fit_time"].sum() if refit_per_count else g["fit_time"].iloc[0]
                         for _, g in group.groupby("params")])
        evals = np.array([g["eval_time"].sum() for _, g in group.groupby("params")])
        costs[(dataset, method)] = {"total": float(np.mean(fits + evals)),
                                    "fit": float(np.mean(fits)), "eval": float(np.mean(evals))}
    return costs


def spread_sample(items: list, k: int) -> list:
    """k items spread evenly over ``items``: the middle item of each of k equal slices (so
    k = 1 gives the middle, and no k favours the grid's corners)."""
    if k >= len(items):
        return list(items)
    return [items[int((i + 0.5) * len(items) / k)] for i in range(k)]


def probe_costs(names: list[str], results_dir: str, data_dir=None, thin: int = 1,
                only_datasets=None, per_pair: int = 2, n_jobs: int = -1,
                log=print, launch: dict | None = None,
                only_methods=None) -> dict[tuple[str, str], dict[str, float]]:
    """Measure what the code running now costs per setting: run ``per_pair`` pending settings
    of every (data set, method) -- spread over its grid (:func:`spread_sample`), since the cost
    varies with the weights -- through the normal runner, and return the mean core-seconds per setting
    (and its fit / K-means parts, as :func:`measured_cost_parts`) of the records it wrote.

    Stored records are timed by the code that wrote them, so after a speed-up they overstate
    what is left; the probe's settings are real results and stay in the store (no work is lost).
    """
    from ufsbench.runner import run_sweep, task_is_done

    check_methods(names, only_methods)
    start = time.time()
    for name, dataset, tasks in present_experiment_tasks(names, results_dir, data_dir, thin,
                                                         only_datasets, only_methods):
        by_method: dict[str, list] = {}
        for task in tasks:
            if not task_is_done(task, dataset.n_features):
                by_method.setdefault(task.method, []).append(task)
        chosen = [t for pending in by_method.values() for t in spread_sample(pending, per_pair)]
        if chosen:
            tick = time.perf_counter()
            run_sweep(dataset, chosen, n_jobs=n_jobs, **(launch or {}))
            log(f"probe {name}: {dataset.name}: {len(chosen)} settings of {len(by_method)} "
                f"methods, {time.perf_counter() - tick:.1f} s")
    return measured_cost_parts(results_dir, written_after=start)


def present_experiment_tasks(names: list[str], results_dir: str, data_dir=None, thin: int = 1,
                             only_datasets=None, only_methods=None):
    """(experiment name, data set, its runner tasks) for every data set present on this machine
    (of ``only_methods`` if given)."""
    from ufsbench.datasets import load_dataset

    for name in names:
        exp = selected_methods(load_experiment(name), only_methods)
        for reg in selected_datasets(exp, only_datasets).values():
            if not dataset_gap(reg, data_dir):
                dataset = load_dataset(reg, data_dir=data_dir, download=False)
                yield name, dataset, experiment_tasks(exp, dataset, results_dir, 0, thin)
