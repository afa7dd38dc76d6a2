"""What a reproduction costs: settings planned and done, and core-hours left.

:func:`plan_summary` counts the parameter settings per (experiment, data set, method), how many
the store already holds and how many two papers share, and costs the rest at the measured
core-seconds per setting: the store's (:func:`measured_cost_parts`) or a probe's
(:func:`probe_costs`, which runs a few pending settings spread over each grid).
:func:`plan_totals` says it in one line.
"""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pandas as pd

from ufsbench.reproduce.experiments import (
    check_methods,
    dataset_gap,
    experiment_tasks,
    load_experiment,
    selected_datasets,
    selected_methods,
)


def plan_summary(names: list[str], results_dir: str, data_dir=None, thin: int = 1,
                 only_datasets=None, costs: dict | None = None,
                 only_methods=None) -> pd.DataFrame:
    """Settings per (experiment, data set, method), how many are already finished, and the cost
    of the rest: ``costs`` (e.g. from :func:`probe_costs`) where given, else the store's
    measured cost per setting."""
    from ufsbench.runner import task_is_done

    check_methods(names, only_methods)
    rows, counted = [], set()
    for name, dataset, tasks in present_experiment_tasks(names, results_dir, data_dir, thin,
                                                         only_datasets, only_methods):
        for task in tasks:
            # A setting two papers share (same data, method, parameters, protocol) runs once.
            key = json.dumps(task.lock_key(), sort_keys=True, default=str)
            rows.append({"experiment": name, "dataset": dataset.name, "method": task.method,
                         "done": task_is_done(task, dataset.n_features),
                         "shared": key in counted})
            counted.add(key)
    df = pd.DataFrame(rows, columns=["experiment", "dataset", "method", "done", "shared"])
    df["left"] = ~df["done"] & ~df["shared"]
    plan = df.groupby(["experiment", "dataset", "method"]).agg(
        settings=("done", "size"), done=("done", "sum"), shared=("shared", "sum"),
        left=("left", "sum")).reset_index()
    stored, fresh = measured_cost_parts(results_dir), costs or {}
    pairs = list(zip(plan["dataset"], plan["method"]))
    # Fitting is timed by the code that ran it: a probe of the code now wins over older records.
    # K-means is the protocol's, the same for any code: every stored record times it, and many
    # records carry the subset cache's hit rate, which a few probed settings cannot.
    to_run = (plan["settings"] - plan["shared"]).clip(lower=1)
    plan["s_fit"] = [amortised_fit(fresh.get(p) or stored.get(p) or {}, n)
                     for p, n in zip(pairs, to_run)]
    plan["s_eval"] = [(stored.get(p) or fresh.get(p) or {}).get("eval") for p in pairs]
    plan["s_per_setting"] = plan["s_fit"] + plan["s_eval"]
    plan["core_hours_left"] = plan["left"] * plan["s_per_setting"] / 3600
    plan["eval_core_hours_left"] = plan["left"] * plan["s_eval"] / 3600
    plan["core_hours_all"] = (plan["settings"] - plan["shared"]) * plan["s_per_setting"] / 3600
    return plan


def plan_totals(plan: pd.DataFrame, cores: int | None = None) -> str:
    """One line: settings, done, and the measured estimate of what is left (core-hours and wall
    hours on this machine's cores); settings with no measurement yet are counted separately."""
    cores = cores or os.cpu_count() or 1
    left = plan["left"] if "left" in plan else plan["settings"] - plan["done"]
    unmeasured = int(left[plan["s_per_setting"].isna()].sum())
    hours = float(plan["core_hours_left"].fillna(0).sum())
    evaluation = ""
    if "eval_core_hours_left" in plan:
        evaluation = (f" (K-means evaluation "
                      f"{float(plan['eval_core_hours_left'].fillna(0).sum()):.1f} of them)")
    whole = ""
    if "core_hours_all" in plan:
        every = float(plan["core_hours_all"].fillna(0).sum())
        whole = f"; every setting from scratch: about {every:.1f} core-hours ({every / cores:.1f} h)"
    shared = int(plan["shared"].sum()) if "shared" in plan else 0
    shared_text = f" ({shared} shared between papers, run once)" if shared else ""
    return (f"total: {int(plan['settings'].sum())} settings{shared_text}, "
            f"{int(plan['done'].sum())} done; "
            f"left: about {hours:.1f} core-hours{evaluation} ({hours / cores:.1f} h on {cores} "
            f"cores) for the measured ones" + (f", plus {unmeasured} settings of (data set, "
                                               f"method) pairs not yet measured"
                                               if unmeasured else "") + whole)


def measured_cost_per_setting(results_dir: str, written_after: float | None = None
                              ) -> dict[tuple[str, str], float]:
    """Mean measured core-seconds of one parameter setting per (data set, method), from the
    store: its fit(s) plus its K-means evaluations at every feature count (see
    :func:`measured_cost_parts`)."""
    return {pair: parts["total"] for pair, parts in
            measured_cost_parts(results_dir, written_after).items()}


def measured_cost_parts(results_dir: str, written_after: float | None = None,
                        written_before: float | None = None
                        ) -> dict[tuple[str, str], dict[str, float]]:
    """Per (data set, method): the mean core-seconds of one parameter setting ("total") and the
    means of its two parts, fitting ("fit") and K-means evaluation ("eval"). Means, not medians:
    the estimates are multiplied into totals, and K-means time is a mixture of cache hits (0 s)
    and full runs.

    A ranking method's one fit serves all counts (its records repeat that fit time), and so
    does a subset method's that declares ``one_fit_serves_counts``; other subset methods are
    refitted per count. Records older than the subset cache carry no K-means time and count as
    fit time only, so those estimates are low. ``written_after`` (a time.time() value) keeps
    only records written since then, i.e. measured with the code running now;
    ``written_before`` only those written before it.
    """
    from ufsbench.methods import selector_class
    from ufsbench.records import load_results

    df = load_results(results_dir)
    if df.empty:
        return {}
    df = df[df["scoring"] == "kmeans"]
    if written_after is not None or written_before is not None:
        after, before = written_after or -np.inf, written_before or np.inf
        df = df[[after <= os.path.getmtime(p) < before for p in df["path"]]]
    if df.empty:
        return {}
    eval_time = pd.to_numeric(df.get("eval_time"), errors="coerce").fillna(0.0)
    df = df.assign(eval_time=eval_time, fit_time=pd.to_numeric(df["fit_time"], errors="coerce"))
    costs = {}
    for (dataset, method), group in df.groupby(["dataset", "method"]):
        cls = selector_class(method)
        refit_per_count = (cls.selection_kind == "subset"
                           and not getattr(cls, "one_fit_serves_counts", False))
        fits = np.array([g["fit_time"].sum() if refit_per_count else g["fit_time"].iloc[0]
                         for _, g in group.groupby("params")])
        evals = np.array([g["eval_time"].sum() for _, g in group.groupby("params")])
        costs[(dataset, method)] = {"total": float(np.mean(fits + evals)),
                                    "fit": float(np.mean(fits)), "eval": float(np.mean(evals))}
    return costs


def spread_sample(items: list, k: int) -> list:
    """k items spread evenly over ``items``: the middle item of each of k equal slices (so
    k = 1 gives the middle, and no k favours the grid's corners)."""
    if k >= len(items):
        return list(items)
    return [items[int((i + 0.5) * len(items) / k)] for i in range(k)]


def amortised_fit(parts: dict, n_settings: int) -> float | None:
    """Fitting core-seconds per setting of a (data set, method) with ``n_settings`` to run:
    ``parts["fit"]``, or where a probe timed its first (cold) fit apart, that fit once and the
    later (warm) fits' mean for the rest. The first fit of a data set fills the caches every
    later one reads (graphs, starts, factorisations; ``memory=``), so a lone cold fit per grid
    overstates a 343-point grid many times over (RUFS on USPS: 7.4 s cold, 1.05 s warm)."""
    if parts.get("fit") is None:
        return None
    if parts.get("fit_first") is None:
        return parts["fit"]
    return (parts["fit_first"] + (n_settings - 1) * parts["fit"]) / n_settings


def probe_costs(names: list[str], results_dir: str, data_dir=None, thin: int = 1,
                only_datasets=None, per_pair: int = 2, n_jobs: int = -1,
                log=print, launch: dict | None = None,
                only_methods=None) -> dict[tuple[str, str], dict[str, float]]:
    """Measure what the code running now costs per setting: run ``per_pair`` pending settings
    of every (data set, method) -- spread over its grid (:func:`spread_sample`), since the cost
    varies with the weights -- through the normal runner, and return the mean core-seconds per
    setting (and its fit / K-means parts, as :func:`measured_cost_parts`) of the records it wrote.

    The first probed setting of each pair runs alone in a first round, with the caches as it
    finds them; the others run after it, reading what it cached, as the rest of a grid would.
    With ``per_pair`` >= 2 a pair's costs therefore carry ``fit_first`` (the first round's fit)
    beside ``fit`` (the later fits' mean), which :func:`plan_summary` amortises over the grid
    (:func:`amortised_fit`). K-means is timed without the subset cache's later hits (each probed
    subset is new), so the K-means part is an upper bound.

    Stored records are timed by the code that wrote them, so after a speed-up they overstate
    what is left; the probe's settings are real results and stay in the store (no work is lost).
    """
    from ufsbench.runner import run_sweep, task_is_done

    check_methods(names, only_methods)
    start = time.time()
    rounds: list[list] = [[], []]
    for name, dataset, tasks in present_experiment_tasks(names, results_dir, data_dir, thin,
                                                         only_datasets, only_methods):
        by_method: dict[str, list] = {}
        for task in tasks:
            if not task_is_done(task, dataset.n_features):
                by_method.setdefault(task.method, []).append(task)
        chosen = [spread_sample(pending, per_pair) for pending in by_method.values()]
        rounds[0].append((name, dataset, [c[0] for c in chosen]))
        rounds[1].append((name, dataset, [t for c in chosen for t in c[1:]]))
    second_round = None
    for which, batches in enumerate(rounds):
        if which == 1:
            second_round = time.time()
        for name, dataset, chosen in batches:
            if chosen:
                tick = time.perf_counter()
                run_sweep(dataset, chosen, n_jobs=n_jobs, **(launch or {}))
                log(f"probe {name}: {dataset.name}: {len(chosen)} settings "
                    f"({'first' if which == 0 else 'later'}), {time.perf_counter() - tick:.1f} s")
    everything = measured_cost_parts(results_dir, written_after=start)
    first = measured_cost_parts(results_dir, written_after=start, written_before=second_round)
    later = measured_cost_parts(results_dir, written_after=second_round)
    for pair, parts in everything.items():
        if pair in first and pair in later:
            parts["fit_first"], parts["fit"] = first[pair]["fit"], later[pair]["fit"]
    return everything


def present_experiment_tasks(names: list[str], results_dir: str, data_dir=None, thin: int = 1,
                             only_datasets=None, only_methods=None):
    """(experiment name, data set, its runner tasks) for every data set present on this machine
    (of ``only_methods`` if given)."""
    from ufsbench.datasets import load_dataset

    for name in names:
        exp = selected_methods(load_experiment(name), only_methods)
        for reg in selected_datasets(exp, only_datasets).values():
            if not dataset_gap(reg, data_dir):
                dataset = load_dataset(reg, data_dir=data_dir, download=False)
                yield name, dataset, experiment_tasks(exp, dataset, results_dir, 0, thin)
