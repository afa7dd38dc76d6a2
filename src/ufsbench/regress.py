"""``ufsbench regress``: the nightly regression check, and ``--smoke-all``, the extreme-value smoke run.

Regression: every registered method, at its label-free default parameters, is rerun on a fixed, fast
subset -- ``synthetic`` (300 x 100, counts 5 and 20) and ``digits_regress`` (the first 30 digits of
each class without its 9 all-zero pixel columns, 300 x 55, counts 10 and 30) -- with 3 seeded
K-means runs, through the normal runner into a temporary store. The result is compared with the
stored reference (``results/reference/regression.csv``):

* the selected feature indices must be equal exactly (every selector is deterministic for a fixed
  ``random_state``; the selector contract tests hold each method to that);
* the mean ACC and mean NMI over the runs may move by at most ``--tol`` (default 0.01 absolute,
  on the 0..1 scale): with equal selections and seeded K-means they are normally identical, the
  tolerance absorbs BLAS/platform rounding in K-means.

A row missing now, a method that raises, a changed selection or a score beyond the tolerance is a
regression: the diff table is printed and the exit code is 1. New rows (a method added since the
reference) are listed but are not regressions. ``--update`` rewrites the reference.

Smoke: ``--smoke-all`` fits every method on every data set present at the extreme values of its
grid and checks each fit at the extreme feature counts (``ufsbench.smoke``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ufsbench.errors import UFSBenchError
from ufsbench.smoke import SMOKE_MAX_ITER, SMOKE_MAX_SAMPLES

#: The fixed subset: data set -> feature counts.
REGRESSION_COUNTS = {"synthetic": [5, 20], "digits_regress": [10, 30]}
REGRESSION_RUNS = 3
REGRESSION_SEED = 0
DEFAULT_TOL = 0.01
DIGITS_PER_CLASS = 30
KEY_COLUMNS = ["dataset", "method", "n_features", "scoring"]
REFERENCE_FILE = "regression.csv"


def default_reference_dir() -> Path:
    """``results/reference`` of the repository."""
    from ufsbench.paths import repository_dir

    return repository_dir() / "results" / "reference"


# -- the fixed subset ------------------------------------------------------------------------
def regression_dataset(name: str):
    """The regression data sets: synthetic as registered, digits cut to 30 samples per class."""
    from ufsbench.datasets import Dataset, load_dataset

    if name == "synthetic":
        return load_dataset("synthetic")
    if name == "digits_regress":
        digits = load_dataset("digits")
        keep = np.sort(np.concatenate([np.flatnonzero(digits.y == c)[:DIGITS_PER_CLASS]
                                       for c in np.unique(digits.y)]))
        X = digits.X[keep]
        varying = X.var(axis=0) > 0  # the 9 all-zero border pixels carry nothing (DGUFS refuses)
        return Dataset("digits_regress", X[:, varying], digits.y[keep],
                       checksum=f"{digits.checksum}|first_per_class={DIGITS_PER_CLASS}"
                                f"|varying_columns")
    raise UFSBenchError(f"unknown regression data set {name!r}; use {', '.join(REGRESSION_COUNTS)}")


def default_setting_config(name: str) -> dict:
    """A method config holding only its label-free default setting (fixed params + default)."""
    from ufsbench.report import method_config

    cfg = method_config(name)
    setting = dict(cfg.get("params") or {}, **(cfg.get("default") or {}))
    return {"name": name, "params": setting, "grid": {}, "default": {}}


def run_regression(methods: list[str], results_dir: Path, progress: bool = True) -> pd.DataFrame:
    """Run the fixed subset; one row per (dataset, method, count, scoring), or an error row."""
    from ufsbench.results import ResultStore
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    protocol = EvaluationProtocol(n_runs=REGRESSION_RUNS)
    rows = []
    for ds_name, counts in REGRESSION_COUNTS.items():
        data = regression_dataset(ds_name)
        for method in methods:
            start = time.perf_counter()
            try:
                tasks = plan_tasks(data, default_setting_config(method), counts, protocol,
                                   REGRESSION_SEED, results_dir)
                run_sweep(data, tasks, n_jobs=1, progress=False)
                status = "ok"
            except Exception as exc:  # noqa: BLE001 - a crashing method is a regression to report
                status = f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                rows.append({"dataset": ds_name, "method": method, "n_features": -1,
                             "scoring": "kmeans", "error": status})
            if progress:
                print(f"  {ds_name:15s} {method:14s} {time.perf_counter() - start:6.1f}s {status}",
                      file=sys.stderr)
    for rec in ResultStore(results_dir).iter_records():
        key = rec["key"]
        norm = key["evaluation"]["nmi"]
        rows.append({"dataset": key["dataset"], "method": key["method"],
                     "n_features": int(key["n_features"]), "scoring": key["scoring"],
                     "acc_mean": float(np.mean(rec["acc"])),
                     "nmi_mean": float(np.mean(rec["nmi"][norm])),
                     "selected": " ".join(str(int(i)) for i in rec["selected"]), "error": ""})
    df = pd.DataFrame(rows, columns=KEY_COLUMNS + ["acc_mean", "nmi_mean", "selected", "error"])
    return df.sort_values(KEY_COLUMNS, kind="stable").reset_index(drop=True)


# -- reference -------------------------------------------------------------------------------
def write_reference(df: pd.DataFrame, reference_dir: Path) -> Path:
    """The reference: the regression rows (no error rows) as CSV, plus meta.json saying how."""
    from ufsbench.runner import environment

    errors = df[df["error"] != ""]
    if not errors.empty:
        raise UFSBenchError(f"not writing a reference while {len(errors)} method run(s) fail "
                            f"({', '.join(sorted(set(errors['method'])))}); fix them or leave "
                            f"them out with --methods")
    reference_dir.mkdir(parents=True, exist_ok=True)
    path = reference_dir / REFERENCE_FILE
    df.drop(columns=["error"]).to_csv(path, index=False, float_format="%.6f")
    env = environment()
    meta = {"counts": REGRESSION_COUNTS, "n_runs": REGRESSION_RUNS, "seed": REGRESSION_SEED,
            "digits_per_class": DIGITS_PER_CLASS, "methods": sorted(set(df["method"])),
            "git_commit": env["git_commit"],
            "versions": {k: env[k] for k in ("numpy", "scipy", "sklearn", "python")}}
    (reference_dir / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return path


def with_other_methods(current: pd.DataFrame, reference: pd.DataFrame,
                       methods: list[str]) -> pd.DataFrame:
    """``current`` plus the reference rows of the methods not rerun (``--update --methods``
    replaces those methods' rows only)."""
    kept = reference[~reference["method"].isin(methods)].assign(error="")
    merged = pd.concat([kept, current], ignore_index=True)
    return merged.sort_values(KEY_COLUMNS, kind="stable").reset_index(drop=True)


def read_reference(reference_dir: Path) -> pd.DataFrame:
    path = reference_dir / REFERENCE_FILE
    if not path.is_file():
        raise UFSBenchError(f"no regression reference at {path}; create it with "
                            f"`ufsbench regress --update`")
    ref = pd.read_csv(path, dtype={"selected": str}, keep_default_na=False)
    missing = set(KEY_COLUMNS + ["acc_mean", "nmi_mean", "selected"]) - set(ref.columns)
    if missing:
        raise UFSBenchError(f"{path} lacks column(s) {', '.join(sorted(missing))}; regenerate it "
                            f"with `ufsbench regress --update`")
    return ref


# -- comparison ------------------------------------------------------------------------------
def compare(current: pd.DataFrame, reference: pd.DataFrame, tol: float = DEFAULT_TOL,
            methods: list[str] | None = None) -> pd.DataFrame:
    """One row per key with ``status``: ok, new, missing, error, selection changed, ACC/NMI moved.

    Reference rows of methods outside ``methods`` (when given) are not compared.
    """
    if methods is not None:
        reference = reference[reference["method"].isin(methods)]
    errors = current[current["error"] != ""]
    current = current[current["error"] == ""]
    merged = current.merge(reference, on=KEY_COLUMNS, how="outer", suffixes=("", "_ref"),
                           indicator=True)
    failed = set(zip(errors["dataset"], errors["method"]))
    rows = []
    for _, r in merged.iterrows():
        row = {k: r[k] for k in KEY_COLUMNS}
        row.update(acc=r["acc_mean"], acc_ref=r["acc_mean_ref"], nmi=r["nmi_mean"],
                   nmi_ref=r["nmi_mean_ref"], status=_status(r, tol, failed))
        rows.append(row)
    for _, e in errors.iterrows():
        rows.append({**{k: e[k] for k in KEY_COLUMNS}, "status": e["error"]})
    out = pd.DataFrame(rows, columns=KEY_COLUMNS + ["acc", "acc_ref", "nmi", "nmi_ref", "status"])
    return out.sort_values(KEY_COLUMNS, kind="stable").reset_index(drop=True)


def _status(r, tol: float, failed: set) -> str:
    if r["_merge"] == "left_only":
        return "new"
    if r["_merge"] == "right_only":
        return "failed" if (r["dataset"], r["method"]) in failed else "missing"
    problems = []
    if str(r["selected"]) != str(r["selected_ref"]):
        problems.append("selection changed")
    for metric in ("acc", "nmi"):
        # The reference stores 6 decimals: half a unit of the last one is rounding, not a change.
        if abs(float(r[f"{metric}_mean"]) - float(r[f"{metric}_mean_ref"])) > tol + 5e-7:
            problems.append(f"{metric.upper()} moved")
    return ", ".join(problems) or "ok"


def is_regression(status: str) -> bool:
    return status not in ("ok", "new")


def diff_table(comparison: pd.DataFrame, fmt: str = "simple") -> str:
    from tabulate import tabulate

    return tabulate(comparison, headers="keys", tablefmt=fmt, showindex=False, floatfmt=".4f",
                    missingval="-")


# -- command line ----------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    from ufsbench.cli.common import CommandParser

    parser = CommandParser(
        prog="ufsbench regress",
        description="rerun the fixed regression subset (every method at its default setting on "
                    "synthetic and digits_regress, 3 K-means runs) and compare with the stored "
                    "reference; exit 1 on a regression")
    parser.add_argument("--reference", type=Path, help="reference directory (default: the "
                                                       "repository's results/reference)")
    parser.add_argument("--update", action="store_true", help="rewrite the reference from this run")
    parser.add_argument("--methods", nargs="*", help="only these methods (default: all available)")
    parser.add_argument("--tol", type=float, default=DEFAULT_TOL,
                        help=f"allowed |change| of mean ACC and NMI (default {DEFAULT_TOL})")
    parser.add_argument("--report", type=Path, help="also write the comparison (or, with "
                                                    "--smoke-all, the outcome table) as markdown")
    parser.add_argument("--smoke-all", action="store_true",
                        help="instead: every method on every data set present at its grid's "
                             "extreme values and extreme feature counts")
    parser.add_argument("--datasets", nargs="*", help="--smoke-all: only these data sets")
    parser.add_argument("--data-dir", help="--smoke-all: data directory")
    parser.add_argument("--n-jobs", type=int, default=1,
                        help="--smoke-all: parallel fits (-1 = one per core; each with one BLAS "
                             "thread)")
    parser.add_argument("--max-iter", type=int, default=SMOKE_MAX_ITER,
                        help=f"--smoke-all: at most this many outer iterations a fit (default "
                             f"{SMOKE_MAX_ITER}; 0: every fit to its own stop, hours on wide data)")
    parser.add_argument("--max-samples", type=int, default=SMOKE_MAX_SAMPLES,
                        help=f"--smoke-all: cut larger data sets to a seeded subsample of this "
                             f"many samples (default {SMOKE_MAX_SAMPLES}; 0: every sample)")
    parser.add_argument("--quiet", action="store_true", help="no per-method progress lines")
    return parser


def _check_methods(names: list[str] | None) -> list[str]:
    from ufsbench.methods import available_methods

    known = available_methods()
    unknown = sorted(set(names or []) - set(known))
    if unknown:
        raise UFSBenchError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return list(names) if names else known


def _report_dir(path: Path) -> None:
    """Make the directory of the ``--report`` path; a path that cannot have one is refused in
    one line (before any fit, when called first)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UFSBenchError(f"cannot write the report to {path} ({exc.strerror or exc}); "
                            f"choose a writable --report path") from None


def _write_report(path: Path, title: str, table: str, quiet: bool = False) -> None:
    _report_dir(path)
    # Whole or not at all: a second Ctrl-C while writing must not leave half a report.
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(f"# {title}\n\n{table}\n")
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UFSBenchError(f"cannot write the report to {path} ({exc.strerror or exc}); "
                            f"choose a writable --report path") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if not quiet:
        print(f"wrote {path}", file=sys.stderr)


def cli_main(args: list[str]) -> None:
    """Entry point of ``ufsbench regress`` (exit 0: no regression, 1: regression, 2: bad input)."""
    opts = _parser().parse_args(args)
    if opts.report:
        _report_dir(opts.report)
    if opts.smoke_all:
        from ufsbench.smoke import smoke_main

        opts.methods = _check_methods(opts.methods)
        if opts.n_jobs == 0 or opts.n_jobs < -1:
            raise UFSBenchError(f"--n-jobs {opts.n_jobs} must be a positive number of workers "
                                f"or -1 (one per core)")
        if opts.max_iter < 0:
            raise UFSBenchError(f"--max-iter {opts.max_iter} must be >= 0 (0: every fit to its "
                                f"own stop)")
        if opts.max_samples < 0:
            raise UFSBenchError(f"--max-samples {opts.max_samples} must be >= 0 (0: every "
                                f"sample)")
        return smoke_main(opts, _write_report)
    if opts.tol < 0:
        raise UFSBenchError(f"--tol {opts.tol} must be >= 0")
    methods = _check_methods(opts.methods)
    reference_dir = opts.reference or default_reference_dir()
    reference = None if opts.update else read_reference(reference_dir)
    with tempfile.TemporaryDirectory(prefix="ufsbench-regress-") as tmp:
        current = run_regression(methods, Path(tmp), progress=not opts.quiet)
    if opts.update:
        if opts.methods and (reference_dir / REFERENCE_FILE).is_file():
            current = with_other_methods(current, read_reference(reference_dir), methods)
        path = write_reference(current, reference_dir)
        print(f"wrote {path} ({len(current)} rows, {len(methods)} method(s) rerun)")
        return
    comparison = compare(current, reference, opts.tol, methods=methods)
    regressions = comparison[comparison["status"].map(is_regression)]
    new = comparison[comparison["status"] == "new"]
    shown = comparison[comparison["status"] != "ok"]
    if not shown.empty:
        print(diff_table(shown))
    print(f"\nregress: {len(comparison) - len(shown)} of {len(comparison)} rows match the "
          f"reference (selections exact, ACC/NMI within {opts.tol}); {len(regressions)} "
          f"regression(s), {len(new)} new row(s)")
    if opts.report:
        _write_report(opts.report, "ufsbench regress", diff_table(comparison, fmt="github"))
    if not regressions.empty:
        sys.exit(1)
