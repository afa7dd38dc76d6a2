"""``ufsbench planted``: the planted-feature suite (:mod:`ufsbench.planted`) from the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ufsbench.errors import UFSBenchError

HELP = """usage: ufsbench planted [methods=<name>,...|all] [regimes=<name>,...|all] [seeds=3]
                        [thin=3] [n_jobs=1] [compute=false] [out=DIR] [results_dir=DIR]

Seeded synthetic data with planted informative features in five regimes: high_variance
(informative features have larger variance than noise), zscored (the same, z-scored), redundant
(plus noisy copies of each informative feature), wide (d >> n: 100 x 5000), unequal_separation
(informative features separate the clusters unequally well). Every method (default: all that
select) is fitted at its label-free default setting and at each point of its config grid
(thinned to every THIN-th value plus the default; thin=1: the full grid) for each seed, and
scored by precision@m (m = the number of planted features). Reported per method and regime: the
mean over seeds at the default setting and at the best grid point (chosen with the ground truth:
optimistic). A measurement, not a pass/fail test.

COST: seeds x regimes x (grid points) fits per method: about 2,500 fits for every method with
thin=3 and 3 seeds, most under a second (the wide regime and SCFS, SOGFS, K-means UFS, UFSOL
take longer). Each finished fit is stored at once under <results_dir>/_planted/ (Ctrl-C loses
none; rerun to resume). compute=false fits nothing and reports what is stored. out=DIR writes
planted.md, planted.csv (the table), planted_fits.csv (every fit) and planted_heatmap.png/.pdf.
"""

KEYS: dict[str, Any] = {"methods": "all", "regimes": "all", "seeds": 3, "thin": 3, "n_jobs": 1,
        "compute": True, "out": None, "results_dir": None}


def _int(name: str, value: str, minimum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum and not (name == "n_jobs" and number == -1):
        raise UFSBenchError(f"{name}={value!r} must be an integer >= {minimum}, e.g. "
                            f"{name}={KEYS[name]}")
    return number


def parse_keys(args: list[str]) -> dict[str, Any]:
    """The command line's key=value pairs, checked (one line and exit 2 on a bad one)."""
    from ufsbench.methods import available_methods
    from ufsbench.methods.base import keeps_all_features
    from ufsbench.planted import REGIMES

    keys = dict(KEYS)
    for item in args:
        name, eq, value = item.partition("=")
        if not eq or name not in KEYS:
            raise UFSBenchError(f"unknown argument {item!r}; planted takes "
                                f"{', '.join(f'{k}=' for k in KEYS)} (ufsbench planted --help)")
        keys[name] = value
    for name, minimum in (("seeds", 1), ("thin", 1), ("n_jobs", 1)):
        keys[name] = _int(name, str(keys[name]), minimum)
    if str(keys["compute"]).lower() not in ("true", "false"):
        raise UFSBenchError(f"compute={keys['compute']!r} must be true or false")
    keys["compute"] = str(keys["compute"]).lower() == "true"
    selecting = [m for m in available_methods() if not keeps_all_features(m)]
    keys["methods"] = _list("method", keys["methods"], selecting)
    keys["regimes"] = _list("regime", keys["regimes"], list(REGIMES))
    return keys


def _list(what: str, value: str, known: list[str]) -> list[str]:
    if value == "all":
        return known
    chosen = [v for v in value.split(",") if v]
    unknown = [v for v in chosen if v not in known]
    if unknown or not chosen:
        raise UFSBenchError(f"unknown {what}(s) {', '.join(unknown) or repr(value)}; known: "
                            f"{', '.join(known)} (or all)")
    return chosen


def write_outputs(out: str, table, fits, command: str, seeds, thin: int,
                  missing: list[str]) -> list[Path]:
    """planted.md, planted.csv, planted_fits.csv and the heatmap (PNG and PDF) in ``out``."""
    from ufsbench import figure_style
    from ufsbench.planted import heatmap, markdown_report

    directory = Path(out).expanduser()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "planted.md").write_text(markdown_report(table, fits, command, seeds, thin,
                                                              missing))
        table.to_csv(directory / "planted.csv", index=False, float_format="%.4f")
        fits.to_csv(directory / "planted_fits.csv", index=False, float_format="%.4f")
    except OSError as exc:
        raise UFSBenchError(f"cannot write to {directory} ({exc.strerror or exc}); give a "
                            f"writable out=DIR") from None
    paths = [directory / n for n in ("planted.md", "planted.csv", "planted_fits.csv")]
    if len(table):
        from ufsbench.reproduce.experiments import thin_text

        grids = "full grids" if thin == 1 else f"grids thinned to {thin_text(thin)}"
        caption = (f"Seeds {list(seeds)}; {grids}; the best grid point is chosen with the "
                   "ground truth (optimistic).")
        paths += figure_style.save_figure(heatmap(table, caption), directory, "planted_heatmap")
    return paths


def _missing(table, methods, regimes, n_seeds: int) -> list[str]:
    """The cells not computed, and those computed on fewer than ``n_seeds`` seeds."""
    done = dict(zip(zip(table["method"], table["regime"], table["rule"]),
                    table["n_seeds"])) if len(table) else {}
    out = []
    for m in methods:
        for r in regimes:
            for rule in ("default", "best"):
                if (m, r, rule) not in done:
                    out.append(f"{m} on {r} ({rule})")
                elif done[(m, r, rule)] < n_seeds:
                    out.append(f"{m} on {r} ({rule}): {done[(m, r, rule)]} of {n_seeds} seeds")
    return out


def _planted(args: list[str]) -> None:
    import shlex

    from tabulate import tabulate

    from ufsbench.paths import default_results_dir
    from ufsbench.planted import planted_table, precision_frame

    if any(a in ("-h", "--help") for a in args):
        print(HELP)
        return
    command = "ufsbench planted " + shlex.join(args)
    keys = parse_keys(args)
    results_dir = keys["results_dir"] or str(default_results_dir())
    seeds = list(range(keys["seeds"]))
    from ufsbench.planted import run_planted

    fits = run_planted(keys["methods"], keys["regimes"], seeds, keys["thin"], results_dir,
                       keys["n_jobs"], keys["compute"],
                       log=lambda msg: print(f"ufsbench: {msg}", file=sys.stderr))
    table = planted_table(fits, seeds)
    missing = _missing(table, keys["methods"], keys["regimes"], len(seeds))
    for rule, label in (("default", "default setting"), ("best", "best grid point "
                                                                  "(optimistic)")):
        if len(table):
            frame = precision_frame(table, rule).map(lambda v: "—" if v != v else f"{v:.2f}")
            print(f"precision@m, {label}, mean over seeds {seeds}:")
            print(tabulate(frame, headers="keys", tablefmt="simple", disable_numparse=True)
                  + "\n")
    done = fits.dropna(subset=["precision"]) if len(fits) else fits
    print(f"cost: {len(done)} stored fits, {done['fit_time'].sum() / 60 if len(done) else 0:.1f} "
          f"min of fitting; results: {results_dir}", file=sys.stderr)
    if missing:
        print(f"not finished: {len(missing)} cell(s), e.g. {missing[0]}", file=sys.stderr)
    if keys["out"]:
        for path in write_outputs(keys["out"], table, fits, command, seeds, keys["thin"],
                                  missing):
            print(f"wrote {path}", file=sys.stderr)
    errors = fits[fits["error"] != ""] if len(fits) else fits
    if len(errors):
        print(f"ufsbench: {len(errors)} fit(s) raised (the next run retries them)",
              file=sys.stderr)
        sys.exit(1)
