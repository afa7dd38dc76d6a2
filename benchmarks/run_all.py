"""Run every benchmark at one profile and write one markdown report (machine, command, date).

Profiles (sizes kept modest except ``full``):

* ``tiny``  -- seconds: a smoke run on toy synthetic data (used by the test suite).
* ``small`` -- ``make bench``: minutes; synthetic data + subsamples of real sets.
* ``full``  -- ``make bench PROFILE=full``: the sizes of the performance targets (prostate_ge,
  allaml, pix10p, usps, basehock; d up to 20000 at n = 200, n up to 10000 at d = 256;
  scikit-feature on prostate_ge and pix10p) -- hours on 2 cores.

Sections: ``fit`` (bench_fit_times), ``scaling`` (bench_scaling, both axes), ``skfeature``
(bench_skfeature, skipped with a message when scikit-feature is not installed) and ``fastpath``
(the per-method scripts benchmarks/bench_<method>.py -- our fast path against our naive dense
form -- run as subprocesses at their own default sizes).

    python benchmarks/run_all.py                       # small profile, every section
    python benchmarks/run_all.py --profile tiny --methods ls --sections fit scaling
    python benchmarks/run_all.py --profile full --out docs/bench-full.md
"""

from __future__ import annotations

import argparse
import datetime as _dt
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import bench_fit_times  # noqa: E402
import bench_scaling  # noqa: E402
import bench_skfeature  # noqa: E402
from common import machine_line  # noqa: E402

from ufsbench.errors import UFSBenchError  # noqa: E402

PROFILES = {
    "tiny": {"fit": ["synthetic:40x120"], "fit_budget": 30,
             "d_axis": (30, [100, 200]), "n_axis": (32, [60, 120]), "scaling_budget": 30,
             "skfeature": ["synthetic:40x120"], "skfeature_budget": 30},
    "small": {"fit": ["synthetic:100x2000", "usps:1000", "prostate_ge:d2000"], "fit_budget": 60,
              "d_axis": (100, [500, 1000, 2000, 4000]), "n_axis": (128, [250, 500, 1000]),
              "scaling_budget": 30,
              "skfeature": ["prostate_ge:d1000", "prostate_ge"], "skfeature_budget": 60},
    "full": {"fit": ["prostate_ge", "allaml", "pix10p", "usps", "basehock", "hars", "fashion"],
             "fit_budget": 900,
             "d_axis": (200, [500, 1000, 2000, 5000, 10000, 20000]),
             "n_axis": (256, [500, 1000, 2000, 5000, 10000]), "scaling_budget": 600,
             "skfeature": ["prostate_ge", "pix10p"], "skfeature_budget": 3600},
}
SECTIONS = ["fit", "scaling", "skfeature", "fastpath"]
OWN_SCRIPTS = {"bench_fit_times.py", "bench_scaling.py", "bench_skfeature.py"}


def _each_dataset(specs, measure):
    """Rows of ``measure(spec)`` for every data set that loads; a missing one is reported."""
    rows, missing = [], []
    for spec in specs:
        try:
            rows += measure(spec)
        except UFSBenchError as exc:
            missing.append(f"- skipped {spec}: {str(exc).splitlines()[0][:200]}")
            print(missing[-1], flush=True)
    return rows, missing


def fit_section(cfg, methods) -> str:
    rows, missing = _each_dataset(
        cfg["fit"], lambda s: bench_fit_times.run([s], methods, cfg["fit_budget"]))
    return "\n".join(["## Fit time and peak memory (typical setting)", "",
                      bench_fit_times.table(rows), *missing])


def scaling_section(cfg, methods) -> str:
    n, d_sizes = cfg["d_axis"]
    d, n_sizes = cfg["n_axis"]
    budget = cfg["scaling_budget"]
    rows = bench_scaling.run("d", d_sizes, n=n, methods=methods, budget=budget)
    rows += bench_scaling.run("n", n_sizes, d=d, methods=methods, budget=budget)
    return "\n".join(["## Scaling on synthetic data (fitted exponent of time vs size)", "",
                      bench_scaling.table(rows)])


def skfeature_section(cfg, methods) -> str:
    chosen = [m for m in bench_skfeature.METHODS if not methods or m in methods]
    if not chosen:
        return "## scikit-feature side by side\n\nno method of this run is in scikit-feature"
    if not bench_skfeature.skfeature_available():
        bench_skfeature.run([], chosen)  # prints the skip message
        return ("## scikit-feature side by side\n\nskipped: scikit-feature is not installed "
                "(pip install -e \".[bench]\")")
    rows, missing = _each_dataset(
        cfg["skfeature"],
        lambda s: bench_skfeature.run([s], chosen, cfg["skfeature_budget"]))
    return "\n".join(["## scikit-feature side by side", "", bench_skfeature.table(rows), *missing])


def fastpath_scripts(methods) -> list[Path]:
    """The per-method fast-path scripts (bench_<method>.py written by the method helpers)."""
    scripts = sorted(p for p in HERE.glob("bench_*.py") if p.name not in OWN_SCRIPTS)
    if methods:
        scripts = [p for p in scripts if any(m in p.stem for m in methods)]
    return scripts


def fastpath_section(cfg, methods) -> str:
    parts = ["## Fast path vs naive dense form (per-method scripts, their default sizes)"]
    for script in fastpath_scripts(methods):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              cwd=HERE.parent)
        status = "" if proc.returncode == 0 else f" (exit {proc.returncode})"
        output = proc.stdout.strip() or proc.stderr.strip()[-2000:]
        parts += ["", f"### {script.name}{status}, {time.perf_counter() - start:.0f} s", "",
                  "```", output, "```"]
        print(f"== {script.name}{status}", flush=True)
    return "\n".join(parts)


BUILDERS = {"fit": fit_section, "scaling": scaling_section, "skfeature": skfeature_section,
            "fastpath": fastpath_section}


def run(profile: str = "small", methods=None, sections=None) -> str:
    """Run the chosen sections of a profile; returns the markdown report."""
    if profile not in PROFILES:
        raise UFSBenchError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    cfg = PROFILES[profile]
    header = ["# ufsbench benchmarks", "",
              f"- profile: `{profile}`",
              f"- command: `{' '.join([Path(sys.argv[0]).name, *sys.argv[1:]])}`",
              f"- machine: {machine_line()}",
              f"- date: {_dt.date.today().isoformat()}"]
    body = [BUILDERS[s](cfg, methods) for s in sections or SECTIONS]
    return "\n\n".join(["\n".join(header), *body]) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="small", choices=list(PROFILES))
    ap.add_argument("--methods", nargs="+", help="default: every selector")
    ap.add_argument("--sections", nargs="+", choices=SECTIONS, help="default: all")
    ap.add_argument("--out", help="markdown report (default: results/bench/<profile>-<date>.md)")
    args = ap.parse_args(argv)
    report = run(args.profile, args.methods, args.sections)
    out = Path(args.out or HERE.parent / "results" / "bench" /
               f"{args.profile}-{_dt.datetime.now():%Y%m%d-%H%M}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report)
    print(f"# report written to {out}")


if __name__ == "__main__":
    main()
