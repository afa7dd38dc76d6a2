"""Benchmark EUFS and LDSSL: the current fits against the code at commit 0df8ac1 (2026-11-23).

Usage: OMP_NUM_THREADS=1 python benchmarks/bench_eufs_ldssl.py [--methods eufs ldssl]
       [--datasets prostate_ge orl] [--settings 1,1 1e-6,1e6] [--repeats 1] [--before 0df8ac1]

"before" is the method's module as it was at ``--before`` (read with ``git show``, executed
without its registry decorator); "after" is the working tree. Both fit the same data with the
config's fixed ``params`` and each (alpha, beta) setting, one after the other in one process
(order alternating between repeats; best time kept). Agreement: the max score difference
relative to the largest score, the top-m Jaccard for the data set's feature counts (minimum over
counts), and whether both ran the same number of iterations. Prints a markdown table.
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
from ufsbench.methods.base import make_selector, selector_class


def load_before(method: str, commit: str):
    """The selector class of ``ufsbench/methods/<method>.py`` at ``commit`` (not registered)."""
    source = subprocess.run(["git", "show", f"{commit}:ufsbench/methods/{method}.py"], cwd=REPO,
                            check=True, capture_output=True, text=True).stdout
    source = source.replace(f'@register("{method}")\n', "")
    module = types.ModuleType(f"_before_{method}")
    exec(compile(source, f"{commit}:{method}.py", "exec"), module.__dict__)
    return getattr(module, selector_class(method).__name__)


def timed_fit(make, X):
    start = time.perf_counter()
    sel = make().fit(X)
    return time.perf_counter() - start, sel


def compare(before, after, counts) -> dict:
    a, b = np.asarray(before.scores_), np.asarray(after.scores_)
    scale = max(np.abs(a).max(), np.finfo(float).tiny)
    rank_a, rank_b = before.ranking_, after.ranking_
    return {"score_diff": float(np.abs(a - b).max() / scale),
            "jaccard": min(jaccard(rank_a[:m], rank_b[:m]) for m in counts if m <= len(a)),
            "same_iters": before.n_iter_ == after.n_iter_}


def run(method, spec, setting, repeats, commit):
    label, X, _, c = load_bench_data(spec)
    params = {**typical_setting(method), **setting}
    old_cls = load_before(method, commit)
    makers = {"before": lambda: old_cls(n_clusters=c, random_state=0, **params),
              "after": lambda: make_selector(method, n_clusters=c, random_state=0, **params)}
    best, fits = {"before": np.inf, "after": np.inf}, {}
    for r in range(repeats):
        for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
            seconds, fits[side] = timed_fit(makers[side], X)
            best[side] = min(best[side], seconds)
    agree = compare(fits["before"], fits["after"], feature_count_grid(spec))
    return [method, label, ", ".join(f"{k}={v:g}" for k, v in setting.items()),
            fits["after"].n_iter_, f"{best['before']:.2f}", f"{best['after']:.2f}",
            f"{best['before'] / best['after']:.1f}", f"{agree['score_diff']:.1e}",
            f"{agree['jaccard']:.2f}", "yes" if agree["same_iters"] else "no"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="*", default=["eufs", "ldssl"])
    ap.add_argument("--datasets", nargs="*", default=["prostate_ge", "orl"])
    ap.add_argument("--settings", nargs="*", default=["1,1"],
                    help="alpha,beta pairs (the config default is 1,1)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--before", default="0df8ac1", help="commit of the 'before' code")
    args = ap.parse_args()
    print(machine_line())
    print(f"\n`{' '.join(['python'] + sys.argv)}`\n")
    header = ["method", "data", "setting", "iterations", "before s", "after s", "speed-up",
              "max rel. score diff", "top-m Jaccard (min)", "same iterations"]
    rows = []
    for method in args.methods:
        for spec in args.datasets:
            for pair in args.settings:
                alpha, beta = (float(v) for v in pair.split(","))
                rows.append(run(method, spec, {"alpha": alpha, "beta": beta}, args.repeats,
                                args.before))
                print(" | ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
