"""``ufsbench regress --smoke-all``: every method on every data set present, at its grid's extremes.

A *fit* of the smoke run is one (data set, method, grid extreme) with the feature counts it
serves: every grid list at its lowest values ("low") or at its highest ("high"), the method
config's fixed parameters kept. A fit passes when, for the data set's extreme feature counts
(its first and last), the selector returns exactly that many distinct features and no NaN
score, or when the method refuses the data before computing (``UnsupportedDataError``, e.g.
DGUFS and all-zero features: status "refused: ..."); any other exception fails it. A ranking
method (and a subset method declaring ``one_fit_serves_counts``) is fitted once, at the largest
count, and read at both; any other subset method is fitted per count.

**Iteration budget.** By default every fit runs at most ``SMOKE_MAX_ITER`` outer iterations (a
method's ``max_iter`` is lowered to it, ``min_iter`` with it): the run checks that each code
path runs on each data set's shape at the grid's extremes, not where the iterations end. The
capped fits' ``ConvergenceWarning`` is expected and not shown. ``--max-iter 0`` runs every fit
to its own stop, as the reproduction does (hours on the wide data sets: a SOGFS W-step on d =
7129 features is a dense d x d eigendecomposition). Likewise a data set of more than
``SMOKE_MAX_SAMPLES`` samples (USPS, 9298) is cut to a seeded subsample of that many, which
keeps its shape's regime (n >> d) without the methods whose every iteration is a dense n x n
eigendecomposition taking many minutes a fit; ``--max-samples 0`` uses every sample.

Fits run in ``n_jobs`` worker processes (one BLAS thread each), the most expensive data sets
first so that the last fits to finish are short ones. Ctrl-C (or any error) terminates the
workers at once, writes the report of the fits that finished, marked partial, and exits 130.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ufsbench.errors import UnsupportedDataError
from ufsbench.runner import clock_text

#: Outer iterations a smoke fit may run (``--max-iter``; 0 = each method's own ``max_iter``).
SMOKE_MAX_ITER = 2
#: Samples a smoke fit sees at most (``--max-samples``; 0 = all): a larger data set is cut to a
#: seeded subsample of this size.
SMOKE_MAX_SAMPLES = 2000

SMOKE_COLUMNS = ["dataset", "method", "grid", "setting", "n_features", "seconds", "status",
                 "warnings"]


@dataclass(frozen=True)
class SmokeFit:
    """One fit of the smoke run and the feature counts it is checked at."""

    dataset: str
    method: str
    grid: str
    setting: dict = field(hash=False)
    counts: tuple[int, ...]
    #: Expected cost, for the order and the time left only: the seconds the same fit took in
    #: the previous run (see :func:`previous_seconds`) or, on a first run, in the reference run
    #: (:data:`REFERENCE_ROWS`), else n d max(n, d) of the data set (n after the cut) scaled
    #: to seconds by the fits that have such a time.
    cost: float = field(default=0.0, compare=False)


class SmokeInterrupted(KeyboardInterrupt):
    """Ctrl-C during a smoke-all run: ``results`` holds the rows of the ``total`` fits that
    finished (a KeyboardInterrupt, so callers that only stop on Ctrl-C still do)."""

    def __init__(self, results: pd.DataFrame, total: int):
        super().__init__(f"interrupted after {len(results)} of {total} fits")
        self.results, self.total = results, total


def grid_extremes(method_cfg: dict) -> dict[str, dict]:
    """{"low": setting, "high": setting}: fixed params with every grid list at its ends.

    Numeric lists are ordered by value; other lists (e.g. weight names) keep their order.
    """
    fixed = dict(method_cfg.get("params") or {})
    low, high = dict(fixed), dict(fixed)
    for name, values in (method_cfg.get("grid") or {}).items():
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            values = sorted(values)
        low[name], high[name] = values[0], values[-1]
    return {"low": low, "high": high}


def present_datasets(data_dir=None) -> list[str]:
    """The registered data sets whose files are present and verified."""
    from ufsbench.datasets import dataset_names, dataset_status

    return [n for n in dataset_names() if dataset_status(n, data_dir)["verified"]]


def within_budget(method: str, setting: dict, max_iter: int) -> dict:
    """``setting`` with the method's ``max_iter`` lowered to ``max_iter`` (0: unchanged) and a
    ``min_iter`` above it lowered with it; methods without ``max_iter`` are unchanged."""
    from ufsbench.methods import method_parameters, selector_class

    params = method_parameters(method)
    if max_iter <= 0 or "max_iter" not in params:
        return dict(setting)
    defaults = selector_class(method)().get_params()
    capped = dict(setting, max_iter=min(int(setting.get("max_iter", defaults["max_iter"])),
                                        max_iter))
    if "min_iter" in params and int(setting.get("min_iter", defaults["min_iter"])) > max_iter:
        capped["min_iter"] = capped["max_iter"]
    return capped


def fit_key(dataset: str, method: str, grid: str, counts) -> tuple[str, str, str, str]:
    """What identifies a fit across runs (its report row's first columns)."""
    if not isinstance(counts, str):
        counts = ", ".join(map(str, counts))
    return dataset, method, grid, counts


#: Each fit's seconds in a reference run at the default budget (``make smoke-all JOBS=2`` on an
#: idle 2-core Intel Xeon, 2026-11-27, 18 data sets): what orders the fits and gives the time
#: left on a machine without a previous run. Relative costs carry over between machines far
#: better than the data's size (by which a first run read 1 min 18 s left after 2 min 12 s,
#: where 7 min 40 s were left); the time left scales them by the pace of the fits that have
#: finished. Refresh it with the dataset, method, grid, n_features and seconds columns of a
#: default run's ``results/smoke/smoke-all.csv``.
REFERENCE_ROWS = Path(__file__).with_name("smoke_reference.csv")


def reference_seconds(max_iter: int = SMOKE_MAX_ITER,
                      max_samples: int = SMOKE_MAX_SAMPLES) -> dict:
    """{fit key: seconds} of the reference run (:data:`REFERENCE_ROWS`) for the default budget;
    empty for any other (its fits are other fits)."""
    if (max_iter, max_samples) != (SMOKE_MAX_ITER, SMOKE_MAX_SAMPLES):
        return {}
    return previous_seconds(REFERENCE_ROWS)


def previous_seconds(rows_csv) -> dict:
    """{fit key: seconds} of a previous run's rows (the CSV written beside its report; empty
    when there is none or it cannot be read)."""
    try:
        old = pd.read_csv(rows_csv, dtype={"n_features": str}, keep_default_na=False)
        return {fit_key(r.dataset, r.method, r.grid, r.n_features): float(r.seconds)
                for r in old.itertuples()}
    except (OSError, ValueError, AttributeError, pd.errors.EmptyDataError):
        return {}


def smoke_fits(datasets: list[str], methods: list[str], data_dir=None,
               max_iter: int = SMOKE_MAX_ITER, max_samples: int = SMOKE_MAX_SAMPLES,
               previous: dict | None = None) -> list[SmokeFit]:
    """Every fit of a smoke-all run, most expensive first, its setting within the iteration
    budget ``max_iter`` (see the module docstring). ``previous``: {fit key: seconds} of an
    earlier run with the same budget, which orders the fits and the time left far better than
    the size of the data (SOGFS's W-step alone is O(d^3)).

    Feature counts and shapes come from the registry (the loader checks the file against them),
    so the plan, and with it the number of fits, is known before any data set is loaded.
    """
    from ufsbench.datasets import dataset_entry, load_dataset
    from ufsbench.methods import selector_class
    from ufsbench.report import method_config
    from ufsbench.runner import feature_counts_for

    fits = []
    for ds_name in datasets:
        entry = dataset_entry(ds_name)
        n, d = entry.get("n_samples"), entry.get("n_features")
        if not (n and d):
            data = load_dataset(ds_name, data_dir=data_dir, download=False)
            n, d = data.X.shape
        n = min(n, max_samples) if max_samples > 0 else n
        cost = float(n) * d * max(n, d)
        for method in methods:
            cls = selector_class(method)
            counts = feature_counts_for(entry.get("feature_counts") or [50], d,
                                        cls.selection_kind)
            extremes = tuple(sorted({counts[0], counts[-1]}))
            one_fit = cls.selection_kind != "subset" or cls.one_fit_serves_counts
            groups = [extremes] if one_fit else [(m,) for m in extremes]
            for label, setting in grid_extremes(method_config(method)).items():
                setting = within_budget(method, setting, max_iter)
                fits += [SmokeFit(ds_name, method, label, setting, group, cost)
                         for group in groups]
    fits = _with_previous_costs(fits, previous or {})
    order = sorted(range(len(fits)), key=lambda i: (-fits[i].cost, i))
    return [fits[i] for i in order]


def _with_previous_costs(fits: list[SmokeFit], previous: dict) -> list[SmokeFit]:
    """Costs in seconds: a fit's previous time, else its size cost times the seconds per size
    unit of the fits that have one (unchanged when none has)."""
    keys = [fit_key(f.dataset, f.method, f.grid, f.counts) for f in fits]
    known = [i for i, key in enumerate(keys) if key in previous]
    if not known:
        return fits
    size = sum(fits[i].cost for i in known)
    per_unit = sum(previous[keys[i]] for i in known) / size if size > 0 else 0.0
    return [replace(f, cost=previous.get(key, f.cost * per_unit)) for f, key in zip(fits, keys)]


def check_fit(method: str, setting: dict, data, counts: tuple[int, ...]) -> str:
    """'ok' or what is wrong with one fit read at each of ``counts``."""
    from sklearn.exceptions import ConvergenceWarning

    from ufsbench.methods import make_selector, selector_class

    kind = selector_class(method).selection_kind
    sel = make_selector(method, n_features_to_select=None if kind == "all" else max(counts),
                        n_clusters=data.n_classes, random_state=0, **setting)
    with warnings.catch_warnings():
        # Stopping at max_iter is an outcome of the setting (the budget's, or the method's own
        # cap), not a failure of the code path under test.
        warnings.simplefilter("ignore", ConvergenceWarning)
        sel.fit(data.X)
    for m in counts:
        top = sel.top_features(m)
        expected = data.n_features if kind == "all" else m
        if len(top) != expected or len(np.unique(top)) != expected:
            return f"m={m}: selected {len(top)} features, expected {expected}"
    scores = getattr(sel, "scores_", None)
    if scores is not None and np.any(np.isnan(scores)):
        return f"{int(np.isnan(scores).sum())} NaN score(s)"
    return "ok"


def _row(fit: SmokeFit, data) -> dict:
    """The outcome row of one fit on its loaded data set, with the kinds of the warnings the
    fit raised (e.g. degenerate scores at an extreme weight): a finding, not a failure, kept in
    the report instead of interleaved with the progress lines."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        try:
            status = check_fit(fit.method, fit.setting, data, fit.counts)
        except UnsupportedDataError as refusal:     # the model's input contract, not a failure
            status = f"refused: {str(refusal).splitlines()[0][:100]}"
        except Exception as exc:  # noqa: BLE001 - every failure is an outcome here
            status = f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
    kinds = ", ".join(sorted({w.category.__name__ for w in raised}))
    return {"dataset": fit.dataset, "method": fit.method, "grid": fit.grid,
            "setting": json.dumps(fit.setting, sort_keys=True),
            "n_features": ", ".join(map(str, fit.counts)),
            "seconds": round(time.perf_counter() - start, 2), "status": status,
            "warnings": kinds}


def within_samples(data, max_samples: int):
    """``data``, or a seeded subsample of ``max_samples`` of its samples (in their order) when
    it has more (0: never cut)."""
    from ufsbench.datasets import Dataset

    if max_samples <= 0 or data.n_samples <= max_samples:
        return data
    keep = np.sort(np.random.default_rng(0).choice(data.n_samples, max_samples, replace=False))
    return Dataset(data.name, data.X[keep], data.y[keep],
                   checksum=f"{data.checksum}|smoke_subsample={max_samples}")


class _LoadedData:
    """The data set of the latest fit, kept until a fit asks for another (one in memory)."""

    def __init__(self, data_dir, max_samples: int):
        self.data_dir, self.max_samples = data_dir, max_samples
        self.name: str | None = None
        self.data = None

    def __call__(self, name: str):
        from ufsbench.datasets import load_dataset

        if name != self.name:
            self.name, self.data = None, None
            self.data = within_samples(load_dataset(name, data_dir=self.data_dir,
                                                    download=False), self.max_samples)
            self.name = name
        return self.data


_WORKER: dict = {}
#: The thread-count variables of the BLAS and OpenMP runtimes numpy and scipy may load.
ONE_THREAD_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _start_worker(data_dir, max_samples: int) -> None:
    """Worker set-up: the parent alone handles Ctrl-C (it terminates the workers); one BLAS
    thread, since the workers share the cores. threadpoolctl limits only the libraries loaded
    when it is called, and scipy loads its own OpenBLAS on first use: the environment variables
    cover every library loaded later, the call those loaded already."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ONE_THREAD_ENV:
        os.environ[name] = "1"
    import scipy.linalg  # noqa: F401 - load scipy's BLAS now, so that the limit below holds it
    from threadpoolctl import threadpool_limits

    _WORKER["limits"] = threadpool_limits(1)
    _WORKER["data"] = _LoadedData(data_dir, max_samples)


def _fit_in_worker(task: tuple[int, SmokeFit]) -> tuple[int, dict]:
    index, fit = task
    return index, _row(fit, _WORKER["data"](fit.dataset))


def _sequential(fits: list[SmokeFit], data_dir, max_samples: int):
    loaded = _LoadedData(data_dir, max_samples)
    for index, fit in enumerate(fits):
        yield index, _row(fit, loaded(fit.dataset))


def _parallel(fits: list[SmokeFit], data_dir, max_samples: int, n_jobs: int):
    # Fresh interpreters ("spawn"): a forked child would inherit the parent's BLAS thread state.
    # terminate() on any exit path, Ctrl-C included, kills the workers in their fits instead of
    # waiting minutes for them; the pool's workers are daemons, so an interrupt while the pool
    # is still starting leaves none behind either (they are terminated at interpreter exit).
    context = multiprocessing.get_context("spawn")
    with context.Pool(n_jobs, initializer=_start_worker, initargs=(data_dir, max_samples)) as pool:
        yield from pool.imap_unordered(_fit_in_worker, enumerate(fits), chunksize=1)


def run_smoke(datasets: list[str], methods: list[str], data_dir=None, progress: bool = True,
              n_jobs: int = 1, max_iter: int = SMOKE_MAX_ITER,
              max_samples: int = SMOKE_MAX_SAMPLES, previous: dict | None = None,
              previous_source: str = "the previous run's times") -> pd.DataFrame:
    """One row per fit (see :func:`smoke_fits`), in plan order, run in ``n_jobs`` processes (1:
    in this one; -1: one per core); Ctrl-C raises :class:`SmokeInterrupted` holding the rows of
    the fits that finished. ``previous_source`` names where ``previous`` comes from in the
    header's estimate."""
    fits = smoke_fits(datasets, methods, data_dir, max_iter, max_samples, previous)
    n_jobs = multiprocessing.cpu_count() if n_jobs == -1 else n_jobs
    done: dict[int, dict] = {}
    started, total_cost, done_cost = time.perf_counter(), sum(f.cost for f in fits), 0.0
    try:  # Ctrl-C from the first line printed on is an interrupted run, not a traceback
        if progress:
            budget = f"at most {max_iter} iterations a fit" if max_iter > 0 else "full fits"
            budget += f", at most {max_samples} samples" if max_samples > 0 else ", every sample"
            timed = previous and any(fit_key(f.dataset, f.method, f.grid, f.counts) in previous
                                     for f in fits)       # else the costs are size units
            expected = (f"; about {clock_text(total_cost / n_jobs)} by {previous_source}"
                        if timed else "")
            print(f"smoke-all: {len(fits)} fits on {len(datasets)} data set(s), {budget}, "
                  f"{n_jobs} worker(s){expected}", file=sys.stderr, flush=True)
        outcomes = _sequential(fits, data_dir, max_samples) if n_jobs == 1 else \
            _parallel(fits, data_dir, max_samples, n_jobs)
        for index, row in outcomes:
            done[index] = row
            done_cost += fits[index].cost
            if progress:
                share = done_cost / total_cost if total_cost > 0 else len(done) / len(fits)
                print(f"  {_overall(len(done), len(fits), share, started)} "
                      f"{row['dataset']:12s} {row['method']:14s} {row['grid']:4s} "
                      f"m={row['n_features']:<9s} {row['seconds']:7.1f}s {row['status']}",
                      file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        raise SmokeInterrupted(_in_plan_order(done), len(fits)) from None
    return _in_plan_order(done)


def _in_plan_order(done: dict[int, dict]) -> pd.DataFrame:
    return pd.DataFrame([done[i] for i in sorted(done)], columns=SMOKE_COLUMNS)


def _overall(done: int, total: int, cost_share: float, started: float) -> str:
    """``[done/total, elapsed, ~left]``. The time left scales the elapsed time by the expected
    cost still to run (:class:`SmokeFit`): fits run most expensive first, so counting fits alone
    would overstate it."""
    elapsed = time.perf_counter() - started
    left = elapsed * (1 - cost_share) / cost_share if cost_share > 0 else 0.0
    return f"[{done}/{total} {clock_text(elapsed)} elapsed, ~{clock_text(left)} left]"


def smoke_main(opts, write_report) -> None:
    """``--smoke-all``: run, print the failures (or every row), write ``--report``; exit 1 when
    a fit fails, 130 on Ctrl-C."""
    from tabulate import tabulate

    datasets = opts.datasets or present_datasets(opts.data_dir)
    rows_csv = opts.report.with_suffix(".csv") if opts.report else None
    previous = previous_seconds(rows_csv) if rows_csv else {}
    source = "the previous run's times"
    if not previous:
        previous = reference_seconds(opts.max_iter, opts.max_samples)
        source = "the reference run's times (2-core Intel Xeon)"
    try:
        df = run_smoke(datasets, opts.methods, opts.data_dir, progress=not opts.quiet,
                       n_jobs=opts.n_jobs, max_iter=opts.max_iter, max_samples=opts.max_samples,
                       previous=previous, previous_source=source)
    except SmokeInterrupted as stop:
        _interrupted(opts, stop, write_report)
    table = tabulate(df, headers="keys", tablefmt="github", showindex=False)
    refused = df["status"].str.startswith("refused: ")
    bad = df[(df["status"] != "ok") & ~refused]
    print(tabulate(df[df["status"] != "ok"] if not bad.empty or refused.any() else df,
                   headers="keys", showindex=False))
    print(f"\nsmoke-all: {int((df['status'] == 'ok').sum())} of {len(df)} fits ok, "
          f"{int(refused.sum())} refused their data before computing (the method's input "
          f"contract), {len(bad)} failed")
    if opts.report:
        write_report(opts.report, "ufsbench smoke-all", f"{_budget_line(opts)}\n\n{table}")
        df.to_csv(rows_csv, index=False)
    if not bad.empty:
        sys.exit(1)


def _budget_line(opts) -> str:
    iterations = (f"Each fit ran at most {opts.max_iter} outer iterations (`--max-iter`; 0 runs "
                  f"every fit to its own stop)." if opts.max_iter > 0 else
                  "Every fit ran to its own stop (`--max-iter 0`).")
    samples = (f"Data sets of more than {opts.max_samples} samples were cut to a seeded "
               f"subsample of {opts.max_samples} (`--max-samples`; 0 uses every sample)."
               if opts.max_samples > 0 else "Every sample was used (`--max-samples 0`).")
    return f"{iterations} {samples}"


def _interrupted(opts, stop: SmokeInterrupted, write_report) -> None:
    """Write the report of the fits that finished, marked as partial; exit 130 (Ctrl-C)."""
    from tabulate import tabulate

    done, total = len(stop.results), stop.total
    where = "no report written (no --report)"
    if opts.report:
        ok = int((stop.results["status"] == "ok").sum())
        table = tabulate(stop.results, headers="keys", tablefmt="github", showindex=False)
        write_report(opts.report, "ufsbench smoke-all: INTERRUPTED, partial report",
                     f"**Interrupted: partial report.** {done} of {total} fits finished "
                     f"({ok} ok); the other {total - done} did not finish.\n\n"
                     f"{_budget_line(opts)}\n\n{table}", quiet=True)
        where = f"partial report in {opts.report}"
    print(f"\nufsbench: smoke-all interrupted after {done} of {total} fits; {where}",
          file=sys.stderr)
    sys.exit(130)
