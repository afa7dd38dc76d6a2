"""SPUFS: the factored n x n W-step (W never formed) against the forms that build d x d matrices.

Solvers (``SPUFS(solver=...)``): "factored" (the default for d > n) and "primal" (the d x d
system formed and solved); "reference" is the plain IRLS of the BL9 model in
tests/methods/_reference_spufs.py (every d x d matrix formed, not the selector's code).
Prints, per data set and setting, time, tracemalloc peak, IRLS iterations, the speed-up of the
factored fit and whether its top-h ranking and objective history agree with the reference; then
the d-scaling of the factored fit (synthetic, n fixed) with its fitted exponent.

Usage: python benchmarks/bench_spufs.py [--data synthetic:100x2000 lymphoma prostate_ge pix10p]
          [--settings default alpha=1e-2,beta=1e2] [--refs primal reference] [--sizes 500 ... 20000]
"""

from __future__ import annotations

import inspect
import sys
import types
from pathlib import Path

from fast_vs_dense import main

from ufsbench.numerics import ranking_from_scores, row_norms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "methods"))
from _reference_spufs import spufs_reference  # noqa: E402


def irls_reference(X, params: dict):
    """The plain IRLS at the selector's setting, as an object the comparison reads."""
    known = inspect.signature(spufs_reference).parameters
    W, history = spufs_reference(X, **{k: v for k, v in params.items() if k in known})
    return types.SimpleNamespace(ranking_=ranking_from_scores(row_norms(W)),
                                 objective_history_=history, n_iter_=len(history))


if __name__ == "__main__":
    main("spufs", "factored", ["primal", "reference"], "alpha=1e-2,beta=1e2", __doc__,
         references={"reference": irls_reference})
