"""The sweep runner: (dataset x method x parameter grid) -> fits -> seeded K-means -> records.

One *task* is one (dataset, method, parameter setting). A ranking method is fitted once per task
and evaluated at every feature count; a subset method is refitted per count, unless it declares
``one_fit_serves_counts`` (its fit at the largest count gives every smaller count's exact subset
through ``top_features``): then it is fitted once per task for its K-means records; "all" methods
are evaluated once on every feature. Tasks run in parallel with joblib, each task limited to
one BLAS thread (:data:`BLAS_THREADS_PER_TASK`), whatever the number of workers. Every finished
evaluation is written at once as its own record, so an interrupted sweep loses nothing finished
and a rerun resumes. A task is claimed with a lock file in the store before it runs, so that two
sweeps on one results directory (two ``ufsbench run`` processes, or several machines sharing a
file system) never compute the same task twice: a sweep that finds a task claimed runs its other
tasks first, then waits for the claim to be released (or to go stale) and picks up what is left.
``backend="dask"`` runs the tasks on a ``dask.distributed`` cluster through joblib's dask
backend. The runner knows methods only through the selector API (``selection_kind``,
``one_fit_serves_counts``, ``top_features``, ``labels_``, ``labels_for_seed``): it never
special-cases a method.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ufsbench.cache import bound_cache, default_location
from ufsbench.datasets import Dataset
from ufsbench.errors import UFSBenchError
from ufsbench.evaluation import NMI_NORMALISATIONS, clustering_scores, score_labels
from ufsbench.methods import make_selector, method_parameters, selector_class
from ufsbench.results import (
    SUBSET_SCORES_DIR,
    ResultStore,
    StoreWriteError,
    abandon_held_locks,
    digest,
    remove_dead_partials,
)
from ufsbench.tasks import (  # noqa: F401
    SCORINGS,
    EvaluationProtocol,
    Task,
    environment,
    expand_grid,
    feature_counts_for,
    plan_tasks,
)

BACKENDS = ("local", "dask")
#: Seconds between two looks at a task another process holds.
WAIT_POLL = 0.5
#: How long launcher=dask tries to reach the scheduler before giving up.
DASK_CONNECT_TIMEOUT = "30s"


def _task_environment(task: Task) -> dict:
    """:func:`environment` plus the BLAS threads the task ran with."""
    return {**environment(), "blas_threads": task.threads}


# -- one task --------------------------------------------------------------------------------
def _kmeans_result(task: Task, X: np.ndarray, y: np.ndarray, selected) -> dict:
    """The K-means scores of the feature subset ``selected``, computed once per subset.

    The scores depend only on the data, the subset, the seed and the protocol, and grid settings
    often select the same subset (a weight too small to matter, a saturated sparsity term): the
    scores are cached in the store by subset, so each distinct subset is clustered once per sweep
    and across sweeps. A cache hit is exact (the same seeded runs), not an approximation.
    """
    store = ResultStore(task.results_dir)
    columns = np.sort(np.asarray(selected, dtype=int))
    key = {"dataset": task.dataset, "data_checksum": task.data_checksum,
           "n_clusters": task.n_clusters, "seed": task.seed,
           "evaluation": task.protocol.as_key(), "subset": digest(columns.tolist())}
    cached = store.read_subset_scores(key)
    if cached is not None:
        return {"acc": cached["acc"], "nmi": cached["nmi"], "kmeans_seeds": cached["kmeans_seeds"],
                "eval_time": 0.0, "eval_cached": True}
    p = task.protocol
    start = time.perf_counter()
    s = clustering_scores(X[:, columns], y, task.n_clusters, n_runs=p.n_runs,
                          random_state=task.seed, nmi=p.nmi, init=p.kmeans_init,
                          max_iter=p.kmeans_max_iter)
    scores = {"acc": s.acc, "nmi": s.nmi_all, "kmeans_seeds": s.seeds}
    store.write_subset_scores(key, scores)
    return {**scores, "eval_time": time.perf_counter() - start, "eval_cached": False}


def _fit(task: Task, X: np.ndarray, n_features: int | None, random_state: int):
    # A selector that can cache its data-only intermediates (kNN graphs, SVDs) gets the run's
    # cache: grid settings and later sweeps on the same data share them. Not part of the key:
    # a cache hit is the same array.
    memory = {"memory": default_location()} if "memory" in method_parameters(task.method) else {}
    selector = make_selector(task.method, n_features_to_select=n_features,
                             n_clusters=task.n_clusters, random_state=random_state,
                             **task.params, **memory)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        # Recorded with the result instead of flooding a sweep's terminal (UFSOL's inner K-means,
        # ill-conditioned solves, ...): readers of a record see what the fit complained about.
        warnings.simplefilter("always")
        selector.fit(X)
    fit_time = time.perf_counter() - start
    selector_warnings.clear()  # only the latest fit's warnings are ever summarised
    selector_warnings[id(selector)] = sorted({f"{w.category.__name__}: {str(w.message)[:200]}"
                                              for w in caught})[:MAX_RECORDED_WARNINGS]
    return selector, fit_time


#: Distinct warnings of the latest fit, by selector id (read by _summary).
selector_warnings: dict[int, list[str]] = {}
MAX_RECORDED_WARNINGS = 5


def _summary(selector) -> dict:
    info = {"n_iter": getattr(selector, "n_iter_", None),
            "converged": getattr(selector, "converged_", None),
            "reconstructed": selector.reconstructed,
            "fit_warnings": selector_warnings.get(id(selector), [])}
    history = getattr(selector, "objective_history_", None)
    if history is not None:
        info["objective_history"] = [float(v) for v in history]
    return info


#: Seconds between two looks of a worker process at the sweep's main process.
SWEEP_WATCH_INTERVAL = 1.0
#: Exit code of a worker that ends itself because its sweep's main process is gone.
ORPHAN_EXIT_CODE = 1
_watched_sweeps: set[int] = set()


def _exit_with_sweep(main_pid: int | None) -> None:
    """Make this worker process end within about :data:`SWEEP_WATCH_INTERVAL` seconds of the
    death of the sweep's main process ``main_pid``.

    A sweep killed with SIGKILL (or by the OOM killer) cannot stop its joblib workers: they are
    reparented and go on computing the tasks already sent to them, for minutes, holding cores and
    task claims for results nobody waits for. A loky worker is a child of the sweep's main
    process, and its ``os.getppid()`` changes only when that parent dies: a daemon thread looks
    at it. Nothing is watched in the main process itself (n_jobs=1, tasks taken over after a
    wait) or when ``main_pid`` is None (the dask backend, whose workers belong to the cluster).
    """
    if main_pid is None or main_pid == os.getpid() or main_pid in _watched_sweeps:
        return
    if os.getppid() != main_pid:
        if _process_gone(main_pid):  # died before this worker started the task
            _leave_dead_sweep()
        return  # a live sweep that did not start this process: not ours to watch
    _watched_sweeps.add(main_pid)

    def watch():
        while os.getppid() == main_pid:
            time.sleep(SWEEP_WATCH_INTERVAL)
        _leave_dead_sweep()

    threading.Thread(target=watch, name="ufsbench-sweep-watch", daemon=True).start()


def _process_gone(pid: int) -> bool:
    """True when ``pid`` is no process, or a dead one its parent has not reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return False  # no /proc: a zombie counts as alive


def _leave_dead_sweep() -> None:
    """End this worker now: finished records are already whole on disk (written atomically);
    its task claims are removed first, so that a rerun here or on another host sharing the
    store takes the tasks over at once instead of after the claims go stale."""
    try:
        abandon_held_locks()
    finally:
        os._exit(ORPHAN_EXIT_CODE)


def run_task(task: Task, X: np.ndarray, y: np.ndarray) -> int:
    """Fit and evaluate one task, writing each finished record at once. Returns records written."""
    from threadpoolctl import threadpool_limits

    _exit_with_sweep(task.main_pid)
    store = ResultStore(task.results_dir)
    kind = selector_class(task.method).selection_kind
    counts = feature_counts_for(task.feature_counts, X.shape[1], kind)
    written = 0
    with threadpool_limits(limits=task.threads):
        if kind in ("ranking", "all"):
            todo = [m for m in counts if store.needs(task.record_key(m, "kmeans"))]
            if todo:
                _kmeans_records_from_one_fit(task, store, X, y, todo,
                                             None if kind == "all" else max(counts))
                written += len(todo)
        else:
            one_fit = None
            if selector_class(task.method).one_fit_serves_counts:
                one_fit, n_written = _run_subset_counts_one_fit(task, store, X, y, counts)
                written += n_written
            for m in counts:
                # The one fit is the fit at its own count (same count, same seed): the own-label
                # runs reuse it there; other counts are refitted as before (their labels come
                # from a fit at that count).
                reuse = one_fit if one_fit is not None and one_fit[2] == m else None
                written += _run_subset_count(task, store, X, y, m, reuse)
    return written


def _run_subset_counts_one_fit(task: Task, store: ResultStore, X, y, counts: list[int]):
    """K-means records of a subset method declaring ``one_fit_serves_counts``: one fit.

    Fitted once, at the largest count still needing a record (nothing when none does); each
    count's subset is ``top_features(m)``, the exact subset a refit at m selects, and each
    record is written as soon as it is scored. Returns ((selector, fit time, fitted count) or
    None, records written).
    """
    if "kmeans" not in task.protocol.scoring:
        return None, 0
    todo = [m for m in counts if store.needs(task.record_key(m, "kmeans"))]
    if not todo:
        return None, 0
    fitted_count = max(todo)
    selector, fit_time = _kmeans_records_from_one_fit(
        task, store, X, y, todo, fitted_count,
        {"subset_from_one_fit": True, "one_fit_n_features": fitted_count})
    return (selector, fit_time, fitted_count), len(todo)


def _kmeans_records_from_one_fit(task: Task, store: ResultStore, X, y, todo: list[int],
                                 n_features: int | None, marks: dict | None = None):
    """Fit once with ``n_features``, then write the K-means record of every count in ``todo``
    from ``top_features(m)``, each as soon as it is scored. Returns (selector, fit time)."""
    selector, fit_time = _fit(task, X, n_features, task.seed)
    for m in todo:
        selected = selector.top_features(m)
        store.write_record(task.record_key(m, "kmeans"),
                           {**_kmeans_result(task, X, y, selected), "selected": selected,
                            **task.data_fields(selected),
                            "tied_at_cut": selector.tied_at_cut(m),
                            "fit_time": fit_time, **(marks or {}), **_summary(selector),
                            "env": _task_environment(task)})
    return selector, fit_time


def _run_subset_count(task: Task, store: ResultStore, X, y, m: int, fitted=None) -> int:
    """A subset method at one feature count: K-means on its features, and its own labels.

    ``fitted``: (selector, fit time, count) of a fit at this count with the task's seed, reused
    for the own-label runs.
    """
    written = 0
    selector, fit_time = (fitted[0], fitted[1]) if fitted is not None else (None, None)
    key = task.record_key(m, "kmeans")
    if "kmeans" in task.protocol.scoring and store.needs(key) and \
            selector_class(task.method).draws_per_run:
        store.write_record(key, _draws_per_run_result(task, X, y, m))
        return written + 1
    if "kmeans" in task.protocol.scoring and store.needs(key):
        selector, fit_time = _fit(task, X, m, task.seed)
        selected = np.flatnonzero(selector.get_support())
        store.write_record(key, {**_kmeans_result(task, X, y, selected), "selected": selected,
                                 **task.data_fields(selected),
                                 "fit_time": fit_time, **_summary(selector),
                                 "env": _task_environment(task)})
        written += 1
    own_key = task.record_key(m, "own_labels")
    if "own_labels" in task.protocol.scoring and store.needs(own_key):
        # The method's own cluster labels, its randomness varied over the runs (DGUFS §5.1).
        seeds = [task.seed + i for i in range(task.protocol.n_runs)]
        runs = _own_label_runs(task, X, m, seeds, selector, fit_time)
        if runs is None:
            return written  # the method learns no labels: nothing to score this way
        labels, fitted, fit_times = runs
        acc: list[float] = []
        nmis: dict[str, list[float]] = {n: [] for n in NMI_NORMALISATIONS}
        for run_labels in labels:
            a, n = score_labels(y, run_labels)
            acc.append(a)
            for norm in NMI_NORMALISATIONS:
                nmis[norm].append(n[norm])
        store.write_record(own_key, {"acc": acc, "nmi": nmis, "fit_seeds": seeds,
                                     "labels_from_one_fit": len(fit_times) == 1,
                                     "selected": np.flatnonzero(fitted.get_support()),
                                     **task.data_fields(np.flatnonzero(fitted.get_support())),
                                     "fit_time": float(np.mean(fit_times)), **_summary(fitted),
                                     "env": _task_environment(task)})
        written += 1
    return written


def _draws_per_run_result(task: Task, X, y, m: int) -> dict:
    """The K-means record of a selector whose selection is a draw (``draws_per_run``): draw i
    and K-means run i both seeded with the run's seed + i, so the runs' spread covers both
    sources of randomness. ``selected`` is the first draw; every draw is kept."""
    p = task.protocol
    acc: list[float] = []
    nmis: dict[str, list[float]] = {n: [] for n in NMI_NORMALISATIONS}
    draws, fit_time = [], 0.0
    start = time.perf_counter()
    for seed in range(task.seed, task.seed + p.n_runs):
        selector, seconds = _fit(task, X, m, seed)
        fit_time += seconds
        columns = np.flatnonzero(selector.get_support())
        s = clustering_scores(X[:, columns], y, task.n_clusters, n_runs=1, random_state=seed,
                              nmi=p.nmi, init=p.kmeans_init, max_iter=p.kmeans_max_iter)
        acc.append(float(s.acc[0]))
        for norm in NMI_NORMALISATIONS:
            nmis[norm].append(float(s.nmi_all[norm][0]))
        draws.append(columns)
    return {"acc": acc, "nmi": nmis, "kmeans_seeds": list(range(task.seed, task.seed + p.n_runs)),
            "selected": draws[0], "selected_per_run": draws, "fit_time": fit_time / p.n_runs,
            "eval_time": time.perf_counter() - start - fit_time, **_summary(selector),
            "env": _task_environment(task)}


def _own_label_runs(task: Task, X, m: int, seeds: list[int], selector, fit_time):
    """The labels a fit with each seed gives: (labels per seed, last fit, fit times), or None.

    A selector whose randomness reaches only its labelling step (``labels_for_seed``) is fitted
    once and its labels re-drawn per seed -- the same labels as a refit, at the cost of one
    fit; any other selector is refitted per seed. ``selector`` (fitted with ``seeds[0]``) is
    reused when given. None when the method learns no labels.
    """
    if selector is None:
        selector, fit_time = _fit(task, X, m, seeds[0])
    if getattr(selector, "labels_", None) is None:
        return None
    labels, fitted, fit_times = [selector.labels_], selector, [fit_time]
    for seed in seeds[1:]:
        redrawn = selector.labels_for_seed(seed)
        if redrawn is None:
            fitted, t = _fit(task, X, m, seed)
            redrawn = fitted.labels_
            fit_times.append(t)
        labels.append(redrawn)
    return labels, fitted, fit_times


@dataclass(frozen=True)
class TaskFailure:
    """run_claimed_task's result for a setting whose fit raised (the sweep goes on).

    ``noted``: the error was written to the store's failure notes (a property of the setting:
    the method raised on these data at these parameters); False for errors of the environment
    (memory, files, imports), which say nothing about the setting and are not noted.
    """

    error: str
    noted: bool


#: Errors of the machine or the installation rather than of the setting: never noted.
ENVIRONMENT_ERRORS = (MemoryError, OSError, ImportError)


class FitFailedWarning(UserWarning):
    """A selector raised at one parameter setting; the sweep went on without it."""


def run_claimed_task(task: Task, X: np.ndarray, y: np.ndarray) -> int | TaskFailure | None:
    """Run a task under its lock; None when another live process holds it (nothing was done).

    A selector that raises at one setting (a singular solve at an extreme grid point, a
    divergence it detects) must not stop a sweep of hundreds: the error is noted in the store
    (``<dataset>/<method>/failed/``) and a :class:`TaskFailure` is returned (run_sweep warns,
    counts it and names it in its stats). A note is not "done": the next sweep retries the
    setting unless it is asked to skip noted failures, and a success removes the note. Errors
    of the environment (:data:`ENVIRONMENT_ERRORS`) are returned but never noted. Store write
    errors and interrupts still stop the sweep.
    """
    store = ResultStore(task.results_dir)
    lock = store.task_lock(task.lock_key())
    if not lock.acquire():
        return None
    try:
        written = run_task(task, X, y)
        store.clear_failure(task.fit_key())
        return written
    except StoreWriteError:
        raise
    except Exception as exc:  # noqa: BLE001 - any method error at one setting
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
        noted = not isinstance(exc, ENVIRONMENT_ERRORS)
        if noted:
            store.write_failure(task.fit_key(), error, _task_environment(task))
        return TaskFailure(error, noted)  # warned by the sweep's own process (run_sweep)
    finally:
        lock.release()


def _indexed(i: int, task: Task, X, y) -> tuple[int, int | TaskFailure | None]:
    return i, run_claimed_task(task, X, y)


# -- sweeps ----------------------------------------------------------------------------------
# (Task, EvaluationProtocol, plan_tasks, expand_grid and feature_counts_for live in
# ufsbench.tasks and are re-exported here, where callers have always found them.)
def task_is_done(task: Task, n_features: int, skip_failed: bool = False) -> bool:
    """Every record of the task is stored; with ``skip_failed``, a noted failure counts too."""
    store = ResultStore(task.results_dir)
    if skip_failed and store.failure(task.fit_key()) is not None:
        return True
    kind = selector_class(task.method).selection_kind
    counts = feature_counts_for(task.feature_counts, n_features, kind)
    scorings = ["kmeans"] if kind != "subset" else list(task.protocol.scoring)
    return all(store.has(task.record_key(m, s)) for m in counts for s in scorings)


#: BLAS threads of every task, fixed rather than cores // workers: a BLAS reduction split over
#: another number of threads rounds differently, and round-off-sensitive fits select
#: differently (MCFS before revision 3 with 2 threads instead of 1 on att). With
#: cores // workers a sweep with one pending task ran it with 2 threads, so a record depended on
#: how the store was filled.
BLAS_THREADS_PER_TASK = 1


#: Seconds between two progress lines when stderr is not a terminal (a log file).
PROGRESS_LOG_SECONDS = 60.0


def clock_text(seconds: float) -> str:
    """h:mm:ss."""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


class LogProgress:
    """A sweep's progress for a log file (a batch job's, ``nohup``'s): a line on stderr at most
    every ``interval`` seconds, none for a sweep that ends sooner, where a terminal would show
    a progress bar. The time left assumes the remaining settings cost what the finished ones
    did on average."""

    def __init__(self, total: int, desc: str, interval: float | None = None,
                 clock=time.monotonic):
        self.total, self.desc, self.clock = total, desc, clock
        self.interval = PROGRESS_LOG_SECONDS if interval is None else interval
        self.done = 0
        self.start = self.last = clock()

    def update(self, n: int = 1) -> None:
        self.done += n
        now = self.clock()
        if now - self.last < self.interval or self.done >= self.total:
            return
        self.last = now
        elapsed = now - self.start
        left = elapsed * (self.total - self.done) / self.done
        print(f"{self.desc}: {self.done} of {self.total} settings done, {clock_text(elapsed)} "
              f"elapsed, ~{clock_text(left)} left", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Nothing to release (the interface of a progress bar)."""


#: Expected seconds of a sweep's fits from which it is announced with their cost.
COST_NOTE_SECONDS = 60.0


def cost_note(method: str, data_name: str, n_samples: int, n_features: int,
              fits: list[tuple[dict, int]], workers: int = 1,
              nonzero_fraction: float = 1.0) -> str | None:
    """One line announcing fits expected to take long: ``fits`` holds (parameters, number of
    fits) pairs of ``method`` on ``data_name`` (``nonzero_fraction`` of its entries non-zero);
    their costs come from the method's declared
    :meth:`~ufsbench.methods.base.UFSSelector.expected_fit_cost`. None when it declares none
    or the fits should take less than ``COST_NOTE_SECONDS`` in all."""
    cls = selector_class(method)
    costs = [(cls.expected_fit_cost(n_samples, n_features, params, nonzero_fraction), k)
             for params, k in fits]
    known = [(cost, k) for cost, k in costs if cost is not None]
    total = sum(cost.seconds * k for cost, k in known)
    if not known or total < COST_NOTE_SECONDS:
        return None
    longest = max((cost for cost, _ in known), key=lambda cost: cost.seconds)
    count = sum(k for _, k in known)
    memory = max(cost.memory_bytes for cost, _ in known)      # the largest fit, not the longest
    return (f"note: {method} on {data_name} ({n_samples} x {n_features}): about "
            f"{clock_text(longest.seconds)} a fit on one core ({longest.dominated_by}; "
            f"up to ~{memory / 2**30:.1f} GiB), {count} fit(s) to run, about "
            f"{clock_text(total / max(1, min(workers, count)))} in all on {workers} worker(s); "
            f"a rough estimate (within about 3x) from the method's cost model"
            f"{memory_warning(memory, min(workers, count))}")


def nonzero_fraction(X) -> float:
    """The share of non-zero entries of X (a cost model's hint for mostly-zero data)."""
    size = int(np.prod(np.shape(X)))
    return float(np.count_nonzero(X)) / size if size else 1.0


def physical_memory_bytes() -> float | None:
    """This machine's physical memory, where the system says (None elsewhere)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES")) * float(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def memory_warning(fit_bytes: float, parallel_fits: int) -> str:
    """The cost note's ending when ``parallel_fits`` fits of ``fit_bytes`` each would need more
    than this machine's memory, where the system may kill a worker mid-fit: the ending names
    what to change; "" otherwise."""
    total = physical_memory_bytes()
    if not total or fit_bytes * parallel_fits <= total:
        return ""
    if fit_bytes <= total:
        return (f"; WARNING: {parallel_fits} such fits at once need more than this machine's "
                f"{total / 2**30:.0f} GiB of memory: run with n_jobs=1")
    return (f"; WARNING: one fit needs more than this machine's {total / 2**30:.0f} GiB of "
            f"memory: use fewer samples or another method")


def _fits_of(tasks: list[Task], n_features: int) -> list[tuple[dict, int]]:
    """(parameters, fits) of each task, as :func:`run_task` fits: a subset method once per
    feature count (capped at d; the count is passed as ``n_features_to_select``, on which such
    a fit's cost depends) unless one fit serves them all, any other method once."""
    if not tasks:
        return []
    cls = selector_class(tasks[0].method)
    if cls.selection_kind != "subset" or cls.one_fit_serves_counts:
        return [(t.params, 1) for t in tasks]
    return [(dict(t.params, n_features_to_select=m), 1) for t in tasks
            for m in feature_counts_for(t.feature_counts, n_features, cls.selection_kind)]


def resolve_n_jobs(n_jobs: int | None, n_tasks: int) -> tuple[int, int]:
    """(workers, BLAS threads per task): at most one worker per core and per task."""
    cores = os.cpu_count() or 1
    if n_jobs is None or n_jobs <= 0:
        n_jobs = cores
    n_jobs = max(1, min(int(n_jobs), n_tasks, cores))
    return n_jobs, BLAS_THREADS_PER_TASK


def run_sweep(dataset: Dataset, tasks: list[Task], n_jobs: int | None = -1,
              progress: bool | None = None, backend: str = "local",
              scheduler: str | None = None, skip_failed: bool = False) -> dict:
    """Run every pending task; returns counts of tasks skipped/run and records written.

    ``progress``: True a progress bar on stderr, False nothing, None a bar on a terminal and
    otherwise (a log file) a line at most once a minute (:class:`LogProgress`).

    A setting whose fit failed before is pending again (retried) unless ``skip_failed``. The
    stats carry ``failed`` (how many settings raised) and ``failures`` ((params, error) of
    each) when any did.

    ``backend="local"`` runs on this machine (joblib processes); ``backend="dask"`` submits the
    tasks to the ``dask.distributed`` scheduler at ``scheduler`` (e.g. ``tcp://host:8786``), or to
    a local cluster started for the sweep when ``scheduler`` is None. The results directory must
    then be on a file system every worker can write. Tasks another process is computing are
    waited for, not computed twice.
    """
    from tqdm.auto import tqdm

    if backend not in BACKENDS:
        raise UFSBenchError(f"unknown launcher {backend!r}; use one of {', '.join(BACKENDS)}")
    pending = [t for t in tasks if not task_is_done(t, dataset.n_features, skip_failed)]
    for task in tasks:
        if task not in pending:  # a run killed after a task's last record leaves its lock behind
            ResultStore(task.results_dir).task_lock(task.lock_key()).clear_if_stale()
    for directory in _store_directories(tasks):
        remove_dead_partials(directory)  # half-written files of killed runs
    stats = {"tasks": len(tasks), "skipped": len(tasks) - len(pending), "records": 0}
    if not pending:
        return stats
    workers, threads = resolve_n_jobs(n_jobs, len(pending))
    note = cost_note(pending[0].method, dataset.name, dataset.n_samples, dataset.n_features,
                     _fits_of(pending, dataset.n_features), workers, nonzero_fraction(dataset.X))
    if note and progress is not False:
        print(note, file=sys.stderr, flush=True)
    for task in pending:
        task.threads = 1 if backend == "dask" else threads
        task.main_pid = None if backend == "dask" else os.getpid()
    desc = f"{dataset.name}/{pending[0].method}"
    if progress is None and not sys.stderr.isatty():
        bar = LogProgress(len(pending), desc)
    else:
        bar = tqdm(total=len(pending), disable=progress is False, unit="fit", desc=desc)
    try:
        results = _execute(pending, dataset, workers, backend, scheduler)
        busy = []
        for i, written in results:
            if written is None:
                busy.append(pending[i])
                continue
            _count(stats, written, pending[i])
            bar.update()
        for task, written in _wait_and_finish(busy, dataset):
            _count(stats, written, task)
            bar.update()
    finally:
        bar.close()
        bound_cache()
    stats["run"] = len(pending)
    return stats


def _store_directories(tasks: list[Task]) -> set:
    """Every directory a sweep writes files into: records, failure notes, subset scores."""
    dirs = set()
    for root in {(ResultStore(t.results_dir).root, t.dataset, t.method) for t in tasks}:
        store_root, dataset, method = root
        dirs |= {store_root / dataset / method, store_root / dataset / method / "failed"}
        dirs |= set((store_root / dataset / SUBSET_SCORES_DIR).glob("*"))
    return dirs


def _count(stats: dict, written: int | TaskFailure, task: Task) -> None:
    if not isinstance(written, TaskFailure):
        stats["records"] += written
        return
    stats["failed"] = stats.get("failed", 0) + 1
    stats.setdefault("failures", []).append((task.params, written.error))
    where = (f"noted in {ResultStore(task.results_dir).failure_path(task.fit_key())}; "
             if written.noted else "not noted: an error of the environment; ")
    warnings.warn(f"{task.method} failed on {task.dataset} at {task.params}: {written.error} "
                  f"({where}the sweep goes on without this setting; the next run retries it)",
                  FitFailedWarning, stacklevel=3)


def worker_pool(n_jobs: int, **options):
    """joblib's ``Parallel`` over local worker processes, each task's arguments pickled to it.

    Not joblib's default memory maps in /dev/shm for large arrays: a signal to the whole process
    group (``timeout``, a batch system's time limit) could end the pool while it registered a
    map, and its resource tracker then printed a leak warning at exit; after ``kill -9`` the
    maps stayed in /dev/shm. A copy of X per task costs tens of milliseconds (basehock's 77 MB:
    90 ms to pickle and unpickle), under 1 % of the papers' full reproduction.
    """
    from joblib import Parallel

    return Parallel(n_jobs=n_jobs, max_nbytes=None, **options)


def _execute(pending: list[Task], dataset: Dataset, workers: int, backend: str,
             scheduler: str | None):
    """(index, records written or None when claimed elsewhere) of every pending task."""
    from joblib import delayed

    jobs = (delayed(_indexed)(i, t, dataset.X, dataset.y) for i, t in enumerate(pending))
    if backend == "dask":
        yield from _execute_on_dask(jobs, scheduler, workers)
    elif workers == 1:
        for i, task in enumerate(pending):
            yield _indexed(i, task, dataset.X, dataset.y)
    else:
        yield from worker_pool(workers, return_as="generator_unordered")(jobs)


def _execute_on_dask(jobs, scheduler: str | None, workers: int):
    """Run joblib jobs through joblib's dask backend on an existing or a local cluster."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UFSBenchError("launcher=dask needs dask.distributed: pip install "
                            "'ufsbench[dask]' (or use launcher=local)") from None
    from joblib import Parallel, parallel_config

    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                                   dashboard_address=None, processes=True)
            client = Client(cluster)
    except OSError as exc:
        raise UFSBenchError(f"cannot reach the dask scheduler {scheduler!r} ({exc}); start one "
                            f"(dask scheduler) or give scheduler=tcp://host:8786") from None
    try:
        with parallel_config(backend="dask"):
            yield from Parallel(n_jobs=-1)(jobs)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _wait_and_finish(busy: list[Task], dataset: Dataset):
    """Records written for tasks that another process held: wait for each claim, then finish it.

    The other process normally writes every record and the rerun here finds nothing to do; if it
    died, its lock goes stale and this process computes what is missing.
    """
    for task in busy:
        announced = False
        while True:
            # A note written meanwhile is the other process's attempt: not retried here.
            if task_is_done(task, dataset.n_features, skip_failed=True):
                yield task, 0
                break
            written = run_claimed_task(task, dataset.X, dataset.y)
            if written is not None:
                yield task, written
                break
            if not announced:
                print(f"waiting for another process computing {task.method} {task.params} on "
                      f"{task.dataset}", file=sys.stderr)
                announced = True
            _pause()


def _pause() -> None:
    """One wait between two looks at a task another process holds."""
    time.sleep(WAIT_POLL)
