"""Benchmark of the evaluation protocol's K-means: scikit-learn's KMeans per seed vs the runs of
``ufsbench.evaluation`` (one preparation of X for all seeds, numerics.exact_kmeans).

The protocol scores every (setting, feature count) with 20 seeded K-means runs (init="random",
n_init=1, max_iter=100); over the five papers' full grids that is about a third of the whole
reproduction cost. ``KMeans(...).fit_predict(X)`` per seed repeats validation, a copy,
centring, row norms and a BLAS thread limit in every run; ``ufsbench.evaluation`` prepares X once
per subset, and each run draws its start from ``RandomState(seed)`` exactly as KMeans does, then
runs scikit-learn's own Lloyd routine: the same labels, which the benchmark checks run by run.

Per data set and feature count (seeded random columns, the registry's count grid): ms per 20
runs both ways (best of --repeats, interleaved), the ratio, and how many of the 20 labelings are
identical (must be 20/20).

    python benchmarks/bench_kmeans_eval.py                           # small default sizes
    python benchmarks/bench_kmeans_eval.py --data usps coil20 orl prostate_ge --repeats 3
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from common import feature_count_grid, load_bench_data, machine_line, markdown_table
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from ufsbench.evaluation import _seeded_runs

N_RUNS = 20


def sklearn_runs(X, k, seeds):
    """The evaluation as it was: one scikit-learn KMeans per seed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return [KMeans(k, init="random", n_init=1, max_iter=100, random_state=s,
                       algorithm="lloyd").fit_predict(X) for s in seeds]


def protocol_runs(X, k, seeds):
    return _seeded_runs(X, k, seeds, "random", 100)


def best_time(func, repeats):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return min(times), out


def bench(spec: str, repeats: int) -> list[list]:
    label, X, y, k = load_bench_data(spec)
    rng = np.random.default_rng(0)
    seeds = list(range(N_RUNS))
    rows = []
    for m in [c for c in feature_count_grid(spec) if c <= X.shape[1]]:
        Xm = np.ascontiguousarray(X[:, np.sort(rng.choice(X.shape[1], m, replace=False))])
        t_old = t_new = np.inf
        for _ in range(repeats):  # interleaved, so load changes hit both alike
            t, old = best_time(lambda: sklearn_runs(Xm, k, seeds), 1)
            t_old = min(t_old, t)
            t, new = best_time(lambda: protocol_runs(Xm, k, seeds), 1)
            t_new = min(t_new, t)
        same = sum(np.array_equal(a, b) for a, b in zip(old, new))
        rows.append([label, m, k, f"{1000 * t_old:.0f}", f"{1000 * t_new:.0f}",
                     f"{t_old / t_new:.2f}", f"{same}/{N_RUNS}"])
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=["synthetic:100x500", "synthetic:1500x300"],
                        help="data specs (benchmarks/common.py load_bench_data)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"# {machine_line()}")
    print(f"# command: python benchmarks/bench_kmeans_eval.py --data {' '.join(args.data)} "
          f"--repeats {args.repeats}")
    rows = [row for spec in args.data for row in bench(spec, args.repeats)]
    print(markdown_table(["data", "features", "k", "KMeans per seed (ms / 20 runs)",
                          "protocol runs (ms / 20 runs)", "ratio", "identical"], rows))


if __name__ == "__main__":
    main()
