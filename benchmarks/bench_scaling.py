"""Scaling curves on seeded synthetic data: fit time against d (n fixed) and against n (d fixed),
the fitted exponent per method, and whether a fit formed a dense d x d matrix.

Each method is fitted at its typical setting (config ``params`` + ``default``). A method's curve
stops at the first fit that runs past the budget (larger sizes would too). The exponent is the
least-squares slope of log(time) on log(size) over the points above 0.02 s. "d x d" is measured,
not guessed: a fit whose peak allocation reached 8 d^2 bytes (one float64 d x d array) at a size
with d > 2n formed such a matrix (or n x d arrays adding up to it: the column shows the ratio at
the largest such d).

    python benchmarks/bench_scaling.py --axis d --n 200 --sizes 500 1000 2000 4000
    python benchmarks/bench_scaling.py --axis n --d 256 --sizes 500 1000 2000 --methods ls mcfs
"""

from __future__ import annotations

import argparse

from common import (
    benchmark_methods,
    fitted_exponent,
    load_bench_data,
    measure_fit,
    print_preamble,
    print_row,
    rows_table,
)

HEADER = ["method", "axis", "sizes", "seconds", "exponent", "peak MB at largest",
          "peak / 8d^2 at largest d>2n"]
N_FEATURES = 50


def _shape(axis: str, size: int, n: int, d: int) -> tuple[int, int]:
    return (n, size) if axis == "d" else (size, d)


def curve(method: str, axis: str, sizes: list[int], n: int, d: int, budget: float | None):
    """Measurements of one method along one axis, stopping at the first over-budget fit."""
    points = []
    for size in sizes:
        rows, cols = _shape(axis, size, n, d)
        _, X, _, c = load_bench_data(f"synthetic:{rows}x{cols}")
        m = measure_fit(method, X, c, N_FEATURES, budget=budget)
        points.append((size, rows, cols, m))
        if m.seconds is None:
            break
    return points


def dense_ratio(points) -> str:
    """Peak / (8 d^2) of the largest finished fit with d > 2n ('-' when there is none).

    The largest d decides: at d just above 2n a few n x d arrays already weigh more than one
    d x d array (n = 200, d = 500: 0.8 MB each against 2 MB), while a formed d x d matrix keeps
    the ratio at >= 1 at every d.
    """
    ratios = [m.peak_mb * 1024 ** 2 / (8.0 * cols ** 2)
              for _, rows, cols, m in points if cols > 2 * rows and m.peak_mb is not None]
    return f"{ratios[-1]:.2f}" if ratios else "-"


def run(axis: str, sizes: list[int], n: int = 200, d: int = 256, methods=None,
        budget: float | None = 120.0, echo: bool = True) -> list[dict]:
    rows = []
    for method in benchmark_methods(methods):
        points = curve(method, axis, sizes, n, d, budget)
        row = {"method": method, "axis": f"{axis} (n={n})" if axis == "d" else f"n (d={d})",
               "sizes": " ".join(str(p[0]) for p in points),
               "seconds": " ".join(p[3].time_text() for p in points),
               "exponent": f"{fitted_exponent([p[0] for p in points], [p[3].seconds for p in points]):.2f}",
               "peak MB at largest": f"{points[-1][3].peak_mb:.1f}",
               "peak / 8d^2 at largest d>2n": dense_ratio(points), "points": points}
        rows.append(row)
        if echo:
            print_row(HEADER, row)
    return rows


def table(rows: list[dict]) -> str:
    return rows_table(HEADER, rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--axis", choices=["d", "n"], default="d")
    ap.add_argument("--sizes", type=int, nargs="+", help="default: d 500..4000 or n 500..2000")
    ap.add_argument("--n", type=int, default=200, help="samples on the d axis")
    ap.add_argument("--d", type=int, default=256, help="features on the n axis")
    ap.add_argument("--methods", nargs="+", help="default: every selector")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per fit before stopping")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([500, 1000, 2000, 4000] if args.axis == "d" else [500, 1000, 2000])
    print_preamble(HEADER)
    run(args.axis, sizes, args.n, args.d, args.methods, args.budget)


if __name__ == "__main__":
    main()
