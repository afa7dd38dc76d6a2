"""Add rows to committed reports without the full store: ``python -m ufsbench.reproduce.baseline_rows``.

A full regeneration of ``results/reproduction/`` needs the reference run's store (hours of fits).
Rows whose sweeps are cheap -- the ``random`` and ``variance`` baselines (K-means on their subsets
only), a method's ``released`` rows, a method rerun after a revision -- can be computed into a
store of their own and laid into the committed reports instead: every other cell is read back
from the committed ``<paper>.csv`` (the tidy cells the reference run wrote, to two decimals), the
named rows (``--rows``, or every row of ``--methods``) are computed from the store with the same
rules (:func:`ufsbench.reproduce.rules.compare`), the "not better than random" marks are set
again over all cells (:func:`ufsbench.reproduce.rules.mark_chance_level`), and every report file
is written anew (``.md``, ``.tex``, ``.csv``, SOGFS's figure, ``cells.csv``, ``overview.md``). The
header keeps the reference run's lines and says which rows were added, when, from which commit
and by which command. A two-decimal value on a rounding boundary (3.95) is moved by less than
0.005 to the side the committed report displayed (:func:`keep_rounding`), so the re-rendered
report shows the numbers the reference run's report showed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path

import pandas as pd

from ufsbench.errors import UFSBenchError
from ufsbench.reproduce.diagnosis import note_failures
from ufsbench.reproduce.experiments import (
    PAPERS,
    default_out_dir,
    load_experiment,
    load_published,
    report_protocol,
)
from ufsbench.reproduce.render import REFERENCE_RUNS, write_outputs
from ufsbench.reproduce.rules import (
    CELL_COLUMNS,
    chance_row,
    compare,
    mark_chance_level,
    table_entries,
)

#: The rows this module adds by default: the baselines that cost no fit.
BASELINE_METHODS = ("random", "variance")


def committed_cells(out_dir: Path, name: str) -> pd.DataFrame:
    """The cells of a committed ``<name>.csv`` with the column types :func:`compare` gives."""
    path = Path(out_dir) / f"{name}.csv"
    if not path.is_file():
        raise UFSBenchError(f"no committed report cells at {path}; run make reproduce-tables "
                            f"(or give --out-dir where the reports are)")
    cells = pd.read_csv(path, keep_default_na=True)
    for column in ("reason", "ours_params", "status"):
        cells[column] = cells[column].astype(object).fillna("")
    for column in ("reconstructed", "published_uncertain"):
        cells[column] = cells[column].astype(str).str.lower().eq("true")
    cells["n_settings"] = pd.to_numeric(cells["n_settings"]).round().astype("Int64")
    return cells[CELL_COLUMNS]


def committed_header(md_path: Path) -> dict:
    """The ``- key: value`` lines at the top of a committed report, in order."""
    header = {}
    for line in Path(md_path).read_text().splitlines()[2:]:
        if not line.startswith("- "):
            break
        key, _, value = line[2:].partition(": ")
        header[key] = value
    return header


#: Report columns whose one-decimal display :func:`keep_rounding` takes from the committed
#: report, and the cell columns (mean, std) each shows.
DISPLAYED = {"ours (papers' rule)": ("ours_mean", "ours_std"), "Δ": ("difference", None),
             "label-free": ("label_free_mean", "label_free_std"),
             "split": ("split_mean", "split_std")}


def displayed_cells(md_path: Path) -> dict:
    """{(table, dataset, row label): {column: text}} of the per-data-set tables of a report."""
    import re

    shown, table, dataset, header = {}, None, None, None
    for line in Path(md_path).read_text().splitlines():
        if line.startswith("## "):
            match = re.match(r"## (.+) \((?:ACC|NMI) %\)$", line)
            table, dataset = (match.group(1) if match else None), None
        elif line.startswith("### "):
            dataset, header = line[4:].strip(), None
        elif table and dataset and line.startswith("|"):
            parts = [p.strip() for p in line.strip().strip("|").split("|")]
            if header is None:
                header = parts
            elif not set(parts[0]) <= set("-:"):
                shown[(table, dataset, parts[0])] = dict(zip(header, parts))
    return shown


def _shown_numbers(text: str) -> tuple[float | None, float | None]:
    """(value, spread) of a displayed cell such as ``70.5±3.9 (300)``, ``+0.8`` or ``—``."""
    import re

    match = re.match(r"^([+-]?\d+(?:\.\d+)?)(?:±(\d+(?:\.\d+)?))?", text or "")
    if not match:
        return None, None
    return float(match.group(1)), (float(match.group(2)) if match.group(2) else None)


def _within(value: float, shown: float | None) -> float:
    """value moved into the one-decimal rounding interval of ``shown`` when it lies within
    rounding of it: both are roundings of one number, so their intervals meet."""
    if shown is None or pd.isna(value) or round(value, 1) == shown or abs(value - shown) > 0.0501:
        return value
    return min(max(value, shown - 0.0499), shown + 0.0499)


def keep_rounding(cells: pd.DataFrame, md_path: Path) -> pd.DataFrame:
    """The cells with each two-decimal value that lies on a rounding boundary (e.g. 3.95) moved,
    by less than 0.005, to the side the committed report's one-decimal display shows (3.9
    from 3.9467): the report re-rendered from the cells then shows the numbers it showed."""
    from ufsbench.reproduce.render import _method_label, _own_labels_rows

    if not Path(md_path).is_file():
        return cells
    shown = displayed_cells(md_path)
    cells = cells.copy()
    own = _own_labels_rows(cells)
    for i, cell in cells.iterrows():
        row = shown.get((cell["table"], cell["dataset"], _method_label(cell, own)))
        if row is None:
            continue
        for column, (mean_col, std_col) in DISPLAYED.items():
            value, spread = _shown_numbers(row.get(column, ""))
            cells.at[i, mean_col] = _within(cell[mean_col], value)
            if std_col:
                cells.at[i, std_col] = _within(cell[std_col], spread)
    return cells


def chosen_rows(exp: dict, methods=(), rows=()) -> list[dict]:
    """The experiment's rows named by id in ``rows`` or whose method is in ``methods``."""
    return [r for r in exp["rows"] if r["row"] in rows or r["method"] in methods]


def _row_ids(exp: dict, methods=(), rows=()) -> list[str]:
    return [r["row"] for r in chosen_rows(exp, methods, rows)]


def _ordered(exp: dict, cells: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Cells in the order :func:`compare` lists them (table, data set, row), scorings kept."""
    order: dict[tuple[str, str, str], int] = {}
    for i, entry in enumerate(table_entries(exp, published)):
        order.setdefault((entry["table"], entry["dataset"], entry["row"]["row"]), i)
    position = [order.get(key, len(order)) for key in
                zip(cells["table"], cells["dataset"], cells["method"])]
    return cells.assign(_order=position).sort_values("_order", kind="stable") \
        .drop(columns="_order").reset_index(drop=True)


def new_row_cells(exp: dict, df: pd.DataFrame, methods, failures: pd.DataFrame,
                  data_dir=None, row_ids=()) -> pd.DataFrame:
    """The cells of the rows of ``methods`` (and ``row_ids``), from the store's records ``df``."""
    rows = chosen_rows(exp, methods, row_ids)
    if not rows:
        return pd.DataFrame(columns=CELL_COLUMNS)
    sub = {**exp, "rows": rows, "all_published_cells": False}
    return note_failures(sub, compare(sub, df, data_dir=data_dir), failures)


def _figure(exp: dict, out_dir: Path, df: pd.DataFrame, methods, data_dir,
            row_ids=()) -> pd.DataFrame | None:
    """The committed figure table with the rows of ``methods`` (and ``row_ids``) recomputed."""
    from ufsbench.reproduce.render import figure_table

    path = out_dir / f"{exp['name']}_figure1.csv"
    if not exp.get("figure") or not path.is_file():
        return None
    kept = pd.read_csv(path)
    ids = _row_ids(exp, methods, row_ids)
    kept = kept[~kept["method"].str.split(" ").str[0].isin(ids)]
    rows = chosen_rows(exp, methods, row_ids)
    new = figure_table({**exp, "rows": rows}, df, 1, data_dir) if rows and len(df) else None
    figure = pd.concat([kept, new]) if new is not None and len(new) else kept
    datasets = list(exp["datasets"])
    rank = {r["row"]: i for i, r in enumerate(exp["rows"])}
    key = [(datasets.index(d), rank.get(m.split(" ")[0], len(rank)))
           for d, m in zip(figure["dataset"], figure["method"])]
    figure = figure.assign(_key=key).sort_values("_key", kind="stable").drop(columns="_key")
    return figure.reset_index(drop=True)


def _provenance(records: pd.DataFrame) -> str:
    """When, at which commit(s) and with which BLAS kernels the records were written (from
    their files)."""
    import json
    import os

    if records.empty:
        return "no records in the store"
    commits, kernels, times = set(), set(), []
    for path in records["path"]:
        with open(path) as fh:
            env = json.load(fh).get("env") or {}
        commits.add((env.get("git_commit") or "unknown")[:7])
        kernels.add(f"{env.get('blas') or 'BLAS unknown'}; {env.get('blas_threads') or '?'} "
                    f"thread(s) per fit")
        times.append(os.path.getmtime(path))
    first, last = (_dt.datetime.fromtimestamp(t, _dt.UTC).strftime("%Y-%m-%d %H:%M")
                   for t in (min(times), max(times)))
    return (f"{len(records)} records written from {first} to {last} UTC at commit "
            f"{', '.join(sorted(commits))} ({' | '.join(sorted(kernels))})")


def add_rows(names, results_dir, out_dir=None, methods=BASELINE_METHODS, data_dir=None,
             command: str = "", log=print, row_ids=()) -> list[Path]:
    """Lay the rows of ``methods`` and the rows named in ``row_ids`` (computed from the store at
    ``results_dir``) into the committed reports of the experiments ``names`` in ``out_dir``;
    returns the files written. An experiment with none of those rows is left as it is."""
    from ufsbench.records import load_failures, load_results, one_protocol
    from ufsbench.runner import environment

    out_dir = Path(out_dir or default_out_dir())
    df = load_results(results_dir)
    failures = load_failures(results_dir)
    written = []
    for name in names:
        exp = load_experiment(name)
        ids = _row_ids(exp, methods, row_ids)
        if not ids:
            continue
        row_methods = {r["method"] for r in chosen_rows(exp, methods, row_ids)}
        chance = chance_row(exp)         # its records give its spread under a best-of-5 summary
        row_methods |= {chance["method"]} if chance else set()
        part = df[df["method"].isin(row_methods) & df["dataset"].isin(exp["datasets"].values())
                  & ~df["stale"]] if len(df) else df
        if len(part):
            part, _ = one_protocol(part, report_protocol(exp))
        published = load_published(exp["published"])
        kept = committed_cells(out_dir, name)
        kept = keep_rounding(kept[~kept["method"].isin(ids)], out_dir / f"{name}.md")
        new = new_row_cells(exp, part, methods, failures, data_dir, row_ids)
        cells = mark_chance_level(exp, _ordered(exp, pd.concat([kept, new]), published), part)
        header = committed_header(out_dir / f"{name}.md")
        header.setdefault("reference runs", REFERENCE_RUNS)
        header = _add_header_line(header, "rows added since", (
            f"{', '.join(ids)}: {_provenance(part)}; laid in on "
            f"{_dt.datetime.now().isoformat(timespec='seconds')} at commit "
            f"{environment().get('git_commit') or 'unknown'} by "
            f"`{command or '(library call)'}`; "
            f"every other cell is the run above, read back from {name}.csv (two decimals)"))
        written += write_outputs(exp, cells, out_dir, header, 1,
                                 _figure(exp, out_dir, part, methods, data_dir, row_ids))
        log(f"{exp['paper']}: wrote {out_dir / name}.md with {len(new)} new cells")
    return written


def _add_header_line(header: dict, key: str, text: str) -> dict:
    """The header with one more ``key`` line: the first keeps ``key``, later ones are numbered
    (``key (2)``), so that every laying-in stays on record."""
    n, name = 1, key
    while name in header:
        n += 1
        name = f"{key} ({n})"
    return {**header, name: text}


def main(argv=None) -> int:
    """``python -m ufsbench.reproduce.baseline_rows --results-dir STORE [--paper all]``."""
    import shlex

    parser = argparse.ArgumentParser(
        prog="python -m ufsbench.reproduce.baseline_rows",
        description="Add the baseline rows (random, variance) computed in a store to the "
                    "committed reports; every other cell is read back from <paper>.csv. First "
                    "run their sweeps, e.g. python scripts/reproduce_tables.py --paper all "
                    "--methods random variance --results-dir STORE --out-dir /tmp/scratch")
    parser.add_argument("--results-dir", required=True, help="the store holding their records")
    parser.add_argument("--paper", default="all", help=f"{', '.join(PAPERS)} or all")
    parser.add_argument("--out-dir", default=None, help="the reports (default: "
                                                        "results/reproduction)")
    parser.add_argument("--methods", nargs="+", default=None,
                        help="every row of these methods (default: random variance, unless "
                             "--rows is given)")
    parser.add_argument("--rows", nargs="+", default=[],
                        help="these rows by id (e.g. ufsol_released), beside --methods")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    names = list(PAPERS) if args.paper == "all" else [args.paper]
    command = "python -m ufsbench.reproduce.baseline_rows " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    try:
        if any(n not in PAPERS and n != "quick" for n in names):
            raise UFSBenchError(f"unknown paper {args.paper!r}; use one of "
                                f"{', '.join(PAPERS)} or all")
        known = {r["row"] for n in names for r in load_experiment(n)["rows"]}
        unknown = [r for r in args.rows if r not in known]
        if unknown:
            raise UFSBenchError(f"row(s) {', '.join(unknown)} are not in the experiments "
                                f"({', '.join(names)}); their rows: {', '.join(sorted(known))}")
        methods = args.methods if args.methods is not None else \
            ([] if args.rows else list(BASELINE_METHODS))
        add_rows(names, args.results_dir, args.out_dir, tuple(methods), args.data_dir,
                 command, log=lambda msg: print(msg, file=sys.stderr), row_ids=tuple(args.rows))
    except UFSBenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
