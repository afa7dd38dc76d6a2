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

from fast_vs_dense import main


if __name__ == "__main__":
    main("spufs", "factored", ["dual"], "alpha=1e-2,beta=1e2", __doc__)
