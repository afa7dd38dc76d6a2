#!/usr/bin/env python
"""Re-create the papers' result tables, ours beside theirs: `make reproduce-tables [PAPER=dgufs]`.

Thin command-line wrapper around ufsbench.reproduce (the logic lives there). Examples:

    python scripts/reproduce_tables.py --paper all            # every paper (hours on 2 cores)
    python scripts/reproduce_tables.py --paper dgufs          # one paper
    python scripts/reproduce_tables.py --profile quick        # CI smoke run, a few minutes
    python scripts/reproduce_tables.py --paper scfs --datasets lymphoma --thin 2
    python scripts/reproduce_tables.py --paper all --report-only   # reports from the store only
    python scripts/reproduce_tables.py --paper all --methods mcfs  # rerun one method, report all
    python scripts/reproduce_tables.py --paper all --methods released  # the as-released rows
    python scripts/reproduce_tables.py --plan --paper all     # how many settings, how many done
    python scripts/reproduce_tables.py --plan --probe 2 --paper all   # ... costed by the code now
    python scripts/reproduce_tables.py --transcribe ../shared/paper-tables/results.csv
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path


def parse_args(argv):
    from ufsbench.evaluation import KMEANS_INITS  # main() put the repository on sys.path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", default="all",
                        help="ufsol, sogfs, dgufs, scfs, kmufs, all (default) or quick")
    parser.add_argument("--profile", default="full", help="full (default) or quick")
    parser.add_argument("--results-dir", default=None,
                        help="result store (default $UFSBENCH_RESULTS, else ./results/runs)")
    parser.add_argument("--out-dir", default="results/reproduction", help="where reports go")
    parser.add_argument("--data-dir", default=None, help="data sets (default $UFSBENCH_DATA)")
    parser.add_argument("--n-jobs", type=int, default=-1, help="parallel fits (-1 = all cores)")
    parser.add_argument("--launcher", default="local", choices=["local", "dask"],
                        help="where fits run: this machine (default) or a dask.distributed "
                             "cluster (pip install 'ufsbench[dask]'; the results directory on "
                             "a file system every worker can write)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="with --launcher dask: the scheduler, e.g. tcp://host:8786 "
                             "(default: a local cluster started for the run)")
    parser.add_argument("--cores", type=int, default=None,
                        help="with --plan: estimate wall hours for this many cores (e.g. a "
                             "cluster's; default this machine's)")
    parser.add_argument("--datasets", nargs="+", default=None,
                        help="restrict to these data sets (published or registry ids)")
    parser.add_argument("--methods", nargs="+", default=None,
                        help="run only these methods (registry ids, e.g. mcfs) or rows (ids, e.g. "
                             "ufsol_released), as after a method's revision; 'released' runs "
                             "every released row (those run only when named); the reports "
                             "still cover every stored method")
    parser.add_argument("--thin", type=int, default=1,
                        help="keep every THIN-th grid value (plus the default): a reduced grid")
    parser.add_argument("--report-only", action="store_true",
                        help="write the reports from the store without running anything")
    parser.add_argument("--plan", action="store_true",
                        help="print the settings per data set and method, and how many are done")
    parser.add_argument("--probe", type=int, default=0, metavar="K",
                        help="with --plan: first run K pending settings of every (data set, "
                             "method) with the code as it is now and estimate from those "
                             "(their results are kept in the store); from K = 2 on the first "
                             "(cold-cache) fit is counted once per grid, the others for the rest")
    parser.add_argument("--kmeans-init", default="random", choices=list(KMEANS_INITS),
                        help="the evaluation's K-means starts (default random, our protocol); "
                             "k-means++ is a sensitivity run and needs another --out-dir")
    parser.add_argument("--transcribe", metavar="RESULTS_CSV", default=None,
                        help="rewrite results/published/*.csv from paper-tables/results.csv")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from ufsbench import reproduce
    from ufsbench.errors import UFSBenchError
    from ufsbench.paths import default_results_dir

    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.transcribe:
            for path in reproduce.transcribe_published(args.transcribe):
                print(path)
            return 0
        if args.thin < 1:
            raise UFSBenchError(f"--thin {args.thin} must be at least 1 (1 = the full grid)")
        names = reproduce.experiment_names(args.paper, args.profile)
        results_dir = args.results_dir or str(default_results_dir())
        if args.probe < 0:
            raise UFSBenchError(f"--probe {args.probe} must be at least 1 (settings per data set "
                                f"and method), or 0 for no probe")
        if args.probe and not args.plan:
            raise UFSBenchError("--probe measures costs for --plan; add --plan")
        if args.scheduler and args.launcher != "dask":
            raise UFSBenchError("--scheduler names a dask scheduler; add --launcher dask")
        if args.cores is not None and args.cores < 1:
            raise UFSBenchError(f"--cores {args.cores} must be at least 1")
        launch = {"backend": args.launcher, "scheduler": args.scheduler}
        if args.plan:
            costs = None
            if args.probe:
                costs = reproduce.probe_costs(names, results_dir, args.data_dir, args.thin,
                                              args.datasets, per_pair=args.probe,
                                              n_jobs=args.n_jobs, launch=launch,
                                              log=lambda msg: print(msg, file=sys.stderr),
                                              only_methods=args.methods)
            plan = reproduce.plan_summary(names, results_dir, args.data_dir, args.thin,
                                          args.datasets, costs=costs, only_methods=args.methods)
            print(plan.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
            print(reproduce.plan_totals(plan, cores=args.cores))
            return 0
        command = "python scripts/reproduce_tables.py " + shlex.join(
            sys.argv[1:] if argv is None else argv)
        reproduce.reproduce(names, results_dir, args.out_dir, n_jobs=args.n_jobs,
                            data_dir=args.data_dir, thin=args.thin, only_datasets=args.datasets,
                            run=not args.report_only, command=command.strip(),
                            log=lambda msg: print(msg, file=sys.stderr), launch=launch,
                            only_methods=args.methods, kmeans_init=args.kmeans_init)
    except UFSBenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
