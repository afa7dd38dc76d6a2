"""``ufsbench report``, ``datasets``, ``methods`` and ``cache``: what the store, the registry, the
selectors and the cache hold."""

from __future__ import annotations

import sys
from pathlib import Path

from ufsbench.cli.common import CommandParser
from ufsbench.errors import UFSBenchError


# -- report / datasets / methods -------------------------------------------------------------
def _report(args: list[str]) -> None:
    from ufsbench.cli.common import add_protocol_options, wanted_protocol
    from ufsbench.records import asked_protocol
    from ufsbench.report import (
        REPORT_FILES,
        RULE_ALIASES,
        RULES,
        SUMMARIES,
        failed_setting_lines,
        fit_warning_lines,
        report_tables,
        stale_note,
        write_reports,
    )
    from ufsbench.results import ResultStore, load_failures, load_results, named_rows

    parser = CommandParser(prog="ufsbench report",
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
    parser.add_argument("--rule", nargs="*", choices=[*RULES, *RULE_ALIASES],
                        default=list(RULES))
    parser.add_argument("--summary", choices=list(SUMMARIES), default="mean")
    parser.add_argument("--html", metavar="FILE", help="also write a static HTML summary page "
                                                       "(tables and figures) to FILE")
    add_protocol_options(parser)
    opts = parser.parse_args(args)
    if opts.html:   # before any output: without the plots extra this ends in one line
        from ufsbench.html import write_html
    df = load_results(opts.results_dir)
    if not df.empty:
        df = named_rows(df, ResultStore(opts.results_dir).root, opts.dataset, opts.method)
    df, left_out = asked_protocol(df, wanted_protocol(opts), ResultStore(opts.results_dir).root)
    if left_out:
        print(f"note: {left_out}", file=sys.stderr)
    print(report_tables(df, metrics=opts.metric, rules=opts.rule, summary=opts.summary,
                        fmt=opts.format), end="" if opts.format == "csv" else "\n")
    if opts.format == "csv" and stale_note(df):
        print(f"note: {stale_note(df).strip()}", file=sys.stderr)
    failed = failed_setting_lines(load_failures(opts.results_dir), df)
    if failed:
        print("\n".join(failed), file=sys.stderr)
    warned = fit_warning_lines(df)
    if warned:
        print("\n".join(warned), file=sys.stderr)
    if opts.out:
        formats = [opts.format] if opts.format in REPORT_FILES else list(REPORT_FILES)
        try:
            written = write_reports(df, opts.out, summary=opts.summary, formats=formats,
                                    metrics=opts.metric, rules=opts.rule)
        except OSError as exc:
            raise UFSBenchError(f"cannot write the tables to {opts.out} ({exc.strerror or exc}); "
                                f"choose a writable --out directory") from None
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    if opts.html:
        page = write_html(df, opts.html, summary=opts.summary, failed=failed, left_out=left_out)
        print(f"wrote {page}", file=sys.stderr)


def _datasets(args: list[str]) -> None:
    from tabulate import tabulate

    from ufsbench.datasets import dataset_entry, dataset_names, dataset_status, user_entry_file
    from ufsbench.datasets.config_dirs import user_config_dirs
    from ufsbench.paths import default_data_dir

    if args and args[0] == "fetch":
        _datasets_fetch(args[1:])
        return
    parser = CommandParser(prog="ufsbench datasets",
                           description="known data sets and their local status; "
                                       "`ufsbench datasets fetch` downloads missing ones")
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
    print("missing ones with a source: ufsbench datasets fetch NAME... or --all (--dry-run shows "
          "what it would download)")
    dirs = user_config_dirs()
    print(f"user config directories: {', '.join(map(str, dirs)) if dirs else 'none'} "
          f"($UFSBENCH_CONFIG_DIR, ~/.config/ufsbench: dataset/*.yaml, method/*.yaml)")


def _fetch_selection(names: list[str], data_dir: Path) -> tuple[list[str], list[str]]:
    """The data sets to fetch for ``names`` (all with a download source when empty; a subset
    stands for its parent), and notes on names with nothing to fetch."""
    from ufsbench.datasets import dataset_entry, registry_entries
    from ufsbench.datasets.fetch import can_fetch
    from ufsbench.datasets.registry import where_to_get

    if not names:
        return [name for name, entry in registry_entries().items() if can_fetch(entry)], []
    chosen, notes = [], []
    for name in names:
        entry = dataset_entry(name)  # an unknown name: one line listing the known ones
        if entry.get("kind") == "subset":
            notes.append(f"{name}: a subset of {entry['parent']}, which is fetched instead")
            entry = dataset_entry(entry["parent"])
        if entry.get("kind") in ("synthetic", "sklearn_digits"):
            notes.append(f"{name}: embedded in ufsbench, nothing to fetch")
        elif not can_fetch(entry):
            raise UFSBenchError(f"data set {entry['name']!r} has no download source in the "
                                f"registry; "
                                f"{where_to_get(entry, data_dir / entry.get('file', name))}")
        elif entry["name"] not in chosen:
            chosen.append(entry["name"])
    return chosen, notes


def _print_fetch_plan(names: list[str], data_dir: Path) -> None:
    from ufsbench.datasets import dataset_entry
    from ufsbench.datasets.fetch import fetch_plan

    for name in names:
        plan = fetch_plan(dataset_entry(name), data_dir)
        size = f"{plan['size'] / 1e6:.1f} MB" if plan["size"] else "unknown"
        print(f"{name}\n  source: {plan['source']}\n  size:   {size}\n"
              f"  verify: {plan['verify']}\n  saves:  {plan['saves']}")


def _fetch_one(name: str, data_dir: Path) -> str:
    """Fetch one data set; the line that says what was saved and verified."""
    from ufsbench.datasets import dataset_entry
    from ufsbench.datasets.fetch import fetch_dataset

    fetched = fetch_dataset(dataset_entry(name), data_dir, progress=None)
    line = (f"{name}: saved {fetched.path} ({fetched.size / 1e6:.1f} MB); verified "
            f"{fetched.verified}; sha256 {fetched.sha256}")
    return line + (f" (recorded in {fetched.recorded.name})" if fetched.recorded else "")


def _datasets_fetch(args: list[str]) -> None:
    from ufsbench.datasets import dataset_status
    from ufsbench.datasets.fetch import downloads_off
    from ufsbench.paths import default_data_dir

    parser = CommandParser(
        prog="ufsbench datasets fetch",
        description="download the registry's data sets into the data directory, each verified "
                    "against its recorded checksum (a file is saved only once it matches)",
        epilog="exit codes: 0 all present, 1 a download failed (the others are kept), 2 bad "
               "input or downloads off (UFSBENCH_OFFLINE=1)")
    parser.add_argument("names", nargs="*", metavar="NAME", help="data sets to fetch")
    parser.add_argument("--all", action="store_true",
                        help="every registry data set with a download source")
    parser.add_argument("--dry-run", action="store_true",
                        help="download nothing; list each missing set's source, size and the "
                             "checksum it would be verified against (all sets without NAMEs)")
    parser.add_argument("--data-dir", help="data directory (default: $UFSBENCH_DATA, then the "
                                           "cache)")
    opts = parser.parse_args(args)
    if opts.names and opts.all:
        raise UFSBenchError("give data set names or --all, not both")
    if not (opts.names or opts.all or opts.dry_run):
        raise UFSBenchError("name the data sets to fetch (e.g. ufsbench datasets fetch lung) or "
                            "give --all; --dry-run lists what would be downloaded")
    data_dir = Path(opts.data_dir).expanduser() if opts.data_dir else default_data_dir()
    names, notes = _fetch_selection(opts.names, data_dir)
    for note in notes:
        print(note)
    status = {name: dataset_status(name, data_dir) for name in names}
    missing = [name for name in names if not status[name]["present"]]
    present = [name for name in names if status[name]["verified"]]
    broken = [name for name in names if status[name]["present"] and not status[name]["verified"]]
    if opts.dry_run:
        _print_fetch_plan(missing, data_dir)
        if present:
            print(f"present and verified in {data_dir}: {', '.join(present)}")
        if broken:
            print(f"present but failing their checksum (delete the files to fetch them again): "
                  f"{', '.join(broken)}")
    elif missing and downloads_off():
        raise UFSBenchError(f"downloads are off (UFSBENCH_OFFLINE=1), so {', '.join(missing)} "
                            f"cannot be fetched: unset UFSBENCH_OFFLINE (or set it to 0), or put "
                            f"the files into {data_dir} by hand (--dry-run says where each comes "
                            f"from)")
    else:
        for name in present:
            print(f"{name}: present and verified ({status[name]['detail']})")
        failed = _fetch_all(missing, data_dir)
        for name in broken:
            print(f"ufsbench: error: data set {name!r} is present but fails its checksum "
                  f"({status[name]['detail']}); delete the file and fetch it again",
                  file=sys.stderr)
        failed += broken
        if failed:
            print(f"ufsbench: {len(failed)} of {len(names)} data set(s) not fetched: "
                  f"{', '.join(failed)}", file=sys.stderr)
            sys.exit(1)


def _fetch_all(names: list[str], data_dir: Path) -> list[str]:
    """Fetch each data set in turn; the names that failed (each failure printed as it happens).
    Ctrl-C stops with exit code 130, keeping the sets already fetched."""
    from ufsbench.errors import DataError

    failed = []
    for name in names:
        print(f"fetching {name} into {data_dir}", file=sys.stderr)
        try:
            print(_fetch_one(name, data_dir), flush=True)
        except DataError as exc:
            print(f"ufsbench: error: {exc}", file=sys.stderr)
            failed.append(name)
        except KeyboardInterrupt:
            print(f"\nufsbench: interrupted while fetching {name}; its partial download was "
                  f"removed; run the same command again to fetch the rest", file=sys.stderr)
            sys.exit(130)
    return failed


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
                f"fixed {fixed[pname]}" if pname in fixed else "",
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
             f"fixed:    {_fmt_setting(fixed)} (for every fit)",
             *[f"preset:   {preset}: {_fmt_setting(values)} (method.preset={preset})"
               for preset, values in cfg.get("presets", {}).items()],
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

    parser = CommandParser(
        prog="ufsbench methods",
        description="the registered selectors: grid, label-free default and summary of each; "
                    "with NAME, one method's parameters (constructor default, fixed / grid / "
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
                     ", ".join(cfg.get("presets") or {}) or "-", textwrap.fill(summary, 50)])
    print(tabulate(rows, headers=["method", "selects", "grid (values)", "default", "presets",
                                  "summary"]))
    print("\nufsbench methods NAME: one method's parameters with their allowed values, its "
          "fixed values, presets, grid and default, paper and equations")


def _cache(args: list[str]) -> None:
    from ufsbench.cache import cache_info, clear_cache, size_limit

    parser = CommandParser(
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
