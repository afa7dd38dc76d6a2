"""Benchmark of UFSOL's W-step (Guo et al., ICME 2017, §4.2): fast eigen path vs dense eigh.

The W-step needs the d2 = c smallest eigenvectors of G = beta/2 R + X^T (alpha L + I - V^T V) X
(d x d). Compared, on a G taken from a real UFSOL iterate (R, V after a few iterations):

* dense_full   : form G (O(d^2 n)) and run a full LAPACK eigh (O(d^3)) -- the naive path;
* dense_subset : form G and compute only the c smallest pairs (``eigh_smallest``, LAPACK evr);
* shift_invert : Lanczos on (G - sI)^{-1} through the Woodbury identity, G never formed,
                 cold start and warm-started from the previous W (``numerics.lowrank_eig``);
* lanczos      : plain Lanczos on G (``numerics.smallest_eigvecs_diag_plus_lowrank``), only
                 with --lanczos (it often fails to converge when R spans many orders of magnitude).

Printed per size: seconds per W-step, max |eigenvalue - dense|, max |W W^T - W_dense W_dense^T|
(the eigenvectors are defined up to sign/rotation), and the time of whole fits with both paths.

    python benchmarks/bench_ufsol.py                       # small default sizes
    python benchmarks/bench_ufsol.py --sizes 203x3312 100x10000 --fit-iter 3
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from functools import partial

import common  # noqa: F401  (puts the repository on sys.path)
import numpy as np
import scipy

from ufsbench.datasets.synthetic import make_synthetic
from ufsbench.methods.base import make_selector
from ufsbench.methods.ufsol import indicator_gram, ufsol_laplacian
from ufsbench.numerics import (
    eigh_smallest,
    l21_reweight,
    smallest_eigvecs_diag_plus_lowrank,
)
from ufsbench.numerics.lowrank_eig import smallest_eigh_shift_invert


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def w_step_problem(n, d, c, alpha, beta, seed):
    """(diag, X, M, W_prev) of the W-step after 2 UFSOL iterations on planted synthetic data."""
    ds = make_synthetic(n_samples=n, n_features=d, n_informative=min(20, d // 10), n_clusters=c,
                        random_state=seed)
    sel = make_selector("ufsol", n_clusters=c, random_state=seed, alpha=alpha, beta=beta,
                        max_iter=2, n_init=2, solver="shift_invert").fit(ds.X)
    X = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    M = alpha * ufsol_laplacian(X, "triplet") + np.eye(n) - indicator_gram(sel.labels_)
    diag = 0.5 * beta * l21_reweight(sel.W_, eps=1e-8, factor=1.0)
    return diag, X, M, sel.W_, ds.X


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["100x600", "100x1500"],
                        help="n x d pairs, e.g. 203x3312 100x10000")
    parser.add_argument("--clusters", type=int, default=5)
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--beta", type=float, default=1.0)
    parser.add_argument("--fit-iter", type=int, default=3, help="iterations of the timed fits")
    parser.add_argument("--no-full", action="store_true", help="skip the full dense eigh")
    parser.add_argument("--no-dense", action="store_true",
                        help="skip every dense path (for d ~ 1e4, where one dense eigh takes many "
                             "minutes); the first fast path is then the reference")
    parser.add_argument("--lanczos", action="store_true", help="also time plain Lanczos on G")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"# {platform.platform()} | python {platform.python_version()} | numpy "
          f"{np.__version__} | scipy {scipy.__version__} | cpus {os.cpu_count()} | "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(f"# c = {args.clusters}, alpha = {args.alpha}, beta = {args.beta}, triplet graph, "
          f"z-scored synthetic data")
    header = (f"{'n x d':>11} {'path':>18} {'W-step s':>10} {'max|dlambda|':>13} "
              f"{'max|dP|':>10}")
    print(header)
    print("-" * len(header))
    fits = []
    for size in args.sizes:
        n, d = (int(v) for v in size.lower().split("x"))
        c = args.clusters
        diag, X, M, W_prev, raw = w_step_problem(n, d, c, args.alpha, args.beta, args.seed)

        def dense(full, X=X, M=M, diag=diag, c=c):
            G = X.T @ M @ X
            G[np.diag_indices_from(G)] += diag
            if full:
                vals, vecs = np.linalg.eigh(G)
                return vals[:c], vecs[:, :c]
            return eigh_smallest(G, c)

        paths = {}
        if not (args.no_full or args.no_dense):
            paths["dense_full"] = lambda: dense(True)
        if not args.no_dense:
            paths["dense_subset"] = lambda: dense(False)
        problem = {"diag": diag, "B": X.T, "M": M, "k": c}
        paths["shift_invert"] = partial(smallest_eigh_shift_invert, **problem,
                                        lower_bound=diag.min())
        paths["shift_invert_warm"] = partial(smallest_eigh_shift_invert, **problem, v0=W_prev,
                                             lower_bound=diag.min())
        if args.lanczos:
            paths["lanczos"] = partial(smallest_eigvecs_diag_plus_lowrank, **problem, v0=W_prev,
                                       dense_below=0)
        ref = None
        for name, fn in paths.items():
            try:
                seconds, (vals, vecs) = _timed(fn)
            except Exception as exc:  # noqa: BLE001 - report a non-converging solver, go on
                print(f"{size:>11} {name:>18} {'failed':>10}  {type(exc).__name__}")
                continue
            if ref is None:
                ref = (vals, vecs @ vecs.T)
            dl = np.abs(vals - ref[0]).max()
            dp = np.abs(vecs @ vecs.T - ref[1]).max()
            print(f"{size:>11} {name:>18} {seconds:>10.3f} {dl:>13.2e} {dp:>10.2e}")
        for solver in ("shift_invert",) if args.no_dense else ("dense", "shift_invert"):
            sel = make_selector("ufsol", n_clusters=c, random_state=args.seed, alpha=args.alpha,
                                beta=args.beta, max_iter=args.fit_iter, tol=0, n_init=2,
                                solver=solver)
            seconds, sel = _timed(partial(sel.fit, raw))
            fits.append((size, solver, seconds, sel))
    print()
    print(f"# whole fits, {args.fit_iter} iterations (K-means and graph included)")
    print(f"{'n x d':>11} {'solver':>13} {'fit s':>9} {'max|dscore| vs dense':>21}")
    dense_fits = {size: sel for size, solver, _, sel in fits if solver == "dense"}
    for size, solver, seconds, sel in fits:
        diff = ""
        if solver != "dense" and size in dense_fits:
            diff = f"{np.abs(dense_fits[size].scores_ - sel.scores_).max():.2e}"
        print(f"{size:>11} {solver:>13} {seconds:>9.2f} {diff:>21}")


if __name__ == "__main__":
    main()
