"""Shared body of the fast-path scripts that compare a selector's ``solver`` options in full fits.

``compare`` fits one method on a data set at one parameter setting once per solver (time and
tracemalloc peak via ``common.measure_fit``) and reports the agreement of the fast fit with the
reference one: the same top-m feature sets for every m of the data set's feature-count grid /
the same subset, and the largest relative difference
of the objective histories. A reference name found in ``references`` (name -> function of X
and the setting's parameters returning an object with ``ranking_``, ``objective_history_`` and
``n_iter_``) is timed on that function instead of a ``solver=`` fit: the test reference modules
of tests/methods/. ``d_scaling`` fits the fast solver on seeded synthetic data of growing
d at fixed n and fits the exponent of time in d; "peak / 8d^2" is the measured peak allocation
over one float64 d x d array (< 1: no d x d matrix was formed).
"""

from __future__ import annotations

import numpy as np
from common import (
    feature_count_grid,
    fitted_exponent,
    is_subset_method,
    load_bench_data,
    measure,
    measure_fit,
    print_preamble,
    print_row,
    typical_setting,
)

COMPARE_HEADER = ["data", "setting", "solver", "seconds", "peak MB", "iterations",
                  "speed-up of fast", "same selection", "max rel. objective diff"]
SCALING_HEADER = ["method", "solver", "n", "d", "seconds", "peak MB", "peak / 8d^2"]


def _setting_text(setting: dict) -> str:
    return " ".join(f"{k}={v:g}" for k, v in setting.items()) or "default"


def _agreement(method: str, fast, ref, counts: list[int], scale: float) -> tuple[str, str]:
    """('yes'/'NO', max relative objective difference) of two fitted selectors.

    The relative difference is taken against max(|objective|, 1e-12 * scale), scale = ||X||_F^2,
    so that objectives at round-off level (an exactly fitted degenerate model) do not show as
    large relative differences.

    Ranking methods agree when their top-m feature sets are equal for every m of the data set's
    feature-count grid (what a sweep evaluates); subset methods when the subsets are equal.
    """
    if is_subset_method(method):
        same = np.array_equal(fast.support_, ref.support_)
    else:
        same = all(set(fast.ranking_[:m]) == set(ref.ranking_[:m]) for m in counts)
    a, b = np.asarray(fast.objective_history_), np.asarray(ref.objective_history_)
    if a.shape != b.shape:
        return ("yes" if same else "NO"), f"{len(a)} vs {len(b)} its"
    floor = max(1e-12 * scale, 1e-300)
    return ("yes" if same else "NO"), f"{np.max(np.abs(a - b) / np.maximum(np.abs(b), floor)):.1e}"


def compare(method: str, specs: list[str], settings: list[dict], fast: str, refs: list[str],
            h: int = 100, budget: float | None = 600.0, references: dict | None = None) -> None:
    """Print one row per (data set, setting, solver): the fast solver first, then the references."""
    references = references or {}
    print_preamble(COMPARE_HEADER)
    for spec in specs:
        label, X, _, n_classes = load_bench_data(spec)
        for setting in settings:
            done = measure_fit(method, X, n_classes, h, budget=budget, solver=fast, **setting)
            print_row(COMPARE_HEADER, _row(label, setting, fast, done, "", ("", "")))
            for ref in refs:
                if ref in references:
                    params = dict(typical_setting(method), **setting)
                    m = measure(lambda: references[ref](X, params), budget)
                else:
                    m = measure_fit(method, X, n_classes, h, budget=budget, solver=ref, **setting)
                ok = done.selector is not None and m.selector is not None
                ratio = (f"{m.seconds / done.seconds:.1f}" if ok else
                         f"> {budget / done.seconds:.0f}" if done.seconds else "n/a")
                agree = (_agreement(method, done.selector, m.selector, feature_count_grid(spec),
                                    float(np.sum(X * X))) if ok else ("n/a", "n/a"))
                print_row(COMPARE_HEADER, _row(label, setting, ref, m, ratio, agree))


def _row(label, setting, solver, m, ratio, agree) -> dict:
    its = getattr(m.selector, "n_iter_", "n/a") if m.selector is not None else "n/a"
    return {"data": label, "setting": _setting_text(setting), "solver": solver,
            "seconds": m.time_text(), "peak MB": f"{m.peak_mb:.1f}", "iterations": its,
            "speed-up of fast": ratio, "same selection": agree[0],
            "max rel. objective diff": agree[1]}


def d_scaling(method: str, solver: str, sizes: list[int], n: int = 200, h: int = 50,
              budget: float | None = 600.0, **setting) -> float:
    """Fit time against d at fixed n for one solver; prints rows and returns the exponent."""
    print_preamble(SCALING_HEADER)
    seconds = []
    for d in sizes:
        _, X, _, n_classes = load_bench_data(f"synthetic:{n}x{d}")
        m = measure_fit(method, X, n_classes, h, budget=budget, solver=solver, **setting)
        seconds.append(m.seconds)
        print_row(SCALING_HEADER, {"method": method, "solver": solver, "n": n, "d": d,
                                   "seconds": m.time_text(), "peak MB": f"{m.peak_mb:.1f}",
                                   "peak / 8d^2": f"{m.peak_mb * 1024 ** 2 / (8.0 * d * d):.3f}"})
        if m.seconds is None:
            break
    exponent = fitted_exponent(sizes[:len(seconds)], seconds)
    print(f"\nfitted exponent of time in d ({method}, solver={solver}, n={n}): {exponent:.2f}")
    return exponent


def parse_setting(text: str) -> dict:
    """'alpha=1,beta=100' -> {'alpha': 1.0, 'beta': 100.0} ('default' -> {})."""
    if text == "default":
        return {}
    return {k: float(v) for k, v in (item.split("=") for item in text.split(","))}


def main(method: str, fast: str, default_refs: list[str], example_setting: str, doc: str,
         argv=None, references: dict | None = None) -> None:
    """The command line of a bench_<method>.py that compares ``fast`` with reference solvers."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["synthetic:100x2000"])
    ap.add_argument("--settings", nargs="+", default=["default"],
                    help=f"'default' or e.g. {example_setting} (on top of the config default)")
    ap.add_argument("--refs", nargs="*", default=default_refs,
                    help="reference solvers" + (f" or {', '.join(references)}" if references else ""))
    ap.add_argument("--sizes", type=int, nargs="*", default=[500, 1000, 2000, 4000],
                    help="d values of the scaling curve (none: skip it)")
    ap.add_argument("--n", type=int, default=200, help="samples of the scaling curve")
    ap.add_argument("--budget", type=float, default=600.0)
    args = ap.parse_args(argv)
    compare(method, args.data, [parse_setting(s) for s in args.settings], fast, args.refs,
            budget=args.budget, references=references)
    if args.sizes:
        print()
        d_scaling(method, fast, args.sizes, n=args.n, budget=args.budget)
