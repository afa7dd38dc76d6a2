"""What a reproduction runs: the published tables, the experiment configs and the runner tasks.

* files: the repository's published tables (``results/published/<paper>.csv``, split from the
  shared transcription by :func:`transcribe_published`) and the experiment configs
  (``configs/experiment/<paper>.yaml``);
* configs: :func:`load_experiment` checks a config and fills its defaults; a table row becomes a
  method config (:func:`row_method_config`, optionally with a thinned grid), with its scorings and
  the data set's feature counts;
* availability: why a row or data set cannot be computed here (:func:`method_gap`,
  :func:`dataset_gap`), or ``None``;
* running: the one evaluation protocol of every paper (:func:`run_protocol`), the runner tasks of
  one data set (:func:`experiment_tasks`) and the ``--datasets`` / ``--methods`` restrictions.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ufsbench.errors import DataError, UFSBenchError
from ufsbench.paths import config_dir, repository_dir

#: The papers reproduced (``--paper all``), each with ``configs/experiment/<paper>.yaml``.
PAPERS = ("ufsol", "sogfs", "dgufs", "scfs", "kmufs")


#: ``full`` runs the named papers; ``quick`` the small ``quick`` experiment (CI).
PROFILES = ("full", "quick")


#: A row's ``role``: ``paper`` (its first scoring is compared with the published cell, the
#: others are shown beside it), ``released`` (the method at a named ``preset``, e.g. the
#: authors' code's settings, compared with the published cell of the row named by its
#: ``as_printed`` key) or ``beside`` (a baseline no paper reports: never compared).
ROLES = ("paper", "released", "beside")


# -- files ----------------------------------------------------------------------------------------
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


# -- experiment configs ---------------------------------------------------------------------------
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
        if row.get("role", "paper") not in ROLES:
            raise UFSBenchError(f"{where}: row {row['row']!r} has role {row['role']!r}; use one "
                                f"of {', '.join(ROLES)}")
        check_released_row(row, exp["rows"], where)
    exp = dict(exp)
    exp.setdefault("name", name)
    exp.setdefault("tables", [])
    exp.setdefault("summary", "mean")
    exp.setdefault("nmi", "max")
    exp.setdefault("kmeans_init", "random")   # ours for every paper; --kmeans-init varies it
    exp.setdefault("published", exp["paper"].lower())
    exp.setdefault("notes", {})
    return exp


def check_released_row(row: dict, rows: list[dict], where: str) -> None:
    """A ``released`` row names a preset of its method and the row whose published cell it
    is compared with (``as_printed``, a row of the same method in the same experiment)."""
    if row.get("role") != "released":
        return
    from ufsbench.presets import preset_params

    if not row.get("preset"):
        raise UFSBenchError(f"{where}: row {row['row']!r} has role released but no preset; "
                            f"add e.g. preset: released")
    preset_params(row["method"], row["preset"])
    printed = {r["row"]: r["method"] for r in rows if r.get("role", "paper") == "paper"}
    if printed.get(row.get("as_printed")) != row["method"]:
        raise UFSBenchError(f"{where}: row {row['row']!r} needs as_printed: the id of the "
                            f"{row['method']!r} row whose published cell it is compared with")


def published_row_id(row: dict) -> str:
    """The row id whose published cell a row is compared with (a released row: its printed
    row's)."""
    return row.get("as_printed") or row["row"]


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
    every ``thin``-th grid value (plus the default) for reduced runs. A row with a ``preset``
    gets the preset's values (:func:`ufsbench.presets.apply_preset`).
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
    cfg = {"name": row["method"], "params": params, "grid": grid, "default": default}
    if not row.get("preset"):
        return cfg
    from ufsbench.presets import apply_preset

    # the preset's values, applied here so that grid, default and tasks agree; the key stays,
    # so that the records name the preset
    return apply_preset({**cfg, "preset": row["preset"]})


def row_scorings(row: dict) -> list[str]:
    """The row's scorings; the first is the paper's (DGUFS: its own labels)."""
    return list(row.get("scoring") or ["kmeans"])


def dataset_counts(exp: dict, registry_name: str) -> list[int]:
    from ufsbench.datasets import dataset_entry

    counts = exp.get("feature_counts") or dataset_entry(registry_name).get("feature_counts")
    return [int(m) for m in counts or [50, 100, 150, 200, 250, 300]]


def registry_n_features(registry_name: str) -> int:
    """d of a registered data set (feature counts are capped at it, as the runner does)."""
    from ufsbench.datasets import dataset_entry

    return int(dataset_entry(registry_name).get("n_features") or 10**9)


def middle_count(counts: list[int]) -> int:
    """The label-free rule's fixed feature count: the middle of the counts (lower middle)."""
    counts = sorted(counts)
    return counts[(len(counts) - 1) // 2]


# -- availability ---------------------------------------------------------------------------------
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


# -- running --------------------------------------------------------------------------------------
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


#: ``--methods released``: every ``released`` row (they run only on request: a full set of
#: them costs more than the rest of a reproduction, see RUNS.md).
RELEASED_ROWS = "released"


def selected_methods(exp: dict, only=None) -> dict:
    """The experiment with its rows restricted to ``only``: methods (registry ids, e.g.
    ``mcfs``: every row of the method), row ids (e.g. ``ufsol_released``) or ``released``
    (every released row): what a rerun of one method or row runs (no rows when the experiment
    has none of them). A ``released`` row runs only when ``only`` names it by its id or by
    ``released``; otherwise every row runs. :func:`check_methods` validates the names."""
    only = list(only or ())

    def named(row: dict) -> bool:
        if row.get("role") == "released":
            return row["row"] in only or RELEASED_ROWS in only
        return not only or row["method"] in only or row["row"] in only

    return {**exp, "rows": [row for row in exp["rows"] if named(row)]}


def check_methods(names: list[str], only=None) -> None:
    """Every method of ``only`` must be in at least one of the named experiments (``--paper all
    --methods mcfs`` runs MCFS where a paper has it), else one message naming their methods."""
    if not only:
        return
    rows = [row for name in names for row in load_experiment(name)["rows"]]
    known = sorted({row["method"] for row in rows})
    unknown = [m for m in only if m not in known and m != RELEASED_ROWS
               and m not in {row["row"] for row in rows}]
    if unknown:
        raise UFSBenchError(f"method(s) {', '.join(unknown)} are not in any of the experiments "
                            f"run ({', '.join(names)}); their methods: {', '.join(known)} (or a "
                            f"row id such as {rows[-1]['row']})")
