"""SPUFS: the factored n x n W-step (W never formed) against the forms that build d x d matrices.

Solvers (``SPUFS(solver=...)``): "factored" (the default for d > n), "dual" (n x n solve but W
formed, d x d: the implementation before the factored path) and "dense" (the d x d system).
Prints, per data set and setting, time, tracemalloc peak, IRLS iterations, the speed-up of the
factored fit and whether its top-h ranking and objective history agree with the reference; then
the d-scaling of the factored fit (synthetic, n fixed) with its fitted exponent.

Usage: python benchmarks/bench_spufs.py [--data synthetic:100x2000 lymphoma prostate_ge pix10p]
          [--settings default alpha=1e-2,beta=1e2] [--refs dual dense] [--sizes 500 ... 20000]
"""

from __future__ import annotations

import argparse

from fast_vs_dense import compare, d_scaling, parse_setting


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["synthetic:100x2000"])
    ap.add_argument("--settings", nargs="+", default=["default"],
                    help="'default' or e.g. alpha=1e-2,beta=1e2 (on top of the config default)")
    ap.add_argument("--refs", nargs="*", default=["dual"], help="reference solvers")
    ap.add_argument("--sizes", type=int, nargs="*", default=[500, 1000, 2000, 4000],
                    help="d values of the scaling curve (none: skip it)")
    ap.add_argument("--n", type=int, default=200, help="samples of the scaling curve")
    ap.add_argument("--budget", type=float, default=600.0)
    args = ap.parse_args(argv)
    compare("spufs", args.data, [parse_setting(s) for s in args.settings], "factored",
            args.refs, budget=args.budget)
    if args.sizes:
        print()
        d_scaling("spufs", "factored", args.sizes, n=args.n, budget=args.budget)


if __name__ == "__main__":
    main()
