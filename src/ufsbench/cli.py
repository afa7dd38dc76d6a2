"""The ``ufsbench`` command: run (Hydra), report, datasets, methods.

Bad input ends with one line ``ufsbench: error: ...`` on stderr and exit code 2, before anything
is computed; a run in which some settings failed ends with a summary naming each and exit code 1;
Ctrl-C keeps every finished record and says how to resume.
"""

from __future__ import annotations

import argparse
import os
import sys

from ufsbench.errors import UFSBenchError

USAGE = """usage: ufsbench <command> [options]

commands:
  run [overrides]   run one method on one data set over its grid (Hydra; -m for multirun sweeps)
                    e.g. ufsbench run method=ls dataset=coil20
                         ufsbench run -m method=ls,allfeatures dataset=coil20,orl
                         ufsbench run method=ls dataset=./colon.csv dataset.label=class
  select [overrides]  select features without evaluation; write them to CSV and JSON
                    e.g. ufsbench select method=ls dataset=./data.csv n_features=20 out=sel/
  report            tables (ACC/NMI) from everything in the result store
  datasets          the known data sets: shape, classes, papers, present and verified?
  methods [NAME]    the available selectors (grid, default); with NAME one method's
                    parameters and allowed values, preset, grid, default, paper, equations
  plot <kind>       figures from the result store (ufsbench plot --help)
  regress           rerun the fixed regression subset and compare with the stored reference
  cache info|clear  the disk cache of kNN graphs and SVDs that runs share: show or empty it
"""


def _fail(message: str) -> None:
    print(f"ufsbench: error: {message}", file=sys.stderr)
    sys.exit(2)


# -- run -------------------------------------------------------------------------------------
def _validate_choices(overrides: list[str], data_files=()) -> None:
    """Check dataset= / method= / baselines= values before Hydra sees them (clear message);
    ``data_files``: the names of data files given by path (:func:`_path_datasets`)."""
    from ufsbench.datasets import dataset_names
    from ufsbench.datasets.config_dirs import group_files
    from ufsbench.methods import available_methods

    known = {"dataset": sorted(set(dataset_names()) | set(data_files)),
             "method": sorted(set(available_methods()) | set(group_files("method")))}
    for item in overrides:
        name, _, value = item.lstrip("+~").partition("=")
        if name in known and value and "(" not in value:
            for choice in value.split(","):
                if choice not in known[name]:
                    what = "data set" if name == "dataset" else "method"
                    hint = " (or the path of a data file, e.g. dataset=./colon.csv)" \
                        if name == "dataset" else ""
                    _fail(f"unknown {what} {choice!r}; known: {', '.join(known[name])}{hint}")


def _command_line_config_dirs(overrides: list[str]) -> list[str]:
    """The directories a command line adds with Hydra's ``--config-dir``/``-cd`` or
    ``hydra.searchpath=[...]`` (``file://`` or plain paths): the registry reads them too."""
    dirs = []
    for i, item in enumerate(overrides):
        if item in ("--config-dir", "-cd") and i + 1 < len(overrides):
            dirs.append(overrides[i + 1])
        elif item.startswith("--config-dir="):
            dirs.append(item.partition("=")[2])
        elif item.startswith("hydra.searchpath="):
            value = item.partition("=")[2].strip("[]")
            dirs += [v.strip().strip("'\"") for v in value.split(",") if v.strip()]
    dirs = [d[len("file://"):] if d.startswith("file://") else d for d in dirs]
    return [d for d in dirs if "://" not in d]


def _path_datasets(overrides: list[str]) -> tuple[list[str], dict[str, dict]]:
    """``dataset=<file>`` becomes ``dataset=<name>`` with a synthesised config of that name
    (:func:`ufsbench.datasets.path_dataset_config`); ``dataset.name=`` renames it. Returns the
    overrides Hydra gets and the synthesised configs by name."""
    from pathlib import Path

    from ufsbench.datasets import dataset_names, is_data_path, path_dataset_config

    names = set(dataset_names())
    value_of = {o.partition("=")[0]: o.partition("=")[2] for o in overrides if "=" in o}
    rename = value_of.get("dataset.name")
    out, configs = [], {}
    for item in overrides:
        key, _, value = item.partition("=")
        one_file = key == "dataset" and value not in names and Path(value).expanduser().is_file()
        if key != "dataset" or not value or ("(" in value and not one_file):
            out.append(item)
            continue
        given = [value] if one_file else value.split(",")  # a file name may hold commas
        choices = []
        for choice in given:
            if choice not in names and (is_data_path(choice) or Path(choice).expanduser().is_file()):
                paths = [c for c in given if c not in names]
                if rename and len(paths) > 1:
                    raise UFSBenchError("dataset.name= names one data file; give one file per "
                                        "run, or rename the files")
                node = path_dataset_config(choice, rename)
                configs[node["name"]] = node
                choice = node["name"]
            choices.append(choice)
        out.append(f"{key}={','.join(choices)}")
    return out, configs


def _prepare_overrides(overrides: list[str], root) -> tuple[list[str], dict]:
    """Config directories, data files and choices of a command line, checked before Hydra
    composes: returns the overrides for Hydra and the merged config tree written to ``root``."""
    from ufsbench.datasets.config_dirs import merged_config_dir, set_command_line_dirs
    from ufsbench.run_config import check_override_keys

    set_command_line_dirs(_command_line_config_dirs(overrides))
    overrides, configs = _path_datasets(overrides)
    _validate_choices(overrides, configs)
    merged_config_dir(root, configs)
    check_override_keys(overrides, root)
    return overrides, configs


def _job(cfg, show_table: bool = True) -> tuple[list[tuple[str, dict, str]], dict]:
    """One Hydra job: check every setting, run the sweeps, print the table (unless
    ``show_table`` is False: a multirun prints one combined table at its end). Returns the
    (method, params, error) of each setting whose fit failed, and what the job's table shows."""
    from omegaconf import OmegaConf

    from ufsbench.datasets import load_dataset_config
    from ufsbench.paths import default_results_dir
    from ufsbench.run_config import (check_run, check_runner, method_config_for,
                                     resolve_feature_counts)
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    conf = OmegaConf.to_container(cfg, resolve=True)
    check_runner(conf)  # baselines are known before their configs are read
    methods = [conf["method"]] + [method_config_for(name) for name in conf["baselines"] or []
                                  if name != conf["method"]["name"]]
    check_run(conf, methods)
    dataset = load_dataset_config(conf["dataset"], data_dir=conf["data_dir"],
                                  download=conf["download"])
    counts, origin = resolve_feature_counts(conf, dataset.n_features, dataset.name)
    if dataset.meta.get("source"):
        source = dataset.meta["source"]
        print(f"{dataset.name}: {source['path']}, {dataset.n_samples} samples x "
              f"{dataset.n_features} features, {dataset.n_classes} classes (label: "
              f"{source['label']}); feature counts {counts} ({origin})", file=sys.stderr)
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
    shown = {"results_dir": results_dir, "pairs": {(dataset.name, m["name"]) for m in methods},
             "protocol": {"seed": conf["seed"], "n_runs": protocol.n_runs,  # this run's
                          "kmeans_init": protocol.kmeans_init,
                          "kmeans_max_iter": protocol.kmeans_max_iter,
                          "nmi_normalisation": protocol.nmi},
             "rules": conf["report"]["rules"], "summary": conf["report"]["summary"]}
    if show_table:
        _print_tables([shown])
    print(f"results: {results_dir}", file=sys.stderr)
    return failures, shown


def _print_tables(shown: list[dict]) -> None:
    """The tables of what one or more jobs ran: their (data set, method) pairs, from their
    result stores, in the first job's protocol, rules and summary."""
    import pandas as pd

    from ufsbench.report import report_tables
    from ufsbench.results import load_results, one_protocol

    frames = []
    for results_dir in dict.fromkeys(job["results_dir"] for job in shown):
        pairs = set().union(*(job["pairs"] for job in shown if job["results_dir"] == results_dir))
        df = load_results(results_dir)
        if not df.empty:
            frames.append(df[[pair in pairs for pair in zip(df["dataset"], df["method"])]])
    df = pd.concat(frames) if frames else pd.DataFrame()
    if df.empty:
        return
    df, _ = one_protocol(df, shown[0]["protocol"])
    if not df.empty:
        print(report_tables(df, rules=shown[0]["rules"], summary=shown[0]["summary"]))


def _sweep_size(overrides: list[str]) -> int:
    """How many jobs a basic-sweeper multirun of these overrides runs (comma lists multiply)."""
    size = 1
    for item in overrides:
        name, _, value = item.partition("=")
        if "=" in item and not name.startswith("hydra") and "," in value and \
                not value.lstrip().startswith(("[", "{", "'", '"')) and "(" not in value:
            size *= len(value.split(","))
    return size


def _summarise_failures(failures: list[tuple[str, dict, str]]) -> None:
    """One line per failed setting: method, parameters, the error's first line."""
    print(f"ufsbench: {len(failures)} setting(s) failed (the next run retries them; "
          f"skip_failed=true skips them):", file=sys.stderr)
    for method, params, error in failures:
        shown = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
        print(f"  {method} [{shown}]: {error}", file=sys.stderr)


def _run(overrides: list[str]) -> None:
    import tempfile
    from pathlib import Path

    import hydra

    import time

    overrides = ["skip_failed=true" if o == "--skip-failed" else o for o in overrides]
    failures, shown = [], []  # over every job of a multirun
    multirun = any(o in ("-m", "--multirun") for o in overrides)
    total, start = _sweep_size(overrides) if multirun else 1, time.monotonic()

    with tempfile.TemporaryDirectory(prefix="ufsbench-configs-") as tmp:
        # The packaged configs with the user's entries and data files laid over them: what
        # Hydra composes is what the registry lists.
        root = Path(tmp)
        overrides, _ = _prepare_overrides(overrides, root)

        @hydra.main(config_path=str(root), config_name="config", version_base=None)
        def entry(cfg):
            try:
                job_failures, job_shown = _job(cfg, show_table=not multirun)
            except UFSBenchError as exc:
                _fail(str(exc))
            failures.extend(job_failures)
            shown.append(job_shown)
            if multirun:
                elapsed = time.monotonic() - start
                left = elapsed / len(shown) * max(total - len(shown), 0)
                print(f"ufsbench: job {len(shown)} of {total} done, {elapsed:.0f} s so far, "
                      f"about {left:.0f} s left", file=sys.stderr)

        sys.argv = ["ufsbench run", *overrides]
        try:
            entry()
        except SystemExit as exc:
            # Hydra exits with 1 on a bad override after printing why: that is bad input, 2.
            raise SystemExit(2 if exc.code == 1 else exc.code) from None
    if multirun and shown:
        _print_tables(shown)
    if failures:
        _summarise_failures(failures)
        sys.exit(1)


# -- select ----------------------------------------------------------------------------------
#: Keys of ``ufsbench select`` besides the config's: what to select and where to write it.
SELECT_KEYS = {"n_features": None, "n_clusters": None, "out": "."}


def _select_keys(args: list[str]) -> tuple[dict, list[str]]:
    """``n_features=``, ``n_clusters=`` and ``out=`` (also ``--out DIR``) of a select command
    line, and the overrides left for the config."""
    keys, rest, i = dict(SELECT_KEYS), [], 0
    while i < len(args):
        item = args[i]
        if item == "--out" and i + 1 < len(args):
            keys["out"], i = args[i + 1], i + 2
            continue
        name, _, value = item.lstrip("-").partition("=")
        if name in SELECT_KEYS and "=" in item:
            if name != "out":
                try:
                    value = int(value)
                except ValueError:
                    raise UFSBenchError(f"{name}={value!r} must be a positive integer, e.g. "
                                        f"{name}=20") from None
                if value < 1:
                    raise UFSBenchError(f"{name}={value} must be a positive integer")
            keys[name] = value
        else:
            rest.append(item)
        i += 1
    return keys, rest


def _select_rows(selector, dataset, m: int) -> list[dict]:
    """rank, index, name (and score for ranking methods) of each selected feature."""
    import numpy as np

    names = dataset.feature_names or [f"x{i}" for i in range(dataset.n_features)]
    ranking = getattr(selector, "ranking_", None)
    if selector.selection_kind == "ranking" and ranking is not None:
        order = [int(i) for i in ranking[:m]]
    else:
        order = [int(i) for i in np.flatnonzero(selector.get_support())]
    scores = getattr(selector, "scores_", None)
    return [{"rank": r + 1, "index": i, "name": names[i],
             "score": float(scores[i]) if scores is not None else None}
            for r, i in enumerate(order)]


def _select(args: list[str]) -> None:
    """Fit one method's default setting on one data set and write the selected features."""
    import json
    import tempfile
    from pathlib import Path

    import pandas as pd
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from ufsbench.datasets import load_dataset_config
    from ufsbench.methods import make_selector, selector_class
    from ufsbench.methods.base import check_setting
    from ufsbench.results import canonical

    if any(a in ("-h", "--help") for a in args):
        print("usage: ufsbench select method=<name> dataset=<name or file> [n_features=50] "
              "[n_clusters=K] [out=DIR] [dataset.label=<column>|none] [method.params.<p>=v]\n"
              "Fits the method's default setting once (no evaluation) and writes the selected "
              "features (rank, index, name, score) to DIR/<data set>_<method>_<m>.csv and .json.")
        return
    keys, overrides = _select_keys(args)
    with tempfile.TemporaryDirectory(prefix="ufsbench-configs-") as tmp:
        try:
            overrides, _ = _prepare_overrides(overrides, Path(tmp))
        except UFSBenchError as exc:
            if str(exc).startswith("unknown key"):
                raise UFSBenchError(f"{exc}; select also takes n_features=, n_clusters= and "
                                    f"out=") from None
            raise
        if any("," in o.partition("=")[2] for o in overrides
               if o.partition("=")[0] in ("method", "dataset")):
            raise UFSBenchError("select takes one method and one data set (no comma lists)")
        with initialize_config_dir(config_dir=tmp, version_base=None):
            conf = OmegaConf.to_container(compose("config", overrides=overrides), resolve=True)
    method_cfg = conf["method"]
    setting = dict(method_cfg.get("params") or {}, **(method_cfg.get("default") or {}))
    check_setting(method_cfg["name"], setting)
    dataset = load_dataset_config(conf["dataset"], data_dir=conf["data_dir"],
                                  download=conf["download"], need_labels=False)
    labelled = dataset.meta.get("labelled", True)
    m = keys["n_features"] or min(50, max(1, dataset.n_features // 2))
    if m > dataset.n_features:
        raise UFSBenchError(f"n_features={m} exceeds the {dataset.n_features} features of "
                            f"{dataset.name}; give n_features={dataset.n_features} or fewer")
    k = keys["n_clusters"] or (dataset.n_classes if labelled else None)
    if k is None:
        raise UFSBenchError(f"{dataset.name} has no labels, so the number of clusters is "
                            f"unknown; give n_clusters=<K>")
    source = dataset.meta.get("source") or {}
    if source:
        label = "unlabelled" if not labelled else f"labels: {source['label']}" + (
            ", not a feature; dataset.label=none if the file has no labels"
            if source["format"] in ("csv", "tsv", "parquet") else "")
        print(f"{dataset.name}: {source['path']}, {dataset.n_samples} samples x "
              f"{dataset.n_features} features ({label})", file=sys.stderr)
    selector = make_selector(method_cfg["name"], n_features_to_select=m, n_clusters=k,
                             random_state=conf["seed"], **setting)
    selector.fit(dataset.X)
    rows = _select_rows(selector, dataset, m)
    kind = selector_class(method_cfg["name"]).selection_kind
    out = Path(keys["out"]).expanduser()
    try:
        out.mkdir(parents=True, exist_ok=True)
        stem = out / f"{dataset.name}_{method_cfg['name']}_{m}"
        table = pd.DataFrame(rows, columns=["rank", "index", "name", "score"])
        if kind != "ranking":
            table = table.drop(columns=["rank", "score"])
        table.to_csv(f"{stem}.csv", index=False)
        info = {"dataset": dataset.name, "data_checksum": dataset.checksum,
                "data_source": source or None, "method": method_cfg["name"],
                "params": json.loads(canonical(setting)), "selection_kind": kind,
                "n_features": m, "n_clusters": k, "seed": conf["seed"],
                "selected": table.to_dict(orient="records")}
        Path(f"{stem}.json").write_text(json.dumps(info, indent=1) + "\n")
    except OSError as exc:
        raise UFSBenchError(f"cannot write the selection to {out} ({exc.strerror or exc}); give "
                            f"a writable directory with out=DIR") from None
    print(table.head(20).to_string(index=False))
    print(f"wrote {stem}.csv\nwrote {stem}.json", file=sys.stderr)


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

    from ufsbench.datasets import dataset_entry, dataset_names, dataset_status, user_entry_file
    from ufsbench.datasets.config_dirs import user_config_dirs
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
        user = user_entry_file(name)
        rows.append([name, f"{entry.get('n_samples', '?')} x {entry.get('n_features', '?')}",
                     entry.get("n_classes", "?"), ", ".join(entry.get("papers") or []) or "-",
                     state, status["detail"], f"user ({user})" if user else "packaged"])
    print(tabulate(rows, headers=["name", "n x d", "classes", "papers", "status", "where",
                                  "entry"]))
    print(f"\ndata directory: {opts.data_dir or default_data_dir()}")
    dirs = user_config_dirs()
    print(f"user config directories: {', '.join(map(str, dirs)) if dirs else 'none'} "
          f"($UFSBENCH_CONFIG_DIR, ~/.config/ufsbench: dataset/*.yaml, method/*.yaml)")


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
        allowed = " or ".join(_constraint_text(c) for c in constraints.get(pname, [])
                              if type(c).__name__ != "Hidden") or "-"  # Hidden: internal values
        if param.default == "deprecated":
            role = "deprecated (an old name; see the docstring)"
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
                                pixels_figure, ranks_caption, results_frame, safe_stem,
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
        figure = cd_figure(test, METRICS[metric], ranks_caption(df, opts.rule))  # >= 3 methods
        print(f"{METRICS[metric]} ranks ({opts.rule} rule; 1 = best):\n"
              f"{rank_table(test).round(2).to_string()}\n")
        figures.append((f"ranks_{metric}", figure))
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


COMMANDS = {"run": _run, "select": _select, "report": _report, "datasets": _datasets,
            "methods": _methods, "plot": _plot, "regress": _regress, "cache": _cache}


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


def _help(_args: list[str]) -> None:
    print(USAGE)


def _main(argv: list[str]) -> None:
    name = "help" if not argv or argv[0] in ("-h", "--help") else argv[0]
    command = _help if name == "help" else COMMANDS.get(name)
    if command is None:
        _fail(f"unknown command {argv[0]!r}; use one of: {', '.join(COMMANDS)}")
    try:
        command(argv[1:])
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
    except UFSBenchError as exc:
        _fail(str(exc))
    except BrokenPipeError:  # e.g. `ufsbench report | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        print("\nufsbench: interrupted; every finished result is kept in the store; run the same "
              "command again to resume", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
