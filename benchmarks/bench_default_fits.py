"""Every method's default fit on every paper data set: seconds, iterations and convergence.

The default fit is what ``ufsbench run`` uses for the label-free rule: the method config's fixed
``params`` plus its ``default`` setting, 100 features (capped at d), ``random_state=0``, the
disk cache off. One row per (data set, method): wall seconds, CPU seconds of this process, and
the fit's ``n_iter_`` / ``converged_`` where the method iterates. A fit over ``--budget`` seconds
is stopped and shown as "> budget".

    OPENBLAS_NUM_THREADS=2 python benchmarks/bench_default_fits.py             # n <= 2000 sets
    python benchmarks/bench_default_fits.py --datasets usps --budget 120
    python benchmarks/bench_default_fits.py --methods sogfs scfs --datasets coil20 jaffe

Run it on an idle machine and set the BLAS thread count explicitly: times measured beside other
jobs are several times higher.
"""

from __future__ import annotations

import argparse
import time

from common import (
    FitTimeout,
    benchmark_methods,
    load_bench_data,
    machine_line,
    markdown_table,
    time_budget,
    typical_setting,
)

#: The papers' data sets with at most 2000 samples (target: every default fit <= 10 s).
SMALL_SETS = ["jaffe", "umist", "orl", "att", "coil20", "isolet", "binalpha", "basehock",
              "allaml", "srbct", "lymphoma", "prostate_ge", "pix10p", "pie10p"]
HEADER = ["data set", "method", "wall s", "cpu s", "n_iter", "converged"]


def fit_row(method: str, label: str, X, n_clusters: int, budget: float) -> list:
    from ufsbench.methods import make_selector

    selector = make_selector(method, n_features_to_select=min(100, X.shape[1]),
                             n_clusters=n_clusters, random_state=0, **typical_setting(method))
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        with time_budget(budget):
            selector.fit(X)
    except FitTimeout:
        return [label, method, f"> {budget:.0f}", "", "", ""]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n_iter = getattr(selector, "n_iter_", None)
    converged = getattr(selector, "converged_", None)
    return [label, method, f"{wall:.2f}", f"{cpu:.2f}",
            "" if n_iter is None else n_iter, "" if converged is None else converged]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SMALL_SETS)
    parser.add_argument("--methods", nargs="+", default=None)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per fit")
    args = parser.parse_args()
    print(f"# {machine_line()}\n# {time.strftime('%Y-%m-%d %H:%M')}")
    rows = []
    for spec in args.datasets:
        label, X, _, n_clusters = load_bench_data(spec)
        for method in benchmark_methods(args.methods):
            rows.append(fit_row(method, label, X, n_clusters, args.budget))
            print(" | ".join(map(str, rows[-1])), flush=True)
    print()
    print(markdown_table(HEADER, rows))


if __name__ == "__main__":
    main()
