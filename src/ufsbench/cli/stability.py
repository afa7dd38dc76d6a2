"""``ufsbench stability``: how much each method's selection changes over subsamples of the rows
(:mod:`ufsbench.stability`), from the same overrides as ``ufsbench run``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ufsbench.errors import UFSBenchError

HELP = """usage: ufsbench stability method=<name>[,<name>...|all] dataset=<name>[,...] [subsamples=20]
                          [fraction=0.9] [feature_counts=[50,100]] [seed=0] [n_jobs=-1]
                          [compute=false] [out=DIR] [method.default.<p>=v] [results_dir=...]

Fits each method at its label-free default setting (what `ufsbench run` uses as its default;
method.default.<p>=v, method.params.<p>=v or method.preset=NAME give another setting) on B
subsamples of the rows (B = subsamples, default 20; fraction of the samples each, default 0.9,
without replacement, seeded with (seed, b); fit b gets random_state = seed + b) and scores the
selected m-subsets at each feature count (default: the data set's, the papers' 50..300):

  Phi  Nogueira, Sechidis & Brown's stability estimator (JMLR 2018) with its 95 % confidence
       interval: 1 = the same subset every time, 0 = no more alike than random subsets
  Jac  mean pairwise Jaccard index of the B subsets (not corrected for chance)

COST: B fits per method and data set (B x the number of feature counts for DGUFS, K-means UFS,
SF2SOG and random, which are refitted per count): with B = 20 a method costing 30 s a fit costs
10 minutes per data set. Every finished subsample fit is stored at once under
<results_dir>/<dataset>/<method>/stability/ (Ctrl-C loses none; rerun to resume; a larger B
reuses the first fits). compute=false fits nothing and reports what is stored. out=DIR also
writes DIR/stability.md and .csv (cells that are not finished are listed there).
"""

#: Keys of ``ufsbench stability`` besides the config's, with their defaults.
STABILITY_KEYS = {"subsamples": 20, "fraction": 0.9, "compute": True, "out": None}


def _parse_value(name: str, value: str):
    if name == "subsamples":
        try:
            return int(value)
        except ValueError:
            raise UFSBenchError(f"subsamples={value!r} must be an integer >= 2, e.g. "
                                f"subsamples=20") from None
    if name == "fraction":
        try:
            return float(value)
        except ValueError:
            raise UFSBenchError(f"fraction={value!r} must be a number in (0, 1], e.g. "
                                f"fraction=0.9") from None
    if name == "compute":
        if value.lower() not in ("true", "false"):
            raise UFSBenchError(f"compute={value!r} must be true or false")
        return value.lower() == "true"
    return value


def stability_keys(args: list[str]) -> tuple[dict, list[str]]:
    """The stability command's own keys (:data:`STABILITY_KEYS`) and the overrides left for the
    config."""
    from ufsbench.stability import check_fraction, check_subsamples

    keys, rest = dict(STABILITY_KEYS), []
    for item in args:
        name, _, value = item.partition("=")
        if name in STABILITY_KEYS and "=" in item:
            keys[name] = _parse_value(name, value)
        else:
            rest.append(item)
    check_subsamples(keys["subsamples"])
    check_fraction(keys["fraction"])
    return keys, rest


def _choices(overrides: list[str], key: str) -> list[str]:
    for item in overrides:
        name, _, value = item.partition("=")
        if name == key:
            return value.split(",")
    return []


def _expand_all_methods(overrides: list[str]) -> list[str]:
    """``method=all``: every registered method that selects features."""
    from ufsbench.methods import available_methods
    from ufsbench.methods.base import keeps_all_features

    names = [m for m in available_methods() if not keeps_all_features(m)]
    return [f"method={','.join(names)}" if o == "method=all" else o for o in overrides]


def _compose_pairs(overrides: list[str], root: Path) -> list[dict[str, Any]]:
    """One composed config per (method, data set) of the comma lists, in the order given
    (method by method)."""
    from hydra import compose, initialize_config_dir

    from ufsbench.run_config import config_dict

    methods: list[str | None] = list(_choices(overrides, "method")) or [None]
    datasets: list[str | None] = list(_choices(overrides, "dataset")) or [None]
    if len(methods) > 1 and any(o.startswith(("method.", "+method.")) for o in overrides):
        raise UFSBenchError("method.<key>= overrides apply to one method: give one method "
                            "with them")
    fixed = [o for o in overrides if o.partition("=")[0] not in ("method", "dataset")]
    confs: list[dict[str, Any]] = []
    with initialize_config_dir(config_dir=str(root), version_base=None):
        for method in methods:
            for dataset in datasets:
                chosen = [f"method={method}"] * (method is not None) + \
                    [f"dataset={dataset}"] * (dataset is not None)
                conf = compose("config", overrides=chosen + fixed)
                confs.append(config_dict(conf, "the composed config"))
    return confs


def _plan(confs: list[dict]) -> list[dict]:
    """Every pair checked before any fit: setting, data set, feature counts."""
    from ufsbench.datasets import load_dataset_config
    from ufsbench.methods.base import check_setting, keeps_all_features
    from ufsbench.presets import apply_preset
    from ufsbench.run_config import check_runner, resolve_feature_counts

    plan, loaded = [], {}
    for conf in confs:
        check_runner(conf)
        method = conf["method"]["name"]
        if keeps_all_features(method):
            raise UFSBenchError(f"{method} keeps every feature: its stability is undefined; "
                                f"give methods that select")
        method_cfg = apply_preset(conf["method"])  # method.preset=NAME, as run and select
        setting = dict(method_cfg.get("params") or {}, **(method_cfg.get("default") or {}))
        check_setting(method, setting)
        name = conf["dataset"]["name"]
        if name not in loaded:
            loaded[name] = load_dataset_config(conf["dataset"], data_dir=conf["data_dir"],
                                               download=conf["download"])
        dataset = loaded[name]
        counts, _ = resolve_feature_counts(conf, dataset.n_features, dataset.name)
        counts = [m for m in counts if m < dataset.n_features]
        if not counts:
            raise UFSBenchError(f"no feature count below d = {dataset.n_features} for "
                                f"{dataset.name}; give feature_counts=[...]")
        plan.append({"method": method, "setting": setting, "dataset": dataset,
                     "counts": counts, "conf": conf})
    return plan


def _table(rows: list[dict]):
    import pandas as pd

    from ufsbench.stability import format_phi

    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return pd.DataFrame({
        "dataset": frame["dataset"], "method": frame["method"], "m": frame["n_features"],
        "B": frame["n_subsamples"], "fraction": frame["fraction"],
        "Phi [95% CI]": [format_phi(p, lo, hi) for p, lo, hi in
                         frame[["phi", "ci_low", "ci_high"]].itertuples(index=False)],
        "Jaccard": frame["jaccard"].map(lambda v: f"{v:.2f}"),
        "degenerate": frame["degenerate_fits"],
        "fits": frame["fits"], "fit s": frame["fit_time"].map(lambda v: f"{v:.1f}")})


def _write_out(out: str, rows: list[dict], missing: list[str], command: str) -> list[Path]:
    """stability.md (one Phi [CI] table and one Jaccard table per feature count, the missing
    cells, the command) and stability.csv (every record, tidy)."""
    import datetime as _dt

    import pandas as pd
    from tabulate import tabulate

    from ufsbench.stability import DEGENERATE_NOTE, stability_frame

    directory = Path(out).expanduser()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UFSBenchError(f"cannot write to {directory} ({exc.strerror or exc}); give a "
                            f"writable out=DIR") from None
    frame = pd.DataFrame(rows)
    columns = ["dataset", "method", "params", "n_features", "n_subsamples", "fraction", "seed",
               "phi", "ci_low", "ci_high", "variance", "jaccard", "fits", "fit_time",
               "degenerate_fits", "data_checksum", "revision"]
    tidy = frame[columns] if len(frame) else pd.DataFrame(columns=columns)
    tidy.to_csv(directory / "stability.csv", index=False, float_format="%.4f")
    from ufsbench.reproduce.render import machine_description
    from ufsbench.tasks import environment

    stored_only = " (a report of the stored fits; without compute=false the same command " \
        "computes what is missing)" if "compute=false" in command else ""
    lines = ["# Selection stability", "",
             f"- command: `{command}`{stored_only}",
             f"- generated: {_dt.datetime.now().isoformat(timespec='seconds')} at ufsbench commit "
             f"{environment().get('git_commit') or 'unknown'}",
             f"- machine: {machine_description()}", "",
             ("Each method at its label-free default setting, fitted on B subsamples of the rows "
              "(without replacement, seeded); Phi = Nogueira, Sechidis & Brown's stability "
              "estimator (JMLR 2018) with its 95 % confidence interval (1: the same subset "
              "every time; 0: no more alike than random subsets of that size); Jaccard = mean "
              "pairwise Jaccard index (not corrected for chance). Cost: B fits per cell (per "
              "feature count for methods refitted per count)."), ""]
    for m, part in (tidy.groupby("n_features") if len(tidy) else []):
        design = part.iloc[0]
        lines += [f"## m = {m} selected features (B = {design['n_subsamples']}, "
                  f"{100 * design['fraction']:g} % of the rows, seed {design['seed']})", "",
                  "### Phi [95 % CI]", "",
                  tabulate(stability_frame(part.assign(stale=False)), headers="keys",
                           tablefmt="github",
                           disable_numparse=True), "",
                  "### Mean pairwise Jaccard", "",
                  tabulate(stability_frame(part.assign(stale=False), "jaccard"), headers="keys",
                           tablefmt="github",
                           disable_numparse=True), "",
                  f"Fit time of the cells: {part['fit_time'].sum() / 60:.1f} min in "
                  f"{int(part['fits'].sum())} fits.", ""]
        if part["degenerate_fits"].any():
            lines += [DEGENERATE_NOTE + ".", ""]
    lines += ["## Cells not finished", ""] + ([f"- {m}" for m in missing] or ["none"]) + [""]
    (directory / "stability.md").write_text("\n".join(lines))
    return [directory / "stability.md", directory / "stability.csv"]


def fitting_cost(rows: list[dict]) -> tuple[int, float]:
    """(subsample fits, seconds of fitting) behind stability records. A method that fits once
    per subsample serves every feature count from the same B fits, which each count's record
    lists again: they are counted once per data set, method and setting."""
    fits, seconds, shared = 0, 0.0, {}
    for row in rows:
        if row["selection_kind"] == "one fit per subsample":
            shared[(row["dataset"], row["method"], row["params"])] = (row["fits"], row["fit_time"])
        else:
            fits, seconds = fits + row["fits"], seconds + row["fit_time"]
    return (fits + sum(f for f, _ in shared.values()),
            seconds + sum(t for _, t in shared.values()))


def _stability(args: list[str]) -> None:
    import shlex
    import tempfile

    from tabulate import tabulate

    from ufsbench.cli.run import _prepare_overrides
    from ufsbench.paths import default_results_dir
    from ufsbench.stability import run_stability

    if any(a in ("-h", "--help") for a in args):
        print(HELP)
        return
    command = "ufsbench stability " + shlex.join(args)
    keys, overrides = stability_keys(args)
    overrides = _expand_all_methods(overrides)
    with tempfile.TemporaryDirectory(prefix="ufsbench-configs-") as tmp:
        overrides, _ = _prepare_overrides(
            overrides, Path(tmp), "stability also takes subsamples=, fraction=, compute= and out=")
        plan = _plan(_compose_pairs(overrides, Path(tmp)))
    rows, missing, failed = [], [], []
    for item in plan:
        conf, dataset, method = item["conf"], item["dataset"], item["method"]
        results_dir = conf["results_dir"] or str(default_results_dir())
        try:
            found = run_stability(dataset, method, item["setting"], item["counts"],
                                  keys["subsamples"], keys["fraction"], conf["seed"],
                                  results_dir, n_jobs=conf["n_jobs"], compute=keys["compute"])
        except UFSBenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - a method raising on one data set
            error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            failed.append(f"{method} on {dataset.name}: {error[:200]}")
            found = []
        done = {r["n_features"] for r in found}
        missing += [f"{method} on {dataset.name}, m = {m}" for m in item["counts"]
                    if m not in done]
        rows += found
        fits, seconds = fitting_cost(found)
        print(f"{dataset.name} / {method}: {len(found)} of {len(item['counts'])} feature "
              f"count(s) finished, {fits} subsample fits (B = {keys['subsamples']}), "
              f"{seconds:.1f} s of fitting", file=sys.stderr)
    table = _table(rows)
    if len(table):
        print(tabulate(table, headers="keys", tablefmt="simple", showindex=False,
                       disable_numparse=True))
        fits, seconds = fitting_cost(rows)
        print(f"cost: {fits} subsample fits, {seconds / 60:.1f} min of fitting "
              f"(B = {keys['subsamples']} fits per method and data set, per feature count "
              f"for methods that refit per count)")
    if missing:
        print(f"not finished ({'compute=false' if not keys['compute'] else 'see above'}): "
              + "; ".join(missing), file=sys.stderr)
    if keys["out"]:
        for path in _write_out(keys["out"], rows, missing, command):
            print(f"wrote {path}", file=sys.stderr)
    if failed:
        print(f"ufsbench: {len(failed)} stability run(s) failed:", file=sys.stderr)
        for line in failed:
            print(f"  {line}", file=sys.stderr)
        sys.exit(1)
