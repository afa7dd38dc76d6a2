"""Benchmark of SCFS: the W-step's forms, the G-update rules and whole default fits.

W-step (Eq. (6)): W = (alpha X^T X + beta D)^{-1} alpha X^T G costs O(n p^2 + p^3) as printed
and O(n^2 p + n^3) through the push-through identity W = alpha D^{-1} X^T (alpha X D^{-1} X^T
+ beta I)^{-1} G ("dual"); "cg" solves that n x n system by conjugate gradients from a zero
start (in a fit it starts from the previous step's solution and needs far fewer steps). For each
size the script times the forms (best of --repeat), prints the speed-ups and the largest
difference to the primal result. D is a realistic reweighting matrix (Eq. (7) of a W with row
norms spread over six decades, some rows exactly 0). A second table contrasts the printed
G-update (11) with the default sign-split rule on z-scored data. ``--fit NAME ...`` times the
default fit (alpha = 1, beta = 100, seed 0, c = the class count) on shared data sets: CPU
seconds of this process, iterations, whether the tolerance stopped it.

    python benchmarks/bench_scfs.py                       # small default sizes
    python benchmarks/bench_scfs.py --sizes 102x5966 100x10000 --repeat 2
    python benchmarks/bench_scfs.py --dataset /work/shared/datasets/prostate_ge.mat
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scfs.py --skip-w --skip-g \
        --fit jaffe coil20 basehock pix10p

Run with OPENBLAS_NUM_THREADS=1 (or OMP_NUM_THREADS=1) for single-core numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
import scipy
from sklearn.exceptions import ConvergenceWarning

from ufsbench.methods.base import make_selector
from ufsbench.methods.scfs import WStep, scfs_w_step
from ufsbench.numerics import l21_reweight


def best_time(fn, repeat: int):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def w_step_row(X: np.ndarray, c: int, alpha: float, beta: float, repeat: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n, p = X.shape
    G = rng.uniform(0.1, 1.0, (n, c))
    W_prev = rng.standard_normal((p, c)) * 10.0 ** rng.uniform(-6, 0, (p, 1))
    W_prev[rng.random(p) < 0.2] = 0.0
    d = l21_reweight(W_prev, eps=1e-8, factor=0.5)
    t_dual, W_dual = best_time(lambda: scfs_w_step(X, G, d, alpha, beta, "dual"), repeat)
    t_primal, W_primal = best_time(lambda: scfs_w_step(X, G, d, alpha, beta, "primal"), repeat)
    t_cg, (W_cg, _) = best_time(lambda: WStep(X, X, "cg", alpha, beta, 0.0)(G, d), repeat)
    scale = max(float(np.abs(W_primal).max()), 1e-300)
    return dict(n=n, p=p, c=c, primal_s=t_primal, dual_s=t_dual, cg_s=t_cg,
                speedup=t_primal / t_dual, rel_diff=float(np.abs(W_dual - W_primal).max()) / scale,
                cg_rel_diff=float(np.abs(W_cg - W_primal).max()) / scale)


def fit_rows(names: list[str]) -> list[dict]:
    """The default fit on each shared data set: CPU seconds, iterations, converged."""
    from ufsbench.datasets import load_dataset

    rows = []
    for name in names:
        data = load_dataset(name, download=False)
        sel = make_selector("scfs", n_clusters=len(np.unique(data.y)), random_state=0,
                            alpha=1.0, beta=100.0)
        cpu = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            sel.fit(data.X)
        rows.append(dict(data=f"{name} {data.X.shape[0]}x{data.X.shape[1]}",
                         cpu_s=time.process_time() - cpu, n_iter=sel.n_iter_,
                         converged=sel.converged_))
    return rows


def g_step_rows(n: int, p: int, c: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.standard_normal((c, p))
    X = centres[np.arange(n) % c] + rng.standard_normal((n, p))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rows = []
    for gamma in (1e6, 1e-2):
        for update, exponent in (("printed", 1.0), ("split", 1.0), ("split", 0.25)):
            sel = make_selector("scfs", n_clusters=c, random_state=0, gamma=gamma, update=update,
                                exponent=exponent, max_iter=200)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                sel.fit(X)
            h = np.asarray(sel.objective_history_)
            g = np.asarray(sel.g_min_history_)
            rows.append(dict(gamma=gamma, update=update, exponent=exponent, iters=sel.n_iter_,
                             min_G=float(np.nanmin(g)) if np.any(np.isfinite(g)) else np.nan,
                             nan_G=bool(np.any(np.isnan(g))),
                             max_rel_rise=float(np.max(np.diff(h) / np.abs(h[1:])))
                             if h.size > 1 else np.nan,
                             final_obj=float(h[-1]) if h.size else np.nan))
    return rows


def print_table(rows: list[dict], formats: dict[str, str]) -> None:
    keys = list(rows[0])
    cells = [[format(r[k], formats.get(k, "")) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    print("  ".join(k.rjust(w) for k, w in zip(keys, widths)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["100x500", "100x2000", "200x4000"],
                    help="n x p sizes of random X, e.g. 102x5966 100x10000")
    ap.add_argument("--dataset", nargs="*", default=[], help=".mat files with X (n x p)")
    ap.add_argument("--clusters", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--beta", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-g", action="store_true", help="skip the G-update table")
    ap.add_argument("--skip-w", action="store_true", help="skip the W-step table")
    ap.add_argument("--fit", nargs="*", default=[], metavar="NAME",
                    help="time the default fit on these data sets (UFSBENCH_DATA)")
    args = ap.parse_args()

    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
          f"cpu_count={os.cpu_count()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}")
    rows = []
    for size in [] if args.skip_w else args.sizes:
        n, p = (int(v) for v in size.lower().split("x"))
        X = np.random.default_rng(args.seed).standard_normal((n, p))
        rows.append(dict(data=f"random {n}x{p}",
                         **w_step_row(X, args.clusters, args.alpha, args.beta, args.repeat,
                                      args.seed)))
    for path in [] if args.skip_w else args.dataset:
        from scipy.io import loadmat
        X = np.asarray(loadmat(path)["X"], dtype=float)
        rows.append(dict(data=os.path.basename(path),
                         **w_step_row(X, args.clusters, args.alpha, args.beta, args.repeat,
                                      args.seed)))
    if rows:
        print(f"\nW-step, Eq. (6): primal p x p solve vs dual n x n (Woodbury) form by Cholesky "
              f"and by CG, alpha={args.alpha}, beta={args.beta}, best of {args.repeat}")
        print_table(rows, {"primal_s": ".4f", "dual_s": ".4f", "cg_s": ".4f", "speedup": ".1f",
                           "rel_diff": ".2e", "cg_rel_diff": ".2e"})
    if not args.skip_g:
        print("\nG-step on z-scored data (n=90, p=60, c=3): printed Eq. (11) vs sign-split rule")
        print_table(g_step_rows(90, 60, 3, args.seed),
                    {"gamma": ".0e", "min_G": ".3g", "max_rel_rise": ".2e", "final_obj": ".6g"})
    if args.fit:
        print("\nDefault fit (alpha=1, beta=100, random_state=0): CPU seconds of this process")
        print_table(fit_rows(args.fit), {"cpu_s": ".2f"})


if __name__ == "__main__":
    main()
