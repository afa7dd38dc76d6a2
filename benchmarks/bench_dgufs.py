"""Benchmark DGUFS: row-sparse products + subset eigensolver (fast) vs the dense form (naive:
Algorithm 2 on full matrices, tests/methods/_reference_dgufs.py).

Usage: python benchmarks/bench_dgufs.py [--sizes 72x7129 100x10000] [--m 50] [--iters 20]
       [--real allaml pix10p]   (reads /work/shared/datasets/<name>.mat)
Prints per-size timings, the max |L_fast - L_dense|, whether the supports agree, and machine info.

       OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dgufs.py --scaling usps 1000 2000 4000
The default fit (alpha 1e3, beta 0.5, relaxed M-step, 50 iterations, m = 100) on the first n
samples of a data set: CPU seconds of this process, how many L-steps needed LAPACK (the others
were shown to give L = 0 by Gershgorin's bound), the ranks of L, and the n x n arrays' size.
"""

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from ufsbench.methods.base import make_selector

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "methods"))
from _reference_dgufs import reference_dgufs  # noqa: E402


def _data(spec, seed):
    if spec.replace("x", "").isdigit():
        n, d = map(int, spec.split("x"))
        rng = np.random.default_rng(seed)
        y = np.arange(n) % 3
        X = rng.standard_normal((n, d))
        X[:, :20] += 3.0 * y[:, None]
        return spec, X, 3
    from scipy.io import loadmat
    data = loadmat(f"/work/shared/datasets/{spec}.mat")
    y = np.asarray(data["Y"]).ravel()
    return spec, np.asarray(data["X"], float), len(np.unique(y))


def scaling(name, sizes, m):
    """CPU seconds of the default fit on the first n samples of ``name``, for each n."""
    from ufsbench.methods import dgufs

    _, X, c = _data(name, 0)
    calls = []
    original = dgufs.sla.eigh

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    dgufs.sla.eigh = counted
    print(f"{'data':>8} {'n':>6} {'d':>5} {'cpu s':>8} {'n_iter':>6} {'LAPACK L-steps':>14} "
          f"{'max rank':>8} {'n x n MB':>8}")
    try:
        for n in sizes:
            calls.clear()
            cpu = time.process_time()
            sel = make_selector("dgufs", n_features_to_select=m, n_clusters=c,
                                random_state=0).fit(X[:n])
            cpu = time.process_time() - cpu
            print(f"{name:>8} {n:>6} {X.shape[1]:>5} {cpu:>8.2f} {sel.n_iter_:>6} "
                  f"{len(calls):>14} {max(sel.rank_history_):>8} {8 * n * n / 2**20:>8.0f}",
                  flush=True)
    finally:
        dgufs.sla.eigh = original


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", default=["72x2000", "100x5000"])
    ap.add_argument("--real", nargs="*", default=[])
    ap.add_argument("--m", type=int, default=50)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--scaling", nargs="+", metavar="NAME N",
                    help="a data set and sample counts: the default fit's CPU seconds per n")
    args = ap.parse_args()
    if args.scaling:
        print(f"machine: {platform.machine()} cpus={os.cpu_count()} numpy={np.__version__} "
              f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
        return scaling(args.scaling[0], [int(v) for v in args.scaling[1:]], 100)
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python={platform.python_version()} numpy={np.__version__}")
    print(f"{'data':>12} {'n':>5} {'d':>6} {'fast s':>8} {'dense s':>8} {'speedup':>7} "
          f"{'max|dL|':>9} {'same support':>12}")
    for spec in list(args.sizes) + list(args.real):
        name, X, c = _data(spec, 0)
        res = {}
        for fast in (True, False):
            best = np.inf
            for _ in range(args.repeat):
                kw = dict(n_features_to_select=args.m, n_clusters=c, alpha=1e3, beta=0.5,
                          random_state=0, max_iter=args.iters, tol=0.0)
                t = time.perf_counter()
                sel = (make_selector("dgufs", **kw).fit(X) if fast
                       else reference_dgufs(X, **kw))
                best = min(best, time.perf_counter() - t)
            res[fast] = (best, sel)
        (tf, sf), (td, sd) = res[True], res[False]
        print(f"{name:>12} {X.shape[0]:>5} {X.shape[1]:>6} {tf:>8.3f} {td:>8.3f} "
              f"{td / tf:>7.2f} {np.abs(sf.L_ - sd.L_).max():>9.2e} "
              f"{str(np.array_equal(sf.support_, sd.support_)):>12}")


if __name__ == "__main__":
    main()
