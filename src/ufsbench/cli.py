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
  cache info|clear  the disk cache of kNN graphs and SVDs that runs share: show or empty it
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
    from ufsbench.report import (REPORT_FILES, RULES, SUMMARIES, failed_setting_lines,
                                 report_tables, stale_note, write_reports)
    from ufsbench.results import load_failures, load_results, one_protocol

    parser = argparse.ArgumentParser(prog="ufsbench report",
                                     description="ACC/NMI tables from the result store")
    parser.add_argument("--results-dir", help="result store (default: $UFSBENCH_RESULTS, "
                                              "then ./results/runs)")
    parser.add_argument("--format", choices=["terminal", "markdown", "latex", "csv"],
                        default="terminal", help="what to print (default: terminal); csv is one "
                        "tidy table, a row per metric, rule, data set and method")
    parser.add_argument("--out", metavar="DIR", help="also write the tables into DIR: "
                        "results.md, .tex or .csv for --format markdown, latex or csv; all three "
                        "with --format terminal")
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
                        fmt=opts.format), end="" if opts.format == "csv" else "\n")
    if opts.format == "csv" and stale_note(df):
        print(f"note: {stale_note(df).strip()}", file=sys.stderr)
    failed = failed_setting_lines(load_failures(opts.results_dir), df)
    if failed:
        print("\n".join(failed), file=sys.stderr)
    if opts.out:
        formats = [opts.format] if opts.format in REPORT_FILES else list(REPORT_FILES)
        for path in write_reports(df, opts.out, summary=opts.summary, formats=formats,
                                  metrics=opts.metric, rules=opts.rule):
            print(f"wrote {path}", file=sys.stderr)
    if opts.html:
        from ufsbench.html import write_html

        page = write_html(df, opts.html, summary=opts.summary, failed=failed, left_out=left_out)
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


RUN_SET = {"n_features_to_select": "each feature count of the run",
           "n_clusters": "the data set's class count", "random_state": "the run's seed",
           "memory": "the run's cache ($UFSBENCH_CACHE)"}


def _fmt_setting(setting: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting.items()) or "-"


def _doc_excerpt(cls, max_lines: int = 20) -> tuple[str, str, list[str]]:
    """(summary, paper, model lines) from a selector's docstrings: the class docstring's first
    line, its module docstring's first line (the paper), and the class docstring's second
    paragraph with the equation blocks it introduces (indented, or after a colon)."""
    import inspect

    doc = inspect.cleandoc(cls.__doc__ or "")
    paragraphs = [p for p in doc.split("\n\n") if p.strip()]
    summary = " ".join(paragraphs[0].split()) if paragraphs else ""
    module = (sys.modules[cls.__module__].__doc__ or "").strip()
    paper = " ".join(module.split("\n\n")[0].split())
    model: list[str] = []
    for i, para in enumerate(paragraphs[1:], start=1):
        if para.lstrip().startswith("Parameters") or para.startswith("**"):
            break
        if i > 1 and not (paragraphs[i - 1].rstrip().endswith(":") or para.startswith(" ")):
            break
        model += para.splitlines() + [""]
    model = model[:-1]  # the blank line after the last paragraph
    if len(model) > max_lines:
        model = model[:max_lines] + [f"... (more in the docstring of {cls.__module__}."
                                     f"{cls.__name__})"]
    return summary, paper, model


def _constraint_text(constraint) -> str:
    """A declared constraint in words; string options sorted (a set's order varies by run)."""
    if isinstance(constraint, type):
        return f"a {constraint.__name__}"
    options = getattr(constraint, "options", None)
    if isinstance(options, (set, frozenset)):
        return "one of " + ", ".join(repr(o) for o in sorted(options, key=str))
    return str(constraint)


def _method_detail(name: str) -> str:
    """One method: summary, paper, model equations, and a row per constructor parameter with its
    constructor default, its role in the config (fixed / grid / default) and its constraints."""
    import inspect
    import textwrap

    from tabulate import tabulate

    from ufsbench.methods import selector_class
    from ufsbench.paths import config_dir
    from ufsbench.report import method_config

    cls = selector_class(name)
    has_config = (config_dir() / "method" / f"{name}.yaml").is_file()
    cfg = method_config(name)
    fixed, grid, default = (cfg.get(key) or {} for key in ("params", "grid", "default"))
    summary, paper, model = _doc_excerpt(cls)
    constraints = getattr(cls, "_parameter_constraints", {}) or {}
    rows = []
    for pname, param in inspect.signature(cls.__init__).parameters.items():
        if pname == "self":
            continue
        if pname in RUN_SET:
            role = f"set by the run: {RUN_SET[pname]}"
        else:
            role = "; ".join(part for part in (
                f"preset {fixed[pname]}" if pname in fixed else "",
                f"grid {grid[pname]}" if pname in grid else "",
                f"default {default[pname]}" if pname in default else "") if part) or "-"
        allowed = " or ".join(_constraint_text(c) for c in constraints.get(pname, [])) or "-"
        rows.append([pname, repr(param.default), textwrap.fill(role, 44),
                     textwrap.fill(allowed, 44)])
    n_grid = 1
    for values in grid.values():
        n_grid *= len(values)
    lines = [f"{name}: {summary}", f"paper:    {paper}",
             f"selects:  {cls.selection_kind}" + ("  [reconstructed]" if getattr(
                 cls, "reconstructed", False) else ""),
             f"grid:     {_fmt_setting(grid)} ({n_grid} setting(s))",
             f"default:  {_fmt_setting(default)} (the label-free rule's setting)",
             f"preset:   {_fmt_setting(fixed)} (fixed for every fit)",
             "config:   " + (f"src/ufsbench/configs/method/{name}.yaml" if has_config
                              else "none (the constructor defaults are used)"), ""]
    if model:
        lines += ["model:"] + [f"    {line}" if line else "" for line in model] + [""]
    lines.append(tabulate(rows, headers=["parameter", "constructor default", "in the config",
                                         "allowed values"]))
    return "\n".join(lines)


def _methods(args: list[str]) -> None:
    import textwrap

    from tabulate import tabulate

    from ufsbench.methods import available_methods, selector_class
    from ufsbench.report import method_config

    parser = argparse.ArgumentParser(
        prog="ufsbench methods",
        description="the registered selectors: grid, label-free default and summary of each; "
                    "with NAME, one method's parameters (constructor default, preset / grid / "
                    "default value in its config, allowed values), paper and model equations")
    parser.add_argument("name", nargs="?", metavar="NAME", help="one method, e.g. scfs")
    opts = parser.parse_args(args)
    if opts.name:
        if opts.name not in available_methods():
            raise UFSBenchError(f"unknown method {opts.name!r}; known: "
                                f"{', '.join(available_methods())}")
        print(_method_detail(opts.name))
        return
    rows = []
    for name in available_methods():
        cls = selector_class(name)
        cfg = method_config(name)
        summary, _, _ = _doc_excerpt(cls)
        grid = cfg.get("grid") or {}
        shown_grid = ", ".join(f"{k} ({len(v)})" for k, v in grid.items()) or "-"
        rows.append([name, cls.selection_kind, textwrap.fill(shown_grid, 26),
                     textwrap.fill(_fmt_setting(cfg.get("default") or {}), 28),
                     textwrap.fill(summary, 56)])
    print(tabulate(rows, headers=["method", "selects", "grid (values)", "default", "summary"]))
    print("\nufsbench methods NAME: one method's parameters with their allowed values, its "
          "preset, grid and default, paper and equations")


def _cache(args: list[str]) -> None:
    from ufsbench.cache import cache_info, clear_cache, size_limit

    parser = argparse.ArgumentParser(
        prog="ufsbench cache", description="the disk cache of data-only intermediates (kNN "
        "graphs, SVDs) that `ufsbench run` shares between settings and runs; "
        "$UFSBENCH_CACHE moves it (off turns it off), $UFSBENCH_CACHE_LIMIT bounds it")
    parser.add_argument("action", choices=["info", "clear"])
    opts = parser.parse_args(args)
    info = cache_info()
    if info["location"] is None:
        print("the cache is off (UFSBENCH_CACHE=off)")
        return
    if opts.action == "clear":
        clear_cache()
        print(f"cleared {info['entries']} entries ({info['bytes'] / 1e6:.1f} MB) in "
              f"{info['location']}")
        return
    print(f"location: {info['location']}\nentries:  {info['entries']}\n"
          f"size:     {info['bytes'] / 1e6:.1f} MB (trimmed to {size_limit()} after each run)")


# -- plot ------------------------------------------------------------------------------------
def _plot_common_options() -> argparse.ArgumentParser:
    from ufsbench.plots import DEFAULT_OUT
    from ufsbench.report import SUMMARIES

    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--results-dir", help="result store (default: $UFSBENCH_RESULTS, then "
                                              "./results/runs)")
    parent.add_argument("--out", default=str(DEFAULT_OUT),
                        help=f"directory for the PNG and PDF files (default: {DEFAULT_OUT})")
    parent.add_argument("--dataset", nargs="*", help="only these data sets")
    parent.add_argument("--method", nargs="*", help="only these methods")
    parent.add_argument("--summary", choices=list(SUMMARIES), default="mean")
    return parent


def _plot_parser() -> argparse.ArgumentParser:
    from ufsbench.report import METRICS, RULES

    parent = _plot_common_options()
    parser = argparse.ArgumentParser(prog="ufsbench plot", description="figures (PNG + PDF) from "
                                     "the result store")
    sub = parser.add_subparsers(dest="kind", required=True, metavar="kind")
    counts = sub.add_parser("counts", parents=[parent], help="ACC/NMI against the number of "
                            "selected features, a panel per data set")
    counts.add_argument("--metric", nargs="*", choices=list(METRICS), default=list(METRICS))
    counts.add_argument("--rule", choices=list(RULES), default="paper")
    sens = sub.add_parser("sensitivity", parents=[parent], help="heatmaps over the two main "
                          "grid parameters, a panel per feature count")
    sens.add_argument("--metric", choices=list(METRICS), default="acc")
    sens.add_argument("--params", nargs=2, metavar="NAME", help="the two parameters to show "
                      "(default: the first two of the method's grid)")
    sens.add_argument("--counts", nargs="*", type=int, help="only these feature counts")
    sub.add_parser("convergence", parents=[parent], help="objective value per iteration, a "
                   "panel per method, a figure per data set")
    admm = sub.add_parser("admm", parents=[parent], help="K-means UFS: ||V||_F per iteration, "
                          "vanilla vs bi-linear ADMM (fits the selector; no stored results)")
    admm.add_argument("--n-features", type=int, default=20)
    admm.add_argument("--max-iter", type=int, default=300)
    admm.add_argument("--data-dir")
    pixels = sub.add_parser("pixels", parents=[parent], help="selected features painted over "
                            "sample images (image data sets)")
    pixels.add_argument("--counts", nargs="*", type=int, help="only these feature counts")
    pixels.add_argument("--samples", nargs="*", type=int, help="sample indices to draw on "
                        "(default: the first image of each of the first two classes)")
    pixels.add_argument("--rule", choices=list(RULES), default="paper")
    pixels.add_argument("--data-dir")
    ranks = sub.add_parser("ranks", parents=[parent], help="mean ranks across data sets and a "
                           "critical-difference diagram (Friedman + Nemenyi)")
    ranks.add_argument("--metric", nargs="*", choices=list(METRICS), default=list(METRICS))
    ranks.add_argument("--rule", choices=list(RULES), default="paper")
    ranks.add_argument("--alpha", type=float, default=0.05, choices=[0.05, 0.1])
    return parser


def _plot_figures(opts) -> list:
    """(file stem, figure) pairs for the parsed command."""
    from ufsbench.plots import (admm_figure, cd_figure, convergence_figure,
                                convergence_records, counts_figure, grid_parameters,
                                pixels_figure, results_frame, safe_stem,
                                sensitivity_figure)
    from ufsbench.report import METRICS
    from ufsbench.stats import rank_methods, rank_table

    if opts.kind == "admm":
        dataset = (opts.dataset or ["digits"])[0]
        return [(f"admm_{safe_stem(dataset)}_h{opts.n_features}",
                 admm_figure(dataset, opts.n_features, opts.max_iter, opts.data_dir))]
    df = results_frame(opts.results_dir, opts.dataset, opts.method)
    datasets = sorted(df["dataset"].unique())
    if opts.kind == "counts":
        return [(f"counts_{m}", counts_figure(df, m, opts.rule, opts.summary))
                for m in opts.metric]
    if opts.kind == "convergence":
        with_history = convergence_records(df)
        return [(f"convergence_{safe_stem(d)}", convergence_figure(df, d))
                for d in sorted(with_history["dataset"].unique())]
    if opts.kind == "sensitivity":
        pairs = [(d, m) for (d, m), sub in df.groupby(["dataset", "method"], sort=True)
                 if grid_parameters(sub, m)]
        if not pairs:
            raise UFSBenchError("no stored method has a parameter grid with more than one value; "
                                "run a method with a grid, e.g. `ufsbench run method=scfs`")
        return [(f"sensitivity_{safe_stem(d)}_{safe_stem(m)}_{opts.metric}",
                 sensitivity_figure(df, d, m, opts.metric, opts.summary, opts.params,
                                    opts.counts)) for d, m in pairs]
    if opts.kind == "pixels":
        return [(f"pixels_{safe_stem(d)}", pixels_figure(df, d, opts.method, opts.counts, opts.samples,
                                                    rule=opts.rule, data_dir=opts.data_dir))
                for d in (opts.dataset or datasets)]
    figures = []
    for metric in opts.metric:
        test = rank_methods(df, metric, opts.rule, opts.summary, opts.alpha)
        print(f"{METRICS[metric]} ranks ({opts.rule} rule; 1 = best):\n"
              f"{rank_table(test).round(2).to_string()}\n")
        figures.append((f"ranks_{metric}", cd_figure(test, METRICS[metric])))
    return figures


def _plot(args: list[str]) -> None:
    """``ufsbench plot <kind> [options]``: write each figure as PNG and PDF into --out."""
    from ufsbench.plots import is_image_dataset, results_frame, save_figure

    opts = _plot_parser().parse_args(args)
    if opts.kind == "pixels" and not opts.dataset:
        df = results_frame(opts.results_dir, None, opts.method)
        opts.dataset = [d for d in sorted(df["dataset"].unique()) if is_image_dataset(d)]
        if not opts.dataset:
            raise UFSBenchError("no image data set in the store; pixel plots need one, e.g. "
                                "`ufsbench run dataset=digits`")
    for stem, fig in _plot_figures(opts):
        for path in save_figure(fig, opts.out, stem):
            print(f"wrote {path}", file=sys.stderr)


def _regress(args: list[str]) -> None:
    from ufsbench.regress import cli_main

    cli_main(args)


COMMANDS = {"run": _run, "report": _report, "datasets": _datasets, "methods": _methods,
            "plot": _plot, "regress": _regress, "cache": _cache}


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
