"""SF2SOG: the W-step matrix M = B^T B kept as its n x d factor against the dense d x d form.

Solvers (``SF2SOG(solver=...)``): "factored" (the default for d > n: diag(M), M W, h x h blocks
and lambda_max(M) from B, n x d) and "dense" (M formed, lambda_max by a dense eigensolver).
Prints, per data set and setting, time, tracemalloc peak, outer iterations, the speed-up of the
factored fit and whether its subset (h = 100 features) and objective history agree with the
dense fit; then the d-scaling of the factored fit (synthetic, n fixed) with its fitted exponent.

Usage: python benchmarks/bench_sf2sog.py [--data synthetic:100x2000 lymphoma prostate_ge pix10p]
          [--settings default lam=1e-2,gamma=1e2] [--refs dense] [--sizes 500 ... 20000]
"""

from __future__ import annotations

import argparse

from fast_vs_dense import compare, d_scaling, parse_setting


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["synthetic:100x2000"])
    ap.add_argument("--settings", nargs="+", default=["default"],
                    help="'default' or e.g. lam=1e-2,gamma=1e2 (on top of the config default)")
    ap.add_argument("--refs", nargs="*", default=["dense"], help="reference solvers")
    ap.add_argument("--sizes", type=int, nargs="*", default=[500, 1000, 2000, 4000],
                    help="d values of the scaling curve (none: skip it)")
    ap.add_argument("--n", type=int, default=200, help="samples of the scaling curve")
    ap.add_argument("--budget", type=float, default=600.0)
    args = ap.parse_args(argv)
    compare("sf2sog", args.data, [parse_setting(s) for s in args.settings], "factored",
            args.refs, budget=args.budget)
    if args.sizes:
        print()
        d_scaling("sf2sog", "factored", args.sizes, n=args.n, budget=args.budget)


if __name__ == "__main__":
    main()
