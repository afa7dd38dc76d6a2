"""RUFS per-fit cost across its grid: the code at commit BEFORE against the current one.

The RUFS grid (src/ufsbench/configs/method/rufs.yaml, 343 settings) must reproduce the stored results, and
its fits amplify round-off strongly at small beta / alpha (a 1-ulp change of the residual norms
moves the scores by up to 1e-7 relative on coil20), so every speed-up here must leave the
iterates bitwise unchanged. For each data set and each of ``--points`` settings spread over
the grid (the config default first), both classes are fitted ``--repeats`` times, interleaved
in one process with a warm disk cache (a sweep computes the graph, the K-means start and the
Grams once per data set); the table gives median seconds, whether scores and objective
histories are bitwise equal, the largest relative score difference, the iteration counts and
whether the top-``--top`` rankings agree. Run with OMP_NUM_THREADS=1::

    python benchmarks/bench_rufs_grid.py coil20 usps isolet
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
import warnings

import numpy as np

from common import REPO, load_bench_data, machine_line, markdown_table, method_config  # noqa: E402
from ufsbench.methods.base import make_selector  # noqa: E402

BEFORE = "4659e4b"
#: (nu, alpha, beta) spread over the grid: corners, the ill-conditioned small beta / alpha
#: side (where round-off is amplified most) and interior points.
SPREAD = [(1e-6, 1e-6, 1e-6), (1e6, 1e6, 1e6), (1e6, 1e-6, 1e6), (1e-6, 1e6, 1e-6),
          (1.0, 1e6, 1e-6), (1e-2, 1e2, 1e-4), (1e2, 1e-2, 1e4), (1e-4, 1.0, 1e6),
          (1e4, 1e-4, 1.0)]


def old_class():
    """RUFS as at commit BEFORE, imported from ``git show`` (its ``@register`` dropped)."""
    src = subprocess.run(["git", "-C", str(REPO), "show", f"{BEFORE}:ufsbench/methods/rufs.py"],
                         check=True, capture_output=True, text=True).stdout
    module = types.ModuleType("old_rufs")
    exec(compile(src.replace('@register("rufs")', ""), "old_rufs.py", "exec"), module.__dict__)
    return module.RUFS


def settings(points: int) -> list[dict]:
    cfg = method_config("rufs")
    fixed, default = dict(cfg.get("params") or {}), dict(cfg.get("default") or {})
    return [dict(fixed, **default)] + [dict(fixed, nu=a, alpha=b, beta=c)
                                       for a, b, c in SPREAD[:max(points - 1, 0)]]


def timed_fit(sel, X) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sel.fit(X)
        return time.perf_counter() - t0


def compare(spec: str, old_cls, points: int, repeats: int, top: int) -> list[list[str]]:
    label, X, _, c = load_bench_data(spec)
    rows = []
    for params in settings(points):
        kw = dict(n_clusters=c, random_state=0, n_features_to_select=1, **params)
        timed_fit(old_cls(**kw), X)                      # fills the disk cache for both
        timed_fit(make_selector("rufs", **kw), X)
        t_old, t_new = [], []
        for _ in range(repeats):
            old, new = old_cls(**kw), make_selector("rufs", **kw)
            t_old.append(timed_fit(old, X))
            t_new.append(timed_fit(new, X))
        a, b = old.scores_, new.scores_
        rel = float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-300))
        same_top = np.array_equal(np.argsort(-a, kind="stable")[:top],
                                  np.argsort(-b, kind="stable")[:top])
        m_old, m_new = statistics.median(t_old), statistics.median(t_new)
        rows.append([label, ", ".join(f"{k}={params[k]:g}" for k in ("nu", "alpha", "beta")),
                     f"{m_old:.3f}", f"{m_new:.3f}", f"{m_old / m_new:.2f}",
                     str(np.array_equal(a, b) and old.objective_history_
                         == new.objective_history_),
                     f"{rel:.1e}", f"{old.n_iter_}/{new.n_iter_}", str(same_top)])
        print("| " + " | ".join(rows[-1]) + " |", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("datasets", nargs="*", default=["coil20", "usps", "isolet"])
    parser.add_argument("--points", type=int, default=10, help="settings per data set (<= 10)")
    parser.add_argument("--repeats", type=int, default=3, help="timed fits per code and setting")
    parser.add_argument("--top", type=int, default=300, help="ranking prefix that must agree")
    args = parser.parse_args()
    old_cls = old_class()
    with tempfile.TemporaryDirectory(prefix="bench_rufs_grid_") as cache:
        os.environ["UFSBENCH_CACHE"] = cache           # fresh: no entry of another code version
        print("\n".join([f"# {machine_line()}",
                         f"# command: python benchmarks/bench_rufs_grid.py {' '.join(sys.argv[1:])}",
                         f"# before = commit {BEFORE}; medians of {args.repeats} interleaved fits,"
                         f" warm disk cache", ""]))
        rows = [row for spec in args.datasets
                for row in compare(spec, old_cls, args.points, args.repeats, args.top)]
    header = ["data", "setting", "before s", "after s", "speed-up", "bitwise equal",
              "max rel. score diff", "iterations", f"same top {args.top}"]
    print(markdown_table(header, rows))
    print(f"\n# finished, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
