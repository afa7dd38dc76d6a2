"""MCFS: one fit per setting for every feature count, the faster LARS step, and scikit-feature.

Section ``sweep`` (default), per data set, the feature counts of its config (six: 50..300):

* refitted per count (one fit per count, as a runner without the one-fit shortcut would do), and
  as the runner does it: one fit at the largest count, each count's subset from
  ``top_features(m)``;
* scikit-feature's MCFS (``skfeature-chappers``; called as in ``bench_skfeature.py``, whose
  helpers are imported: its own binary kNN graph, ``Lars(n_nonzero_coefs=m)``), one fit per count
  since its LARS cardinality is m.

Both sides use the matched parameters of ``bench_skfeature.py`` (k = 5, binary weights) unless
``--weight`` says otherwise. Agreement per count, checking the one-fit shortcut: the subset of
the per-count refit against ``top_features(m)`` of the one fit (same? Jaccard) and the max
|score| difference of the unit-norm coefficient maxima (Eq. 5). The sides alternate per count in
one process (refit, scikit-feature), ``--repeats`` times; times are the best of the repeats (a
sweep's time is the best of its per-repeat sums). The graph is read from the disk cache by every
fit (written by a warm-up fit first).

Section ``bound``: the 5x target against what the paper's lasso path cannot skip. Every LARS
step of either side needs one product X^T u (n x d, the correlations of the step's direction),
so a sweep costs at least (its steps) x (one product). Counted: the steps of our one fit at the
largest count (all c paths, the lasso path up to its first step with h non-zeros) and the plain
LAR steps of scikit-feature's fits, one per count (``Lars.n_iter_``, recorded by a counting
subclass put in scikit-feature's namespace). ``bound`` = scikit-feature's sweep time / (our
steps x one product): the speed-up we would have with nothing but the products.

Section ``solver``: stage 2 alone, ``solver="implicit"`` (``ufsbench.numerics.lars``) against
``"gram"`` (the d x d Gram and scikit-learn's ``lars_path_gram``) at one cardinality ``--h``.

Usage: python benchmarks/bench_mcfs.py [--data prostate_ge pix10p] [--sections sweep solver]
                                       [--weight binary] [--repeats 1] [--no-skfeature]
                                       [--h 100] [--budget 600]
       python benchmarks/bench_mcfs.py --sections bound --repeats 3
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
import types

import numpy as np
from common import feature_count_grid, jaccard, load_bench_data, machine_line, markdown_table, measure

from ufsbench.methods import make_selector
from ufsbench.methods.mcfs import coefficients_for, sparse_spectral_coefficients
from ufsbench.numerics import knn_graph, ranking_from_scores
from ufsbench.numerics.spectral import generalized_spectral_embedding


def best(seconds: list) -> float:
    """Best of the repeats: on a shared machine the minimum is the least disturbed run."""
    return float(min(seconds))


def _timed(func):
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def sweep(spec: str, weight: str, repeats: int, with_skfeature: bool) -> tuple[list, list]:
    """(sweep row, per-count rows) for one data set."""
    label, X, _, c = load_bench_data(spec)
    counts = [min(m, X.shape[1]) for m in feature_count_grid(spec)]
    params = {"k": 5, "weight": weight, "memory": tempfile.mkdtemp(prefix="bench_mcfs_cache")}

    def refit(m):
        return make_selector("mcfs", n_features_to_select=m, n_clusters=c, random_state=0,
                             **params).fit(X)

    refit(min(counts))   # the graph into the disk cache: every fit below reads it
    if with_skfeature:
        from bench_skfeature import _skfeature, theirs
        _skfeature()
    times = {"refit": [], "one": [], "sk": []}
    per_fit = {"refit": {}, "sk": {}}
    refits = {}
    for _ in range(repeats):
        totals = {"refit": 0.0, "sk": 0.0}
        for m in counts:   # the sides alternate per count: load changes hit both alike
            seconds, refits[m] = _timed(lambda m=m: refit(m))
            per_fit["refit"].setdefault(m, []).append(seconds)
            totals["refit"] += seconds
            if with_skfeature:
                seconds, _ = _timed(lambda m=m: theirs("mcfs", X, c, m))
                per_fit["sk"].setdefault(m, []).append(seconds)
                totals["sk"] += seconds
        seconds, one = _timed(lambda: (lambda s: (s, [s.top_features(m) for m in counts]))(
            refit(max(counts))))
        times["one"].append(seconds)
        for side in ("refit",) + (("sk",) if with_skfeature else ()):
            times[side].append(totals[side])
    one_fit = one[0]
    rows = []
    for m in counts:
        ref = refits[m]
        coef, _ = coefficients_for(one_fit._path_steps, m)
        served = one_fit.top_features(m)
        rows.append([label, m, f"{best(per_fit['refit'][m]):.3f}",
                     "yes" if np.array_equal(served, np.flatnonzero(ref.support_)) else "NO",
                     f"{jaccard(served, np.flatnonzero(ref.support_)):.2f}",
                     f"{np.max(np.abs(np.abs(coef).max(axis=1) - ref.scores_)):.1e}",
                     f"{best(per_fit['sk'][m]):.3f}" if per_fit["sk"] else "not run"])
    med = {k: best(v) if v else None for k, v in times.items()}
    row = [label, c, weight, len(counts), f"{med['refit']:.2f}", f"{med['one']:.2f}",
           f"{med['refit'] / med['one']:.1f}"]
    if med["sk"] is not None:
        row += [f"{med['sk']:.2f}", f"{med['sk'] / med['one']:.2f}"]
    else:
        row += ["not run", ""]
    return row, rows


def solver_row(spec: str, h: int, budget: float | None) -> list:
    """Stage 2 alone at cardinality h: implicit-Gram LARS against the formed Gram."""
    label, X, _, n_classes = load_bench_data(spec)
    S = knn_graph(X, k=5, weight="heat", sigma=None)
    Y, _ = generalized_spectral_embedding(S, n_classes)
    out = {}
    for solver in ("implicit", "gram"):
        holder = {}

        def fit(solver=solver, holder=holder):
            holder["A"], holder["reached"] = sparse_spectral_coefficients(X, Y, h, solver=solver)

        out[solver] = (measure(fit, budget=budget), holder)
    fast, slow = out["implicit"][0], out["gram"][0]
    untraced, _ = _timed(lambda: sparse_spectral_coefficients(X, Y, h, solver="implicit"))
    row = [label, Y.shape[1], h, fast.time_text(), f"{untraced:.3f}", f"{fast.peak_mb:.1f}",
           slow.time_text(), f"{slow.peak_mb:.1f}"]
    if slow.seconds is None:
        return row + [f"> {budget / fast.seconds:.0f}", "n/a", "n/a", "n/a"]
    A_fast, A_slow = out["implicit"][1]["A"], out["gram"][1]["A"]
    sel = [np.sort(ranking_from_scores(np.abs(A).max(axis=1))[:h]) for A in (A_fast, A_slow)]
    return row + [f"{slow.seconds / fast.seconds:.1f}", f"{np.max(np.abs(A_fast - A_slow)):.1e}",
                  "yes" if np.array_equal(A_fast != 0, A_slow != 0) else "NO",
                  "yes" if np.array_equal(sel[0], sel[1]) else "NO"]


SWEEP_HEADER = ["data", "c", "weight", "counts", "refits s", "one fit + top_features s",
                "one-fit speed-up", "skfeature: one fit per count s", "skfeature / ours (sweep)"]
COUNT_HEADER = ["data", "m", "refit s", "one-fit subset = refit", "Jaccard", "max |d score|",
                "skfeature fit s"]
SOLVER_HEADER = ["data", "K", "h", "implicit s", "implicit s untraced", "implicit MB", "gram s",
                 "gram MB", "speed-up", "max |dA|", "same supports", "same selection"]


BOUND_HEADER = ["data set", "c", "ours: steps", "ours: sweep s (one fit)",
                "scikit-feature: LAR steps", "scikit-feature: sweep s (one fit per count)",
                "one X^T u product ms", "ours: products alone s", "speed-up now",
                "bound: speed-up with products alone"]


def bound_row(spec: str, weight: str, repeats: int) -> list:
    """The 5x target's bound for one data set (see the module docstring, section ``bound``)."""
    from bench_skfeature import _skfeature, theirs
    from skfeature.function.sparse_learning_based import MCFS as skfeature_mcfs

    label, X, _, c = load_bench_data(spec)
    counts = [min(m, X.shape[1]) for m in feature_count_grid(spec)]
    _skfeature()
    lar_steps: list[int] = []
    plain_lars = skfeature_mcfs.linear_model.Lars

    class CountingLars(plain_lars):
        def fit(self, *args, **kwargs):
            out = super().fit(*args, **kwargs)
            lar_steps.append(int(np.sum(self.n_iter_)))
            return out

    last_fit = [None]
    memory = tempfile.mkdtemp(prefix="bench_mcfs_cache")

    def ours():
        last_fit[0] = make_selector("mcfs", n_features_to_select=max(counts), n_clusters=c,
                                    random_state=0, k=5, weight=weight, memory=memory).fit(X)

    def skfeature_sweep():
        for m in counts:
            theirs("mcfs", X, c, m)

    ours()   # the graph into the disk cache, as in a sweep
    namespace = types.SimpleNamespace(Lars=CountingLars)
    original, skfeature_mcfs.linear_model = skfeature_mcfs.linear_model, namespace
    try:
        skfeature_sweep()
        steps_theirs = sum(lar_steps)
        ours_s, theirs_s = [], []
        for _ in range(repeats):   # alternating: load changes hit both alike
            ours_s.append(_timed(ours)[0])
            theirs_s.append(_timed(skfeature_sweep)[0])
    finally:
        skfeature_mcfs.linear_model = original
    # Steps of every path of the last timed fit (a path's non-zero counts: one per step + start).
    steps_ours = sum(column.nnz.size - 1 for column in last_fit[0]._path_steps)
    u = np.random.default_rng(0).standard_normal(X.shape[0])
    product_s = float(np.median([_timed(lambda: X.T @ u)[0] for _ in range(201)]))
    ours_best, theirs_best = best(ours_s), best(theirs_s)
    products = steps_ours * product_s
    return [label, c, steps_ours, f"{ours_best:.3f}", steps_theirs, f"{theirs_best:.3f}",
            f"{1e3 * product_s:.3f}", f"{products:.3f}", f"{theirs_best / ours_best:.2f}",
            f"{theirs_best / products:.2f}"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["prostate_ge", "pix10p"])
    parser.add_argument("--sections", nargs="+", default=["sweep"],
                        choices=["sweep", "solver", "bound"])
    parser.add_argument("--weight", default="binary", help="graph weights (matched: binary)")
    parser.add_argument("--repeats", type=int, default=1, help="alternating repeats (best of)")
    parser.add_argument("--no-skfeature", action="store_true")
    parser.add_argument("--h", type=int, default=100, help="solver section: LARS cardinality")
    parser.add_argument("--budget", type=float, default=600.0,
                        help="solver section: seconds per solver run before it is stopped")
    args = parser.parse_args(argv)
    print(machine_line())
    print(f"command: python benchmarks/bench_mcfs.py {' '.join(argv or sys.argv[1:])}")
    with_sk = not args.no_skfeature and importlib.util.find_spec("skfeature") is not None
    if "sweep" in args.sections:
        rows, count_rows = [], []
        for spec in args.data:
            row, per_count = sweep(spec, args.weight, args.repeats, with_sk)
            rows.append(row)
            count_rows += per_count
            print(f"# {row}", flush=True)
        print(markdown_table(SWEEP_HEADER, rows))
        print()
        print(markdown_table(COUNT_HEADER, count_rows))
    if "solver" in args.sections:
        rows = [solver_row(spec, args.h, args.budget) for spec in args.data]
        print(markdown_table(SOLVER_HEADER, rows))
    if "bound" in args.sections and with_sk:
        rows = [bound_row(spec, args.weight, args.repeats) for spec in args.data]
        print(markdown_table(BOUND_HEADER, rows))
    elif "bound" in args.sections:
        print("# bound: scikit-feature is not installed (pip install -e \".[bench]\")")


if __name__ == "__main__":
    main()
