"""Benchmark K-means UFS: rank-k factor of A (fast, O(p h k) products) vs the dense p x p A (naive:
tests/methods/_reference_kmufs.py, which also takes every polar factor from a thin SVD).

Usage: python benchmarks/bench_kmufs.py [--sizes 150x1000 200x3000] [--h 50] [--k 5]
       [--iters 60] [--admm bilinear] [--real isolet coil20]  (reads /work/shared/datasets/<name>.mat)
Per size: seconds per ADMM iteration of both forms (a fit of --iters iterations minus a fit of one
iteration, so the shared SVD is excluded), the speed-up, the max |W_fast - W_dense| after --iters
iterations, whether the supports agree, and, for the factored form run to convergence, n_iter,
the objective (11) reached against the exact optimum (sum of the h largest A_ii), and machine info.
"""

import argparse
import os
import platform
import sys
import time

import common  # noqa: F401  (puts the repository on sys.path)
import numpy as np

from ufsbench.methods.base import make_selector

sys.path.insert(0, str(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                    "methods")))
from _reference_kmufs import reference_kmufs  # noqa: E402


def _data(spec, k, seed):
    if spec.replace("x", "").isdigit():
        n, p = map(int, spec.split("x"))
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((n, p))
        X[:, : 4 * k] += 2.0 * rng.standard_normal((n, k)) @ rng.standard_normal((k, 4 * k))
        return spec, X, k
    from scipy.io import loadmat
    data = loadmat(f"/work/shared/datasets/{spec}.mat")
    y = np.asarray(data["Y"]).ravel()
    return spec, np.asarray(data["X"], float), len(np.unique(y))


def _timed_fit(X, h, k, iters, form="factored", **params):
    t = time.perf_counter()
    if form == "factored":
        sel = make_selector("kmufs", n_features_to_select=h, n_clusters=k, max_iter=iters,
                            patience=iters + 1, **params).fit(X)
    else:
        sel = reference_kmufs(X, h, k, max_iter=iters, patience=iters + 1, **params)
    return time.perf_counter() - t, sel


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", default=["150x1000", "200x3000"])
    ap.add_argument("--real", nargs="*", default=[])
    ap.add_argument("--h", type=int, default=50)
    ap.add_argument("--k", type=int, default=5, help="clusters for synthetic sizes")
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--admm", default="bilinear", choices=["bilinear", "vanilla"])
    args = ap.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} cpus={os.cpu_count()} "
          f"python={platform.python_version()} numpy={np.__version__} "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print(f"admm={args.admm}, h={args.h}, {args.iters} timed iterations")
    print(f"{'data':>10} {'n':>5} {'p':>6} {'k':>3} {'fast ms/it':>10} {'dense ms/it':>11} "
          f"{'speedup':>7} {'max|dW|':>9} {'same':>5} {'n_iter':>6} {'obj/opt':>8} {'fit s':>6}")
    for spec in list(args.sizes) + list(args.real):
        name, X, k = _data(spec, args.k, 0)
        h = min(args.h, X.shape[1])
        per_iter, fits = {}, {}
        for form in ("factored", "dense"):
            t1, _ = _timed_fit(X, h, k, 1, form, admm=args.admm)
            tn, fits[form] = _timed_fit(X, h, k, args.iters, form, admm=args.admm)
            per_iter[form] = max(tn - t1, 0.0) / (args.iters - 1)
        fast, dense = fits["factored"], fits["dense"]
        t = time.perf_counter()
        full = make_selector("kmufs", n_features_to_select=h, n_clusters=k, admm=args.admm).fit(X)
        fit_s = time.perf_counter() - t
        print(f"{name:>10} {X.shape[0]:>5} {X.shape[1]:>6} {k:>3} {1e3 * per_iter['factored']:>10.2f} "
              f"{1e3 * per_iter['dense']:>11.2f} "
              f"{per_iter['dense'] / max(per_iter['factored'], 1e-12):>7.1f} "
              f"{np.abs(fast.W_ - dense.W_).max():>9.1e} "
              f"{str(np.array_equal(fast.support_, dense.support_)):>5} {full.n_iter_:>6} "
              f"{full.objective_history_[-1] / full.optimal_objective_:>8.4f} {fit_s:>6.2f}")


if __name__ == "__main__":
    main()
