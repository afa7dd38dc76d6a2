"""Fit time and peak memory of every selector at its typical setting on representative data sets,
and the projected whole-sweep time per method per data set.

Typical setting = the method config's fixed ``params`` + its label-free ``default``; subset
methods are fitted for 100 features. The projected sweep time is
``grid size x (fit x refits + K-means evaluation x feature counts)``, refits = the number of
feature counts for subset methods (refitted per count) and 1 for ranking methods; the K-means
evaluation (20 seeded runs on the top 100 features) is measured once per data set.

    python benchmarks/bench_fit_times.py --datasets prostate_ge pix10p --methods ls udfs
    python benchmarks/bench_fit_times.py --datasets synthetic:100x500 --budget 30
"""

from __future__ import annotations

import argparse
import time

from common import (
    benchmark_methods,
    feature_count_grid,
    grid_size,
    load_bench_data,
    measure_fit,
    print_preamble,
    print_row,
    refits_per_setting,
    rows_table,
)

HEADER = ["data set", "method", "fit s", "peak MB", "grid", "projected sweep s"]
N_FEATURES = 100


def evaluation_seconds(X, y, n_classes) -> float:
    """Seconds of one 20-run K-means evaluation on the first 100 columns (what every cell costs)."""
    from ufsbench.evaluation import clustering_scores

    start = time.perf_counter()
    clustering_scores(X[:, : min(N_FEATURES, X.shape[1])], y, n_classes)
    return time.perf_counter() - start


def projected_sweep(method: str, fit_s: float | None, eval_s: float, n_counts: int) -> str:
    if fit_s is None:
        return "n/a"
    refits = refits_per_setting(method, n_counts)
    return f"{grid_size(method) * (fit_s * refits + eval_s * n_counts):.0f}"


def run(datasets: list[str], methods: list[str] | None = None, budget: float | None = 120.0,
        echo: bool = True) -> list[dict]:
    """Measure every (data set, method); returns one dict per fit (also printed as rows)."""
    rows = []
    for spec in datasets:
        label, X, y, c = load_bench_data(spec)
        eval_s = evaluation_seconds(X, y, c)
        counts = len(feature_count_grid(spec))
        for method in benchmark_methods(methods):
            m = measure_fit(method, X, c, N_FEATURES, budget=budget)
            row = {"data set": label, "method": method, "fit s": m.time_text(),
                   "peak MB": f"{m.peak_mb:.1f}", "grid": grid_size(method),
                   "projected sweep s": projected_sweep(method, m.seconds, eval_s, counts),
                   "seconds": m.seconds, "eval_s": eval_s}
            rows.append(row)
            if echo:
                print_row(HEADER, row)
    return rows


def table(rows: list[dict]) -> str:
    return rows_table(HEADER, rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["prostate_ge", "allaml", "pix10p"],
                    help="registry names, name:N subsamples or synthetic:NxD")
    ap.add_argument("--methods", nargs="+", help="default: every selector")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per fit before giving up")
    args = ap.parse_args(argv)
    print_preamble(HEADER)
    run(args.datasets, args.methods, args.budget)


if __name__ == "__main__":
    main()
