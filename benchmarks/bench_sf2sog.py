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

from fast_vs_dense import main

if __name__ == "__main__":
    main("sf2sog", "factored", ["dense"], "lam=1e-2,gamma=1e2", __doc__)
