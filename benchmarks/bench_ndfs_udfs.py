"""NDFS and UDFS: the current fits against the code at commit 0df8ac1 (2026-11-23), interleaved.

For every data set and (alpha, beta) / (gamma, lam) point, the old and the new selector are fitted
one after the other in this process (same seed, same warm disk cache: one untimed warm-up fit per
data set and method first, so both sides read the cached graph / local Laplacian as a sweep does).
Agreement: the largest score difference relative to the largest score, and the smallest top-m
Jaccard over the data set's registry feature counts.

    OMP_NUM_THREADS=1 python benchmarks/bench_ndfs_udfs.py --methods ndfs udfs \\
        --datasets coil20 isolet orl prostate_ge usps:2000 --points default corners
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types

import numpy as np

from common import (REPO, feature_count_grid, jaccard, load_bench_data, machine_line,
                    markdown_table, typical_setting)

REFERENCE = "0df8ac1"
PARAMS = {"ndfs": ("alpha", "beta"), "udfs": ("gamma", "lam")}
CLASSES = {"ndfs": "NDFS", "udfs": "UDFS"}


def reference_class(method: str, commit: str = REFERENCE):
    """The selector class of ``commit``, imported under another name (not registered)."""
    src = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:ufsbench/methods/{method}.py"],
                         capture_output=True, text=True, check=True).stdout
    src = src.replace(f'@register("{method}")', "")
    module = types.ModuleType(f"reference_{method}")
    exec(compile(src, f"{commit}:{method}.py", "exec"), module.__dict__)
    return getattr(module, CLASSES[method])


def current_class(method: str):
    from ufsbench.methods.base import selector_class
    return selector_class(method)


def grid_points(method: str, names: list[str]) -> list[tuple[float, float]]:
    first, second = PARAMS[method]
    default = typical_setting(method)
    points = []
    for name in names:
        if name == "default":
            points.append((default[first], default[second]))
        elif name == "corners":
            points += [(a, b) for a in (1e-6, 1e6) for b in (1e-6, 1e6)]
        else:                                                        # "a,b"
            a, b = (float(v) for v in name.split(","))
            points.append((a, b))
    return points


def timed_fit(cls, X, c, params):
    sel = cls(n_clusters=c, random_state=0, **params)
    start = time.perf_counter()
    sel.fit(X)
    return time.perf_counter() - start, sel


def agreement(old, new, counts) -> tuple[float, float]:
    a, b = np.asarray(old.scores_), np.asarray(new.scores_)
    rel = float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))
    top = lambda s, m: np.argsort(-s, kind="stable")[:m]          # noqa: E731
    jac = min(jaccard(top(a, m), top(b, m)) for m in counts if m <= len(a))
    return rel, jac


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=["ndfs", "udfs"], choices=list(PARAMS))
    parser.add_argument("--datasets", nargs="+", default=["orl", "prostate_ge"])
    parser.add_argument("--points", nargs="+", default=["default"],
                        help="'default', 'corners' (1e-6 / 1e6 for both) or 'a,b'")
    parser.add_argument("--commit", default=REFERENCE, help="the reference ('before') commit")
    args = parser.parse_args(argv)
    print(f"# {machine_line()}")
    print(f"# command: python benchmarks/bench_ndfs_udfs.py {' '.join(sys.argv[1:])}")
    header = ["method", "data", "point", "before s", "after s", "speed-up", "iters before/after",
              "max rel. score diff", "min top-m Jaccard"]
    rows = []
    for method in args.methods:
        old_cls, new_cls = reference_class(method, args.commit), current_class(method)
        fixed = {k: v for k, v in typical_setting(method).items() if k not in PARAMS[method]}
        for spec in args.datasets:
            label, X, _, c = load_bench_data(spec)
            counts = feature_count_grid(spec)
            timed_fit(new_cls, X, c, dict(fixed, max_iter=1))        # warm the disk cache
            for a, b in grid_points(method, args.points):
                params = dict(fixed, **dict(zip(PARAMS[method], (a, b))))
                t_old, old = timed_fit(old_cls, X, c, params)
                t_new, new = timed_fit(new_cls, X, c, params)
                rel, jac = agreement(old, new, counts)
                rows.append([method, label, f"{a:g}, {b:g}", f"{t_old:.2f}", f"{t_new:.2f}",
                             f"{t_old / t_new:.1f}", f"{old.n_iter_}/{new.n_iter_}",
                             f"{rel:.1e}", f"{jac:.2f}"])
                print("| " + " | ".join(rows[-1]) + " |", file=sys.stderr, flush=True)
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
