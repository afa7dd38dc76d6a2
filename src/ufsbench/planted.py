"""Planted-feature suite: do the methods find informative features we planted ourselves?

Five seeded regimes of synthetic cluster data (:func:`make_planted`), each with a known set of
planted informative features:

1. ``high_variance`` -- informative features carry the clusters and therefore have a larger
   variance than the N(0, 1) noise features (:func:`ufsbench.datasets.make_synthetic`);
2. ``zscored`` -- the same data after z-scoring every feature: variance no longer tells the
   informative features apart;
3. ``redundant`` -- as 1, but every informative signal is planted as ``n_copies + 1``
   interchangeable noisy columns (the signal plus N(0, copy_noise^2) each): a selection that
   spends its m places on columns of one signal covers fewer signals, and a hit counts each
   signal once;
4. ``wide`` -- d >> n: 100 samples, 5000 features;
5. ``unequal_separation`` -- informative features whose cluster separations fall evenly from
   strong to weak (weak ones barely stand out from noise).

Every method is scored by precision@m, m = the number of planted signals (n_informative): the
share of its m selected features that are planted (distinct signals, in the redundant regime).
:func:`run_planted` fits each method at its label-free default setting and at every point of
its (optionally thinned) grid, for each seed, writing each finished fit at once to the result
store (``<results_dir>/_planted/<regime>/<method>/``), so an interrupted suite resumes;
:func:`planted_table` reports per method and regime the mean over seeds at the default setting
and at the best grid point (chosen with the ground truth: *optimistic*).
It is a measurement, not a pass/fail test.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ufsbench.datasets import Dataset, make_synthetic
from ufsbench.errors import UFSBenchError

#: The regimes in their order of presentation, with one line each.
REGIMES = {
    "high_variance": "informative features have larger variance than the noise",
    "zscored": "regime 1 after z-scoring every feature",
    "redundant": "every informative feature planted as several interchangeable noisy copies",
    "wide": "d >> n (100 samples, 5000 features)",
    "unequal_separation": "informative features separate the clusters unequally well",
}
#: Shape and design of the regimes (``wide`` overrides samples and features).
DESIGN = {"n_samples": 200, "n_features": 200, "n_informative": 10, "n_clusters": 3,
          "separation": 1.5, "n_copies": 3, "copy_noise": 0.3, "wide_samples": 100,
          "wide_features": 5000, "weakest_separation": 0.25}
PLANTED_DIR = "_planted"
DEFAULT_SEEDS = 3
DEFAULT_THIN = 3
RULE_LABELS = {"default": "default setting", "best": "best grid point (optimistic)"}


# -- data ------------------------------------------------------------------------------------
def make_planted(regime: str, seed: int = 0, **design) -> Dataset:
    """The seeded data set of one regime; ``informative`` holds the planted feature indices.

    Parameters
    ----------
    regime : str
        One of :data:`REGIMES`.
    seed : int
        Seeds the data (clusters, positions, noise).
    **design
        Overrides of :data:`DESIGN` (e.g. ``n_samples=60`` for a quick test).

    Returns
    -------
    Dataset
        ``meta`` holds the regime and design; for ``redundant`` also ``groups`` (the columns of
        each planted signal).
    """
    if regime not in REGIMES:
        raise UFSBenchError(f"unknown regime {regime!r}; use one of {', '.join(REGIMES)}")
    unknown = sorted(set(design) - set(DESIGN))
    if unknown:
        raise UFSBenchError(f"unknown design key(s) {', '.join(unknown)}; known: "
                            f"{', '.join(DESIGN)}")
    p = {**DESIGN, **design}
    n, d, k = p["n_samples"], p["n_features"], p["n_informative"]
    separation = p["separation"]
    if regime == "wide":
        n, d = p["wide_samples"], p["wide_features"]
    if regime == "unequal_separation":
        separation = np.linspace(p["separation"], p["weakest_separation"], k)
    if regime == "redundant":
        return _with_copies(p, seed)
    data = make_synthetic(n_samples=n, n_features=d, n_informative=k,
                          n_clusters=p["n_clusters"], separation=separation, random_state=seed)
    X = _zscore(data.X) if regime == "zscored" else data.X
    return _named(regime, seed, X, data.y, data.informative, p)


def _zscore(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _with_copies(p: dict, seed: int) -> Dataset:
    """Regime 3: each informative feature of regime 1 becomes ``n_copies + 1`` interchangeable
    columns, each the feature plus its own N(0, copy_noise^2) noise, shuffled in among the noise
    features (d stays ``n_features``). ``meta["groups"]`` lists each signal's columns."""
    k, copies = p["n_informative"], p["n_copies"]
    base = make_synthetic(n_samples=p["n_samples"], n_features=p["n_features"] - k * copies,
                          n_informative=k, n_clusters=p["n_clusters"],
                          separation=p["separation"], random_state=seed)
    # A generator of its own (seeded apart from the base data's) for the copies' noise and
    # the column order.
    rng = np.random.default_rng([int(seed), 3])
    informative = _planted_columns(base)
    signals = base.X[:, informative]
    group = np.repeat(signals, copies + 1, axis=1)
    group += p["copy_noise"] * rng.standard_normal(group.shape)
    noise = np.delete(base.X, informative, axis=1)
    X = np.hstack([group, noise])
    order = rng.permutation(X.shape[1])          # column j of the result is column order[j]
    where = np.argsort(order)                    # where each column of X went
    groups = [np.sort(where[i * (copies + 1):(i + 1) * (copies + 1)]) for i in range(k)]
    data = _named("redundant", seed, X[:, order], base.y, np.sort(np.concatenate(groups)), p)
    data.meta["groups"] = [g.tolist() for g in groups]
    return data


def _named(regime: str, seed: int, X, y, informative, design: dict) -> Dataset:
    from ufsbench.results import digest

    checksum = f"planted:{regime}:" + digest({"regime": regime, "seed": seed, **design})
    return Dataset(name=f"planted_{regime}", X=np.ascontiguousarray(X, dtype=float), y=y,
                   checksum=checksum, informative=np.asarray(informative),
                   meta={"regime": regime, "seed": seed, "design": design})


def precision_at_m(selected, planted, groups=None) -> float:
    """The share of the m = len(selected) selected features that are planted.

    With ``groups`` (lists of interchangeable columns of one planted signal), a hit counts each
    signal once: the number of distinct signals the selection covers, over m.
    """
    selected = np.asarray(selected)
    if selected.size == 0:
        raise UFSBenchError("precision@m of an empty selection is undefined")
    if groups is not None:
        return float(sum(bool(np.isin(g, selected).any()) for g in groups) / selected.size)
    return float(np.isin(selected, planted).sum() / selected.size)


def _planted_columns(data: Dataset) -> np.ndarray:
    """The planted feature indices of synthetic data (:func:`make_planted`), or one line when
    the data set has none."""
    if data.informative is None:
        raise UFSBenchError(f"{data.name} has no planted features")
    return data.informative


def n_planted(data: Dataset) -> int:
    """m: the number of planted signals (of interchangeable column groups when there are)."""
    groups = data.meta.get("groups")
    return len(groups) if groups is not None else len(_planted_columns(data))


# -- settings --------------------------------------------------------------------------------
def method_settings(method: str, thin: int = DEFAULT_THIN) -> tuple[dict, list[dict]]:
    """(default setting, grid settings) of a method's config, the grid thinned to every
    ``thin``-th value (plus the default) as ``make reproduce-tables THIN=...`` does."""
    from ufsbench.reproduce.experiments import row_method_config
    from ufsbench.results import canonical
    from ufsbench.tasks import expand_grid

    cfg = row_method_config({"row": method, "method": method}, thin)
    default = dict(cfg["params"], **cfg["default"])
    settings = {canonical(s): s for s in expand_grid(cfg)}
    return default, list(settings.values())


# -- running ---------------------------------------------------------------------------------
@dataclass
class _Unit:
    regime: str
    seed: int
    method: str
    params: dict


def _fit_key(data: Dataset, method: str, params: dict, m: int) -> dict:
    from ufsbench.methods import selector_class

    key = {"kind": "planted", "dataset": data.name, "data_checksum": data.checksum,
           "method": method, "params": params, "n_features": int(m),
           "n_clusters": data.n_classes, "seed": int(data.meta["seed"])}
    revision = selector_class(method).revision
    return {**key, "revision": revision} if revision else key


def _path(results_dir, key: dict) -> Path:
    from ufsbench.results import ResultStore, digest

    regime = key["dataset"].removeprefix("planted_")
    return ResultStore(results_dir).root / PLANTED_DIR / regime / key["method"] / \
        f"{digest(key)}.json"


def _stored(results_dir, key: dict) -> dict | None:
    from ufsbench.stability import read_keyed

    return read_keyed(_path(results_dir, key), key)


def _fit_one(results_dir, data: Dataset, unit: _Unit) -> dict:
    """Fit one setting on one regime's data and store its selection and precision@m."""
    from threadpoolctl import threadpool_limits

    from ufsbench.methods import make_selector
    from ufsbench.stability import write_keyed
    from ufsbench.tasks import environment

    m = n_planted(data)
    key = _fit_key(data, unit.method, unit.params, m)
    selector = make_selector(unit.method, n_features_to_select=m, n_clusters=data.n_classes,
                             random_state=unit.seed, **unit.params)
    start = time.perf_counter()
    # One BLAS thread, as the runner's tasks; warnings are recorded with the fit, not printed.
    with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector.fit(data.X)
    selected = [int(i) for i in selector.top_features(m)]
    precision = precision_at_m(selected, data.informative, data.meta.get("groups"))
    result = {"selected": selected, "precision": precision,
              "fit_time": time.perf_counter() - start, "env": environment(),
              "fit_warnings": sorted({f"{w.category.__name__}: {str(w.message)[:200]}"
                                      for w in caught})[:5]}
    write_keyed(_path(results_dir, key), key, result)
    return result


def _run_unit(results_dir, unit: _Unit, design: dict) -> tuple[_Unit, dict | str]:
    data = make_planted(unit.regime, unit.seed, **design)
    try:
        return unit, _fit_one(results_dir, data, unit)
    except Exception as exc:  # noqa: BLE001 - one setting raising must not stop the suite
        return unit, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def plan_units(methods, regimes, seeds, thin: int = DEFAULT_THIN) -> list[_Unit]:
    """Every (regime, seed, method, setting), method by method in the order given, each default
    setting first; the ``wide`` regime's fits come after every other regime's (they cost the
    most: an interrupted suite has the other regimes complete)."""
    units = []
    for method in methods:
        default, grid = method_settings(method, thin)
        settings = [default] + [s for s in grid if s != default]
        units += [_Unit(r, s, method, params) for r in regimes for s in seeds
                  for params in settings]
    return sorted(units, key=lambda u: u.regime == "wide")  # stable: the order above otherwise


def run_planted(methods, regimes=tuple(REGIMES), seeds=range(DEFAULT_SEEDS),
                thin: int = DEFAULT_THIN, results_dir=None, n_jobs: int = 1,
                compute: bool = True, design: dict | None = None, log=None) -> pd.DataFrame:
    """Fit every pending (regime, seed, method, setting); return every stored fit as a frame.

    Returns
    -------
    DataFrame
        One row per stored fit: regime, seed, method, params (JSON), is_default, precision,
        fit_time; plus ``error`` for settings that raised in this call (not stored: the next
        call retries them).
    """
    from ufsbench.results import canonical

    design = dict(design or {})
    units = plan_units(methods, regimes, list(seeds), thin)
    data = {(r, s): make_planted(r, s, **design) for r in regimes for s in seeds}
    defaults = {m: method_settings(m, thin)[0] for m in methods}

    def key_of(u):
        return _fit_key(data[u.regime, u.seed], u.method, u.params,
                        n_planted(data[u.regime, u.seed]))

    pending = [u for u in units if _stored(results_dir, key_of(u)) is None] if compute else []
    errors = {}
    for unit, result in _execute(results_dir, pending, design, n_jobs):
        if isinstance(result, str):
            errors[(unit.regime, unit.seed, unit.method, canonical(unit.params))] = result
            if log:
                log(f"{unit.method} failed on {unit.regime} (seed {unit.seed}) at "
                    f"{unit.params}: {result}")
    rows = []
    for u in units:
        stored = _stored(results_dir, key_of(u))
        error = errors.get((u.regime, u.seed, u.method, canonical(u.params)))
        if stored is None and error is None:
            continue
        rows.append({"regime": u.regime, "seed": u.seed, "method": u.method,
                     "params": canonical(u.params), "is_default": u.params == defaults[u.method],
                     "precision": np.nan if stored is None else stored["precision"],
                     "fit_time": np.nan if stored is None else stored["fit_time"],
                     "error": error or ""})
    return pd.DataFrame(rows, columns=["regime", "seed", "method", "params", "is_default",
                                       "precision", "fit_time", "error"])


def _execute(results_dir, pending: list[_Unit], design: dict, n_jobs: int):
    if n_jobs == 1 or len(pending) <= 1:
        for unit in pending:
            yield _run_unit(results_dir, unit, design)
        return
    from joblib import delayed

    from ufsbench.runner import worker_pool

    yield from worker_pool(n_jobs, return_as="generator_unordered")(
        delayed(_run_unit)(results_dir, u, design) for u in pending)


def load_planted(results_dir=None) -> pd.DataFrame:
    """Every planted-feature fit stored under ``<results_dir>/_planted/`` (the columns of
    :func:`run_planted`, without ``error``), whatever the design; fits of a revised method
    are left out."""
    from ufsbench.methods.base import declared
    from ufsbench.results import ResultStore, canonical
    from ufsbench.stability import read_keyed

    root = ResultStore(results_dir).root / PLANTED_DIR
    rows, defaults = [], {}
    for path in sorted(root.glob("*/*/*.json")) if root.is_dir() else []:
        payload = read_keyed(path) or {}
        key = payload.get("key") or {}
        if key.get("kind") != "planted":
            continue
        method = key["method"]
        if declared(method, "revision", key.get("revision", 0)) != key.get("revision", 0):
            continue
        if method not in defaults:
            defaults[method] = method_settings(method, 1)[0]
        rows.append({"regime": key["dataset"].removeprefix("planted_"), "seed": key["seed"],
                     "method": method, "params": canonical(key["params"]),
                     "is_default": key["params"] == defaults[method],
                     "precision": payload["precision"], "fit_time": payload["fit_time"]})
    return pd.DataFrame(rows, columns=["regime", "seed", "method", "params", "is_default",
                                       "precision", "fit_time"])


# -- reporting -------------------------------------------------------------------------------
def planted_table(fits: pd.DataFrame, seeds=None) -> pd.DataFrame:
    """Per method, regime and rule (``default``, ``best``): mean and std of precision@m over
    the seeds, the number of seeds and of grid settings. ``best`` is the grid point with the
    highest mean over the seeds (chosen with the ground truth: optimistic). A cell uses the
    settings finished on every seed of ``seeds`` (default: every seed in ``fits``); where no
    setting is, it falls back to the settings finished on the most seeds and says so through
    ``n_seeds`` (fewer than ``len(seeds)``: a partial cell, marked in the report)."""
    columns = ["method", "regime", "rule", "precision_mean", "precision_std", "n_seeds",
               "n_settings", "params"]
    done = fits.dropna(subset=["precision"]) if len(fits) else fits
    if done.empty:
        return pd.DataFrame(columns=columns)
    seeds = sorted(set(done["seed"]) if seeds is None else seeds)
    rows = []
    for (method, regime), part in done.groupby(["method", "regime"], sort=False):
        per = part.groupby("params").agg(mean=("precision", "mean"), std=("precision", "std"),
                                         n=("seed", "nunique"),
                                         default=("is_default", "first"))
        n_seeds = len(seeds) if (per["n"] == len(seeds)).any() else int(per["n"].max())
        per = per[per["n"] == n_seeds]
        default = per[per["default"]]
        if len(default):
            rows.append([method, regime, "default", default["mean"].iloc[0],
                         default["std"].iloc[0], n_seeds, 1, default.index[0]])
        best = per.sort_values("mean", ascending=False, kind="stable").iloc[:1]
        rows.append([method, regime, "best", best["mean"].iloc[0], best["std"].iloc[0],
                     n_seeds, len(per), best.index[0]])
    return pd.DataFrame(rows, columns=columns)


def precision_frame(table: pd.DataFrame, rule: str, values: str = "precision_mean"
                    ) -> pd.DataFrame:
    """Methods x regimes of mean precision@m (or another column, e.g. ``n_seeds``) under one
    rule (NaN where not finished)."""
    part = table[table["rule"] == rule]
    frame = part.pivot(index="method", columns="regime", values=values)
    return frame.reindex(index=sorted(frame.index),
                         columns=[r for r in REGIMES if r in frame.columns])


def _cell_texts(table: pd.DataFrame, rule: str, n_seeds: int) -> pd.DataFrame:
    """The report's cells: the mean to two decimals, "(k of N seeds)" on a partial cell."""
    means = precision_frame(table, rule)
    counts = precision_frame(table, rule, "n_seeds").reindex_like(means)
    return pd.DataFrame(
        [["—" if pd.isna(v) else f"{v:.2f}" + ("" if pd.isna(k) or int(k) >= n_seeds
                                                 else f" ({int(k)} of {n_seeds} seeds)")
          for v, k in zip(means.loc[m], counts.loc[m])] for m in means.index],
        index=means.index, columns=means.columns)


def heatmap(table: pd.DataFrame, caption: str = ""):
    """Two panels (default setting; best grid point, optimistic): methods x regimes, each cell
    annotated with its precision@m. Returns a matplotlib Figure (no pyplot)."""
    from ufsbench import figure_style

    rules = [r for r in RULE_LABELS if (table["rule"] == r).any()]
    if not rules:
        raise UFSBenchError("no finished planted-feature cell to draw")
    frames = {r: precision_frame(table, r) for r in rules}
    methods = sorted(set().union(*(f.index for f in frames.values())))
    regimes = [r for r in REGIMES if any(r in f.columns for f in frames.values())]
    fig, axes = figure_style.panel_grid(len(rules), ncols=2,
                                        size=(1.1 * len(regimes) + 2.2, 0.32 * len(methods) + 1.6))
    image = None
    for ax, rule in zip(axes, rules):
        values = frames[rule].reindex(index=methods, columns=regimes).to_numpy(dtype=float)
        image = ax.imshow(np.ma.masked_invalid(values), vmin=0, vmax=1, cmap="viridis",
                          aspect="auto")
        for (i, j), v in np.ndenumerate(values):
            text = "—" if np.isnan(v) else f"{v:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="white" if np.isnan(v) or v < 0.6 else "black")
        ax.set_xticks(range(len(regimes)), [r.replace("_", "\n") for r in regimes], fontsize=7)
        ax.set_yticks(range(len(methods)), methods, fontsize=7)
        ax.set_title(RULE_LABELS[rule], fontsize=9)
    fig.colorbar(image, ax=axes, shrink=0.8, label="precision@m")
    figure_style.set_suptitle(fig, "Planted features found: precision@m (m = number of planted "
                                   "signals), mean over seeds")
    if caption:
        figure_style.set_caption(fig, caption)
    return fig


def _thinned(thin: int) -> str:
    from ufsbench.reproduce.experiments import thin_text

    return "" if thin == 1 else f", thinned to {thin_text(thin)} (`thin={thin}`)"


def markdown_report(table: pd.DataFrame, fits: pd.DataFrame, command: str, seeds, thin: int,
                    missing: list[str]) -> str:
    """The suite's markdown: design, both tables, the cost, and what is not finished."""
    import datetime as _dt

    from tabulate import tabulate

    from ufsbench.reproduce.render import machine_description
    from ufsbench.tasks import environment

    design = ", ".join(f"{k}={v}" for k, v in DESIGN.items())
    stored_only = " (a report of the stored fits; without compute=false the same command " \
        "computes what is missing)" if "compute=false" in command else ""
    lines = ["# Planted-feature suite", "", f"- command: `{command}`{stored_only}",
             f"- generated: {_dt.datetime.now().isoformat(timespec='seconds')} at ufsbench commit "
             f"{environment().get('git_commit') or 'unknown'}",
             f"- machine: {machine_description()}", "",
             ("Seeded synthetic cluster data with known informative features; precision@m = "
              "share of the m selected features that are planted, m = the number of planted "
              "signals (in the redundant regime a signal is several interchangeable columns and "
              f"counts once); mean over seeds {list(seeds)}. A measurement, not a pass/fail "
              "gate."), "",
             "Regimes:", ""]
    lines += [f"{i}. `{name}`: {text}" for i, (name, text) in enumerate(REGIMES.items(), 1)]
    lines += ["", f"Design: {design}.", "",
              (f"Grids: each method's config grid{_thinned(thin)}; the best grid point is "
               "chosen with the ground truth, so that table is optimistic by construction."), ""]
    for rule, label in RULE_LABELS.items():
        frame = _cell_texts(table, rule, len(list(seeds))) if len(table) else pd.DataFrame()
        lines += [f"## Precision@m — {label}", "",
                  tabulate(frame, headers="keys", tablefmt="github", disable_numparse=True)
                  if len(frame) else "(none)", ""]
    done = fits.dropna(subset=["precision"]) if len(fits) else fits
    if len(done):
        lines += [f"Cost: {len(done)} fits, {done['fit_time'].sum() / 60:.1f} min of fitting.",
                  ""]
    lines += ["## Not finished", ""] + ([f"- {m}" for m in missing] or ["none"]) + [""]
    return "\n".join(lines)
