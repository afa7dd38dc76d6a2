"""``ufsbench run`` (Hydra; one table per run, one combined table per multirun) and
``ufsbench select`` (selection without evaluation, written to CSV and JSON)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ufsbench.cli.common import fail as _fail
from ufsbench.errors import UFSBenchError

if TYPE_CHECKING:
    from omegaconf import DictConfig


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
            for choice in map(_unquoted, value.split(",")):
                if choice not in known[name]:
                    what = "data set" if name == "dataset" else "method"
                    hint = " (or the path of a data file, e.g. dataset=./colon.csv)" \
                        if name == "dataset" else ""
                    _fail(f"unknown {what} {choice!r}; known: {', '.join(known[name])}{hint}")


def _unquoted(value: str) -> str:
    """A value of Hydra's override grammar without the quotes that make it a string."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _grammar_string(name: str) -> str:
    """``name`` written so that Hydra's override grammar reads it back as that string: quoted
    where it would read a number, a boolean or null (a data file named 2024.csv or nan.csv)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    value = OverridesParser.create().parse_override(f"dataset={name}").value()
    return name if isinstance(value, str) and value == name else f"'{name}'"


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
                choice = _grammar_string(node["name"])
            choices.append(choice)
        out.append(f"{key}={','.join(choices)}")
    return out, configs


def _prepare_overrides(overrides: list[str], root,
                       other_keys: str = "") -> tuple[list[str], dict]:
    """Config directories, data files and choices of a command line, checked before Hydra
    composes: returns the overrides for Hydra and the merged config tree written to ``root``.
    ``other_keys`` says which keys a subcommand takes besides the config's (e.g. "select also
    takes n_features= and out="); a refused unknown key then adds it."""
    from ufsbench.datasets.config_dirs import merged_config_dir, set_command_line_dirs
    from ufsbench.run_config import check_override_keys

    set_command_line_dirs(_command_line_config_dirs(overrides))
    overrides, configs = _path_datasets(overrides)
    _validate_choices(overrides, configs)
    merged_config_dir(root, configs)
    try:
        check_override_keys(overrides, root)
    except UFSBenchError as exc:
        if other_keys and str(exc).startswith("unknown key") and \
                not str(exc).startswith("unknown key 'method."):
            raise UFSBenchError(f"{exc}; {other_keys}") from None
        raise
    return overrides, configs


def _checked_methods(conf: dict) -> list[dict]:
    """The method configs a composed run config runs (its method, then its baselines), after
    checking every data-free key and every method setting."""
    from ufsbench.run_config import check_run, check_runner, method_config_for

    check_runner(conf)  # baselines are known before their configs are read
    methods = [conf["method"]] + [method_config_for(name) for name in conf["baselines"] or []
                                  if name != conf["method"]["name"]]
    check_run(conf, methods)
    return methods


def _job(cfg: DictConfig, show_table: bool = True) -> tuple[list[tuple[str, dict, str]], dict]:
    """One Hydra job: check every setting, run the sweeps, print the table (unless
    ``show_table`` is False: a multirun prints one combined table at its end). Returns the
    (method, params, error) of each setting whose fit failed, and what the job's table shows."""
    from ufsbench.datasets import load_dataset_config
    from ufsbench.paths import default_results_dir
    from ufsbench.run_config import config_dict, resolve_feature_counts
    from ufsbench.runner import EvaluationProtocol, plan_tasks, run_sweep

    conf = config_dict(cfg, "the composed config")
    methods = _checked_methods(conf)
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

    from ufsbench.report import fit_warning_lines, report_tables
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
        for line in fit_warning_lines(df):
            print(line, file=sys.stderr)


#: Most jobs of a multirun whose configs are composed and checked before the first one runs
#: (about 50 ms a job); larger sweeps are checked job by job as they run.
PREFLIGHT_MAX_JOBS = 2000
#: From this many jobs on, the check says that it is running.
PREFLIGHT_QUIET_JOBS = 100


def _job_overrides(overrides: list[str], root) -> list[tuple[list[str], list[str]]]:
    """(overrides, the swept ones among them) of every job of a basic-sweeper multirun of
    ``overrides``, in the order Hydra runs them; the flags and ``hydra`` keys, which choose how
    jobs run and not what, are left out. ``glob(...)`` of a config group is matched against
    the group's options in the config tree ``root``."""
    import itertools
    from pathlib import Path

    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import Glob

    plain, skip = [], False
    for item in overrides:
        if skip or item in ("-m", "--multirun"):
            skip = False
            continue
        if item in ("--config-dir", "-cd"):
            skip = True
            continue
        if item.startswith(("-", "hydra.", "hydra/", "+hydra", "~hydra")):
            continue
        plain.append(item)
    axes = []
    for parsed in OverridesParser.create().parse_overrides(plain):
        key, swept = parsed.get_key_element(), parsed.value()
        if isinstance(swept, Glob):
            options = sorted(p.stem for p in (Path(root) / key.lstrip("+~")).glob("*.yaml"))
            matched = swept.filter(options)
            if not matched:
                raise UFSBenchError(f"{parsed.input_line} matches none of the options of "
                                    f"{key}: {', '.join(options) or 'none'}")
            axes.append([(f"{key}={value}", True) for value in matched])
        elif parsed.is_sweep_override():
            axes.append([(f"{key}={value}", True) for value in parsed.sweep_string_iterator()])
        else:
            value = parsed.get_value_element_as_str()
            axes.append([(f"{key}={'' if value is None else value}", False)])
    return [([item for item, _ in job], [item for item, swept in job if swept])
            for job in itertools.product(*axes)]


def _preflight(overrides: list[str], root, jobs: list[tuple[list[str], list[str]]]) -> None:
    """Compose and check every job of a multirun before the first one runs: a bad setting or
    a data set that cannot be had in its last job is refused before any computation, naming
    the job. Data sets are loaded only when they are not present and verified (or are files
    given by path, which are read and checked)."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from ufsbench.datasets import dataset_status, load_dataset_config
    from ufsbench.run_config import config_dict, resolve_feature_counts

    if len(jobs) > PREFLIGHT_MAX_JOBS:
        return
    if len(jobs) > PREFLIGHT_QUIET_JOBS:  # ~50 ms a job: say why nothing has started yet
        print(f"ufsbench: checking the {len(jobs)} jobs of the sweep before the first one runs",
              file=sys.stderr)
    # Jobs a cluster launcher runs read their data where they run, not here.
    local = not any(o.startswith("hydra/launcher=") and o != "hydra/launcher=basic"
                    for o in overrides)
    features: dict[str, int | None] = {}   # by data set: d, None where unknown here
    with initialize_config_dir(config_dir=str(root), version_base=None):
        for number, (job, swept) in enumerate(jobs, start=1):
            try:
                conf = config_dict(compose(config_name="config", overrides=job), "the config")
                _checked_methods(conf)
                node = conf["dataset"]
                if node["name"] not in features:
                    features[node["name"]] = node.get("n_features")
                    if local and (node.get("kind") == "file" or not dataset_status(
                            node["name"], conf["data_dir"])["verified"]):
                        features[node["name"]] = load_dataset_config(
                            node, data_dir=conf["data_dir"], download=conf["download"]).n_features
                d = features[node["name"]]
                if d:
                    resolve_feature_counts(conf, int(d), node["name"])
            except (UFSBenchError, HydraException, OmegaConfBaseException) as exc:
                why = " ".join(str(exc).split()).rstrip(".")
                raise UFSBenchError(f"job {number} of {len(jobs)} ({' '.join(swept)}): {why} "
                                    f"(no job has run)") from None


def _summarise_failures(failures: list[tuple[str, dict, str]]) -> None:
    """One line per failed setting: method, parameters, the error's first line."""
    print(f"ufsbench: {len(failures)} setting(s) failed (the next run retries them; "
          f"skip_failed=true skips them):", file=sys.stderr)
    for method, params, error in failures:
        shown = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
        print(f"  {method} [{shown}]: {error}", file=sys.stderr)


def _run(overrides: list[str]) -> None:
    import tempfile
    import time
    from pathlib import Path

    import hydra

    overrides = ["skip_failed=true" if o == "--skip-failed" else o for o in overrides]
    failures, shown = [], []  # over every job of a multirun
    multirun = any(o in ("-m", "--multirun") for o in overrides)
    total, start = 1, time.monotonic()

    with tempfile.TemporaryDirectory(prefix="ufsbench-configs-") as tmp:
        # The packaged configs with the user's entries and data files laid over them: what
        # Hydra composes is what the registry lists.
        root = Path(tmp)
        overrides, _ = _prepare_overrides(overrides, root)
        if multirun:
            jobs = _job_overrides(overrides, root)
            total = len(jobs)
            _preflight(overrides, root, jobs)

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
SELECT_KEYS: dict[str, str | None] = {"n_features": None, "n_clusters": None, "out": "."}


def _select_keys(args: list[str]) -> tuple[dict[str, Any], list[str]]:
    """``n_features=``, ``n_clusters=`` and ``out=`` (also ``--out DIR``) of a select command
    line, and the overrides left for the config."""
    keys: dict[str, Any] = dict(SELECT_KEYS)
    rest: list[str] = []
    i = 0
    while i < len(args):
        item = args[i]
        if item == "--out" and i + 1 < len(args):
            keys["out"], i = args[i + 1], i + 2
            continue
        name, _, value = item.lstrip("-").partition("=")
        if name in SELECT_KEYS and "=" in item:
            if name == "out":
                keys[name] = value
            else:
                try:
                    number = int(value)
                except ValueError:
                    raise UFSBenchError(f"{name}={value!r} must be a positive integer, e.g. "
                                        f"{name}=20") from None
                if number < 1:
                    raise UFSBenchError(f"{name}={number} must be a positive integer")
                keys[name] = number
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

    from ufsbench.datasets import load_dataset_config
    from ufsbench.datasets.files import label_problem
    from ufsbench.methods import make_selector, selector_class
    from ufsbench.methods.base import check_setting
    from ufsbench.presets import apply_preset
    from ufsbench.results import canonical
    from ufsbench.run_config import config_dict
    from ufsbench.runner import cost_note, nonzero_fraction

    if any(a in ("-h", "--help") for a in args):
        print("usage: ufsbench select method=<name> dataset=<name or file> [n_features=50] "
              "[n_clusters=K] [out=DIR] [dataset.label=<column>|none] [method.params.<p>=v]\n"
              "Fits the method's default setting once (no evaluation) and writes the selected "
              "features (rank, index, name, score) to DIR/<data set>_<method>_<m>.csv and .json.")
        return
    keys, overrides = _select_keys(args)
    with tempfile.TemporaryDirectory(prefix="ufsbench-configs-") as tmp:
        overrides, _ = _prepare_overrides(
            overrides, Path(tmp), "select also takes n_features=, n_clusters= and out=")
        if any("," in o.partition("=")[2] for o in overrides
               if o.partition("=")[0] in ("method", "dataset")):
            raise UFSBenchError("select takes one method and one data set (no comma lists)")
        with initialize_config_dir(config_dir=tmp, version_base=None):
            conf = config_dict(compose("config", overrides=overrides), "the composed config")
    method_cfg = apply_preset(conf["method"])
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
    problem = label_problem(dataset.y) if labelled and not keys["n_clusters"] else None
    if problem:   # the labels would set the number of clusters (a continuous last column: n)
        raise UFSBenchError(f"{source.get('path', dataset.name)}: the label column "
                            f"{source.get('label', 'y')!r} {problem}, so it cannot give the "
                            f"number of clusters: give n_clusters=<K>, the class column with "
                            f"dataset.label=..., or dataset.label=none if the file has no labels")
    if source:
        label = "unlabelled" if not labelled else f"labels: {source['label']}" + (
            ", not a feature; dataset.label=none if the file has no labels"
            if source["format"] in ("csv", "tsv", "parquet") else "")
        print(f"{dataset.name}: {source['path']}, {dataset.n_samples} samples x "
              f"{dataset.n_features} features ({label})", file=sys.stderr)
    selector = make_selector(method_cfg["name"], n_features_to_select=m, n_clusters=k,
                             random_state=conf["seed"], **setting)
    note = cost_note(method_cfg["name"], dataset.name, dataset.n_samples, dataset.n_features,
                     [(dict(setting, n_features_to_select=m), 1)],
                     nonzero_fraction=nonzero_fraction(dataset.X))
    if note:
        print(note, file=sys.stderr, flush=True)
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
