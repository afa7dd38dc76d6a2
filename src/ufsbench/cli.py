"""The ``ufsbench`` command: run (Hydra), report, datasets, methods.

Bad input ends with one line ``ufsbench: error: ...`` on stderr and exit code 2, before anything
is computed; a run in which some settings failed ends with a summary naming each and exit code 1;
Ctrl-C keeps every finished record and says how to resume.
"""

from __future__ import annotations

import argparse
import sys

from ufsbench.errors import UFSBenchError

USAGE = """usage: ufsbench <command> [options]

commands:
  run [overrides]   run one method on one data set over its grid (Hydra; -m for multirun sweeps)
                    e.g. ufsbench run method=ls dataset=coil20
                         ufsbench run -m method=ls,allfeatures dataset=coil20,orl
  report            tables (ACC/NMI) from everything in the result store
  datasets          the known data sets: shape, classes, papers, present and verified?
  methods           the available selectors and their parameters
  plot <kind>       figures from the result store (ufsbench plot --help)
  regress           rerun the fixed regression subset and compare with the stored reference
"""


def _fail(message: str) -> None:
    print(f"ufsbench: error: {message}", file=sys.stderr)
    sys.exit(2)


# -- run -------------------------------------------------------------------------------------
def _validate_choices(overrides: list[str]) -> None:
    """Check dataset= / method= / baselines= values before Hydra sees them (clear message)."""
    from ufsbench.datasets import dataset_names
    from ufsbench.methods import available_methods

    known = {"dataset": dataset_names(), "method": available_methods()}
    for item in overrides:
        name, _, value = item.lstrip("+~").partition("=")
        if name in known and value and "(" not in value:
            for choice in value.split(","):
                if choice not in known[name]:
                    what = "data set" if name == "dataset" else "method"
                    _fail(f"unknown {what} {choice!r}; known: {', '.join(known[name])}")


def _job(cfg) -> list[tuple[str, dict, str]]:
    """One Hydra job: check every setting, run the sweeps, print the table. Returns the
    (method, params, error) of each setting whose fit failed."""
    from omegaconf import OmegaConf

    from ufsbench.datasets import load_dataset
    from ufsbench.paths import default_results_dir
    from ufsbench.report import method_config, report_tables
    from ufsbench.results import load_results, one_protocol
    from ufsbench.run_config import check_feature_counts, check_run, check_runner
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    conf = OmegaConf.to_container(cfg, resolve=True)
    check_runner(conf)  # baselines are known before their configs are read
    methods = [conf["method"]] + [method_config(name) for name in conf["baselines"] or []
                                  if name != conf["method"]["name"]]
    check_run(conf, methods)
    dataset = load_dataset(conf["dataset"]["name"], data_dir=conf["data_dir"],
                           download=conf["download"])
    counts = conf["dataset"]["feature_counts"] if conf["feature_counts"] is None else \
        check_feature_counts(conf["feature_counts"], dataset.n_features, dataset.name)
    protocol = EvaluationProtocol(**conf["evaluation"])
    results_dir = conf["results_dir"] or str(default_results_dir())
    failures = []
    for method_cfg in methods:
        tasks = plan_tasks(dataset, method_cfg, counts,
                           protocol.with_scoring(method_cfg.get("scoring")), conf["seed"],
                           results_dir)
        stats = run_sweep(dataset, tasks, n_jobs=conf["n_jobs"], progress=conf["progress"],
                          backend=conf.get("launcher", "local"), scheduler=conf.get("scheduler"),
                          skip_failed=conf.get("skip_failed", False))
        failures += [(method_cfg["name"], params, error)
                     for params, error in stats.get("failures", [])]
        failed = f", {stats['failed']} failed setting(s)" if stats.get("failed") else ""
        print(f"{dataset.name} / {method_cfg['name']}: {stats['tasks']} parameter setting(s), "
              f"{stats['skipped']} already in the store, {stats['records']} new record(s)"
              f"{failed}", file=sys.stderr)
    df = load_results(results_dir)
    names = [m["name"] for m in methods]
    df = df[(df["dataset"] == dataset.name) & df["method"].isin(names)]
    df, _ = one_protocol(df, {"seed": conf["seed"], "n_runs": protocol.n_runs,  # this run's
                              "kmeans_init": protocol.kmeans_init,
                              "kmeans_max_iter": protocol.kmeans_max_iter,
                              "nmi_normalisation": protocol.nmi})
    if not df.empty:
        print(report_tables(df, rules=conf["report"]["rules"], summary=conf["report"]["summary"]))
    print(f"results: {results_dir}", file=sys.stderr)
    return failures


def _summarise_failures(failures: list[tuple[str, dict, str]]) -> None:
    """One line per failed setting: method, parameters, the error's first line."""
    print(f"ufsbench: {len(failures)} setting(s) failed (the next run retries them; "
          f"skip_failed=true skips them):", file=sys.stderr)
    for method, params, error in failures:
        shown = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
        print(f"  {method} [{shown}]: {error}", file=sys.stderr)


def _run(overrides: list[str]) -> None:
    import hydra

    from ufsbench.paths import config_dir
    from ufsbench.run_config import check_override_keys

    overrides = ["skip_failed=true" if o == "--skip-failed" else o for o in overrides]
    _validate_choices(overrides)
    check_override_keys(overrides)

    failures = []  # over every job of a multirun

    @hydra.main(config_path=str(config_dir()), config_name="config", version_base=None)
    def entry(cfg):
        try:
            failures.extend(_job(cfg))
        except UFSBenchError as exc:
            _fail(str(exc))

    sys.argv = ["ufsbench run", *overrides]
    try:
        entry()
    except SystemExit as exc:
        # Hydra exits with 1 on a bad override after printing why: that is bad input, code 2.
        raise SystemExit(2 if exc.code == 1 else exc.code) from None
    if failures:
        _summarise_failures(failures)
        sys.exit(1)


# -- report / datasets / methods -------------------------------------------------------------
def _report(args: list[str]) -> None:
    from ufsbench.evaluation import KMEANS_INITS, NMI_NORMALISATIONS
    from ufsbench.report import (RULES, SUMMARIES, failed_setting_lines, report_tables,
                                 write_reports)
    from ufsbench.results import load_failures, load_results, one_protocol

    parser = argparse.ArgumentParser(prog="ufsbench report",
                                     description="ACC/NMI tables from the result store")
    parser.add_argument("--results-dir", help="result store (default: $UFSBENCH_RESULTS, "
                                              "then ./results/runs)")
    parser.add_argument("--format", choices=["terminal", "markdown", "latex", "csv"],
                        default="terminal")
    parser.add_argument("--out", help="also write results.md/.tex/.csv into this directory")
    parser.add_argument("--dataset", nargs="*", help="only these data sets")
    parser.add_argument("--method", nargs="*", help="only these methods")
    parser.add_argument("--metric", nargs="*", choices=["acc", "nmi"], default=["acc", "nmi"])
    parser.add_argument("--rule", nargs="*", choices=list(RULES), default=list(RULES))
    parser.add_argument("--summary", choices=list(SUMMARIES), default="mean")
    parser.add_argument("--html", metavar="FILE", help="also write a static HTML summary page "
                                                       "(tables and figures) to FILE")
    protocol = parser.add_argument_group(
        "evaluation protocol", "a table shows one protocol; by default the store's only one, or "
        "the default one (configs/config.yaml) when the store holds several")
    protocol.add_argument("--seed", type=int, help="the runs' seed (config: seed)")
    protocol.add_argument("--n-runs", type=int, help="K-means runs per evaluation")
    protocol.add_argument("--kmeans-init", choices=list(KMEANS_INITS), help="K-means starts")
    protocol.add_argument("--kmeans-max-iter", type=int, help="Lloyd iterations per run")
    protocol.add_argument("--nmi", choices=list(NMI_NORMALISATIONS),
                          help="the records' NMI normalisation")
    opts = parser.parse_args(args)
    df = load_results(opts.results_dir)
    if opts.dataset and not df.empty:
        df = df[df["dataset"].isin(opts.dataset)]
    if opts.method and not df.empty:
        df = df[df["method"].isin(opts.method)]
    df, left_out = one_protocol(df, {"seed": opts.seed, "n_runs": opts.n_runs,
                                     "kmeans_init": opts.kmeans_init,
                                     "kmeans_max_iter": opts.kmeans_max_iter,
                                     "nmi_normalisation": opts.nmi})
    if df.empty and left_out:
        raise UFSBenchError(f"no stored record has the evaluation protocol asked for: "
                            f"{left_out}; change or drop the protocol options")
    if left_out:
        print(f"note: {left_out}", file=sys.stderr)
    print(report_tables(df, metrics=opts.metric, rules=opts.rule, summary=opts.summary,
                        fmt=opts.format))
    failed = failed_setting_lines(load_failures(opts.results_dir), df)
    if failed:
        print("\n".join(failed), file=sys.stderr)
    if opts.out:
        for path in write_reports(df, opts.out, summary=opts.summary):
            print(f"wrote {path}", file=sys.stderr)
    if opts.html:
        from ufsbench.html import write_html

        page = write_html(df, opts.html, summary=opts.summary, failed=failed)
        print(f"wrote {page}", file=sys.stderr)


def _datasets(args: list[str]) -> None:
    from tabulate import tabulate

    from ufsbench.datasets import dataset_entry, dataset_names, dataset_status
    from ufsbench.paths import default_data_dir

    parser = argparse.ArgumentParser(prog="ufsbench datasets",
                                     description="known data sets and their local status")
    parser.add_argument("--data-dir", help="data directory (default: $UFSBENCH_DATA, then the "
                                           "cache)")
    opts = parser.parse_args(args)
    rows = []
    for name in dataset_names():
        entry = dataset_entry(name)
        status = dataset_status(name, opts.data_dir)
        state = ("verified" if status["verified"] else "CHECKSUM MISMATCH") if status["present"] \
            else "missing"
        rows.append([name, f"{entry.get('n_samples', '?')} x {entry.get('n_features', '?')}",
                     entry.get("n_classes", "?"), ", ".join(entry.get("papers") or []) or "-",
                     state, status["detail"]])
    print(tabulate(rows, headers=["name", "n x d", "classes", "papers", "status", "where"]))
    print(f"\ndata directory: {opts.data_dir or default_data_dir()}")


def _methods(_args: list[str]) -> None:
    from tabulate import tabulate

    from ufsbench.methods import available_methods, method_parameters, selector_class

    rows = []
    for name in available_methods():
        cls = selector_class(name)
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        params = [p for p in method_parameters(name)
                  if p not in ("n_features_to_select", "n_clusters", "random_state")]
        rows.append([name, cls.selection_kind, ", ".join(params), doc[:70]])
    print(tabulate(rows, headers=["method", "selects", "parameters", "summary"]))


def _plot(args: list[str]) -> None:
    from ufsbench.plots import cli_main

    cli_main(args)


def _regress(args: list[str]) -> None:
    from ufsbench.regress import cli_main

    cli_main(args)


COMMANDS = {"run": _run, "report": _report, "datasets": _datasets, "methods": _methods,
            "plot": _plot, "regress": _regress}


def _one_line_warning(message, category, *_args, **_kwargs) -> str:
    return f"ufsbench: {category.__name__}: {message}\n"


def main(argv: list[str] | None = None) -> None:
    import warnings

    shown_as = warnings.formatwarning
    warnings.formatwarning = _one_line_warning  # no source lines in a user's terminal
    try:
        _main(sys.argv[1:] if argv is None else list(argv))
    finally:
        warnings.formatwarning = shown_as


def _main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return
    command = COMMANDS.get(argv[0])
    if command is None:
        _fail(f"unknown command {argv[0]!r}; use one of: {', '.join(COMMANDS)}")
    try:
        command(argv[1:])
    except UFSBenchError as exc:
        _fail(str(exc))
    except BrokenPipeError:  # e.g. `ufsbench report | head`: the reader left, nothing to say
        sys.stderr.close()
        sys.exit(0)
    except KeyboardInterrupt:
        print("\nufsbench: interrupted; every finished result is kept in the store; run the same "
              "command again to resume", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
