"""Selection stability: how much a method's selected features change when the rows change.

Estimators (pure functions of the selected subsets):

* :func:`stability_estimate` -- Nogueira, Sechidis & Brown's estimator (JMLR 18(174), 2018, "On
  the stability of feature selection algorithms", Definition 4)::

      Phi = 1 - mean_f s_f^2 / ((kbar / d) (1 - kbar / d))

  where ``s_f^2`` is the unbiased variance of feature f's selection indicator over the M
  subsets and ``kbar`` the mean subset size. It is 1 when every subset is the same, and its
  expected value is 0 when each subset is drawn uniformly at random with the same size (the
  estimator is corrected for chance); it can be negative, down to -1/(M-1).
* :func:`stability_variance` -- its asymptotic variance (their Theorem 7; the formula of their
  published code, ``getVarianceofStability``), and :func:`stability_interval` the approximate
  (1 - alpha) confidence interval ``Phi +- z_{1-alpha/2} sqrt(variance)`` (their Corollary 9).
* :func:`mean_jaccard` -- the mean pairwise Jaccard index of the subsets (not corrected for
  chance: random m-subsets of d features score about m / (2d - m)).

Runner (:func:`run_stability`): a method at one parameter setting is fitted on B subsamples of
the rows (``fraction`` of the samples each, drawn without replacement from a generator seeded
with ``(seed, b)``), and its selected m-subsets are scored at every feature count asked. Fit b
gets ``random_state = seed + b``, so a method's own randomness (random starts, seeded tie order,
a random subset) varies between subsamples as it does between reruns by a user. Every finished
subsample fit is written at once to the result store
(``<results_dir>/<dataset>/<method>/stability/fits/<id>.json``, keyed by data checksum, method,
revision, parameters, clusters, fraction, seed and subsample index, plus the feature count for
methods refitted per count), so an interrupted run loses no finished fit and a rerun, or a run
with a larger B, fits only what is missing. The estimate per feature count is a stability record
(``.../stability/<id>.json``, keyed by method, parameters, data checksum, m, B, fraction and
seed); :func:`load_stability` reads them all.

Cost: B fits per setting, times the number of feature counts for subset methods that are refitted
per count (DGUFS, K-means UFS, SF2SOG, random); ranking methods and MCFS fit once per subsample.
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from ufsbench.errors import UFSBenchError

#: Defaults of ``ufsbench stability``: B subsamples of this fraction of the rows.
DEFAULT_SUBSAMPLES = 20
DEFAULT_FRACTION = 0.9
STABILITY_DIR = "stability"
RECORD_VERSION = 1


# -- estimators -----------------------------------------------------------------------------
def selection_matrix(subsets, n_features: int) -> np.ndarray:
    """The (M, d) boolean matrix of M subsets of ``range(n_features)`` (row i: subset i)."""
    subsets = list(subsets)
    Z = np.zeros((len(subsets), int(n_features)), dtype=bool)
    for i, subset in enumerate(subsets):
        idx = np.asarray(subset, dtype=int)
        if idx.size and (idx.min() < 0 or idx.max() >= n_features):
            raise UFSBenchError(f"subset {i} holds an index outside 0..{n_features - 1}")
        Z[i, idx] = True
    return Z


def _check_matrix(Z) -> np.ndarray:
    Z = np.asarray(Z)
    if Z.ndim != 2 or Z.shape[0] < 2 or Z.shape[1] < 1:
        raise UFSBenchError(f"stability needs a (M, d) selection matrix with M >= 2 subsets and "
                            f"d >= 1 features; got shape {Z.shape}")
    if not np.isin(Z, (0, 1)).all():
        raise UFSBenchError("the selection matrix must be binary (1 = selected)")
    return Z.astype(float)


def _chance_denominator(Z: np.ndarray) -> float:
    """(kbar/d)(1 - kbar/d): the variance of a feature's indicator under random selection."""
    d = Z.shape[1]
    kbar = Z.sum(axis=1).mean()
    denominator = (kbar / d) * (1 - kbar / d)
    if denominator <= 0:
        raise UFSBenchError(f"stability is undefined when every subset is empty or holds all "
                            f"{d} features (mean size {kbar:g})")
    return denominator


def stability_estimate(Z) -> float:
    """Nogueira et al.'s stability estimate Phi of the (M, d) binary selection matrix Z.

    Parameters
    ----------
    Z : array-like of shape (M, d)
        Row i marks the features selected in run i (M >= 2).

    Returns
    -------
    float
        1 for identical subsets; about 0 for independent random subsets of one size.
    """
    Z = _check_matrix(Z)
    s2 = Z.var(axis=0, ddof=1)  # unbiased variance of each feature's selection indicator
    return float(1.0 - s2.mean() / _chance_denominator(Z))


def stability_variance(Z) -> float:
    """The asymptotic variance of :func:`stability_estimate` (Nogueira et al., Theorem 7).

    With p_f the selection frequency of feature f, k_i the size of subset i and Phi the
    estimate, each subset's contribution is
    ``phi_i = (mean_f(Z_if p_f) - k_i kbar / d^2 + Phi/2 (2 k_i kbar / d^2 - k_i/d - kbar/d + 1))
    / ((kbar/d)(1 - kbar/d))`` and the variance is ``4 / M^2 * sum_i (phi_i - mean(phi))^2``.
    """
    Z = _check_matrix(Z)
    M, d = Z.shape
    p = Z.mean(axis=0)
    k = Z.sum(axis=1)
    kbar = k.mean()
    phi_hat = stability_estimate(Z)
    phi = ((Z @ p) / d - k * kbar / d**2
           + phi_hat / 2 * (2 * k * kbar / d**2 - k / d - kbar / d + 1)) / _chance_denominator(Z)
    return float(4.0 / M**2 * np.sum((phi - phi.mean()) ** 2))


def stability_interval(Z, alpha: float = 0.05) -> tuple[float, float, float]:
    """(estimate, lower, upper): the approximate (1 - alpha) confidence interval of Phi, cut to
    the values Phi can take (:func:`phi_range`): the normal approximation reaches past 1 for
    nearly identical subsets (0.95 [0.85, 1.04] with 19 of 20 subsets the same)."""
    if not 0 < alpha < 1:
        raise UFSBenchError(f"alpha={alpha} must be in (0, 1), e.g. 0.05 for 95 %")
    phi = stability_estimate(Z)
    half = norm.ppf(1 - alpha / 2) * np.sqrt(stability_variance(Z))
    low, high = phi_range(np.asarray(Z).shape[0], phi - half, phi + half)
    return phi, low, high


def phi_range(n_subsets: int, low: float, high: float) -> tuple[float, float]:
    """(low, high) cut to [-1/(M-1), 1], the values Phi of M subsets can take."""
    floor = -1.0 / (n_subsets - 1) if n_subsets > 1 else -1.0
    return float(min(max(low, floor), 1.0)), float(min(max(high, floor), 1.0))


def mean_jaccard(Z) -> float:
    """Mean Jaccard index |A & B| / |A | B| over every pair of subsets (two empty sets: 1)."""
    Z = _check_matrix(Z)
    inter = Z @ Z.T
    sizes = Z.sum(axis=1)
    union = sizes[:, None] + sizes[None, :] - inter
    pairs = np.triu_indices(Z.shape[0], k=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(union[pairs] > 0, inter[pairs] / union[pairs], 1.0)
    return float(ratio.mean())


@dataclass(frozen=True)
class StabilityScores:
    """The stability of M subsets of d features: Phi with its confidence interval, Jaccard."""

    phi: float
    variance: float
    ci_low: float
    ci_high: float
    jaccard: float
    n_subsets: int
    n_features_total: int
    mean_size: float
    alpha: float = 0.05


def stability_scores(subsets, n_features: int, alpha: float = 0.05) -> StabilityScores:
    """Every stability measure of a list of subsets (index arrays) of ``range(n_features)``."""
    Z = selection_matrix(subsets, n_features)
    phi, low, high = stability_interval(Z, alpha)
    return StabilityScores(phi=phi, variance=stability_variance(Z), ci_low=low, ci_high=high,
                           jaccard=mean_jaccard(Z), n_subsets=Z.shape[0],
                           n_features_total=int(n_features), mean_size=float(Z.sum(1).mean()),
                           alpha=alpha)


# -- subsamples -----------------------------------------------------------------------------
def subsample_rows(n_samples: int, fraction: float, seed: int, index: int) -> np.ndarray:
    """Sorted row indices of subsample ``index``: round(fraction * n) rows without replacement,
    from a generator seeded with (seed, index), so subsample b is the same whatever B is."""
    check_fraction(fraction)
    size = max(2, int(round(fraction * n_samples)))
    rng = np.random.default_rng([int(seed), int(index)])
    return np.sort(rng.choice(n_samples, size=min(size, n_samples), replace=False))


def check_fraction(fraction) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or \
            not 0 < fraction <= 1:
        raise UFSBenchError(f"fraction={fraction!r} must be a number in (0, 1], e.g. "
                            f"fraction=0.9 (90 % of the samples per subsample)")
    return float(fraction)


def check_subsamples(n_subsamples) -> int:
    if isinstance(n_subsamples, bool) or not isinstance(n_subsamples, int) or n_subsamples < 2:
        raise UFSBenchError(f"subsamples={n_subsamples!r} must be an integer >= 2, e.g. "
                            f"subsamples=20")
    return n_subsamples


# -- store -----------------------------------------------------------------------------------
def _method_key(dataset, method: str) -> dict:
    """Data set, checksum, method, and the method's revision once it is non-zero (as records)."""
    from ufsbench.methods import selector_class

    key = {"dataset": dataset.name, "data_checksum": dataset.checksum, "method": method}
    revision = selector_class(method).revision
    return {**key, "revision": revision} if revision else key


def refits_per_count(method: str) -> bool:
    """True for subset methods fitted once per feature count (not ranking, not one-fit)."""
    from ufsbench.methods import selector_class

    cls = selector_class(method)
    return cls.selection_kind == "subset" and not cls.one_fit_serves_counts


def write_keyed(path: Path, key: dict, result: dict) -> None:
    """Write ``{"version", "key", **result, "integrity"}`` to path atomically: the result store's
    record conventions (:mod:`ufsbench.results`) for files that are not K-means records."""
    from ufsbench.results import ResultStore, digest

    payload = {"version": RECORD_VERSION, "key": key, **result}
    payload["integrity"] = digest(payload)
    ResultStore(path.parent).write(path, payload)  # the atomic write of the result store


def read_keyed(path: Path, key: dict | None = None) -> dict | None:
    """The stored payload at path if it is whole (integrity) and has ``key``; else None."""
    import json

    from ufsbench.results import canonical, digest

    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(payload, dict) or "integrity" not in payload:
        return None
    body = {k: v for k, v in payload.items() if k != "integrity"}
    if digest(body) != payload["integrity"]:
        return None
    if key is not None and canonical(payload.get("key")) != canonical(key):
        return None
    return payload


def _store_dir(results_dir, dataset_name: str, method: str) -> Path:
    from ufsbench.results import ResultStore

    return ResultStore(results_dir).root / dataset_name / method / STABILITY_DIR


def fit_path(results_dir, key: dict) -> Path:
    from ufsbench.results import digest

    return _store_dir(results_dir, key["dataset"], key["method"]) / "fits" / \
        f"{digest(key)}.json"


def record_path(results_dir, key: dict) -> Path:
    from ufsbench.results import digest

    return _store_dir(results_dir, key["dataset"], key["method"]) / f"{digest(key)}.json"


# -- runner ----------------------------------------------------------------------------------
@dataclass
class _Unit:
    """One subsample fit: subsample index, the counts it serves, its store key."""

    index: int
    counts: list[int]
    key: dict


def _units(dataset, method: str, params: dict, counts: list[int], n_subsamples: int,
           fraction: float, seed: int) -> list[_Unit]:
    base = {**_method_key(dataset, method), "params": params, "n_clusters": dataset.n_classes,
            "fraction": fraction, "seed": int(seed)}
    if refits_per_count(method):
        return [_Unit(b, [m], {**base, "subsample": b, "n_features": m})
                for m in counts for b in range(n_subsamples)]
    return [_Unit(b, list(counts), {**base, "subsample": b}) for b in range(n_subsamples)]


def _stored_selection(results_dir, unit: _Unit) -> dict | None:
    """{m: indices} of a finished fit serving every count of the unit, else None."""
    payload = read_keyed(fit_path(results_dir, unit.key), unit.key)
    if payload is None:
        return None
    selected = {int(m): v for m, v in payload.get("selected", {}).items()}
    return selected if all(m in selected for m in unit.counts) else None


def _fit_unit(results_dir, dataset, method: str, params: dict, unit: _Unit,
              fraction: float, seed: int, main_pid: int | None = None) -> dict:
    """Fit on one subsample, write the fit's selections at once; returns {m: indices}.
    ``main_pid``: the process that sent the fit to this worker (the worker ends itself when
    that process is killed, as the runner's workers do)."""
    from threadpoolctl import threadpool_limits

    from ufsbench.methods import make_selector
    from ufsbench.runner import _exit_with_sweep
    from ufsbench.tasks import environment

    _exit_with_sweep(main_pid)

    old = read_keyed(fit_path(results_dir, unit.key), unit.key) or {}
    counts = sorted(set(unit.counts) | {int(m) for m in old.get("selected", {})})
    rows = subsample_rows(dataset.n_samples, fraction, seed, unit.index)
    selector = make_selector(method, n_features_to_select=max(counts),
                             n_clusters=dataset.n_classes, random_state=seed + unit.index,
                             **params)
    start = time.perf_counter()
    # One BLAS thread, as the runner's tasks: the selection must not depend on the thread count.
    with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector.fit(dataset.X[rows])
    seconds = time.perf_counter() - start
    selected = {str(m): [int(i) for i in selector.top_features(m)] for m in counts}
    write_keyed(fit_path(results_dir, unit.key), unit.key, {
        "selected": selected, "rows": rows.tolist(), "random_state": seed + unit.index,
        "fit_time": seconds, "env": environment(),
        "fit_warnings": sorted({f"{w.category.__name__}: {str(w.message)[:200]}"
                                for w in caught})[:5]})
    return {int(m): v for m, v in selected.items()}


def _run_units(results_dir, dataset, method, params, pending, fraction, seed, n_jobs) -> None:
    from joblib import delayed

    from ufsbench.runner import worker_pool

    if n_jobs == 1 or len(pending) <= 1:
        for unit in pending:
            _fit_unit(results_dir, dataset, method, params, unit, fraction, seed)
        return
    worker_pool(n_jobs)(delayed(_fit_unit)(results_dir, dataset, method, params, u,
                                           fraction, seed, os.getpid()) for u in pending)


def stability_key(dataset, method: str, params: dict, m: int, n_subsamples: int,
                  fraction: float, seed: int) -> dict:
    """The key of a stability record (one method setting, data set, feature count, design)."""
    return {"kind": "stability", **_method_key(dataset, method), "params": params,
            "n_features": int(m), "n_clusters": dataset.n_classes,
            "n_subsamples": int(n_subsamples), "fraction": float(fraction), "seed": int(seed)}


def run_stability(dataset, method: str, params: dict, counts, n_subsamples: int =
                  DEFAULT_SUBSAMPLES, fraction: float = DEFAULT_FRACTION, seed: int = 0,
                  results_dir=None, n_jobs: int | None = 1, compute: bool = True,
                  alpha: float = 0.05) -> list[dict]:
    """Stability of one method setting on one data set at each feature count in ``counts``.

    Parameters
    ----------
    dataset : Dataset
    method : str
        A registered method that selects features (not an "all" method).
    params : dict
        The setting (e.g. the config's ``params`` with its label-free ``default``).
    counts : list of int
        Feature counts m (each at most d).
    n_subsamples, fraction, seed : int, float, int
        B subsamples of round(fraction * n) rows, seeded with (seed, b); fit b gets
        random_state = seed + b.
    results_dir : path or None
        The result store (default ``$UFSBENCH_RESULTS``, then ./results/runs).
    n_jobs : int or None
        Parallel subsample fits (joblib; -1 or None = all cores).
    compute : bool
        False: fit nothing; return only what the stored fits give (counts whose B fits are not
        all stored are left out).

    Returns
    -------
    list of dict
        One stability record per count: key fields, phi, ci_low, ci_high, variance, jaccard,
        fits (subsample fits this setting needs), fit_time (their summed seconds).
    """
    from ufsbench.methods.base import keeps_all_features
    from ufsbench.paths import default_results_dir
    from ufsbench.results import remove_dead_partials
    from ufsbench.tasks import environment

    if keeps_all_features(method):
        raise UFSBenchError(f"{method} keeps every feature: its stability is undefined (nothing "
                            f"is selected); give a method that selects")
    check_subsamples(n_subsamples)
    fraction = check_fraction(fraction)
    counts = sorted({int(m) for m in counts})
    too_many = [m for m in counts if not 1 <= m < dataset.n_features]
    if too_many:
        raise UFSBenchError(f"feature counts {too_many} are not in 1..{dataset.n_features - 1} "
                            f"(d = {dataset.n_features} for {dataset.name}); stability needs "
                            f"m < d")
    results_dir = results_dir or default_results_dir()
    # Half-written fit files of killed runs of this host (a finished fit is never partial).
    remove_dead_partials(_store_dir(results_dir, dataset.name, method) / "fits")
    units = _units(dataset, method, params, counts, n_subsamples, fraction, seed)
    pending = [u for u in units if _stored_selection(results_dir, u) is None]
    if pending and compute:
        workers = (os.cpu_count() or 1) if n_jobs in (None, -1) else max(1, int(n_jobs))
        _run_units(results_dir, dataset, method, params, pending, fraction, seed, workers)
    out = []
    for m in counts:
        mine = [u for u in units if m in u.counts]
        found = [_stored_selection(results_dir, u) for u in mine]
        selections = [f for f in found if f is not None]
        if len(selections) < len(found):
            continue
        scores = stability_scores([f[m] for f in selections], dataset.n_features, alpha)
        payloads = [read_keyed(fit_path(results_dir, u.key)) or {} for u in mine]
        key = stability_key(dataset, method, params, m, n_subsamples, fraction, seed)
        result = {**asdict(scores), "fits": len(mine),
                  "fit_time": float(np.nansum([p.get("fit_time", np.nan) for p in payloads])),
                  "degenerate_fits": sum(_degenerate(p) for p in payloads),
                  "selection_kind": "per-count refit" if refits_per_count(method)
                  else "one fit per subsample", "env": environment()}
        path = record_path(results_dir, key)
        stored = read_keyed(path, key)
        if stored is None or any(stored.get(k) != result[k]
                                 for k in ("phi", "fits", "degenerate_fits")):
            write_keyed(path, key, result)
        out.append({**_flat_key(key), **result, "path": str(path)})
    return out


def _degenerate(fit: dict) -> bool:
    """The fit scored every feature alike (its "selection" is the lowest indices): a perfectly
    stable selection that says nothing about the method."""
    return any(w.startswith("DegenerateScoresWarning") for w in fit.get("fit_warnings") or [])


def _flat_key(key: dict) -> dict:
    from ufsbench.results import canonical

    flat = {k: v for k, v in key.items() if k not in ("kind", "params")}
    flat["params"] = canonical(key["params"])
    flat.setdefault("revision", 0)
    return flat


# -- reading ---------------------------------------------------------------------------------
STABILITY_COLUMNS = ["dataset", "method", "params", "n_features", "n_subsamples", "fraction",
                     "seed", "phi", "ci_low", "ci_high", "variance", "jaccard", "fits",
                     "fit_time", "degenerate_fits", "data_checksum", "revision", "stale", "path"]


def load_stability(results_dir=None) -> pd.DataFrame:
    """Every stability record of a store as one frame (:data:`STABILITY_COLUMNS`); ``stale``
    marks records whose data file changed or whose method was revised since."""
    from ufsbench.datasets.registry import current_checksum
    from ufsbench.methods.base import declared
    from ufsbench.results import ResultStore

    root = ResultStore(results_dir).root
    rows = []
    for path in sorted(root.glob(f"*/*/{STABILITY_DIR}/*.json")) if root.is_dir() else []:
        payload = read_keyed(path)
        if payload is None or payload.get("key", {}).get("kind") != "stability":
            continue
        row = {**_flat_key(payload["key"]),
               **{k: payload.get(k) for k in ("phi", "ci_low", "ci_high", "variance",
                                              "jaccard", "fits", "fit_time")},
               "degenerate_fits": payload.get("degenerate_fits", 0), "path": str(path)}
        if row["ci_low"] is not None and row["ci_high"] is not None:   # records written before
            row["ci_low"], row["ci_high"] = phi_range(row["n_subsamples"], row["ci_low"],
                                                      row["ci_high"])   # the cut
        current = current_checksum(row["dataset"])
        revision = declared(row["method"], "revision", row["revision"])
        row["stale"] = (current is not None and current != row["data_checksum"]) or \
            revision != row["revision"]
        rows.append(row)
    return pd.DataFrame(rows, columns=STABILITY_COLUMNS)


def format_phi(phi: float, low: float, high: float) -> str:
    """``0.82 [0.78, 0.86]``; a dash for a missing estimate."""
    if phi is None or (isinstance(phi, float) and np.isnan(phi)):
        return "—"
    return f"{phi:.2f} [{low:.2f}, {high:.2f}]"


#: Marks a cell some of whose fits were degenerate (:data:`DEGENERATE_NOTE`).
DEGENERATE_MARK = " (d)"
DEGENERATE_NOTE = ("(d): some subsample fits scored every feature alike, so their selection is "
                   "the lowest feature indices: that stability is the tie order's, not the "
                   "model's")


def stability_frame(df: pd.DataFrame, value: str = "phi") -> pd.DataFrame:
    """Methods x data sets: ``Phi [CI]`` (``value="phi"``) or the mean Jaccard per cell, marked
    :data:`DEGENERATE_MARK` when some fits were degenerate; one feature count, design and
    setting per cell (the latest record wins when several)."""
    if df.empty:
        return pd.DataFrame()
    df = df[~df["stale"]]
    cells: dict[str, dict[str, str]] = {}
    for row in df.itertuples(index=False):
        text = format_phi(row.phi, row.ci_low, row.ci_high) if value == "phi" \
            else f"{row.jaccard:.2f}"
        if getattr(row, "degenerate_fits", 0):
            text += DEGENERATE_MARK
        cells.setdefault(row.method, {})[row.dataset] = text
    frame = pd.DataFrame.from_dict(cells, orient="index")
    frame = frame.reindex(sorted(frame.index), columns=sorted(frame.columns))
    return frame.fillna("—")
