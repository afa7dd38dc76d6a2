"""The stored records as tidy tables, and the evaluation protocols they were computed with.

:func:`load_results` reads every sound record of a result store (:mod:`ufsbench.results`) into one
DataFrame with a row per dataset, method, parameter setting, feature count and scoring, flagging
records whose data or method has changed since; :func:`load_failures` lists the noted failed fits.
:data:`PROTOCOL_COLUMNS` names the columns that make up an evaluation protocol, and
:func:`one_protocol` picks the records of one protocol so that a table or figure never mixes them
(:func:`default_protocol` is the protocol of ``configs/config.yaml``). These names are also
importable from :mod:`ufsbench.results`, which re-exports them.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ufsbench.errors import UFSBenchError
from ufsbench.paths import config_dir

# ufsbench.results re-exports this module's public names, so the store is imported where it is
# used (a module-level import would make the two modules import each other).


def load_failures(results_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every noted failed fit: dataset, method, params (JSON text), error."""
    from ufsbench.results import ResultStore, canonical

    store = ResultStore(results_dir)
    rows = []
    if store.root.is_dir():
        for path in sorted(store.root.glob("*/*/failed/*.json")):
            note = store.failure_from(path)
            if note is not None:
                key = note["key"]
                rows.append({"dataset": key["dataset"], "method": key["method"],
                             "params": canonical(key["params"]), "error": note["error"]})
    return pd.DataFrame(rows, columns=["dataset", "method", "params", "error"])


def _current_revision(method: str, default: int) -> int:
    """The revision a registered method declares (``UFSSelector.revision``); ``default`` for a
    method this version does not know (its records are left as they are). The store itself
    (:mod:`ufsbench.results`) knows nothing of methods; this table layer asks the declaration."""
    from ufsbench.methods.base import declared

    return declared(method, "revision", default)


def load_results(results_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every finished record as one tidy DataFrame: a row per (dataset, method, params, count, scoring).

    Columns: dataset, method, params (JSON text), one ``param_<name>`` column per parameter,
    n_features, scoring, n_runs, seed, acc_mean, acc_std, nmi_mean, nmi_std (with the record's NMI
    normalisation, named in ``nmi_normalisation``), kmeans_init and kmeans_max_iter (with seed,
    n_runs and nmi_normalisation the record's evaluation protocol: :func:`one_protocol`),
    nmi_<max|sqrt|arithmetic>_mean, acc_runs,
    fit_time, eval_time (seconds of K-means; 0 when the subset's scores were cached; None in records
    older than the subset cache), data_checksum, revision (the method's revision the record was
    made with), stale (the data file changed since, or the method was revised since: its
    selections would differ), reconstructed, path, degenerate (the fit warned that every feature
    scored alike: its selection is the lowest indices), tied_at_cut (how many features tie
    across the cut at n_features, so that the tie order chose among them; 0 none; NaN in
    records older than this field), preset (the preset the parameters came from, as the record
    names it, e.g. "released"; "" for none).
    """
    from ufsbench.datasets.registry import current_checksum, source_checksum
    from ufsbench.results import ResultStore, canonical

    rows = []
    for rec in ResultStore(results_dir).iter_records():
        key = rec["key"]
        acc = np.asarray(rec["acc"], dtype=float)
        nmi_all = {k: np.asarray(v, dtype=float) for k, v in rec["nmi"].items()}
        norm = key["evaluation"]["nmi"]
        row = {"dataset": key["dataset"], "method": key["method"],
               "params": canonical(key["params"]), "n_features": key["n_features"],
               "scoring": key["scoring"], "n_runs": len(acc), "seed": key["seed"],
               "acc_mean": acc.mean(), "acc_std": acc.std(),
               "nmi_mean": nmi_all[norm].mean(), "nmi_std": nmi_all[norm].std(),
               "nmi_normalisation": norm, "acc_runs": acc.tolist(),
               "nmi_runs": nmi_all[norm].tolist(),
               "fit_time": rec.get("fit_time"), "eval_time": rec.get("eval_time"),
               "kmeans_init": key["evaluation"].get("kmeans_init", "random"),
               "kmeans_max_iter": int(key["evaluation"].get("kmeans_max_iter", 100)),
               "data_checksum": key["data_checksum"],
               "reconstructed": bool(rec.get("reconstructed", False)), "path": rec["path"],
               "degenerate": any(w.startswith("DegenerateScoresWarning")
                                 for w in rec.get("fit_warnings") or []),
               "fit_warnings": tuple(rec.get("fit_warnings") or ()),
               "tied_at_cut": float(rec.get("tied_at_cut", np.nan)),
               "preset": rec.get("preset") or ""}
        for name, values in nmi_all.items():
            row[f"nmi_{name}_mean"] = values.mean()
        for name, value in key["params"].items():
            row[f"param_{name}"] = value
        current = current_checksum(key["dataset"])
        if current is None and rec.get("data_source"):  # a user's file: hash it as it is now
            current = source_checksum(rec["data_source"])
        row["revision"] = int(key.get("revision", 0))
        row["stale"] = ((current is not None and current != key["data_checksum"])
                        or row["revision"] != _current_revision(key["method"], row["revision"]))
        rows.append(row)
    columns = ["dataset", "method", "params", "n_features", "scoring", "n_runs", "seed",
               "acc_mean", "acc_std", "nmi_mean", "nmi_std", "nmi_normalisation"]
    return pd.DataFrame(rows, columns=None if rows else columns)


#: The columns of :func:`load_results` that make up an evaluation protocol. Records that differ
#: in any of them are not cells of one table: a table picks one protocol (:func:`one_protocol`).
PROTOCOL_COLUMNS = ("seed", "n_runs", "kmeans_init", "kmeans_max_iter", "nmi_normalisation")
#: How ``ufsbench report`` names each protocol column on its command line.
PROTOCOL_FLAGS = {"seed": "--seed", "n_runs": "--n-runs", "kmeans_init": "--kmeans-init",
                  "kmeans_max_iter": "--kmeans-max-iter", "nmi_normalisation": "--nmi"}


def named_rows(df: pd.DataFrame, where, datasets=None, methods=None) -> pd.DataFrame:
    """The rows of ``df`` (a store's tidy table, read from ``where``) of the named data sets and
    methods (None or empty: all). A name with no row is refused in one line naming what the
    store holds: a typo must not read as "no results"."""
    for column, wanted in (("dataset", datasets), ("method", methods)):
        if wanted:
            missing = sorted(set(wanted) - set(df[column]))
            if missing:
                raise UFSBenchError(f"no results for {column} {', '.join(missing)} in {where}; "
                                    f"stored: {', '.join(sorted(set(df[column])))}")
            df = df[df[column].isin(wanted)]
    return df


def default_protocol() -> dict:
    """The protocol of ``configs/config.yaml`` (what ``ufsbench run`` uses unless overridden)."""
    from omegaconf import OmegaConf

    conf = OmegaConf.load(config_dir() / "config.yaml")
    ev = conf.evaluation
    return {"seed": int(conf.seed), "n_runs": int(ev.n_runs), "kmeans_init": str(ev.kmeans_init),
            "kmeans_max_iter": int(ev.kmeans_max_iter), "nmi_normalisation": str(ev.nmi)}


def protocol_text(protocol) -> str:
    """``seed=0, n_runs=20, ...`` for one protocol (a dict or a row of PROTOCOL_COLUMNS)."""
    return ", ".join(f"{c}={protocol[c]}" for c in PROTOCOL_COLUMNS)


def asked_protocol(df: pd.DataFrame, wanted: dict | None, where) -> tuple[pd.DataFrame, str]:
    """:func:`one_protocol` for a command that shows the records of ``where`` (a result store):
    records of another protocol only are refused in one line naming them, not shown empty."""
    chosen, left_out = one_protocol(df, wanted)
    if chosen.empty and left_out:
        raise UFSBenchError(f"no record in {where} has the evaluation protocol asked for: "
                            f"{left_out}; change or drop the protocol options")
    return chosen, left_out


def one_protocol(df: pd.DataFrame, wanted: dict | None = None) -> tuple[pd.DataFrame, str]:
    """The records of one evaluation protocol, and a note on the records left out ("" if none).

    ``wanted`` fixes some :data:`PROTOCOL_COLUMNS` (None values are free). When the records that
    match still hold several protocols, the default value (:func:`default_protocol`) is taken in
    each column where they differ, if some records have all of those; otherwise the choice is
    the caller's, and a UFSBenchError lists the protocols with the options that pick one. A
    table mixing protocols would put, e.g., the better of random and k-means++ starts into one
    cell, unlabelled.
    """
    if df.empty:
        return df, ""
    wanted = {k: v for k, v in (wanted or {}).items() if v is not None}
    unknown = sorted(set(wanted) - set(PROTOCOL_COLUMNS))
    if unknown:
        raise UFSBenchError(f"unknown protocol field(s) {', '.join(unknown)}; use "
                            f"{', '.join(PROTOCOL_COLUMNS)}")
    keep = np.ones(len(df), dtype=bool)        # positional: safe for any index
    for column, value in wanted.items():
        keep &= (df[column] == value).to_numpy()
    kinds = df.loc[keep, list(PROTOCOL_COLUMNS)].drop_duplicates()
    if len(kinds) > 1:
        varying = [c for c in PROTOCOL_COLUMNS if kinds[c].nunique() > 1]
        default = default_protocol()
        is_default = np.logical_and.reduce([(df[c] == default[c]).to_numpy() for c in varying])
        if not (keep & is_default).any():
            listed = "; ".join(protocol_text(row) for _, row in kinds.iterrows())
            flags = ", ".join(PROTOCOL_FLAGS[c] for c in varying)
            raise UFSBenchError(f"the records hold {len(kinds)} evaluation protocols ({listed}), "
                                f"none with the default {', '.join(varying)}; pick one with "
                                f"{flags}")
        keep &= is_default
    chosen, left = df[keep], df[~keep]
    if left.empty:
        return chosen, ""
    others = left[list(PROTOCOL_COLUMNS)].value_counts()
    listed = "; ".join(f"{n} with {protocol_text(dict(zip(PROTOCOL_COLUMNS, key)))}"
                       for key, n in others.items())
    shown = f"; shown: {protocol_text(chosen.iloc[0])}" if len(chosen) else ""
    return chosen, f"{len(left)} record(s) of other evaluation protocols left out ({listed}){shown}"
