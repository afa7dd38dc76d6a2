"""The disk cache of data-only intermediates (ufsbench.cache) at sweep level.

Two measurements:

* ``--mode sweep`` (default): one method's grid (its first ``--settings`` parameter settings) on
  one data set, fitted three times -- cache off (``UFSBENCH_CACHE=off``), cache on cold (a fresh
  cache directory), cache on warm (the same directory again) -- wall time of each pass, and
  whether every fit's scores / support are bit-identical across the three passes.
* ``--mode steps``: per method, one fit at its typical setting with the cache off, and the time
  spent inside the method's ``cached_call`` steps (the graph builders), so the table shows what
  share of a fit the cache can save.

Examples::

    OMP_NUM_THREADS=1 python benchmarks/bench_cache.py --method udfs --data coil20 --vary gamma
    OMP_NUM_THREADS=1 python benchmarks/bench_cache.py --mode steps --data usps:3000 \\
        --methods ndfs mcfs udfs
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import feature_count_grid, load_bench_data, machine_line, markdown_table, typical_setting  # noqa: E402

from ufsbench.methods.base import make_selector, selector_class  # noqa: E402
from ufsbench.report import method_config  # noqa: E402
from ufsbench.runner import expand_grid  # noqa: E402


def _selection(selector) -> np.ndarray:
    """What a fit outputs: scores for ranking methods, the support mask for subset methods."""
    scores = getattr(selector, "scores_", None)
    return np.asarray(scores if scores is not None else selector.support_)


def fit_settings(method: str, settings: list[dict], X, n_clusters: int, m: int):
    """Fit every setting once (seeded): total wall seconds and the per-setting outputs."""
    start, outputs = time.perf_counter(), []
    for params in settings:
        selector = make_selector(method, n_features_to_select=min(m, X.shape[1]),
                                 n_clusters=n_clusters, random_state=0, **params)
        outputs.append(_selection(selector.fit(X)))
    return time.perf_counter() - start, outputs


def grid_settings(method: str, vary: str | None, n_settings: int) -> list[dict]:
    """The first ``n_settings`` settings of the grid, or (``vary``) the grid values of one
    parameter with every other parameter at the method's typical setting."""
    if vary is None:
        return expand_grid(method_config(method))[:n_settings]
    values = (method_config(method).get("grid") or {}).get(vary)
    if not values:
        raise SystemExit(f"{method} has no grid parameter {vary!r}")
    return [dict(typical_setting(method), **{vary: v}) for v in values][:n_settings]


def sweep(method: str, spec: str, n_settings: int, vary: str | None = None) -> None:
    """Cache off / cold / warm passes over the grid settings (:func:`grid_settings`)."""
    label, X, _, n_classes = load_bench_data(spec)
    settings = grid_settings(method, vary, n_settings)
    m = feature_count_grid(spec)[0]
    passes = {}
    with tempfile.TemporaryDirectory(prefix="ufsbench-cache-bench-") as location:
        for name, value in (("off", "off"), ("on, cold", location), ("on, warm", location)):
            os.environ["UFSBENCH_CACHE"] = value
            passes[name] = fit_settings(method, settings, X, n_classes, m)
    reference = passes["off"][1]
    rows = [[method, label, len(settings), name, f"{seconds:.2f}",
             f"{passes['off'][0] / seconds:.2f}",
             all(np.array_equal(a, b) for a, b in zip(outputs, reference))]
            for name, (seconds, outputs) in passes.items()]
    print(markdown_table(["method", "data", "settings", "cache", "wall s", "speed-up vs off",
                          "identical to off"], rows))


def _timed_cached_call(module, spent: list[float]):
    """Replace ``module.cached_call`` by a wrapper that adds its time to ``spent``."""
    original = module.cached_call

    def timed(func, X, **kwargs):
        start = time.perf_counter()
        try:
            return original(func, X, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    module.cached_call = timed
    return original


def steps(methods: list[str], spec: str) -> None:
    """Share of one fit (cache off) spent in the method's cached data-only steps."""
    label, X, _, n_classes = load_bench_data(spec)
    m = feature_count_grid(spec)[0]
    os.environ["UFSBENCH_CACHE"] = "off"
    header = ["method", "data", "cached steps s", "fit s", "share"]
    print(markdown_table(header, []), flush=True)
    for method in methods:
        module = sys.modules[selector_class(method).__module__]
        if not hasattr(module, "cached_call"):
            print(f"| {method} | {label} | - | - | no cached step |", flush=True)
            continue
        spent: list[float] = []
        original = _timed_cached_call(module, spent)
        try:
            seconds, _ = fit_settings(method, [typical_setting(method)], X, n_classes, m)
        finally:
            module.cached_call = original
        step = sum(spent)
        row = [method, label, f"{step:.2f}", f"{seconds:.2f}", f"{step / seconds:.0%}"]
        print("| " + " | ".join(row) + " |", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("sweep", "steps"), default="sweep")
    parser.add_argument("--method", default="udfs", help="sweep mode: the method")
    parser.add_argument("--methods", nargs="+", default=["udfs", "ndfs", "mcfs"],
                        help="steps mode: the methods")
    parser.add_argument("--data", default="synthetic:400x300",
                        help="coil20, usps:3000, prostate_ge, synthetic:NxD, ...")
    parser.add_argument("--settings", type=int, default=8, help="sweep mode: grid settings")
    parser.add_argument("--vary", default=None,
                        help="sweep mode: vary only this grid parameter (others at the default)")
    args = parser.parse_args(argv)
    print(machine_line())
    print(f"command: python benchmarks/bench_cache.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    if args.mode == "sweep":
        sweep(args.method, args.data, args.settings, args.vary)
    else:
        steps(args.methods, args.data)


if __name__ == "__main__":
    main()
