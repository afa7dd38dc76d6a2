"""Re-create the five papers' result tables with our numbers beside theirs (``make reproduce-tables``).

Per paper, ``configs/experiment/<paper>.yaml`` says which data sets, which table rows (a method id
plus fixed parameters, e.g. UFSOL's four ``graph`` variants), which grids and how the paper scored
(mean of 20 K-means runs, SOGFS's best of 5, DGUFS's own labels). The sweeps go through the normal
runner (``plan_tasks`` / ``run_sweep``) into the normal result store, so they run in parallel, are
resumable and are shared between papers (one evaluation protocol for all: 20 seeded K-means runs;
the per-paper NMI normalisation and best-of-5 summary are read from the stored runs).

Three selection rules are reported for every published cell, because the papers' rule picks
parameters and feature count with the labels it is scored on:

* ``paper``: best summary over the grid x feature counts on all runs (the papers' protocol);
* ``label_free``: the row's fixed default parameters at one fixed feature count (the middle of the
  data set's counts), the same rule for every data set;
* ``split``: choose on the first half of the K-means runs (1-10), report the second half (11-20),
  which costs nothing extra because each record stores its per-run scores.

A method we lack or a data set not on the machine stays a visible row with its reason.

The package's modules, from the bottom up: ``experiments`` (published tables, experiment configs,
availability, runner tasks), ``rules`` (scoring the stored runs and choosing the cells),
``diagnosis`` (per-table summaries, candidate causes of large gaps), ``render`` (the report files
and the figure) and ``cost`` (the plan and its measured cost). This module runs the sweeps
(:func:`run_experiment`) and the whole pipeline (:func:`reproduce`), and re-exports the public
names of the others.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ufsbench.errors import UFSBenchError
from ufsbench.reproduce.cost import (
    measured_cost_parts,
    measured_cost_per_setting,
    plan_summary,
    plan_totals,
    present_experiment_tasks,
    probe_costs,
    spread_sample,
)
from ufsbench.reproduce.diagnosis import (
    candidate_causes,
    note_failures,
    preprocessing_check_lines,
    preprocessing_check_path,
    table_summary,
)
from ufsbench.reproduce.experiments import (
    PAPERS,
    PROFILES,
    check_methods,
    dataset_counts,
    dataset_gap,
    default_out_dir,
    experiment_path,
    experiment_tasks,
    is_reconstructed,
    load_experiment,
    load_published,
    method_gap,
    middle_count,
    normalise_experiment,
    published_dir,
    registry_n_features,
    repo_root,
    report_protocol,
    row_method_config,
    row_scorings,
    run_protocol,
    selected_datasets,
    selected_methods,
    thin_text,
    thin_values,
    transcribe_published,
)
from ufsbench.reproduce.render import (
    display_frame,
    figure_table,
    large_gap_lines,
    machine_description,
    overview_table,
    plot_figure,
    protocol_lines,
    render_latex,
    render_markdown,
    run_header,
    write_cells_csv,
    write_outputs,
    write_overview,
)
from ufsbench.reproduce.rules import (
    CELL_COLUMNS,
    CHANCE_NOTE,
    PICK_NOTE_PREFIXES,
    RULE_LABELS,
    chance_row,
    choose_cells,
    compare,
    mark_chance_level,
    pick_notes,
    protocol_text,
    record_runs,
    row_records,
    summarise,
    table_entries,
)

__all__ = ["experiment_names", "reproduce", "run_experiment", "PAPERS", "PROFILES",
           "check_methods", "dataset_counts", "dataset_gap", "default_out_dir", "experiment_path",
           "experiment_tasks", "is_reconstructed", "load_experiment", "load_published",
           "method_gap", "middle_count", "normalise_experiment", "published_dir",
           "registry_n_features", "repo_root", "report_protocol", "row_method_config",
           "row_scorings", "run_protocol", "selected_datasets", "selected_methods", "thin_text",
           "thin_values", "transcribe_published", "CELL_COLUMNS", "PICK_NOTE_PREFIXES",
           "RULE_LABELS", "CHANCE_NOTE", "chance_row", "choose_cells", "compare",
           "mark_chance_level", "pick_notes", "protocol_text", "record_runs",
           "row_records", "summarise", "table_entries", "candidate_causes", "note_failures",
           "preprocessing_check_lines", "preprocessing_check_path", "table_summary",
           "display_frame", "figure_table", "large_gap_lines", "machine_description",
           "overview_table", "plot_figure", "protocol_lines", "render_latex", "render_markdown",
           "run_header", "write_cells_csv", "write_outputs", "write_overview",
           "measured_cost_parts", "measured_cost_per_setting", "plan_summary", "plan_totals",
           "present_experiment_tasks", "probe_costs", "spread_sample"]


def run_experiment(exp: dict, results_dir: str, n_jobs: int = -1, data_dir=None, seed: int = 0,
                   thin: int = 1, only_datasets=None, log=print, launch: dict | None = None,
                   only_methods=None) -> dict:
    """Run every pending sweep of an experiment (of its ``only_methods`` if given); returns
    per-data-set runner statistics.

    ``launch`` holds the runner's ``backend`` and ``scheduler`` (e.g. ``{"backend": "dask",
    "scheduler": "tcp://host:8786"}``: the sweeps go to a dask cluster); default this machine."""
    from ufsbench.datasets import load_dataset
    from ufsbench.runner import run_sweep

    exp = selected_methods(exp, only_methods)
    stats: dict[str, dict] = {}
    if not exp["rows"]:          # none of only_methods in this experiment: no data set to load
        return stats
    for published_id, name in selected_datasets(exp, only_datasets).items():
        if dataset_gap(name, data_dir):
            log(f"{exp['paper']}: {published_id}: skipped (data set not present)")
            continue
        dataset = load_dataset(name, data_dir=data_dir, download=False)
        tasks = experiment_tasks(exp, dataset, results_dir, seed, thin)
        start = time.perf_counter()
        stats[name] = run_sweep(dataset, tasks, n_jobs=n_jobs, **(launch or {}))
        stats[name]["seconds"] = round(time.perf_counter() - start, 1)
        log(f"{exp['paper']}: {name}: {stats[name]['tasks']} settings, {stats[name]['skipped']} "
            f"already stored, {stats[name]['records']} new records, "
            f"{stats[name].get('failed', 0)} failed settings, {stats[name]['seconds']} s")
    return stats


def reproduce(names: list[str], results_dir: str, out_dir: str | os.PathLike, n_jobs: int = -1,
              data_dir=None, thin: int = 1, only_datasets=None, run: bool = True,
              command: str = "", log=print, launch: dict | None = None,
              only_methods=None, kmeans_init: str = "random") -> list[Path]:
    """Run (unless ``run`` is false) and report each named experiment; returns files written.
    ``launch``: where the sweeps run (:func:`run_experiment`); ``only_methods``: run only these
    methods' sweeps (the reports still cover every method in the store); ``kmeans_init``: the
    evaluation's K-means starts ("k-means++" for a sensitivity run: its reports must go to
    another directory than the committed ones, and say so in their protocol)."""
    from ufsbench.evaluation import KMEANS_INITS
    from ufsbench.records import load_failures, load_results, one_protocol

    if kmeans_init not in KMEANS_INITS:
        raise UFSBenchError(f"unknown K-means init {kmeans_init!r}; use one of "
                            f"{', '.join(KMEANS_INITS)}")
    if kmeans_init != "random" and Path(out_dir).resolve() == default_out_dir().resolve():
        raise UFSBenchError(f"--kmeans-init {kmeans_init} is a sensitivity run: write its "
                            f"reports elsewhere than {default_out_dir()} (the reports of our "
                            f"protocol), e.g. --out-dir results/reproduction/kmeans++")
    if run:
        check_methods(names, only_methods)
    written = []
    for name in names:
        exp = {**load_experiment(name), "kmeans_init": kmeans_init}
        start = time.perf_counter()
        stats = run_experiment(exp, results_dir, n_jobs, data_dir, thin=thin,
                               only_datasets=only_datasets, log=log, launch=launch,
                               only_methods=only_methods) if run else {}
        wall = time.perf_counter() - start
        df = load_results(results_dir)
        if len(df):  # the records of run_protocol only (a store may hold others: one_protocol)
            df, _ = one_protocol(df[~df["stale"]], report_protocol(exp))
        cells = note_failures(exp, compare(exp, df, data_dir=data_dir, thin=thin,
                                           only_datasets=only_datasets),
                              load_failures(results_dir))
        cells = mark_chance_level(exp, cells, df)
        figure = figure_table(exp, df, thin, data_dir) if exp.get("figure") and len(df) else None
        header = run_header(command, wall, thin, only_datasets, run, stats, only_methods)
        written += write_outputs(exp, cells, Path(out_dir), header, thin, figure)
        log(f"{exp['paper']}: wrote {Path(out_dir) / exp['name']}.md ({wall:.0f} s)")
    return written


def experiment_names(paper: str, profile: str) -> list[str]:
    if profile not in PROFILES:
        raise UFSBenchError(f"unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
    if profile == "quick" or paper == "quick":
        return ["quick"]
    if paper == "all":
        return list(PAPERS)
    if paper not in PAPERS:
        raise UFSBenchError(f"unknown paper {paper!r}; use one of {', '.join(PAPERS)}, all or quick")
    return [paper]
