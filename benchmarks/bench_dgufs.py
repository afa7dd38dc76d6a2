"""Benchmark DGUFS: row-sparse products + subset eigensolver (fast) vs the dense form (naive:
Algorithm 2 on full matrices, tests/methods/_reference_dgufs.py).

Usage: python benchmarks/bench_dgufs.py [--sizes 72x7129 100x10000] [--m 50] [--iters 20]
       [--real allaml pix10p]   (reads /work/shared/datasets/<name>.mat)
Prints per-size timings, the max |L_fast - L_dense|, whether the supports agree, and machine info.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", default=["72x2000", "100x5000"])
    ap.add_argument("--real", nargs="*", default=[])
    ap.add_argument("--m", type=int, default=50)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
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
