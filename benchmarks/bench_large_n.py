"""Large n, few features: per-method fit time on USPS (9298 x 256) and the n-scaling curve.

The UFSOL paper's USPS has n = 9298 samples and d = 256 features; its table has rows for
UFSOL, UDFS, NDFS, RUFS, SOCFS, SOCFS + triplet, LS and MCFS, each tuned over a grid, so one fit
must take seconds. Two measurements (each fit at the method's typical setting, config
``params`` + ``default``, seeded, with a time budget; peak = tracemalloc peak during the fit):

* ``--mode usps``: one fit per method on ``usps:2000`` (a seeded 2000-sample subset) and ``usps``.
* ``--mode scaling``: fit time against n on seeded synthetic data (d = 256 by default, n from
  500 to 10000) and the fitted exponent (``bench_scaling``'s n axis).
* ``--mode paths``: the large-n path (blockwise neighbour search, sparse graphs) against the
  dense n x n path on the same data (``SPARSE_MIN_SAMPLES`` lowered / raised): time of each,
  max |score difference| and the Jaccard overlap of the selected features.

    OMP_NUM_THREADS=1 python benchmarks/bench_large_n.py --mode usps --budget 300
    OMP_NUM_THREADS=1 python benchmarks/bench_large_n.py --mode scaling \
        --sizes 500 1000 2000 5000 10000
    OMP_NUM_THREADS=1 python benchmarks/bench_large_n.py --mode paths --data usps:2000
"""

from __future__ import annotations

import argparse

import bench_scaling
import numpy as np
from common import jaccard, load_bench_data, measure_fit, print_preamble, print_row

from ufsbench.numerics import graphs

#: The rows of the UFSOL paper's Table 2 that fit something (allfeatures does not).
UFSOL_TABLE_METHODS = ["ufsol", "udfs", "ndfs", "rufs", "socfs", "socfs_triplet", "ls", "mcfs"]
USPS_HEADER = ["method", "data", "seconds", "peak MB"]
PATHS_HEADER = ["method", "data", "dense path s", "large-n path s", "ratio", "max |score diff|",
                "Jaccard"]
N_FEATURES = 100


def usps_rows(methods: list[str], specs: list[str], budget: float | None) -> list[dict]:
    """One measured fit per (method, data set); printed as they finish."""
    rows = []
    data = [load_bench_data(spec) for spec in specs]
    for method in methods:
        for label, X, _, c in data:
            m = measure_fit(method, X, c, N_FEATURES, budget=budget)
            row = {"method": method, "data": label, "seconds": m.time_text(),
                   "peak MB": f"{m.peak_mb:.0f}"}
            print_row(USPS_HEADER, row)
            rows.append(row)
    return rows


def _fit_with_threshold(method, X, c, threshold, budget):
    saved = graphs.SPARSE_MIN_SAMPLES
    graphs.SPARSE_MIN_SAMPLES = threshold
    try:
        return measure_fit(method, X, c, N_FEATURES, budget=budget)
    finally:
        graphs.SPARSE_MIN_SAMPLES = saved


def paths_rows(methods: list[str], specs: list[str], budget: float | None) -> list[dict]:
    """Dense n x n path vs large-n path, same data and seed: time, score difference, overlap."""
    rows = []
    for label, X, _, c in (load_bench_data(spec) for spec in specs):
        for method in methods:
            dense = _fit_with_threshold(method, X, c, X.shape[0] + 1, budget)
            large = _fit_with_threshold(method, X, c, 0, budget)
            done = dense.selector is not None and large.selector is not None
            ratio = diff = overlap = "-"
            if done:
                a, b = dense.selector, large.selector
                ratio = f"{dense.seconds / large.seconds:.1f}"
                diff = f"{np.max(np.abs(a.scores_ - b.scores_)):.1e}"
                overlap = f"{jaccard(np.flatnonzero(a.support_), np.flatnonzero(b.support_)):.2f}"
            row = {"method": method, "data": label, "dense path s": dense.time_text(),
                   "large-n path s": large.time_text(), "ratio": ratio,
                   "max |score diff|": diff, "Jaccard": overlap}
            print_row(PATHS_HEADER, row)
            rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["usps", "scaling", "paths"], default="scaling")
    ap.add_argument("--methods", nargs="+", default=UFSOL_TABLE_METHODS)
    ap.add_argument("--data", nargs="+", default=["usps:2000", "usps"],
                    help="data specs of --mode usps (see benchmarks/common.py load_bench_data)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000],
                    help="n values of --mode scaling (the full profile: 500 ... 10000)")
    ap.add_argument("--d", type=int, default=256, help="features of --mode scaling")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds per fit")
    args = ap.parse_args(argv)
    if args.mode == "usps":
        print_preamble(USPS_HEADER)
        usps_rows(args.methods, args.data, args.budget)
    elif args.mode == "paths":
        print_preamble(PATHS_HEADER)
        paths_rows(args.methods, args.data, args.budget)
    else:
        print_preamble(bench_scaling.HEADER)
        bench_scaling.run("n", args.sizes, d=args.d, methods=args.methods, budget=args.budget)


if __name__ == "__main__":
    main()
