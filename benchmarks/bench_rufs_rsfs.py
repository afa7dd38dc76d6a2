"""RUFS and RSFS fits: the code at commit 0df8ac1 (2026-11-23) against the current one.

What the current code does differently (both exact up to round-off): the K-means / spectral
starts, graphs and the data Grams X^T X / X X^T are read from the disk cache (keyed by data
checksum and seed), so a grid sweep computes them once per data set; RSFS's d x d W-steps reuse
the cached X^T X (only the reweighting diagonal changes); RUFS's sample-weighted Grams are
symmetric rank-k products (syrk); residual row norms are shared between the objective and the
next reweighting; RSFS iterates on the sparse Laplacian.

Two tables:

* ``--datasets``: one fit per (data set, method, setting) at the config default and at grid
  corners, old and new interleaved in one process; time, max relative score difference, top-m
  Jaccard for m in ``--counts``.
* ``--sweep DATA``: the method's whole config grid (343 settings + default; ``--thin k`` takes
  every k-th) fitted on one data set by both codes in turn; total fit time, largest score
  difference, smallest Jaccard, settings with a difference above 1e-9.

The disk cache is a fresh temporary directory (``--cache`` to choose), so the new code's first
fit pays for every cache miss. Run with OMP_NUM_THREADS=1::

    python benchmarks/bench_rufs_rsfs.py --datasets coil20 isolet orl prostate_ge usps:2000
    python benchmarks/bench_rufs_rsfs.py --datasets --sweep jaffe
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import types
import warnings

import numpy as np

from common import (REPO, jaccard, load_bench_data, machine_line, markdown_table,  # noqa: E402
                    method_config)
from ufsbench.methods.base import make_selector  # noqa: E402
from ufsbench.runner import expand_grid  # noqa: E402

BEFORE = "0df8ac1"
CORNERS = {"rufs": (1e-6, 1e6), "rsfs": (1e-3, 1e3)}
CLASSES = {"rufs": "RUFS", "rsfs": "RSFS"}


def old_class(method: str):
    """The selector class of ``method`` as at commit BEFORE, imported from ``git show`` (its
    ``@register`` is dropped: the id is taken by the current class)."""
    src = subprocess.run(["git", "-C", str(REPO), "show", f"{BEFORE}:ufsbench/methods/{method}.py"],
                         check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"old_{method}")
    exec(compile(src.replace(f'@register("{method}")', ""), f"old_{method}.py", "exec"),
         module.__dict__)
    return getattr(module, CLASSES[method])


def corner_settings(method: str) -> list[dict]:
    """The config default and five corners of the (nu, alpha, beta) grid."""
    lo, hi = CORNERS[method]
    cfg = method_config(method)
    fixed, default = dict(cfg.get("params") or {}), dict(cfg.get("default") or {})
    corners = [(lo, lo, lo), (hi, hi, hi), (hi, lo, hi), (lo, hi, lo), (1.0, hi, lo)]
    return [dict(fixed, **default)] + [dict(fixed, nu=a, alpha=b, beta=c) for a, b, c in corners]


def fit_pair(old_cls, method, X, c, params):
    """(old seconds, new seconds, old selector, new selector), fitted one after the other."""
    kw = dict(n_clusters=c, random_state=0, n_features_to_select=1, **params)
    old, new = old_cls(**kw), make_selector(method, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        old.fit(X)
        t1 = time.perf_counter()
        new.fit(X)
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1, old, new


def agreement(old, new, counts) -> tuple[float, float]:
    """Max relative score difference and the smallest top-m Jaccard over ``counts``."""
    scale = max(float(np.abs(old.scores_).max()), 1e-300)
    diff = float(np.abs(old.scores_ - new.scores_).max()) / scale
    jac = min(jaccard(old.ranking_[:m], new.ranking_[:m]) for m in counts if m <= len(old.scores_))
    return diff, jac


def setting_label(params: dict) -> str:
    return ", ".join(f"{k}={params[k]:g}" for k in ("nu", "alpha", "beta"))


def point_table(datasets, methods, counts) -> None:
    header = ["data", "n x d", "method", "setting", "before s", "after s", "speed-up",
              "max rel. score diff", "min top-m Jaccard"]
    rows = []
    for spec in datasets:
        label, X, _, c = load_bench_data(spec)
        for method in methods:
            old_cls = old_class(method)
            for params in corner_settings(method):
                t_old, t_new, old, new = fit_pair(old_cls, method, X, c, params)
                diff, jac = agreement(old, new, counts)
                rows.append([label, f"{X.shape[0]}x{X.shape[1]}", method, setting_label(params),
                             f"{t_old:.2f}", f"{t_new:.2f}", f"{t_old / t_new:.1f}",
                             f"{diff:.1e}", f"{jac:.2f}"])
                print("| " + " | ".join(rows[-1]) + " |", file=sys.stderr, flush=True)
    print(markdown_table(header, rows))


def sweep_table(spec, methods, counts, thin) -> None:
    label, X, _, c = load_bench_data(spec)
    header = ["data", "method", "settings", "before s", "after s", "speed-up",
              "max rel. score diff", "settings > 1e-9", "min top-m Jaccard"]
    rows = []
    for method in methods:
        old_cls = old_class(method)
        settings = expand_grid(method_config(method))[::thin]
        total_old = total_new = 0.0
        worst, worst_jac, above = 0.0, 1.0, 0
        for params in settings:
            t_old, t_new, old, new = fit_pair(old_cls, method, X, c, params)
            total_old, total_new = total_old + t_old, total_new + t_new
            diff, jac = agreement(old, new, counts)
            worst, worst_jac, above = max(worst, diff), min(worst_jac, jac), above + (diff > 1e-9)
        rows.append([label, method, str(len(settings)), f"{total_old:.1f}", f"{total_new:.1f}",
                     f"{total_old / total_new:.1f}", f"{worst:.1e}", str(above),
                     f"{worst_jac:.2f}"])
        print("| " + " | ".join(rows[-1]) + " |", file=sys.stderr, flush=True)
    print(markdown_table(header, rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="*", default=["coil20", "isolet", "orl", "prostate_ge",
                                                          "usps:2000"],
                        help="data specs for the per-setting table (none: skip it)")
    parser.add_argument("--methods", nargs="+", default=["rufs", "rsfs"], choices=list(CLASSES))
    parser.add_argument("--sweep", default=None, help="data spec for a whole-grid sweep")
    parser.add_argument("--thin", type=int, default=1, help="sweep every k-th grid setting")
    parser.add_argument("--counts", type=int, nargs="+", default=[10, 50, 100],
                        help="feature counts m of the top-m Jaccard")
    parser.add_argument("--cache", default=None, help="disk cache dir (default: a fresh temp dir)")
    args = parser.parse_args()
    os.environ["UFSBENCH_CACHE"] = args.cache or tempfile.mkdtemp(prefix="bench_rufs_rsfs_")
    print(f"# {machine_line()}")
    print(f"# command: python benchmarks/bench_rufs_rsfs.py {' '.join(sys.argv[1:])}")
    print(f"# before = commit {BEFORE}; disk cache {os.environ['UFSBENCH_CACHE']}\n")
    if args.datasets:
        point_table(args.datasets, args.methods, args.counts)
    if args.sweep:
        print()
        sweep_table(args.sweep, args.methods, args.counts, args.thin)
    print(f"\n# finished, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
