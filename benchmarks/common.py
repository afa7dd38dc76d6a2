"""Shared pieces of the benchmark scripts: machine line, typical settings, measured fits, tables.

Timing and memory come from one fit: wall time by ``time.perf_counter`` and the peak of memory
allocated through Python/NumPy during the fit by ``tracemalloc`` (BLAS/LAPACK workspace outside
NumPy arrays is not seen; every d x d or n x n array is). tracemalloc slows pure-Python
allocation a little; the fits here spend their time in BLAS, where it costs nothing measurable.
A fit that runs past its time budget is stopped by SIGALRM (checked between BLAS calls) and
reported as ``> budget``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import platform
import signal
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "src") not in sys.path:  # `python benchmarks/x.py` from a clone without install
    sys.path.insert(0, str(REPO / "src"))

from ufsbench.methods.base import available_methods, make_selector, selector_class  # noqa: E402
from ufsbench.report import method_config  # noqa: E402
from ufsbench.testing import data_dir  # noqa: E402

MB = 1024.0 ** 2


class FitTimeout(Exception):
    """A fit ran past its time budget."""


@dataclass
class Measurement:
    """One measured fit: seconds (None = over budget), peak MB, the fitted selector or None."""

    seconds: float | None
    peak_mb: float
    selector: object = None
    budget: float | None = None

    def time_text(self) -> str:
        return f"> {self.budget:.0f}" if self.seconds is None else f"{self.seconds:.3f}"


def machine_line() -> str:
    """One line naming the machine, the libraries, the thread settings and the current load."""
    import scipy
    import sklearn

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.platform()} | {platform.processor() or platform.machine()} | "
            f"cpus={os.cpu_count()} | python {platform.python_version()} | numpy {np.__version__} "
            f"| scipy {scipy.__version__} | scikit-learn {sklearn.__version__} | "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')} | "
            f"load average {load:.2f} | {_dt.datetime.now().isoformat(timespec='minutes')}")


def benchmark_methods(selected: list[str] | None = None) -> list[str]:
    """Every registered selector except "allfeatures" (nothing to fit), or the selected ones."""
    known = [m for m in available_methods() if m != "allfeatures"]
    if not selected:
        return known
    unknown = sorted(set(selected) - set(known))
    if unknown:
        raise SystemExit(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return list(selected)


def typical_setting(method: str) -> dict:
    """The method's fixed ``params`` plus its label-free ``default``: one typical grid point."""
    cfg = method_config(method)
    return dict(cfg.get("params") or {}, **(cfg.get("default") or {}))


def grid_size(method: str) -> int:
    """How many parameter settings one sweep of the method fits (its grid + the default)."""
    from ufsbench.runner import expand_grid

    return len(expand_grid(method_config(method)))


def is_subset_method(method: str) -> bool:
    return selector_class(method).selection_kind == "subset"


def refits_per_setting(method: str, n_counts: int) -> int:
    """Fits a sweep makes per setting: one per count for a subset method, unless one fit serves
    every count (``one_fit_serves_counts``, e.g. MCFS), then one, as for ranking methods."""
    cls = selector_class(method)
    return n_counts if is_subset_method(method) and not cls.one_fit_serves_counts else 1


@contextlib.contextmanager
def time_budget(seconds: float | None):
    """Raise FitTimeout in the block after ``seconds`` (main thread only; None = no limit)."""
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(_signum, _frame):
        raise FitTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def measure(func, budget: float | None = None) -> Measurement:
    """Run ``func()`` once under tracemalloc and a time budget: seconds, peak MB, its result."""
    tracemalloc.start()
    start = time.perf_counter()
    result, seconds = None, None
    try:
        with time_budget(budget):
            result = func()
        seconds = time.perf_counter() - start
    except FitTimeout:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1] / MB
        tracemalloc.stop()
    return Measurement(seconds, peak, result, budget)


def measure_fit(method: str, X: np.ndarray, n_clusters: int, n_features: int,
                budget: float | None = None, **overrides) -> Measurement:
    """Fit ``method`` at its typical setting (plus overrides) on X, seeded, measured."""
    params = dict(typical_setting(method), **overrides)
    selector = make_selector(method, n_features_to_select=min(n_features, X.shape[1]),
                             n_clusters=n_clusters, random_state=0, **params)
    return measure(lambda: selector.fit(X), budget)


def jaccard(a, b) -> float:
    """|A & B| / |A | B| of two index sets (1.0 for two empty sets)."""
    a, b = set(map(int, a)), set(map(int, b))
    return len(a & b) / len(a | b) if a | b else 1.0


def fitted_exponent(sizes, seconds, floor: float = 0.02) -> float:
    """Slope of log(time) against log(size) over the points above ``floor`` seconds (NaN if < 2).

    Points faster than the floor are dominated by fixed overhead and would flatten the slope.
    """
    pairs = [(s, t) for s, t in zip(sizes, seconds) if t is not None and t >= floor]
    if len(pairs) < 2:
        return float("nan")
    x, y = np.log([p[0] for p in pairs]), np.log([p[1] for p in pairs])
    return float(np.polyfit(x, y, 1)[0])


def print_row(header: list[str], row: dict) -> None:
    """One Markdown table row, printed at once (long benchmarks show progress as they go)."""
    print("| " + " | ".join(str(row[h]) for h in header) + " |", flush=True)


def rows_table(header: list[str], rows: list[dict]) -> str:
    """A Markdown table of row dicts, in header order."""
    return markdown_table(header, [[r[h] for h in header] for r in rows])


def print_preamble(header: list[str]) -> None:
    """The machine line and an empty table header, before rows are printed one by one."""
    print(f"# {machine_line()}")
    print(markdown_table(header, []))


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A GitHub markdown table (numbers already formatted by the caller)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def load_bench_data(spec: str):
    """A data set by spec: ``name`` (registry), ``name:N`` (a seeded subsample of N samples),
    ``name:dD`` (a seeded subset of D feature columns) or ``synthetic:NxD`` (seeded Gaussian
    clusters, 5 classes). Returns (label, X, y, n_classes)."""
    from ufsbench.datasets import load_dataset, make_synthetic

    name, _, size = spec.partition(":")
    if name == "synthetic":
        n, d = (int(v) for v in (size or "200x500").lower().split("x"))
        data = make_synthetic(n_samples=n, n_features=d, n_informative=10, n_clusters=5,
                              random_state=0)
        return f"synthetic {n}x{d}", data.X, data.y, data.n_classes
    data = load_dataset(name, data_dir=data_dir(), download=False)
    X, y = data.X, data.y
    rng = np.random.default_rng(0)
    if size.startswith("d") and int(size[1:]) < X.shape[1]:
        X = X[:, np.sort(rng.choice(X.shape[1], int(size[1:]), replace=False))]
    elif size and not size.startswith("d") and int(size) < X.shape[0]:
        keep = np.sort(rng.choice(X.shape[0], int(size), replace=False))
        X, y = X[keep], y[keep]
    return f"{name} {X.shape[0]}x{X.shape[1]}", X, y, int(np.unique(y).size)


def feature_count_grid(spec: str) -> list[int]:
    """The data set's registry feature counts (the grid a sweep evaluates)."""
    from ufsbench.datasets import dataset_entry

    name = spec.partition(":")[0]
    if name == "synthetic":
        return [50, 100, 150, 200, 250, 300]
    return list(dataset_entry(name).get("feature_counts") or [50, 100, 150, 200, 250, 300])


# Importing every method module (the registry's discovery, ~1 s) is not part of any fit's cost.
available_methods()
