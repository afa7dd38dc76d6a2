"""Every method's default fit on every paper data set: seconds, iterations and convergence.

Not an asv benchmark (asv imports this module and finds none): one table in one run, which the
status table of docs/performance.md cites. The asv suite's ``real_data.DefaultFit`` times the
same fits on three of the data sets.

The default fit is what ``ufsbench run`` uses for the label-free rule: the method config's fixed
``params`` plus its ``default`` setting, 100 features (capped at d), ``random_state=0``, the
disk cache off. One row per (data set, method): wall seconds, CPU seconds of this process, and
the fit's ``n_iter_`` / ``converged_`` where the method iterates. A fit over ``--budget`` seconds
is stopped (SIGALRM, checked between BLAS calls) and shown as "> budget". Data sets are read from
``$UFSBENCH_DATA`` (else the shared data directory beside the clone); ``name:N`` is a seeded
subsample of N samples.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_default_fits.py             # n <= 2000 sets
    python benchmarks/bench_default_fits.py --datasets usps --budget 120
    python benchmarks/bench_default_fits.py --methods sogfs scfs --datasets coil20 jaffe
    python benchmarks/bench_default_fits.py --datasets synthetic:10000x1000 synthetic:187x20000

Run it on an idle machine and set the BLAS thread count explicitly: times measured beside other
jobs are several times higher.

``--save-selections DIR`` writes each fit's support and scores to DIR; ``--compare-with DIR``
adds two columns comparing each fit with the one saved there: the top-100 Jaccard of the
supports and the largest score difference relative to the largest score ("=" when bit for
bit). The BLAS-thread survey of docs/performance.md is

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_default_fits.py --save-selections /tmp/one
    OPENBLAS_NUM_THREADS=2 python benchmarks/bench_default_fits.py --compare-with /tmp/one
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import time
import warnings

import numpy as np

#: The papers' data sets with at most 2000 samples (target: every default fit <= 10 s).
SMALL_SETS = ["jaffe", "umist", "orl", "att", "coil20", "isolet", "binalpha", "basehock",
              "allaml", "srbct", "lymphoma", "prostate_ge", "pix10p", "pie10p"]
HEADER = ["data set", "method", "wall s", "cpu s", "n_iter", "converged"]
COMPARE_HEADER = ["Jaccard", "score difference"]


class FitTimeout(Exception):
    """A fit ran past its time budget."""


@contextlib.contextmanager
def within_budget(seconds: float | None):
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


def machine_line() -> str:
    """One line naming the machine (CPU model: the same code runs at different speeds on
    different CPUs), the BLAS kernels, the libraries, the thread settings and the current load."""
    import scipy
    import sklearn

    from ufsbench.reproduce.render import machine_description
    from ufsbench.tasks import environment

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    threads = " ".join(f"{v}={os.environ.get(v, 'unset')}"
                       for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"))
    return (f"{machine_description()} | {environment()['blas']} | "
            f"python {platform.python_version()} | numpy {np.__version__} "
            f"| scipy {scipy.__version__} | scikit-learn {sklearn.__version__} | {threads} | "
            f"load average {load:.2f} | {time.strftime('%Y-%m-%d %H:%M')}")


def markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def methods(selected: list[str] | None) -> list[str]:
    """Every registered method except "allfeatures" (nothing to fit), or the selected ones."""
    from ufsbench.methods import available_methods

    known = [m for m in available_methods() if m != "allfeatures"]
    unknown = sorted(set(selected or []) - set(known))
    if unknown:
        raise SystemExit(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return list(selected) if selected else known


def typical_setting(method: str) -> dict:
    """The method config's fixed ``params`` plus its label-free ``default``."""
    from ufsbench.report import method_config

    cfg = method_config(method)
    return dict(cfg.get("params") or {}, **(cfg.get("default") or {}))


def synthetic(n: int, d: int) -> np.ndarray:
    """Seeded n x d data of four clusters on 20 of the features, the other features noise of
    spreads 0.1-2: data beyond the paper sizes, for ``synthetic:NxD``."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 2, d)
    X[:, :min(20, d)] += np.repeat(np.arange(4), n // 4 + 1)[:n, None]
    return X


def load(spec: str):
    """(label, X, number of classes) of ``name``, ``name:N`` (seeded subsample of N rows) or
    ``synthetic:NxD`` (:func:`synthetic`, 4 classes)."""
    from ufsbench.datasets import load_dataset
    from ufsbench.testing import data_dir

    name, _, size = spec.partition(":")
    if name == "synthetic":
        n, d = (int(v) for v in size.lower().split("x"))
        return f"synthetic {n}x{d}", synthetic(n, d), 4
    data = load_dataset(name, data_dir=data_dir(), download=False)
    X, y = data.X, data.y
    if size and int(size) < X.shape[0]:
        keep = np.sort(np.random.default_rng(0).choice(X.shape[0], int(size), replace=False))
        X, y = X[keep], y[keep]
    return f"{name} {X.shape[0]}x{X.shape[1]}", X, int(np.unique(y).size)


def fit_row(method: str, label: str, X, n_clusters: int, budget: float):
    """(the table row, the fitted selector or None when the budget ran out)."""
    from ufsbench.methods import make_selector

    selector = make_selector(method, n_features_to_select=min(100, X.shape[1]),
                             n_clusters=n_clusters, random_state=0, **typical_setting(method))
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        with within_budget(budget), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the cap reached is in the "converged" column
            selector.fit(X)
    except FitTimeout:
        return [label, method, f"> {budget:.0f}", "", "", ""], None
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n_iter = getattr(selector, "n_iter_", None)
    converged = getattr(selector, "converged_", None)
    return [label, method, f"{wall:.2f}", f"{cpu:.2f}", "" if n_iter is None else n_iter,
            "" if converged is None else converged], selector


def selection(selector) -> dict:
    """The fit's support and scores (a subset method's scores: its support as 0/1)."""
    support = selector.get_support()
    scores = getattr(selector, "scores_", None)
    return {"support": support,
            "scores": support.astype(float) if scores is None else np.asarray(scores, float)}


def selection_file(directory: str, spec: str, method: str) -> str:
    return os.path.join(directory, f"{spec.replace(':', '_')}__{method}.npz")


def compared(saved: dict, now: dict) -> list:
    """[top-100 Jaccard of the supports, largest score difference relative to the largest
    score, "=" when the scores are equal bit for bit]."""
    a, b = set(np.flatnonzero(saved["support"])), set(np.flatnonzero(now["support"]))
    jaccard = len(a & b) / max(len(a | b), 1)
    if np.array_equal(saved["scores"], now["scores"]):
        return [f"{jaccard:.3f}", "="]
    scale = max(float(np.abs(saved["scores"]).max()), np.finfo(float).tiny)
    return [f"{jaccard:.3f}", f"{float(np.abs(saved['scores'] - now['scores']).max()) / scale:.1e}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SMALL_SETS)
    parser.add_argument("--methods", nargs="+", default=None)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per fit")
    parser.add_argument("--save-selections", metavar="DIR",
                        help="write each fit's support and scores to DIR")
    parser.add_argument("--compare-with", metavar="DIR",
                        help="compare each fit's selection with the one saved in DIR")
    args = parser.parse_args()
    if args.save_selections:
        os.makedirs(args.save_selections, exist_ok=True)
    print(f"# {machine_line()}")
    rows = []
    for spec in args.datasets:
        label, X, n_clusters = load(spec)
        for method in methods(args.methods):
            row, selector = fit_row(method, label, X, n_clusters, args.budget)
            if selector is not None and args.save_selections:
                np.savez(selection_file(args.save_selections, spec, method), **selection(selector))
            if args.compare_with:
                path = selection_file(args.compare_with, spec, method)
                row += (compared(dict(np.load(path)), selection(selector))
                        if selector is not None and os.path.exists(path) else ["", ""])
            rows.append(row)
            print(" | ".join(map(str, row)), flush=True)
    print()
    print(markdown_table(HEADER + (COMPARE_HEADER if args.compare_with else []), rows))


if __name__ == "__main__":
    main()
